package memstore_test

import (
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/memstore"
	"github.com/day1ai/day1/store/storetest"
)

// openInMemory opens an in-memory store that is closed when t ends.
func openInMemory(t *testing.T) *memstore.Store {
	t.Helper()
	s, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatalf("memstore.New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the store conformance suite against the in-memory store.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store {
			s, err := memstore.New(memstore.Options{})
			if err != nil {
				t.Fatalf("memstore.New: %v", err)
			}
			return s
		},
		Retained: func(t *testing.T, r time.Duration, now func() time.Time) store.Store {
			s, err := memstore.New(memstore.Options{Retention: r, Now: now})
			if err != nil {
				t.Fatalf("memstore.New: %v", err)
			}
			return s
		},
	})
}

// TestConformanceDurable runs the store conformance suite against the durable store,
// each subtest in its own directory; Reopen closes the store and opens its directory
// again.
func TestConformanceDurable(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		paths = map[store.Store]string{} // the log directory of each open store
	)
	open := func(t *testing.T, dir string) store.Store {
		s, err := memstore.New(memstore.Options{Path: dir})
		if err != nil {
			t.Fatalf("memstore.New(%q): %v", dir, err)
		}
		mu.Lock()
		defer mu.Unlock()
		paths[s] = dir
		return s
	}
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store { return open(t, t.TempDir()) },
		Reopen: func(t *testing.T, s store.Store) store.Store {
			mu.Lock()
			dir := paths[s]
			mu.Unlock()
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return open(t, dir)
		},
	})
}

// TestConformanceCompacted runs the store conformance suite against the durable store
// compacted before each reopen: a store loaded from a checkpoint and the log after it
// reads as the store that wrote them did. The retention keeps the hour the suite
// writes in.
func TestConformanceCompacted(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		paths = map[store.Store]string{}
	)
	open := func(t *testing.T, dir string) store.Store {
		s, err := memstore.New(memstore.Options{Path: dir, Retention: time.Hour})
		if err != nil {
			t.Fatalf("memstore.New(%q): %v", dir, err)
		}
		mu.Lock()
		defer mu.Unlock()
		paths[s] = dir
		return s
	}
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store { return open(t, t.TempDir()) },
		Reopen: func(t *testing.T, s store.Store) store.Store {
			mu.Lock()
			dir := paths[s]
			mu.Unlock()
			if _, err := s.(*memstore.Store).Compact(t.Context()); err != nil {
				t.Fatalf("Compact: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return open(t, dir)
		},
		// A store that compacts in the background after nearly every write.
		Retained: func(t *testing.T, r time.Duration, now func() time.Time) store.Store {
			s, err := memstore.New(memstore.Options{Path: t.TempDir(), Retention: r, Now: now, CompactMinBytes: 1, CompactRatio: 0.01})
			if err != nil {
				t.Fatalf("memstore.New: %v", err)
			}
			return s
		},
	})
}
