package day1

import (
	"context"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/testkit"

	"github.com/day1ai/day1/internal/ids"
)

// t0 is the first instant of the test clock.
var t0 = testkit.Start

// newStepClock returns a clock that advances one second on every reading, so that
// every commit gets its own instant and tests are deterministic.
func newStepClock() *testkit.Clock { return testkit.NewClock(time.Second) }

// open opens a Client on a fresh in-memory store with a step clock and sequential ids,
// after applying edit to the Config, and closes it when the test ends.
func open(t *testing.T, edit func(*Config)) (*Client, *testkit.Clock) {
	t.Helper()
	clk := newStepClock()
	cfg := Config{Test: TestConfig{Now: clk.Now, NewID: ids.Sequential("id")}}
	if edit != nil {
		edit(&cfg)
	}
	c, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, clk
}

func factTexts(fs []Fact) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Text
	}
	return out
}

func hitIDs(hs []Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Record.RecordID()
	}
	return out
}
