package merge

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

// script returns a resolver that answers every conflict with d.
func script(d Decision) Resolver {
	return ResolverFunc("script", func(context.Context, store.Conflict) (Decision, error) { return d, nil })
}

func TestAutoResolverActions(t *testing.T) {
	t.Parallel()
	base := fact("f2", "tokens expire in 1h")
	f2s, f2t := withText(base, "tokens expire in 2h"), withText(base, "tokens expire in 30m")
	changed := bothChanged(updated(base, f2s), updated(base, f2t))
	srcDeleted := bothChanged(deleted(base), updated(base, f2t))
	tgtDeleted := bothChanged(updated(base, f2s), deleted(base))
	s1 := child(fact("s1", "sessions last a day"), "p")
	t1 := child(fact("t1", "sessions last an hour"), "p")
	sup := bothSuperseded("p", added(s1), added(t1))
	relBase := store.Relation{ID: "r1", Source: "AuthService", Target: "TokenStore", Type: "calls", Confidence: 1, CreatedAt: t0, ValidFrom: t0}
	relS, relT := relBase, relBase
	relS.Type, relT.Type = "reads", "writes"
	rel := bothChanged(updated(relBase, relS), updated(relBase, relT))
	copyID := keepBothID(src, ref(base))
	by := "resolver:script"

	// merged facts get id2 (id1 is the merge record) and the engine's clock.
	mergedFact := func(parent string) store.Fact {
		return store.Fact{ID: "id2", Text: "tokens expire in 1h, refreshed every 30m", Confidence: 0.9, Status: store.FactActive,
			ParentID: parent, CreatedAt: now, UpdatedAt: now}
	}
	mergedRel := relBase
	mergedRel.Type = "reads_writes"

	tests := []struct {
		name        string
		conflict    store.Conflict
		decision    Decision
		puts        []store.Record
		deletes     []store.Ref
		merged      []store.MergeItem
		rejected    []store.MergeItem
		resolutions []store.Resolution
	}{
		{
			name: "adopt both changed", conflict: changed, decision: Decision{Action: store.ActionAdopt},
			puts:        []store.Record{f2s},
			merged:      []store.MergeItem{{Ref: ref(base), Action: store.ActionAdopt}},
			resolutions: []store.Resolution{{Ref: ref(base), Action: store.ActionAdopt, By: by, ResultRef: ref(base)}},
		},
		{
			name: "adopt a deletion", conflict: srcDeleted, decision: Decision{Action: store.ActionAdopt},
			deletes:     []store.Ref{ref(base)},
			merged:      []store.MergeItem{{Ref: ref(base), Action: store.ActionDelete}},
			resolutions: []store.Resolution{{Ref: ref(base), Action: store.ActionAdopt, By: by}},
		},
		{
			name: "adopt both superseded", conflict: sup, decision: Decision{Action: store.ActionAdopt},
			puts:        []store.Record{s1, supersededNow(t1)},
			merged:      []store.MergeItem{{Ref: ref(s1), Action: store.ActionAdopt}, {Ref: ref(t1), Action: store.ActionSupersede}},
			resolutions: []store.Resolution{{Ref: factRef("p"), Action: store.ActionAdopt, By: by, ResultRef: ref(s1)}},
		},
		{
			name: "keep target", conflict: changed, decision: Decision{Action: store.ActionKeepTarget, Reason: "target is verified"},
			rejected:    []store.MergeItem{{Ref: ref(base), Action: store.ActionKeepTarget}},
			resolutions: []store.Resolution{{Ref: ref(base), Action: store.ActionKeepTarget, By: by}},
		},
		{
			name: "keep target of both superseded", conflict: sup, decision: Decision{Action: store.ActionKeepTarget},
			rejected:    []store.MergeItem{{Ref: ref(s1), Action: store.ActionKeepTarget}},
			resolutions: []store.Resolution{{Ref: factRef("p"), Action: store.ActionKeepTarget, By: by}},
		},
		{
			name: "keep both changed", conflict: changed, decision: Decision{Action: store.ActionKeepBoth},
			puts:        []store.Record{withID(f2s, copyID)},
			merged:      []store.MergeItem{{Ref: factRef(copyID), Action: store.ActionKeepBoth}},
			resolutions: []store.Resolution{{Ref: ref(base), Action: store.ActionKeepBoth, By: by, ResultRef: factRef(copyID)}},
		},
		{
			name: "keep both, target deleted", conflict: tgtDeleted, decision: Decision{Action: store.ActionKeepBoth},
			puts:        []store.Record{f2s},
			merged:      []store.MergeItem{{Ref: ref(base), Action: store.ActionKeepBoth}},
			resolutions: []store.Resolution{{Ref: ref(base), Action: store.ActionKeepBoth, By: by, ResultRef: ref(base)}},
		},
		{
			name: "keep both, source deleted", conflict: srcDeleted, decision: Decision{Action: store.ActionKeepBoth},
			rejected:    []store.MergeItem{{Ref: ref(base), Action: store.ActionKeepTarget}},
			resolutions: []store.Resolution{{Ref: ref(base), Action: store.ActionKeepBoth, By: by}},
		},
		{
			name: "keep both superseded", conflict: sup, decision: Decision{Action: store.ActionKeepBoth},
			puts:        []store.Record{s1},
			merged:      []store.MergeItem{{Ref: ref(s1), Action: store.ActionKeepBoth}},
			resolutions: []store.Resolution{{Ref: factRef("p"), Action: store.ActionKeepBoth, By: by, ResultRef: ref(s1)}},
		},
		{
			name: "merged fact of both changed", conflict: changed,
			decision:    Decision{Action: store.ActionMerged, Merged: store.Fact{Text: "tokens expire in 1h, refreshed every 30m", Confidence: 0.9}},
			puts:        []store.Record{mergedFact("f2"), supersededNow(f2t)},
			merged:      []store.MergeItem{{Ref: factRef("id2"), Action: store.ActionMerged}, {Ref: ref(base), Action: store.ActionSupersede}},
			resolutions: []store.Resolution{{Ref: ref(base), Action: store.ActionMerged, By: by, ResultRef: factRef("id2")}},
		},
		{
			name: "merged fact of both superseded", conflict: sup,
			decision: Decision{Action: store.ActionMerged, Merged: store.Fact{Text: "tokens expire in 1h, refreshed every 30m", Confidence: 0.9}},
			puts:     []store.Record{mergedFact("p"), supersededNow(s1), supersededNow(t1)},
			merged: []store.MergeItem{
				{Ref: factRef("id2"), Action: store.ActionMerged},
				{Ref: ref(s1), Action: store.ActionSupersede},
				{Ref: ref(t1), Action: store.ActionSupersede},
			},
			resolutions: []store.Resolution{{Ref: factRef("p"), Action: store.ActionMerged, By: by, ResultRef: factRef("id2")}},
		},
		{
			name: "merged fact keeping the conflict's id", conflict: changed,
			decision:    Decision{Action: store.ActionMerged, Merged: withText(base, "tokens expire in 1h, refreshed every 30m")},
			puts:        []store.Record{withText(base, "tokens expire in 1h, refreshed every 30m")},
			merged:      []store.MergeItem{{Ref: ref(base), Action: store.ActionMerged}},
			resolutions: []store.Resolution{{Ref: ref(base), Action: store.ActionMerged, By: by, ResultRef: ref(base)}},
		},
		{
			name: "merged relation", conflict: rel,
			decision:    Decision{Action: store.ActionMerged, Merged: withID(mergedRel, "")},
			puts:        []store.Record{mergedRel},
			merged:      []store.MergeItem{{Ref: ref(relBase), Action: store.ActionMerged}},
			resolutions: []store.Resolution{{Ref: ref(relBase), Action: store.ActionMerged, By: by, ResultRef: ref(relBase)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := tt.conflict
			plain := fact("f1", "auth uses JWT")
			fs := newFake(diffOf([]store.Change{added(plain), c.Source}, []store.Change{c.Target}, c))
			e := testEngine(fs)
			e.Resolver = script(tt.decision)
			e.Gate = GateFunc("never", func(context.Context, *store.MergePlan) ([]store.Offense, error) { return nil, nil })
			if _, err := e.Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.Auto}); err != nil {
				t.Fatalf("Merge: %v", err)
			}
			want := wantPlan(store.Auto)
			want.Puts = append([]store.Record{plain}, tt.puts...)
			want.Deletes = tt.deletes
			want.Record.Merged = append([]store.MergeItem{{Ref: ref(plain), Action: store.ActionAdopt}}, tt.merged...)
			want.Record.Rejected = tt.rejected
			want.Record.Resolutions = tt.resolutions
			if diff := cmp.Diff([]store.MergePlan{want}, fs.plans, ignoreReasons); diff != "" {
				t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAutoResolverReasonIsRecorded(t *testing.T) {
	t.Parallel()
	base := fact("f2", "tokens expire in 1h")
	c := bothChanged(updated(base, withText(base, "2h")), updated(base, withText(base, "30m")))
	fs := newFake(diffOf([]store.Change{c.Source}, []store.Change{c.Target}, c))
	e := testEngine(fs)
	e.Resolver = script(Decision{Action: store.ActionKeepTarget, Reason: "the target is verified"})
	res, err := e.Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.Auto})
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	want := []store.Resolution{{Ref: ref(base), Action: store.ActionKeepTarget, By: "resolver:script", Reason: "the target is verified"}}
	if diff := cmp.Diff(want, res.Record.Resolutions); diff != "" {
		t.Errorf("Resolutions mismatch (-want +got):\n%s", diff)
	}
}

func TestAutoResolverErrors(t *testing.T) {
	t.Parallel()
	base := fact("f2", "tokens expire in 1h")
	c := bothChanged(updated(base, withText(base, "2h")), updated(base, withText(base, "30m")))
	boom := errors.New("model unavailable")
	obs := store.Observation{ID: "o1", Type: store.ObsInsight, Summary: "x"}
	tests := []struct {
		name     string
		resolver Resolver
		field    string // of the *store.ValidationError, when one is expected
		target   error
	}{
		{"resolver error", ResolverFunc("llm", func(context.Context, store.Conflict) (Decision, error) { return Decision{}, boom }), "", boom},
		{"unknown action", script(Decision{Action: store.ActionDelete}), "Decision.Action", store.ErrInvalidArgument},
		{"empty action", script(Decision{}), "Decision.Action", store.ErrInvalidArgument},
		{"merged without record", script(Decision{Action: store.ActionMerged}), "Decision.Merged", store.ErrInvalidArgument},
		{"merged of another kind", script(Decision{Action: store.ActionMerged, Merged: obs}), "Decision.Merged", store.ErrInvalidArgument},
		{"merged invalid record", script(Decision{Action: store.ActionMerged, Merged: store.Fact{Text: " "}}), "Fact.Text", store.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := newFake(diffOf([]store.Change{added(fact("f1", "plain")), c.Source}, []store.Change{c.Target}, c))
			e := testEngine(fs)
			e.Resolver = tt.resolver
			_, err := e.Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.Auto})
			if !errors.Is(err, tt.target) {
				t.Fatalf("Merge: err = %v, want %v", err, tt.target)
			}
			if tt.field != "" {
				var verr *store.ValidationError
				if !errors.As(err, &verr) || verr.Field != tt.field {
					t.Errorf("Merge: err = %v, want a *store.ValidationError on %s", err, tt.field)
				}
			}
			if fs.applyCalls != 0 {
				t.Errorf("ApplyMerge called %d times after the resolver failed", fs.applyCalls)
			}
		})
	}
}

