package merge

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

func TestNativeAdoptsSourceChanges(t *testing.T) {
	t.Parallel()
	f1 := fact("f1", "auth uses JWT")
	o1base := store.Observation{ID: "o1", Type: store.ObsDiscovery, Summary: "login fails", CreatedAt: t0}
	o1 := o1base
	o1.Summary = "login fails on expired tokens"
	r1 := store.Relation{ID: "r1", Source: "AuthService", Target: "TokenStore", Type: "calls", CreatedAt: t0}
	targetOnly := fact("t9", "written on the target")
	d := diffOf(
		[]store.Change{added(f1), updated(o1base, o1), deleted(r1)},
		[]store.Change{added(targetOnly)},
	)
	fs := newFake(d)
	res, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, MergedBy: "agent-a", Message: "fix auth"})
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	want := wantPlan(store.Native)
	want.Puts = []store.Record{f1, o1}
	want.Deletes = []store.Ref{ref(r1)}
	want.Record.MergedBy, want.Record.Message = "agent-a", "fix auth"
	want.Record.Merged = []store.MergeItem{
		{Ref: ref(f1), Action: store.ActionAdopt},
		{Ref: ref(o1), Action: store.ActionAdopt},
		{Ref: ref(r1), Action: store.ActionDelete},
	}
	if diff := cmp.Diff([]store.MergePlan{want}, fs.plans); diff != "" {
		t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Record, res.Record); diff != "" {
		t.Errorf("Record mismatch (-want +got):\n%s", diff)
	}
	if !res.Applied || res.Diff != d {
		t.Errorf("Applied = %v, Diff = %p, want true, %p", res.Applied, res.Diff, d)
	}
}

// conflictScenario is a diff with one plain source change (f1), one BothChanged
// conflict (f2) and one BothSuperseded conflict (s1 and t1 both supersede p).
type conflictScenario struct {
	f1, f2base, f2src, f2tgt, s1, t1 store.Fact
	diff                             *store.Diff
}

func newConflictScenario() conflictScenario {
	var s conflictScenario
	s.f1 = fact("f1", "auth uses JWT")
	s.f2base = fact("f2", "tokens expire in 1h")
	s.f2src, s.f2tgt = withText(s.f2base, "tokens expire in 2h"), withText(s.f2base, "tokens expire in 30m")
	s.s1 = child(fact("s1", "sessions last a day"), "p")
	s.t1 = child(fact("t1", "sessions last an hour"), "p")
	f2s, f2t := updated(s.f2base, s.f2src), updated(s.f2base, s.f2tgt)
	s.diff = diffOf(
		[]store.Change{added(s.f1), f2s, added(s.s1)},
		[]store.Change{f2t, added(s.t1)},
		bothChanged(f2s, f2t),
		bothSuperseded("p", added(s.s1), added(s.t1)),
	)
	return s
}

