package matrixone_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
	"github.com/day1ai/day1/store/storetest"
)

// forkPath reads how a branch's tables were made.
func forkPath(t *testing.T, s *matrixone.Store, name string) string {
	t.Helper()
	var path string
	if err := s.DB().QueryRowContext(t.Context(), "SELECT fork_path FROM day1_branches WHERE name = ?", name).Scan(&path); err != nil {
		t.Fatalf("fork_path of %q: %v", name, err)
	}
	return path
}

// TestForkPathRecorded: each branch records the path its tables were made by, and a
// database from before migration 006 gains the column on Open.
func TestForkPathRecorded(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s := openTest(t, dsn)
	ctx := t.Context()
	put(t, s, "main", corpus(40, 8, 1))
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "task/a"}); err != nil {
		t.Fatal(err)
	}
	if got, want := forkPath(t, s, "task/a"), s.Capabilities().BranchPath; got != want {
		t.Errorf("fork_path of a branch from the head = %q; want the store's branch path %q", got, want)
	}
	if _, err := s.CreateSnapshot(ctx, "main", "snap", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "task/b", At: store.Point{Snapshot: "snap"}}); err != nil {
		t.Fatal(err)
	}
	// Nothing was written since the snapshot: with DATA BRANCH the fork is native.
	if got, want := forkPath(t, s, "task/b"), s.Capabilities().BranchPath; got != want {
		t.Errorf("fork_path of a branch from a snapshot with no write since = %q; want the store's branch path %q", got, want)
	}
	for _, q := range []string{
		"ALTER TABLE day1_branches DROP COLUMN fork_path",
		"DELETE FROM day1_migrations WHERE version = 6",
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s2 := openTest(t, dsn)
	defer s2.Close()
	if got := forkPath(t, s2, "task/a"); got != "" {
		t.Errorf("fork_path of a branch made before the migration = %q; want empty", got)
	}
	if _, err := s2.Put(ctx, "task/a", []store.Record{store.Fact{ID: "new", Text: "written after the migration"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := s2.Diff(ctx, "task/a", "main")
	if err != nil || len(d.SourceChanges) != 1 || d.SourceChanges[0].Ref.ID != "new" {
		t.Errorf("Diff after the migration = %+v, %v; want the one new fact", d, err)
	}
	if _, err := s2.CreateBranch(ctx, store.BranchSpec{Name: "task/c"}); err != nil {
		t.Fatal(err)
	}
	if got, want := forkPath(t, s2, "task/c"), s2.Capabilities().BranchPath; got != want {
		t.Errorf("fork_path of a branch made after the migration = %q; want %q", got, want)
	}
}

// TestNativeDiff compares diffs through DATA BRANCH DIFF with the portable path's, on
// one database, both ways round, with changes on both sides.
func TestNativeDiff(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s := openWith(t, dsn, func(o *matrixone.Options) { o.NativeDiff = matrixone.IndexOn })
	defer s.Close()
	c := s.Capabilities()
	if !c.DataBranchDiff {
		t.Skipf("capability DataBranchDiff is missing on %s: diffs take the portable path", c.Version)
	}
	portable := openWith(t, dsn, func(o *matrixone.Options) { o.NativeDiff = matrixone.IndexOff })
	defer portable.Close()
	if got := portable.Capabilities().DiffPath; got != matrixone.DiffPathPortable {
		t.Fatalf("DiffPath with NativeDiff off = %q", got)
	}
	ctx := t.Context()
	put(t, s, "main", corpus(40, 8, 2))
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "task/a"}); err != nil {
		t.Fatal(err)
	}
	if got := forkPath(t, s, "task/a"); got != matrixone.BranchPathNative {
		t.Fatalf("fork_path = %q; want native", got)
	}
	write := func(branch string, recs ...store.Record) {
		t.Helper()
		if _, err := s.Put(ctx, branch, recs, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	write("task/a", store.Fact{ID: "a-new", Text: "only on the branch"}, store.Fact{ID: "f0000", Text: "changed on the branch"})
	write("main", store.Fact{ID: "m-new", Text: "only on main"}, store.Fact{ID: "f0001", Text: "changed on main"},
		store.Fact{ID: "f0000", Text: "changed on main too"})
	write("task/a", store.Relation{ID: "r1", Source: "a", Target: "b", Type: "knows"})
	if err := s.Delete(ctx, "task/a", []store.Ref{{Kind: store.KindFact, ID: "f0003"}}); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{"task/a", "main"}, {"main", "task/a"}} {
		before := matrixone.NativeDiffs(s)
		got, err := s.Diff(ctx, pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if matrixone.NativeDiffs(s) == before {
			t.Errorf("Diff(%s, %s) did not go through DATA BRANCH DIFF", pair[0], pair[1])
		}
		want, err := portable.Diff(ctx, pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Diff(%s, %s) native differs from portable (-portable +native):\n%s", pair[0], pair[1], d)
		}
		if len(got.Conflicts) == 0 {
			t.Errorf("Diff(%s, %s) found no conflict on f0000", pair[0], pair[1])
		}
	}
}

// TestForkRacesAWrite commits a write to the parent between the revision a fork reads
// and the making of the branch's tables (an update, a new fact and a delete): the
// branch holds the parent as of its fork instant, whichever path made its tables (on
// the native path the server's copy holds the write, and the store trims it).
func TestForkRacesAWrite(t *testing.T) {
	t.Parallel()
	s := openTest(t, testDatabase(t))
	ctx := t.Context()
	put(t, s, "main", []store.Record{
		store.Fact{ID: "kept", Text: "written before the fork"},
		store.Fact{ID: "gone", Text: "deleted while the fork runs"},
	})
	matrixone.SetBeforeFork(s, func() {
		matrixone.SetBeforeFork(s, nil)
		put(t, s, "main", []store.Record{
			store.Fact{ID: "kept", Text: "updated while the fork runs"},
			store.Fact{ID: "new", Text: "added while the fork runs"},
		})
		if err := s.Delete(ctx, "main", []store.Ref{{Kind: store.KindFact, ID: "gone"}}); err != nil {
			t.Fatal(err)
		}
	})
	b, err := s.CreateBranch(ctx, store.BranchSpec{Name: "task/raced"})
	if err != nil {
		t.Fatal(err)
	}
	texts := func(v store.View) map[string]string {
		t.Helper()
		rs, err := s.List(ctx, v, store.ListQuery{Kind: store.KindFact})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range rs {
			out[r.RecordID()] = r.(store.Fact).Text
		}
		return out
	}
	want := map[string]string{"kept": "written before the fork", "gone": "deleted while the fork runs"}
	if d := cmp.Diff(want, texts(store.View{Branch: "task/raced"})); d != "" {
		t.Errorf("the branch (path %s) mismatch (-want +got):\n%s", forkPath(t, s, "task/raced"), d)
	}
	if d := cmp.Diff(want, texts(store.View{Branch: "main", At: store.Point{Time: b.ForkedAt}})); d != "" {
		t.Errorf("main at the fork instant mismatch (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"kept": "updated while the fork runs", "new": "added while the fork runs"}, texts(store.View{Branch: "main"})); d != "" {
		t.Errorf("main mismatch (-want +got):\n%s", d)
	}
	// The raced rows are the parent's changes since the fork.
	put(t, s, "task/raced", []store.Record{store.Fact{ID: "own", Text: "written on the branch"}})
	d, err := s.Diff(ctx, "task/raced", "main")
	if err != nil {
		t.Fatal(err)
	}
	var target []string
	for _, c := range d.TargetChanges {
		target = append(target, c.Ref.ID)
	}
	slices.Sort(target)
	if !slices.Equal(target, []string{"gone", "kept", "new"}) {
		t.Errorf("main's changes since the fork = %v; want gone, kept, new", target)
	}
}

// TestConformanceNativeDiff runs the branch, diff and merge areas of the suite with
// NativeDiff on, on a server with DATA BRANCH DIFF: diffs between a branch and the
// parent it was forked from then go through the server's DATA BRANCH DIFF, which
// TestConformance, on the default portable path, never asks for.
func TestConformanceNativeDiff(t *testing.T) {
	testDSN(t)
	probe := openTest(t, testDatabase(t))
	c := probe.Capabilities()
	probe.Close()
	if !c.DataBranchDiff {
		t.Skipf("capability DataBranchDiff is missing on %s: diffs take the portable path, which TestConformance covers", c.Version)
	}
	covered := map[string]string{}
	for _, a := range []string{"write", "search", "messagesearch", "snapshot", "timetravel", "sessions", "docs", "alias", "concurrency", "durability", "errors"} {
		covered[a] = "run by TestConformance; this run covers diffs through DATA BRANCH DIFF"
	}
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store {
			s := openWith(t, testDatabase(t), func(o *matrixone.Options) { o.NativeDiff = matrixone.IndexOn })
			if got := s.Capabilities().DiffPath; got != matrixone.DiffPathNative {
				t.Fatalf("DiffPath with NativeDiff on = %q; want native", got)
			}
			return s
		},
		Unsupported: covered,
	})
}