func TestAutoUsesDefaultResolver(t *testing.T) {
	t.Parallel()
	base := fact("f2", "tokens expire in 1h")
	s, tg := withText(base, "tokens expire in 2h"), withText(base, "tokens expire in 30m")
	s.Confidence, tg.Confidence = 0.9, 0.5
	c := bothChanged(updated(base, s), updated(base, tg))
	fs := newFake(diffOf([]store.Change{c.Source}, []store.Change{c.Target}, c))
	res, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.Auto})
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	want := wantPlan(store.Auto)
	want.Puts = []store.Record{s}
	want.Record.Merged = []store.MergeItem{{Ref: ref(s), Action: store.ActionAdopt}}
	want.Record.Resolutions = []store.Resolution{{Ref: ref(s), Action: store.ActionAdopt, By: "resolver:default", ResultRef: ref(s)}}
	if diff := cmp.Diff([]store.MergePlan{want}, fs.plans, ignoreReasons); diff != "" {
		t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
	}
	if res.Record.Resolutions[0].Reason == "" {
		t.Error("the default resolver gave no reason")
	}
}

func TestDefaultResolver(t *testing.T) {
	t.Parallel()
	f := fact("f2", "tokens expire in 1h")
	withConf := func(f store.Fact, c float64) store.Fact { f.Confidence = c; return f }
	withUpdated := func(f store.Fact) store.Fact { f.UpdatedAt = t1; return f }
	rel := store.Relation{ID: "r1", Source: "A", Target: "B", Type: "calls", CreatedAt: t0}
	relLater := rel
	relLater.CreatedAt = t1
	conv := store.Conversation{ID: "c1", Title: "auth", CreatedAt: t0, UpdatedAt: t0}
	convLater := conv
	convLater.UpdatedAt = t1
	msg := store.Message{ID: "m1", ConversationID: "c1", Role: store.RoleUser, Content: "hi", CreatedAt: t0}

	conflict := func(s, t store.Record) store.Conflict {
		sc := store.Change{Ref: store.RefOf(f), Op: store.OpDeleted}
		tc := sc
		if s != nil {
			sc = updated(f, s)
			sc.Before = nil
		}
		if t != nil {
			tc = updated(f, t)
			tc.Before = nil
		}
		return store.Conflict{Ref: sc.Ref, Reason: store.BothChanged, Source: sc, Target: tc}
	}
	s1, t1f := child(fact("s1", "a day"), "p"), child(fact("t1", "an hour"), "p")

	tests := []struct {
		name string
		c    store.Conflict
		want store.MergeAction
	}{
		{"source more confident", conflict(withConf(f, 0.9), withConf(f, 0.5)), store.ActionAdopt},
		{"target more confident", conflict(withConf(f, 0.5), withConf(f, 0.9)), store.ActionKeepTarget},
		{"confidence beats recency", conflict(withConf(f, 0.9), withUpdated(withConf(f, 0.5))), store.ActionAdopt},
		{"source newer", conflict(withUpdated(f), f), store.ActionAdopt},
		{"target newer", conflict(f, withUpdated(f)), store.ActionKeepTarget},
		{"tie goes to source", conflict(f, f), store.ActionAdopt},
		{"source deleted", conflict(nil, f), store.ActionKeepTarget},
		{"target deleted", conflict(f, nil), store.ActionAdopt},
		{"both superseded, target more confident", bothSuperseded("p", added(withConf(s1, 0.4)), added(t1f)), store.ActionKeepTarget},
		{"both superseded, tie", bothSuperseded("p", added(s1), added(t1f)), store.ActionAdopt},
		{"relation source newer", conflict(relLater, rel), store.ActionAdopt},
		{"relation target newer", conflict(rel, relLater), store.ActionKeepTarget},
		{"conversation target updated later", conflict(conv, convLater), store.ActionKeepTarget},
		{"conversation source updated later", conflict(convLater, conv), store.ActionAdopt},
		{"message tie", conflict(msg, msg), store.ActionAdopt},
	}
	r := DefaultResolver()
	if r.Name() != "default" {
		t.Errorf("Name() = %q, want default", r.Name())
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := r.Resolve(context.Background(), tt.c)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if d.Action != tt.want || d.Merged != nil || d.Reason == "" {
				t.Errorf("Resolve = %+v, want action %s with a reason", d, tt.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Resolve(ctx, tests[0].c); !errors.Is(err, context.Canceled) {
		t.Errorf("Resolve with a canceled context: err = %v", err)
	}
}

func TestResolverFunc(t *testing.T) {
	t.Parallel()
	r := ResolverFunc("noop", nil)
	if r.Name() != "noop" {
		t.Errorf("Name() = %q", r.Name())
	}
	d, err := r.Resolve(context.Background(), store.Conflict{})
	if err != nil || d.Action != store.ActionKeepTarget {
		t.Errorf("Resolve = %+v, %v; want keep_target", d, err)
	}
}
