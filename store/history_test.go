package store_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

func rev(b string, r uint64) store.BranchRev { return store.BranchRev{Branch: b, Rev: r} }

func TestMergeBase(t *testing.T) {
	t.Parallel()
	// main forks x at 2 and y at 3, x forks z at 20; each case adds its merge points.
	forks := func() *store.History {
		h := &store.History{}
		h.AddBranch("x", "main", 2)
		h.AddBranch("y", "main", 3)
		h.AddBranch("z", "x", 20)
		return h
	}
	tests := []struct {
		name   string
		merges []store.MergePoint
		a, b   store.BranchRev
		want   *store.Base
	}{
		{"fork", nil, rev("x", 100), rev("main", 100), &store.Base{Points: []store.BranchRev{rev("main", 2)}}},
		{"siblings", nil, rev("x", 100), rev("y", 100), &store.Base{Points: []store.BranchRev{rev("main", 2)}}},
		{"after a merge, both ways",
			[]store.MergePoint{{Target: "main", At: 10, Source: "x", SourceAt: 8}},
			rev("main", 100), rev("x", 100), &store.Base{Points: []store.BranchRev{rev("x", 8)}}},
		{"a merge after the read does not count",
			[]store.MergePoint{{Target: "main", At: 10, Source: "x", SourceAt: 8}},
			rev("main", 9), rev("x", 100), &store.Base{Points: []store.BranchRev{rev("main", 2)}}},
		{"a sync of the parent into the child",
			[]store.MergePoint{{Target: "x", At: 10, Source: "main", SourceAt: 9}},
			rev("x", 100), rev("main", 100), &store.Base{Points: []store.BranchRev{rev("main", 9)}}},
		{"criss-cross",
			[]store.MergePoint{{Target: "y", At: 12, Source: "x", SourceAt: 11}, {Target: "x", At: 13, Source: "y", SourceAt: 11}},
			rev("x", 100), rev("y", 100), &store.Base{
				Points: []store.BranchRev{rev("x", 11), rev("y", 11)},
				Below:  &store.Base{Points: []store.BranchRev{rev("main", 2)}},
			}},
		{"a merge before either side wrote",
			// x forked at 2 and was merged back at 2: x@2 and main@2 descend from each
			// other, and one of them is the base.
			[]store.MergePoint{{Target: "main", At: 2, Source: "x", SourceAt: 2}},
			rev("x", 100), rev("main", 100), &store.Base{Points: []store.BranchRev{rev("main", 2)}}},
		{"a merge of a grandchild into its parent before either wrote",
			// z forked from x at 20 and was merged back at 20, then x into main at 30.
			[]store.MergePoint{{Target: "x", At: 20, Source: "z", SourceAt: 20}, {Target: "main", At: 30, Source: "x", SourceAt: 25}},
			rev("z", 100), rev("main", 100), &store.Base{Points: []store.BranchRev{rev("x", 20)}}},
		{"a grandchild after a merge of its parent",
			[]store.MergePoint{{Target: "main", At: 30, Source: "x", SourceAt: 25}},
			rev("z", 100), rev("main", 100), &store.Base{Points: []store.BranchRev{rev("x", 20)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hh := forks()
			for _, m := range tt.merges {
				hh.AddMerge(m)
			}
			if d := cmp.Diff(tt.want, hh.MergeBase(tt.a, tt.b)); d != "" {
				t.Errorf("MergeBase (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.want, hh.MergeBase(tt.b, tt.a)); d != "" {
				t.Errorf("MergeBase reversed (-want +got):\n%s", d)
			}
		})
	}
}

func TestResolveBase(t *testing.T) {
	t.Parallel()
	base := &store.Base{
		Points: []store.BranchRev{rev("x", 11), rev("y", 11)},
		Below:  &store.Base{Points: []store.BranchRev{rev("main", 2)}},
	}
	eq := func(a, b string) bool { return a == b }
	for _, tt := range []struct {
		name       string
		x, y, main string
		want       string
	}{
		{"agree", "v", "v", "old", "v"},
		{"one side changed", "new", "old", "old", "new"},
		{"both changed alike", "new", "new", "old", "new"},
		{"changed differently", "a", "b", "old", "old"},
		{"added on one", "a", "", "", "a"},
	} {
		at := map[store.BranchRev]string{rev("x", 11): tt.x, rev("y", 11): tt.y, rev("main", 2): tt.main}
		got := store.ResolveBase(base, func(p store.BranchRev) string { return at[p] }, eq)
		if got != tt.want {
			t.Errorf("%s: ResolveBase = %q; want %q", tt.name, got, tt.want)
		}
	}
	if got := store.ResolveBase(&store.Base{}, func(store.BranchRev) string { return "x" }, eq); got != "" {
		t.Errorf("ResolveBase of no base = %q; want the zero value", got)
	}
}

func TestRefHelpersAndHitAccessors(t *testing.T) {
	t.Parallel()
	refs := []store.Ref{store.FactRef("a"), store.ObservationRef("b"), store.RelationRef("c"), store.ConversationRef("d"), store.MessageRef("e")}
	want := []string{"fact/a", "observation/b", "relation/c", "conversation/d", "message/e"}
	for i, r := range refs {
		if r.String() != want[i] {
			t.Errorf("ref %d = %s; want %s", i, r, want[i])
		}
	}
	h := store.Hit{Record: store.Fact{ID: "f", Text: "x"}}
	if f, ok := h.Fact(); !ok || f.ID != "f" {
		t.Errorf("Hit.Fact = %+v, %v; want the fact", f, ok)
	}
	if _, ok := h.Observation(); ok {
		t.Error("Hit.Observation of a fact reports true")
	}
	h = store.Hit{Record: store.Observation{ID: "o"}}
	if o, ok := h.Observation(); !ok || o.ID != "o" {
		t.Errorf("Hit.Observation = %+v, %v; want the observation", o, ok)
	}
	if _, ok := h.Fact(); ok {
		t.Error("Hit.Fact of an observation reports true")
	}
}

func TestSentinelsReadWell(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err, general error
		msg          string
	}{
		{store.ErrBranchNotFound, store.ErrNotFound, "day1: branch not found"},
		{store.ErrSnapshotNotFound, store.ErrNotFound, "day1: snapshot not found"},
		{store.ErrBranchExists, store.ErrExists, "day1: branch already exists"},
		{store.ErrSnapshotExists, store.ErrExists, "day1: snapshot already exists"},
	} {
		wrapped := fmt.Errorf("%w: %q", c.err, "x")
		if !errors.Is(wrapped, c.err) || !errors.Is(wrapped, c.general) {
			t.Errorf("%v does not match %v and %v", wrapped, c.err, c.general)
		}
		if got := wrapped.Error(); got != c.msg+`: "x"` {
			t.Errorf("message = %q; want %q", got, c.msg+`: "x"`)
		}
	}
}

// BenchmarkMergeBase measures the merge base of a new task's branch and main after
// n task branches were merged into main: it should grow with n, not with n squared.
func BenchmarkMergeBase(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("merges=%d", n), func(b *testing.B) {
			h := &store.History{}
			at := uint64(1)
			for i := range n {
				task, member := fmt.Sprintf("task/t%d", i), fmt.Sprintf("task/t%d/a", i)
				h.AddBranch(task, store.DefaultBranch, at)
				h.AddBranch(member, task, at)
				h.AddMerge(store.MergePoint{Target: store.DefaultBranch, At: at + 6, Source: member, SourceAt: at + 5})
				at += 7
			}
			h.AddBranch("task/x", store.DefaultBranch, at)
			h.AddBranch("task/x/a", "task/x", at)
			for b.Loop() {
				h.MergeBase(rev("task/x/a", at+5), rev(store.DefaultBranch, at+5))
			}
		})
	}
}

