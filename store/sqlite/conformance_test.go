package sqlite_test

import (
	"context"
	"sync"
	"testing"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/portable"
	"github.com/day1ai/day1/store/sqlite"
	"github.com/day1ai/day1/store/storetest"
)

// open opens the memory in dir as a portable store over this driver.
func open(t testing.TB, dir string, opts sqlite.Options) *portable.Store {
	t.Helper()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, withPath(opts, dir))
	if err != nil {
		t.Fatalf("sqlite.Open(%q): %v", dir, err)
	}
	s, err := portable.New(ctx, d, portable.Options{Name: "sqlite", ReadOnly: opts.ReadOnly, Dimensions: opts.Dimensions})
	if err != nil {
		d.Close()
		t.Fatalf("portable.New: %v", err)
	}
	return s
}

// TestConformance runs the store conformance suite against the portable store over a
// SQLite file, each subtest in its own folder; Reopen closes the store and opens its
// folder again.
func TestConformance(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		paths = map[store.Store]string{}
	)
	opened := func(t *testing.T, dir string) store.Store {
		s := open(t, dir, sqlite.Options{NoSync: true})
		mu.Lock()
		defer mu.Unlock()
		paths[s] = dir
		return s
	}
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store { return opened(t, t.TempDir()) },
		Reopen: func(t *testing.T, s store.Store) store.Store {
			mu.Lock()
			dir := paths[s]
			mu.Unlock()
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return opened(t, dir)
		},
	})
}

func withPath(o sqlite.Options, dir string) sqlite.Options {
	o.Path = dir
	return o
}
