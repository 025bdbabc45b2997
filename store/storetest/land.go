package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/day1ai/day1/store"
)

// testLand specifies store.Lander, for the stores that have it: a branch lands on its
// unchanged parent with its new, changed and deleted records, beyond one chunk, in one
// merge with a merge point (a diff afterwards is empty), and the landed records are
// found; a grandchild, a branch of another parent and a parent that moved are
// ErrStale, and nothing is written.
func testLand(t *testing.T, h Harness) {
	subtest(t, h, "land", "a branch lands on its unchanged parent, or not at all", func(e *env) {
		l, ok := e.s.(store.Lander)
		if !ok {
			e.t.Skip("the store does not implement store.Lander")
		}
		main := store.View{Branch: store.DefaultBranch}
		var base []store.Record
		for i := range 5 {
			base = append(base, store.Fact{ID: fmt.Sprintf("f%d", i), Text: fmt.Sprintf("service %d listens on port %d", i, 8000+i)})
		}
		e.put(store.DefaultBranch, store.PutOptions{}, base...)
		e.branch(store.BranchSpec{Name: "stage"})
		e.branch(store.BranchSpec{Name: "other"})
		e.branch(store.BranchSpec{Name: "deep", From: "stage"})
		var added []store.Record
		for i := range 1200 { // more than the chunk a store lands at a time
			added = append(added, store.Fact{ID: fmt.Sprintf("n%04d", i), Text: fmt.Sprintf("worker %d drains queue %d", i, i%17), Embedding: spread(i)})
		}
		e.put("stage", store.PutOptions{}, added...)
		e.put1("stage", store.Fact{ID: "f1", Text: "service 1 listens on port 9001"})
		// A record made and deleted on the stage, which main never held: not landed.
		e.put1("stage", store.Fact{ID: "brief", Text: "a note the stage took back"})
		if err := e.s.Delete(e.ctx, "stage", []store.Ref{store.FactRef("f2"), store.FactRef("brief")}); err != nil {
			e.t.Fatal(err)
		}
		if _, err := l.Land(e.ctx, "deep", store.DefaultBranch, store.MergeRecord{}); !errors.Is(err, store.ErrStale) {
			e.t.Errorf("landing a grandchild: %v; want ErrStale", err)
		}
		e.put1("other", store.Fact{ID: "o1", Text: "the other branch was here"})
		if _, err := l.Land(e.ctx, "stage", "other", store.MergeRecord{}); !errors.Is(err, store.ErrStale) {
			e.t.Errorf("landing on a branch that is not the parent: %v; want ErrStale", err)
		}

		if _, err := e.s.CreateSnapshot(e.ctx, store.DefaultBranch, "before-landing", ""); err != nil {
			e.t.Fatal(err)
		}
		rec, err := l.Land(e.ctx, "stage", store.DefaultBranch, store.MergeRecord{ID: "land-1", Strategy: store.Native, MergedBy: "test"})
		if err != nil {
			e.t.Fatal(err)
		}
		if rec.ID != "land-1" || rec.Source != "stage" || rec.Target != store.DefaultBranch || len(rec.Merged) != 1202 {
			e.t.Errorf("the merge record: %s from %s into %s, %d merged; want land-1 from stage into main, 1,202", rec.ID, rec.Source, rec.Target, len(rec.Merged))
		}
		if got := len(e.list(main, store.ListQuery{Kind: store.KindFact})); got != 1204 {
			e.t.Errorf("main holds %d facts; want 1,204", got)
		}
		if f := e.get(main, store.FactRef("f1")).(store.Fact); f.Text != "service 1 listens on port 9001" {
			e.t.Errorf("f1 on main: %q; want the stage's version", f.Text)
		}
		if _, err := e.s.Get(e.ctx, main, store.FactRef("f2")); !errors.Is(err, store.ErrNotFound) {
			e.t.Errorf("f2 on main: %v; want deleted", err)
		}
		if _, err := e.s.Get(e.ctx, main, store.FactRef("brief")); !errors.Is(err, store.ErrNotFound) {
			e.t.Errorf("brief on main: %v; want never there", err)
		}
		d, err := e.s.Diff(e.ctx, "stage", store.DefaultBranch)
		if err != nil || len(d.SourceChanges)+len(d.TargetChanges)+len(d.Conflicts) != 0 {
			e.t.Errorf("diff after the landing: %+v, %v; want none: the merge point is the new base", d, err)
		}
		ms, err := e.s.ListMerges(e.ctx, store.MergeFilter{Target: store.DefaultBranch})
		if err != nil || len(ms) != 1 || ms[0].ID != "land-1" {
			e.t.Errorf("merges into main: %+v, %v; want land-1", ms, err)
		}
		hits := e.search(main, store.SearchQuery{Text: "worker 1123 drains", Mode: store.Keyword, Limit: 1})
		if len(hits) != 1 || hits[0].Record.RecordID() != "n1123" {
			e.t.Errorf("a search of main for a landed fact: %v", hitIDs(hits))
		}

		e.sameEmbedding(main, added[1123])

		// The parent moved since: nothing is written.
		e.put1("stage", store.Fact{ID: "late", Text: "written on the stage after the landing"})
		if _, err := l.Land(e.ctx, "stage", store.DefaultBranch, store.MergeRecord{}); !errors.Is(err, store.ErrStale) {
			e.t.Errorf("landing after main moved: %v; want ErrStale", err)
		}
		if _, err := e.s.Get(e.ctx, main, store.FactRef("late")); !errors.Is(err, store.ErrNotFound) {
			e.t.Errorf("a refused landing wrote: %v", err)
		}

		// What landed outlives the branch it came from, embeddings included.
		for _, b := range []string{"deep", "stage"} {
			if err := e.s.DeleteBranch(e.ctx, b); err != nil {
				e.t.Fatal(err)
			}
		}
		for _, i := range []int{0, 499, 500, 1199} {
			e.sameEmbedding(main, added[i])
		}
		past := store.View{Branch: store.DefaultBranch, At: store.Point{Snapshot: "before-landing"}}
		if got := len(e.list(past, store.ListQuery{Kind: store.KindFact})); got != 5 {
			e.t.Errorf("main before the landing holds %d facts; want 5", got)
		}
		if f := e.get(past, store.FactRef("f1")).(store.Fact); f.Text != "service 1 listens on port 8001" {
			e.t.Errorf("f1 on main before the landing: %q", f.Text)
		}
		hits = e.search(main, store.SearchQuery{Vector: spread(777), Mode: store.Vector, Limit: 1})
		if len(hits) != 1 || hits[0].Record.RecordID() != "n0777" {
			e.t.Errorf("a vector search of main for a landed fact after the stage's deletion: %v", hitIDs(hits))
		}
	})
}
