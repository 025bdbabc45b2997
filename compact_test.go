package day1_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store/memstore"
	"github.com/day1ai/day1/store/sqlite"
)

func TestCompactConfigAndRefusals(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []day1.Config{
		{Backend: memstore.Options{Path: t.TempDir(), Retention: -time.Hour}},
		{Backend: memstore.Options{Path: t.TempDir(), CompactMinBytes: -1}},
	} {
		if _, err := day1.Open(ctx, cfg); !errors.Is(err, day1.ErrInvalidArgument) {
			t.Errorf("Open(%+v) = %v; want ErrInvalidArgument", cfg, err)
		}
	}
	mem, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if _, err := mem.Compact(ctx); !errors.Is(err, day1.ErrNotSupported) {
		t.Errorf("Compact in memory = %v; want ErrNotSupported", err)
	}
	dir := t.TempDir()
	w, err := day1.Open(ctx, day1.Config{Backend: memstore.Options{Path: dir, CompactRatio: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteFact(ctx, day1.Fact{ID: "f", Text: "kept across the compaction"}); err != nil {
		t.Fatal(err)
	}
	r, err := day1.Open(ctx, day1.Config{Backend: memstore.Options{Path: dir, ReadOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Compact(ctx); !errors.Is(err, day1.ErrReadOnly) {
		t.Errorf("Compact read-only = %v; want ErrReadOnly", err)
	}
	st, err := w.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Generation != 1 || st.Versions == 0 || st.Dropped != 0 {
		t.Errorf("first compaction: %+v; want generation 1, every version kept", st)
	}
	if _, err := w.WriteFact(ctx, day1.Fact{ID: "g", Text: "written after the compaction"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"f", "g"} {
		if _, err := r.GetFact(ctx, "main", id); err != nil {
			t.Errorf("the reader after the writer's compaction: %s: %v", id, err)
		}
	}
	w.Close()
	if _, err := w.Compact(ctx); !errors.Is(err, day1.ErrClosed) {
		t.Errorf("Compact after Close = %v; want ErrClosed", err)
	}
}

// TestDiskSize checks Client.DiskSize on each durable embedded store (it grows with
// what is written), and its refusals in memory and after Close.
func TestDiskSize(t *testing.T) {
	ctx := context.Background()
	for name, cfg := range map[string]day1.Config{
		"sqlite": {Path: t.TempDir()},
		"log":    {Backend: memstore.Options{Path: t.TempDir()}},
	} {
		c, err := day1.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		before, err := c.DiskSize(ctx)
		if err != nil || before <= 0 {
			t.Fatalf("%s: DiskSize of a new memory = %d, %v; want some bytes", name, before, err)
		}
		facts := make([]day1.Fact, 300)
		for i := range facts {
			facts[i] = day1.Fact{Text: fmt.Sprintf("Service %d answers on port %d and logs to its own file", i, 8000+i)}
		}
		if _, err := c.WriteFacts(ctx, facts); err != nil {
			t.Fatal(err)
		}
		if after, err := c.DiskSize(ctx); err != nil || after <= before {
			t.Errorf("%s: DiskSize after 300 facts = %d, %v; want more than %d", name, after, err, before)
		}
		c.Close()
		if _, err := c.DiskSize(ctx); !errors.Is(err, day1.ErrClosed) {
			t.Errorf("%s: DiskSize after Close = %v; want ErrClosed", name, err)
		}
	}
	mem, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if _, err := mem.DiskSize(ctx); !errors.Is(err, day1.ErrNotSupported) {
		t.Errorf("DiskSize in memory = %v; want ErrNotSupported", err)
	}
}

// TestCompactProgress checks that Compact reports its progress to a context made by
// WithProgress: the versions it writes to the log store's checkpoint, the rows it
// drops from a SQLite memory, in order, ending with all of them done.
func TestCompactProgress(t *testing.T) {
	ctx := context.Background()
	for name, cfg := range map[string]day1.Config{
		"log":    {Backend: memstore.Options{Path: t.TempDir(), CompactRatio: -1}},
		"sqlite": {Backend: sqlite.Options{Path: t.TempDir(), Retention: time.Millisecond}},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := day1.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for round := range 2 {
				facts := make([]day1.Fact, 2500)
				for i := range facts {
					facts[i] = day1.Fact{ID: fmt.Sprint("f", i), Text: fmt.Sprintf("Service %d answers on port %d, round %d", i, 8000+i, round)}
				}
				for lo := 0; lo < len(facts); lo += 500 {
					if _, err := c.WriteFacts(ctx, facts[lo:lo+500]); err != nil {
						t.Fatal(err)
					}
				}
			}
			time.Sleep(20 * time.Millisecond) // past the SQLite memory's retention
			var calls [][2]int
			st, err := c.Compact(day1.WithProgress(ctx, func(done, total int) { calls = append(calls, [2]int{done, total}) }))
			if err != nil {
				t.Fatal(err)
			}
			want := st.Versions
			if name == "sqlite" {
				want = st.Dropped
			}
			if want < 2500 || len(calls) < 2 || calls[len(calls)-1] != [2]int{want, want} {
				t.Fatalf("Compact reported %v; want steps ending at %d of %d (%+v)", calls, want, want, st)
			}
			for i := 1; i < len(calls); i++ {
				if calls[i][0] < calls[i-1][0] || calls[i][1] != want {
					t.Errorf("report %d, %v after %v: want counts that grow, of %d", i, calls[i], calls[i-1], want)
				}
			}
		})
	}
}