func TestNativeConflictPolicies(t *testing.T) {
	t.Parallel()
	s := newConflictScenario()
	skip := wantPlan(store.Native)
	skip.Puts = []store.Record{s.f1}
	skip.Record.Merged = []store.MergeItem{{Ref: ref(s.f1), Action: store.ActionAdopt}}
	skip.Record.Rejected = []store.MergeItem{
		{Ref: ref(s.f2src), Action: store.ActionKeepTarget, Reason: "conflict (both_changed): policy skip keeps the target's version"},
		{Ref: ref(s.s1), Action: store.ActionKeepTarget, Reason: "conflict (both_superseded): policy skip keeps the target's version"},
	}
	skip.Record.Resolutions = []store.Resolution{
		{Ref: ref(s.f2src), Action: store.ActionKeepTarget, By: "policy", Reason: "skip: the target's version is kept"},
		{Ref: factRef("p"), Action: store.ActionKeepTarget, By: "policy", Reason: "skip: the target's version is kept"},
	}

	accept := wantPlan(store.Native)
	accept.Puts = []store.Record{s.f1, s.f2src, s.s1, supersededNow(s.t1)}
	accept.Record.Merged = []store.MergeItem{
		{Ref: ref(s.f1), Action: store.ActionAdopt},
		{Ref: ref(s.f2src), Action: store.ActionAdopt, Reason: "conflict (both_changed): policy accept takes the source's version"},
		{Ref: ref(s.s1), Action: store.ActionAdopt, Reason: "conflict (both_superseded): policy accept takes the source's version"},
		{Ref: ref(s.t1), Action: store.ActionSupersede, Reason: "superseded by fact/s1"},
	}
	accept.Record.Resolutions = []store.Resolution{
		{Ref: ref(s.f2src), Action: store.ActionAdopt, By: "policy", Reason: "accept: the source's version is taken", ResultRef: ref(s.f2src)},
		{Ref: factRef("p"), Action: store.ActionAdopt, By: "policy", Reason: "accept: the source's version is taken", ResultRef: ref(s.s1)},
	}

	for _, tt := range []struct {
		name     string
		strategy store.Strategy
		policy   store.ConflictPolicy
		want     store.MergePlan
	}{
		{"skip", store.Native, store.ConflictSkip, skip},
		{"accept", store.Native, store.ConflictAccept, accept},
		{"squash skip", store.Squash, store.ConflictSkip, skip},
		{"squash accept", store.Squash, store.ConflictAccept, accept},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := newFake(s.diff)
			if _, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: tt.strategy, Policy: tt.policy}); err != nil {
				t.Fatalf("Merge: %v", err)
			}
			want := tt.want
			want.Record.Strategy = tt.strategy
			if diff := cmp.Diff([]store.MergePlan{want}, fs.plans); diff != "" {
				t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNativeFailPolicyRefuses(t *testing.T) {
	t.Parallel()
	s := newConflictScenario()
	for _, tt := range []struct {
		strategy store.Strategy
		policy   store.ConflictPolicy
	}{
		{store.Native, ""},
		{store.Native, store.ConflictFail},
		{store.Squash, ""},
		{"", store.ConflictFail},
	} {
		fs := newFake(s.diff)
		_, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: tt.strategy, Policy: tt.policy})
		var conflict *store.MergeConflictError
		if !errors.As(err, &conflict) || !errors.Is(err, store.ErrConflict) {
			t.Fatalf("Merge(%q, %q): err = %v, want a *store.MergeConflictError", tt.strategy, tt.policy, err)
		}
		want := &store.MergeConflictError{Source: src, Target: tgt, Conflicts: s.diff.Conflicts}
		if diff := cmp.Diff(want, conflict); diff != "" {
			t.Errorf("error mismatch (-want +got):\n%s", diff)
		}
		if fs.applyCalls != 0 {
			t.Errorf("ApplyMerge called %d times after a refused merge", fs.applyCalls)
		}
	}
}

func TestNativeAcceptSourceDeletion(t *testing.T) {
	t.Parallel()
	base := fact("f2", "tokens expire in 1h")
	c := bothChanged(deleted(base), updated(base, withText(base, "tokens expire in 30m")))
	fs := newFake(diffOf([]store.Change{c.Source}, []store.Change{c.Target}, c))
	if _, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Policy: store.ConflictAccept}); err != nil {
		t.Fatalf("Merge: %v", err)
	}
	want := wantPlan(store.Native)
	want.Deletes = []store.Ref{ref(base)}
	want.Record.Merged = []store.MergeItem{{Ref: ref(base), Action: store.ActionDelete}}
	want.Record.Resolutions = []store.Resolution{{Ref: ref(base), Action: store.ActionAdopt, By: "policy"}}
	if diff := cmp.Diff([]store.MergePlan{want}, fs.plans, ignoreReasons); diff != "" {
		t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
	}
}

func TestNativeMalformedDiff(t *testing.T) {
	t.Parallel()
	fs := newFake(diffOf([]store.Change{{Ref: factRef("f1"), Op: store.OpAdded}}, nil))
	if _, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt}); err == nil {
		t.Fatal("Merge: no error for an added change without a record")
	}
	if fs.applyCalls != 0 {
		t.Errorf("ApplyMerge called %d times", fs.applyCalls)
	}
}
