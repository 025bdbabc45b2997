package day1

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/ids"
)

// t0 is the first instant of the test clock.
var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// stepClock is a clock that advances one second on every reading, so that every
// commit gets its own instant and tests are deterministic.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func newStepClock() *stepClock { return &stepClock{t: t0} }

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// peek returns the clock's last reading without advancing it.
func (c *stepClock) peek() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// open opens a Client on a fresh in-memory store with a step clock and sequential ids,
// after applying edit to the Config, and closes it when the test ends.
func open(t *testing.T, edit func(*Config)) (*Client, *stepClock) {
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
