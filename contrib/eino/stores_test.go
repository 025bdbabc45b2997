package eino_test

import (
	"context"
	"testing"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/testkit"
)

// storeCase opens a day1 Client on one store for one test.
type storeCase struct {
	name string
	open func(t *testing.T) *day1.Client
}

// stores lists the stores the tests run on: the embedded store in memory always, and
// MatrixOne when DAY1_TEST_DSN names a server (each test in a database of its own).
func stores() []storeCase {
	return []storeCase{
		{"embedded", func(t *testing.T) *day1.Client { return openClient(t, day1.Config{}) }},
		{"matrixone", func(t *testing.T) *day1.Client {
			return openClient(t, day1.Config{DSN: testkit.MatrixOneDatabase(t, "day1_eino")})
		}},
	}
}

// forEachStore runs test once per store, as a subtest named after the store.
func forEachStore(t *testing.T, test func(t *testing.T, c *day1.Client)) {
	t.Helper()
	for _, s := range stores() {
		t.Run(s.name, func(t *testing.T) { test(t, s.open(t)) })
	}
}

func openClient(t *testing.T, cfg day1.Config) *day1.Client {
	t.Helper()
	c, err := day1.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("day1.Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
