package merge

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

func TestCherryPick(t *testing.T) {
	t.Parallel()
	f1base := fact("f1", "auth uses sessions")
	f1diff := withText(f1base, "auth uses JWT")
	f1now := withText(f1base, "auth uses JWT with rotation") // changed again since the diff
	o1 := store.Observation{ID: "o1", Type: store.ObsDecision, Summary: "use JWT", CreatedAt: t0}
	f3 := fact("f3", "cookies hold the session")
	s1 := child(fact("s1", "sessions last a day"), "p")
	t1 := child(fact("t1", "sessions last an hour"), "p")
	f9 := fact("f9", "not picked")
	d := diffOf(
		[]store.Change{updated(f1base, f1diff), deleted(f3), added(f9), added(s1)},
		[]store.Change{added(t1)},
		bothSuperseded("p", added(s1), added(t1)),
	)
	fs := newFake(d).
		with(src, f1now, o1, s1, f9).
		with(tgt, f1base, o1, f3, t1)
	res, err := testEngine(fs).Merge(context.Background(), Request{
		Source: src, Target: tgt, Strategy: store.CherryPick,
		Pick: []store.Ref{ref(f1now), ref(o1), ref(f3), ref(s1), ref(f1now)},
	})
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	want := wantPlan(store.CherryPick)
	want.Puts = []store.Record{store.WithBranch(f1now, src), store.WithBranch(s1, src), supersededNow(t1)}
	want.Deletes = []store.Ref{ref(f3)}
	want.Record.Merged = []store.MergeItem{
		{Ref: ref(f1now), Action: store.ActionAdopt},
		{Ref: ref(f3), Action: store.ActionDelete},
		{Ref: ref(s1), Action: store.ActionAdopt},
		{Ref: ref(t1), Action: store.ActionSupersede},
	}
	want.Record.Rejected = []store.MergeItem{{Ref: ref(o1), Action: store.ActionSkip}}
	want.Record.Resolutions = []store.Resolution{{Ref: factRef("p"), Action: store.ActionAdopt, By: "cherry_pick", ResultRef: ref(s1)}}
	if diff := cmp.Diff([]store.MergePlan{want}, fs.plans, ignoreReasons); diff != "" {
		t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
	}
	if res.Plan.MarkMerged {
		t.Error("a cherry-pick marks the source merged")
	}
}

func TestCherryPickBothChangedSourceWins(t *testing.T) {
	t.Parallel()
	base := fact("f2", "tokens expire in 1h")
	s, tg := withText(base, "tokens expire in 2h"), withText(base, "tokens expire in 30m")
	c := bothChanged(updated(base, s), updated(base, tg))
	fs := newFake(diffOf([]store.Change{c.Source}, []store.Change{c.Target}, c)).with(src, s).with(tgt, tg)
	if _, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.CherryPick, Pick: []store.Ref{ref(s)}}); err != nil {
		t.Fatalf("Merge: %v", err)
	}
	want := wantPlan(store.CherryPick)
	want.Puts = []store.Record{store.WithBranch(s, src)}
	want.Record.Merged = []store.MergeItem{{Ref: ref(s), Action: store.ActionAdopt}}
	want.Record.Resolutions = []store.Resolution{{Ref: ref(s), Action: store.ActionAdopt, By: "cherry_pick", ResultRef: ref(s)}}
	if diff := cmp.Diff([]store.MergePlan{want}, fs.plans, ignoreReasons); diff != "" {
		t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
	}
}

func TestCherryPickErrors(t *testing.T) {
	t.Parallel()
	f1 := fact("f1", "auth uses JWT")
	t.Run("missing on the source", func(t *testing.T) {
		t.Parallel()
		fs := newFake(diffOf([]store.Change{added(f1)}, nil)).with(src, f1)
		missing := factRef("f404")
		_, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.CherryPick, Pick: []store.Ref{ref(f1), missing}})
		var verr *store.ValidationError
		if !errors.As(err, &verr) {
			t.Fatalf("Merge: err = %v, want a *store.ValidationError", err)
		}
		if verr.Field != "Request.Pick" || verr.Value != missing.String() {
			t.Errorf("error names %s %q, want Request.Pick %q", verr.Field, verr.Value, missing)
		}
		if !errors.Is(err, store.ErrNotFound) || !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("err = %v matches ErrNotFound %v, ErrInvalidArgument %v; want both",
				err, errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalidArgument))
		}
		if err.Error() != verr.Error() {
			t.Errorf("message %q, want %q", err, verr)
		}
		if fs.applyCalls != 0 {
			t.Errorf("ApplyMerge called %d times", fs.applyCalls)
		}
	})
	t.Run("store error", func(t *testing.T) {
		t.Parallel()
		fs := newFake(diffOf(nil, nil)).with(src, f1)
		fs.getErr = map[store.Ref]error{ref(f1): store.ErrClosed}
		_, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.CherryPick, Pick: []store.Ref{ref(f1)}})
		if !errors.Is(err, store.ErrClosed) {
			t.Fatalf("Merge: err = %v, want ErrClosed", err)
		}
	})
}

