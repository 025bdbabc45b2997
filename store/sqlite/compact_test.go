package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/testkit"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
	"github.com/day1ai/day1/store/portable"
	"github.com/day1ai/day1/store/sqlite"
)

// TestCompactRetention writes a fact once a day for ten days with a week's retention,
// with a snapshot on day 2 and a branch forked on day 3, then compacts: the versions
// replaced more than a week ago that nothing reads are gone, the snapshot and the
// branch still read theirs, reads before the horizon fail with ErrTooOld in this
// process and in a new one, and search and writes carry on.
func TestCompactRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	clk := testkit.NewClock(0) // moves only when told
	opts := sqlite.Options{Path: dir, NoSync: true, Now: clk.Now, Retention: 7 * 24 * time.Hour}
	s, err := opts.OpenStore(ctx, store.OpenEnv{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	put := func(branch, text string) {
		t.Helper()
		n++
		own := store.Fact{ID: fmt.Sprint("own", n), Text: text + " (a fact of its own)"}
		if _, err := s.Put(ctx, branch, []store.Record{store.Fact{ID: "cfg", Text: text}, own}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	texts := []string{"day 0", "day 1", "day 2", "day 3", "day 4", "day 5", "day 6", "day 7", "day 8", "day 9"}
	for day, text := range texts {
		put(store.DefaultBranch, "the cache TTL on "+text)
		switch day {
		case 2:
			if _, err := s.CreateSnapshot(ctx, store.DefaultBranch, "day2", ""); err != nil {
				t.Fatal(err)
			}
		case 3:
			if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "fork3", From: store.DefaultBranch}); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(24 * time.Hour)
	}
	day := func(d int) time.Time { return testkit.Start.Add(time.Duration(d)*24*time.Hour + time.Hour) }
	cs, err := s.(store.Compacter).Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Day 0 and day 1 are read by nothing; day 2 by the snapshot, day 3 by the fork.
	if cs.Dropped != 2 || cs.Horizon.IsZero() {
		t.Errorf("Compact dropped %d versions with horizon %v; want the 2 versions of cfg on days 0 and 1", cs.Dropped, cs.Horizon)
	}
	// The rows themselves are gone from the file.
	left := 0
	err = s.(*portable.Store).Driver().Read(ctx, func(r driver.Reader) error {
		return r.Meta(ctx, 0, func(m driver.Meta) error {
			if m.ID == "cfg" {
				left++
			}
			return nil
		})
	})
	if err != nil || left != len(texts)-2 {
		t.Errorf("%d rows of cfg are left (%v); want %d", left, err, len(texts)-2)
	}
	cfg := store.FactRef("cfg")
	text := func(s store.Store, v store.View) string {
		t.Helper()
		r, err := s.Get(ctx, v, cfg)
		if err != nil {
			t.Fatalf("Get(%+v): %v", v, err)
		}
		return r.(store.Fact).Text
	}
	if got := text(s, store.View{At: store.Point{Snapshot: "day2"}}); got != "the cache TTL on day 2" {
		t.Errorf("the snapshot reads %q", got)
	}
	if got := text(s, store.View{Branch: "fork3"}); got != "the cache TTL on day 3" {
		t.Errorf("the branch reads %q", got)
	}
	if got := text(s, store.View{At: store.Point{Time: day(8)}}); got != "the cache TTL on day 8" {
		t.Errorf("day 8 reads %q", got)
	}
	hits, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "cache TTL", Limit: 20})
	if err != nil || len(hits) == 0 {
		t.Fatalf("Search after Compact: %v, %d hits", err, len(hits))
	}
	// A new process that never set a retention still refuses reads before the
	// horizon.
	other, err := sqlite.Options{Path: dir, NoSync: true, Now: clk.Now}.OpenStore(ctx, store.OpenEnv{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for name, st := range map[string]store.Store{"the compacting store": s, "a new store": other} {
		if _, err := st.Get(ctx, store.View{At: store.Point{Time: day(0)}}, cfg); !errors.Is(err, store.ErrTooOld) {
			t.Errorf("%s: a read on day 0 = %v; want ErrTooOld", name, err)
		}
	}
	if got := text(other, store.View{At: store.Point{Snapshot: "day2"}}); got != "the cache TTL on day 2" {
		t.Errorf("a new store's snapshot read gives %q", got)
	}
	put(store.DefaultBranch, "the cache TTL after the compaction")
	if got := text(other, store.View{}); got != "the cache TTL after the compaction" {
		t.Errorf("a new store reads %q after a write", got)
	}
	// A second compaction at once has nothing more to drop.
	if cs, err := s.(store.Compacter).Compact(ctx); err != nil || cs.Dropped != 0 {
		t.Errorf("a second Compact: dropped %d, %v; want 0, nil", cs.Dropped, err)
	}
}

// TestCompactManyChunks replaces more versions than one commit of a compaction drops
// (several chunks), then compacts past the retention: every replaced version is
// dropped, one row of each fact is left, and lists and searches read the latest
// versions, in this process and in a new one.
func TestCompactManyChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	clk := testkit.NewClock(0)
	opts := sqlite.Options{Path: dir, NoSync: true, Now: clk.Now, Retention: time.Hour}
	s, err := opts.OpenStore(ctx, store.OpenEnv{})
	if err != nil {
		t.Fatal(err)
	}
	const n, batch = 4500, 500
	write := func(version string) {
		t.Helper()
		for lo := 0; lo < n; lo += batch {
			recs := make([]store.Record, 0, batch)
			for i := lo; i < lo+batch; i++ {
				recs = append(recs, store.Fact{ID: fmt.Sprintf("f%04d", i), Text: fmt.Sprintf("service %d keeps its %s settings", i, version)})
			}
			if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("old")
	clk.Advance(time.Minute)
	write("new")
	clk.Advance(2 * time.Hour)
	fileSize := func() int64 {
		t.Helper()
		fi, err := os.Stat(filepath.Join(dir, sqlite.FileName))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	s.Close() // the last close checkpoints the WAL into the file
	before := fileSize()
	if s, err = opts.OpenStore(ctx, store.OpenEnv{}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.(store.Compacter).Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Dropped != n {
		t.Errorf("Compact dropped %d versions; want the %d replaced ones", cs.Dropped, n)
	}
	check := func(s store.Store) {
		t.Helper()
		rows := 0
		err := s.(*portable.Store).Driver().Read(ctx, func(r driver.Reader) error {
			return r.Meta(ctx, 0, func(m driver.Meta) error {
				if m.Kind == store.KindFact {
					rows++
				}
				return nil
			})
		})
		if err != nil || rows != n {
			t.Errorf("%d fact rows left (%v); want %d", rows, err, n)
		}
		all, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
		if err != nil || len(all) != n {
			t.Fatalf("list: %d facts (%v); want %d", len(all), err, n)
		}
		for _, r := range all {
			if f := r.(store.Fact); !strings.Contains(f.Text, "new settings") {
				t.Fatalf("%s reads %q; want its new version", f.ID, f.Text)
			}
		}
		hits, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "service 4321 settings", Mode: store.Keyword, Limit: 1})
		if err != nil || len(hits) != 1 || hits[0].Record.RecordID() != "f4321" {
			t.Errorf("search for service 4321: %v (%v); want f4321", hits, err)
		}
	}
	check(s)
	s.Close()
	if after := fileSize(); after >= before {
		t.Errorf("the file holds %d bytes after the compaction, %d before; want fewer", after, before)
	}
	s2, err := opts.OpenStore(ctx, store.OpenEnv{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	check(s2)
}
