package portable_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/portable"
)

// TestBranchesFollowCommits checks what reads share, the branches and the merge
// records: a write that changes a branch in its state and fails leaves no trace in
// later reads, and a commit made through another opener of the same memory is seen by
// the next read.
func TestBranchesFollowCommits(t *testing.T) {
	dir := t.TempDir()
	a, b := openAt(t, dir), openAt(t, dir)
	ctx := context.Background()
	if _, err := a.CreateBranch(ctx, store.BranchSpec{Name: "x", Description: "first"}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second read is served from what the first cached
		if got, err := a.GetBranch(ctx, "x"); err != nil || got.Description != "first" {
			t.Fatalf("GetBranch = %q, %v; want first", got.Description, err)
		}
	}
	// What a read returns is the caller's to change.
	if _, err := a.CreateBranch(ctx, store.BranchSpec{Name: "meta", Metadata: map[string]string{"owner": "ann"}}); err != nil {
		t.Fatal(err)
	}
	for _, list := range []bool{false, true} {
		var got store.Branch
		var err error
		if list {
			bs, err := a.ListBranches(ctx, store.BranchFilter{Prefix: "meta"})
			if err != nil || len(bs) != 1 {
				t.Fatalf("ListBranches: %v, %v", bs, err)
			}
			got = bs[0]
		} else if got, err = a.GetBranch(ctx, "meta"); err != nil {
			t.Fatal(err)
		}
		got.Metadata["owner"] = "mallory"
	}
	if got, err := a.GetBranch(ctx, "meta"); err != nil || got.Metadata["owner"] != "ann" {
		t.Errorf("after callers changed what reads returned, GetBranch = %v, %v; want owner ann", got.Metadata, err)
	}
	if err := portable.ChangeBranchThenFail(ctx, a, "x", "changed"); err == nil {
		t.Fatal("the failing update succeeded")
	}
	if got, err := a.GetBranch(ctx, "x"); err != nil || got.Description != "first" {
		t.Errorf("after a failed update GetBranch = %q, %v; want first", got.Description, err)
	}
	for i := range 3 {
		name := fmt.Sprintf("y%d", i)
		if _, err := b.CreateBranch(ctx, store.BranchSpec{Name: name, From: "x"}); err != nil {
			t.Fatal(err)
		}
		got, err := a.GetBranch(ctx, name)
		if err != nil || got.Parent != "x" {
			t.Fatalf("a reads b's branch %s: parent %q, %v; want x", name, got.Parent, err)
		}
	}
	if err := b.DeleteBranch(ctx, "y0"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetBranch(ctx, "y0"); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("a reads a branch b deleted: %v; want not found", err)
	}

	// Merge records: each opener reads those made through the other, after those it
	// has read already, and a failed merge leaves none behind.
	for i, s := range []*portable.Store{a, b, a, b} {
		src := fmt.Sprintf("y%d", i%2+1)
		x, err := s.GetBranch(ctx, "x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApplyMerge(ctx, store.MergePlan{Source: src, Target: "x", ExpectHead: x.Head,
			Record: store.MergeRecord{ID: fmt.Sprintf("m%d", i), Source: src, Target: "x", Strategy: store.Native,
				Merged: []store.MergeItem{{Ref: store.FactRef("f"), Action: store.ActionAdopt}}}}); err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]*portable.Store{"a": a, "b": b} {
			ms, err := r.ListMerges(ctx, store.MergeFilter{})
			if err != nil || len(ms) != i+1 || ms[0].ID != fmt.Sprintf("m%d", i) {
				t.Fatalf("after merge %d, %s lists %d merges, newest %v (%v)", i, name, len(ms), ms, err)
			}
		}
	}
	ms, err := a.ListMerges(ctx, store.MergeFilter{})
	if err != nil || len(ms) == 0 {
		t.Fatal(ms, err)
	}
	ms[0].Merged[0].Action = store.ActionSkip
	if again, err := a.ListMerges(ctx, store.MergeFilter{}); err != nil || again[0].Merged[0].Action != store.ActionAdopt {
		t.Errorf("after a caller changed what ListMerges returned, it returns %+v, %v", again[0], err)
	}
	if _, err := a.ApplyMerge(ctx, store.MergePlan{Source: "y1", Target: "x", ExpectHead: 1_000_000,
		Record: store.MergeRecord{ID: "stale", Source: "y1", Target: "x", Strategy: store.Native}}); !errors.Is(err, store.ErrStale) {
		t.Fatalf("a merge against an old head: %v; want ErrStale", err)
	}
	if ms, err := a.ListMerges(ctx, store.MergeFilter{}); err != nil || len(ms) != 4 {
		t.Errorf("after a failed merge a lists %d merges (%v); want 4", len(ms), err)
	}
}
