// Package testkit holds what day1's tests share: a deterministic clock, an in-memory
// store on it, and a writer of records that fails the test on error. It is imported by
// tests only.
package testkit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/filelock"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/memstore"
	"github.com/day1ai/day1/store/sqlite"
)

// Start is the first instant of a Clock: 2025-03-01 09:00 UTC.
var Start = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// Clock is a deterministic clock that advances by its step on every reading, so that
// every commit gets its own instant, as in production. It is safe for concurrent use.
type Clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

// NewClock returns a Clock at Start that advances by step on every reading.
func NewClock(step time.Duration) *Clock { return &Clock{t: Start, step: step} }

// Now advances the clock by its step and returns the new instant.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// Advance moves the clock forward by d without a reading.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Peek returns the last reading without advancing the clock.
func (c *Clock) Peek() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Store returns a new in-memory store whose commits read now, closed when tb ends.
func Store(tb testing.TB, now func() time.Time) *memstore.Store {
	tb.Helper()
	st, err := memstore.New(memstore.Options{Now: now})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

// Put writes recs to branch of st, failing tb on error, and returns the results.
func Put(tb testing.TB, st store.Store, branch string, recs ...store.Record) []store.PutResult {
	tb.Helper()
	res, err := st.Put(context.Background(), branch, recs, store.PutOptions{})
	if err != nil {
		tb.Fatalf("Put on %s: %v", branch, err)
	}
	return res
}

// MakeMemory makes an empty durable memory of a kind in dir: "sqlite" (what a new
// folder becomes) or "log" (the log store), which every program given the folder then
// opens as that kind.
func MakeMemory(t testing.TB, kind, dir string) {
	t.Helper()
	var o store.Opener = sqlite.Options{Path: dir}
	if kind == "log" {
		o = memstore.Options{Path: dir}
	}
	s, err := o.OpenStore(context.Background(), store.OpenEnv{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// HoldWriteLock takes the write lock of the SQLite memory in dir, as a writer in
// another process would, and lets it go after d: writes of the memory meanwhile wait
// for it. The test's end waits for the release.
func HoldWriteLock(t testing.TB, dir string, d time.Duration) {
	t.Helper()
	l, err := filelock.Open(dir, sqlite.LockName)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Acquire(context.Background(), time.Second, dir); err != nil {
		l.Close()
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(d)
		l.Release()
	}()
	t.Cleanup(func() {
		<-released
		l.Close()
	})
}
