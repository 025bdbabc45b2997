package portable_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/day1ai/day1/store"
)

// TestLand lands a branch on its parent: its new, changed and deleted records reach
// the parent in one merge with a merge point, so that a diff afterwards is empty; a
// parent that moved since the fork, or a branch that is not its child, is ErrStale
// and nothing is written.
func TestLand(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir())
	put := func(branch string, recs ...store.Record) {
		t.Helper()
		if _, err := s.Put(ctx, branch, recs, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var base []store.Record
	for i := range 5 {
		base = append(base, store.Fact{ID: fmt.Sprintf("f%d", i), Text: fmt.Sprintf("service %d listens on port %d", i, 8000+i)})
	}
	put("main", base...)
	for _, b := range []store.BranchSpec{{Name: "stage"}, {Name: "other"}, {Name: "deep", From: "stage"}} {
		if _, err := s.CreateBranch(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var added []store.Record
	for i := range 2500 { // more than one chunk
		added = append(added, store.Fact{ID: fmt.Sprintf("n%04d", i), Text: fmt.Sprintf("worker %d drains queue %d", i, i%17)})
	}
	put("stage", added...)
	put("stage", store.Fact{ID: "f1", Text: "service 1 listens on port 9001"})
	if err := s.Delete(ctx, "stage", []store.Ref{store.FactRef("f2")}); err != nil {
		t.Fatal(err)
	}

	if _, err := s.Land(ctx, "deep", "main", store.MergeRecord{}); !errors.Is(err, store.ErrStale) {
		t.Errorf("landing a grandchild: %v; want ErrStale", err)
	}
	put("other", store.Fact{ID: "o1", Text: "the other branch was here"})
	if _, err := s.Land(ctx, "stage", "other", store.MergeRecord{}); !errors.Is(err, store.ErrStale) {
		t.Errorf("landing on a branch that is not the parent: %v; want ErrStale", err)
	}

	rec, err := s.Land(ctx, "stage", "main", store.MergeRecord{ID: "land-1", Strategy: store.Native, MergedBy: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID != "land-1" || rec.Source != "stage" || len(rec.Merged) != 2502 {
		t.Errorf("the merge record: %s from %s, %d merged; want land-1 from stage, 2,502", rec.ID, rec.Source, len(rec.Merged))
	}
	facts, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
	if err != nil || len(facts) != 2504 {
		t.Fatalf("main holds %d facts (%v); want 2,504", len(facts), err)
	}
	got, err := s.Get(ctx, store.View{}, store.FactRef("f1"))
	if err != nil || got.(store.Fact).Text != "service 1 listens on port 9001" {
		t.Errorf("f1 on main: %v, %v; want the stage's version", got, err)
	}
	if _, err := s.Get(ctx, store.View{}, store.FactRef("f2")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("f2 on main: %v; want deleted", err)
	}
	d, err := s.Diff(ctx, "stage", "main")
	if err != nil || len(d.SourceChanges)+len(d.TargetChanges)+len(d.Conflicts) != 0 {
		t.Errorf("diff after the landing: %d, %d, %d changes (%v); want none: the merge point is the new base",
			len(d.SourceChanges), len(d.TargetChanges), len(d.Conflicts), err)
	}
	hits, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "worker 1234 drains", Mode: store.Keyword, Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].Record.RecordID() != "n1234" {
		t.Errorf("a search of main for a landed fact: %v, %v", hits, err)
	}

	// The parent moved since: nothing is written.
	put("stage", store.Fact{ID: "late", Text: "written on the stage after the landing"})
	put("main", store.Fact{ID: "m1", Text: "written on main after the landing"})
	if _, err := s.Land(ctx, "stage", "main", store.MergeRecord{}); !errors.Is(err, store.ErrStale) {
		t.Errorf("landing after main moved: %v; want ErrStale", err)
	}
	if _, err := s.Get(ctx, store.View{}, store.FactRef("late")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused landing wrote: %v", err)
	}
}
