package adk_test

import (
	"context"
	"testing"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/testkit"
)

// storeCase names a store and the Config that opens it for one test. Opening the
// Config again opens the same memory, except for the embedded store in memory.
type storeCase struct {
	name    string
	durable bool
	config  func(t *testing.T) day1.Config
}

// stores lists the stores the tests run on: the embedded store, in memory and in a
// folder, always, and MatrixOne when DAY1_TEST_DSN names a server (each test in a
// database of its own).
func stores() []storeCase {
	return []storeCase{
		{"embedded", false, func(t *testing.T) day1.Config { return day1.Config{} }},
		{"durable", true, func(t *testing.T) day1.Config { return day1.Config{Path: t.TempDir()} }},
		{"matrixone", true, func(t *testing.T) day1.Config { return day1.Config{DSN: testkit.MatrixOneDatabase(t, "day1_adk")} }},
	}
}

// forEachStore runs test once per store, as a subtest named after the store, with a
// Client open on it.
func forEachStore(t *testing.T, test func(t *testing.T, c *day1.Client)) {
	t.Helper()
	for _, s := range stores() {
		t.Run(s.name, func(t *testing.T) { test(t, openClient(t, s.config(t))) })
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
