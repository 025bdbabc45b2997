package memdriver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
	"github.com/day1ai/day1/store/driver/drivertest"
	"github.com/day1ai/day1/store/memdriver"
	"github.com/day1ai/day1/store/portable"
	"github.com/day1ai/day1/store/storetest"
)

// kept is a driver whose Close leaves it as it is, so that a new portable store can
// be opened over what an earlier one wrote.
type kept struct{ *memdriver.Driver }

func (kept) Close() error { return nil }

// TestConformance runs the store conformance suite against the portable store over
// this driver. Reopen closes the store and opens a new one over the same driver,
// which then builds its index from the driver's rows as a new process would.
func TestConformance(t *testing.T) {
	var (
		mu      sync.Mutex
		drivers = map[store.Store]kept{}
	)
	over := func(t *testing.T, d kept, opts portable.Options) store.Store {
		t.Helper()
		opts.Name = "memdriver"
		s, err := portable.New(context.Background(), d, opts)
		if err != nil {
			t.Fatalf("portable.New: %v", err)
		}
		t.Cleanup(func() { d.Driver.Close() })
		mu.Lock()
		defer mu.Unlock()
		drivers[s] = d
		return s
	}
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store { return over(t, kept{memdriver.New()}, portable.Options{}) },
		Reopen: func(t *testing.T, s store.Store) store.Store {
			mu.Lock()
			d := drivers[s]
			mu.Unlock()
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return over(t, d, portable.Options{})
		},
		Retained: func(t *testing.T, r time.Duration, now func() time.Time) store.Store {
			return over(t, kept{memdriver.New()}, portable.Options{Retention: r, Now: now})
		},
	})
}

// TestDriver runs the checks of the driver contract.
func TestDriver(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) driver.Driver { return memdriver.New() })
}

// TestReadsSaveNoIndex checks that reads of a memory that does not outlive the
// process never save the portable store's index into it: the next store over the
// same driver builds its index from the rows.
func TestReadsSaveNoIndex(t *testing.T) {
	ctx := context.Background()
	d := memdriver.New()
	defer d.Close()
	s, err := portable.New(ctx, kept{d}, portable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []store.Record
	for i := range 5000 { // past the rows after which an index is due to be saved
		recs = append(recs, store.Fact{ID: fmt.Sprintf("f%04d", i), Text: fmt.Sprintf("fact %d about the cache", i)})
	}
	if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "cache", Limit: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	err = d.Read(ctx, func(r driver.Reader) error {
		return r.Items(ctx, "index", "", func(id string, _ []byte) error {
			t.Errorf("a memory in the process holds the saved index item %q", id)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}