// TestPinsAndRetained checks which versions a retention horizon lets go: main forked
// feature at 4, was snapshotted at 6 and merged into release as of 8; the horizon is
// 10. Versions of main read at one of those points, or after the horizon, stay.
func TestPinsAndRetained(t *testing.T) {
	var h store.History
	h.AddBranch("feature", "main", 4)
	h.AddBranch("late", "main", 12) // forked after the horizon: no pin
	h.AddMerge(store.MergePoint{Target: "release", At: 9, Source: "main", SourceAt: 8})
	pins := h.Pins(10, []store.BranchRev{{Branch: "main", Rev: 6}, {Branch: "main", Rev: 6}})
	if got, want := pins["main"], []uint64{4, 6, 8, 10}; !slices.Equal(got, want) {
		t.Fatalf("pins of main = %v; want %v", got, want)
	}
	if pins["feature"] != nil || pins["release"] != nil {
		t.Errorf("pins of branches nothing points at: %v", pins)
	}
	const never = math.MaxUint64
	for _, c := range []struct {
		seq, next uint64
		want      bool
	}{
		{1, 3, false},     // replaced before the first pin
		{1, 4, false},     // replaced at the fork: the fork reads the new version
		{1, 5, true},      // read at the fork point, 4
		{5, 6, false},     // between pins
		{6, 7, true},      // read by the snapshot
		{7, 8, false},     // replaced at the merge point
		{8, 9, true},      // read as the merge took main
		{9, 10, false},    // replaced at the horizon
		{9, 11, true},     // read at the horizon
		{11, 12, true},    // after the horizon
		{2, never, true},  // current
		{12, never, true}, // current, written after the horizon
	} {
		if got := store.Retained(pins["main"], 10, c.seq, c.next); got != c.want {
			t.Errorf("Retained(main, seq %d, next %d) = %v; want %v", c.seq, c.next, got, c.want)
		}
	}
	if store.Retained(nil, 10, 3, 9) || !store.Retained(nil, 10, 3, 11) {
		t.Error("a branch without pins keeps exactly what the horizon reads")
	}
}