func TestSquash(t *testing.T) {
	t.Parallel()
	p := fact("p", "tokens expire in 1h")
	pSup := superseded(p)
	a1 := superseded(child(fact("a1", "tokens expire in 2h"), "p"))
	a2 := superseded(child(fact("a2", "tokens expire in 3h"), "a1"))
	a3 := child(fact("a3", "tokens expire in 4h"), "a2")
	b1 := superseded(child(fact("b1", "cache for 5m"), "gone"))
	b2 := child(fact("b2", "cache for 10m"), "b1")
	c1 := fact("c1", "auth uses JWT")
	d1 := superseded(child(fact("d1", "retry twice"), "q"))
	d2 := child(fact("d2", "retry three times"), "d1")
	q := fact("q", "retry once")
	x1 := superseded(fact("x1", "superseded, but not by a fact of this merge"))
	d := diffOf([]store.Change{
		added(a1), added(a2), added(a3), added(b1), added(b2), added(c1),
		added(d1), added(d2), updated(p, pSup), added(x1),
	}, nil)
	fs := newFake(d).with(tgt, p, q)
	if _, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.Squash}); err != nil {
		t.Fatalf("Merge: %v", err)
	}
	want := wantPlan(store.Squash)
	want.Puts = []store.Record{child(a3, "p"), child(b2, ""), c1, child(d2, "q"), pSup, x1}
	want.Record.Merged = []store.MergeItem{
		{Ref: ref(a3), Action: store.ActionAdopt, Reason: "squashed chain: ParentID set to p"},
		{Ref: ref(b2), Action: store.ActionAdopt, Reason: "squashed chain: no ancestor on the target, ParentID cleared"},
		{Ref: ref(c1), Action: store.ActionAdopt},
		{Ref: ref(d2), Action: store.ActionAdopt, Reason: "squashed chain: ParentID set to q"},
		{Ref: ref(p), Action: store.ActionAdopt},
		{Ref: ref(x1), Action: store.ActionAdopt},
	}
	want.Record.Rejected = []store.MergeItem{
		{Ref: ref(a1), Action: store.ActionSkip, Reason: "squashed"},
		{Ref: ref(a2), Action: store.ActionSkip, Reason: "squashed"},
		{Ref: ref(b1), Action: store.ActionSkip, Reason: "squashed"},
		{Ref: ref(d1), Action: store.ActionSkip, Reason: "squashed"},
	}
	if diff := cmp.Diff([]store.MergePlan{want}, fs.plans); diff != "" {
		t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
	}
}

func TestSquashConflictOnChain(t *testing.T) {
	t.Parallel()
	p := fact("p", "sessions last a week")
	s1 := superseded(child(fact("s1", "sessions last a day"), "p"))
	s2 := child(fact("s2", "sessions last two days"), "s1")
	t1 := child(fact("t1", "sessions last an hour"), "p")
	newDiff := func() *store.Diff {
		return diffOf(
			[]store.Change{added(s1), added(s2)},
			[]store.Change{added(t1)},
			bothSuperseded("p", added(s1), added(t1)),
		)
	}
	accept := wantPlan(store.Squash)
	accept.Puts = []store.Record{child(s2, "p"), supersededNow(t1)}
	accept.Record.Merged = []store.MergeItem{
		{Ref: ref(s2), Action: store.ActionAdopt},
		{Ref: ref(t1), Action: store.ActionSupersede},
	}
	accept.Record.Rejected = []store.MergeItem{{Ref: ref(s1), Action: store.ActionSkip}}
	accept.Record.Resolutions = []store.Resolution{{Ref: ref(p), Action: store.ActionAdopt, By: "policy", ResultRef: ref(s2)}}

	skip := wantPlan(store.Squash)
	skip.Record.Rejected = []store.MergeItem{
		{Ref: ref(s1), Action: store.ActionSkip},
		{Ref: ref(s2), Action: store.ActionKeepTarget},
	}
	skip.Record.Resolutions = []store.Resolution{{Ref: ref(p), Action: store.ActionKeepTarget, By: "policy"}}

	for _, tt := range []struct {
		policy store.ConflictPolicy
		want   store.MergePlan
	}{
		{store.ConflictAccept, accept},
		{store.ConflictSkip, skip},
	} {
		t.Run(string(tt.policy), func(t *testing.T) {
			t.Parallel()
			fs := newFake(newDiff()).with(tgt, p, t1)
			if _, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.Squash, Policy: tt.policy}); err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if diff := cmp.Diff([]store.MergePlan{tt.want}, fs.plans, ignoreReasons); diff != "" {
				t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSquashCycleAndStoreError(t *testing.T) {
	t.Parallel()
	a := superseded(child(fact("a", "one"), "b"))
	b := superseded(child(fact("b", "two"), "a"))
	c := child(fact("c", "three"), "a")
	t.Run("cycle", func(t *testing.T) {
		t.Parallel()
		fs := newFake(diffOf([]store.Change{added(a), added(b), added(c)}, nil))
		if _, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.Squash}); err != nil {
			t.Fatalf("Merge: %v", err)
		}
		want := wantPlan(store.Squash)
		want.Puts = []store.Record{child(c, "")}
		want.Record.Merged = []store.MergeItem{{Ref: ref(c), Action: store.ActionAdopt}}
		want.Record.Rejected = []store.MergeItem{{Ref: ref(a), Action: store.ActionSkip}, {Ref: ref(b), Action: store.ActionSkip}}
		if diff := cmp.Diff([]store.MergePlan{want}, fs.plans, ignoreReasons); diff != "" {
			t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("store error", func(t *testing.T) {
		t.Parallel()
		fs := newFake(diffOf([]store.Change{added(a), added(b), added(c)}, nil))
		fs.getErr = map[store.Ref]error{ref(a): store.ErrClosed}
		_, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.Squash})
		if !errors.Is(err, store.ErrClosed) {
			t.Fatalf("Merge: err = %v, want ErrClosed", err)
		}
		if fs.applyCalls != 0 {
			t.Errorf("ApplyMerge called %d times", fs.applyCalls)
		}
	})
}
