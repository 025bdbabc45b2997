package merge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/day1ai/day1/store"
)

func TestMergeValidation(t *testing.T) {
	t.Parallel()
	pick := []store.Ref{factRef("f1")}
	tests := []struct {
		name string
		req  Request
		want *store.ValidationError
	}{
		{"empty source", Request{Target: tgt}, &store.ValidationError{Field: "Request.Source"}},
		{"empty target", Request{Source: src}, &store.ValidationError{Field: "Request.Target"}},
		{"bad source", Request{Source: "no spaces", Target: tgt}, &store.ValidationError{Field: "Request.Source", Value: "no spaces"}},
		{"bad target", Request{Source: src, Target: "a//b"}, &store.ValidationError{Field: "Request.Target", Value: "a//b"}},
		{"into itself", Request{Source: tgt, Target: tgt}, &store.ValidationError{Field: "Request.Target", Value: tgt}},
		{"unknown strategy", Request{Source: src, Target: tgt, Strategy: "rebase"}, &store.ValidationError{Field: "Request.Strategy", Value: "rebase"}},
		{"unknown policy", Request{Source: src, Target: tgt, Policy: "theirs"}, &store.ValidationError{Field: "Request.Policy", Value: "theirs"}},
		{"policy with cherry-pick", Request{Source: src, Target: tgt, Strategy: store.CherryPick, Policy: store.ConflictSkip, Pick: pick}, &store.ValidationError{Field: "Request.Policy", Value: "skip"}},
		{"policy with auto", Request{Source: src, Target: tgt, Strategy: store.Auto, Policy: store.ConflictAccept}, &store.ValidationError{Field: "Request.Policy", Value: "accept"}},
		{"pick with native", Request{Source: src, Target: tgt, Pick: pick}, &store.ValidationError{Field: "Request.Pick"}},
		{"pick with squash", Request{Source: src, Target: tgt, Strategy: store.Squash, Pick: pick}, &store.ValidationError{Field: "Request.Pick"}},
		{"cherry-pick without picks", Request{Source: src, Target: tgt, Strategy: store.CherryPick}, &store.ValidationError{Field: "Request.Pick"}},
		{"pick of unknown kind", Request{Source: src, Target: tgt, Strategy: store.CherryPick, Pick: []store.Ref{{Kind: "note", ID: "n1"}}}, &store.ValidationError{Field: "Request.Pick[0].Kind", Value: "note"}},
		{"pick with bad id", Request{Source: src, Target: tgt, Strategy: store.CherryPick, Pick: []store.Ref{factRef("f1"), factRef("")}}, &store.ValidationError{Field: "Request.Pick[1].ID"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := newFake()
			_, err := testEngine(fs).Merge(context.Background(), tt.req)
			var got *store.ValidationError
			if !errors.As(err, &got) {
				t.Fatalf("Merge: err = %v, want a *store.ValidationError", err)
			}
			if !errors.Is(err, store.ErrInvalidArgument) {
				t.Errorf("errors.Is(%v, ErrInvalidArgument) = false", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(store.ValidationError{}, "Reason")); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
			if got.Reason == "" {
				t.Error("error has no reason")
			}
			if fs.diffCalls != 0 || fs.applyCalls != 0 {
				t.Errorf("store called (%d diffs, %d applies) for an invalid request", fs.diffCalls, fs.applyCalls)
			}
		})
	}
}

func TestMergeNeedsStore(t *testing.T) {
	t.Parallel()
	for _, e := range []*Engine{nil, {}} {
		_, err := e.Merge(context.Background(), Request{Source: src, Target: tgt})
		var verr *store.ValidationError
		if !errors.As(err, &verr) || verr.Field != "Engine.Store" {
			t.Errorf("Merge on %#v: err = %v, want a *store.ValidationError on Engine.Store", e, err)
		}
	}
}

func TestEmptyDiffStillRecordsMerge(t *testing.T) {
	t.Parallel()
	fs := newFake(diffOf(nil, nil))
	res, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, MergedBy: "agent-a", Message: "nothing new"})
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	want := wantPlan(store.Native)
	want.Record.MergedBy, want.Record.Message = "agent-a", "nothing new"
	if diff := cmp.Diff([]store.MergePlan{want}, fs.plans); diff != "" {
		t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
	}
	if !res.Applied {
		t.Error("Applied = false")
	}
	if diff := cmp.Diff(want.Record, res.Record); diff != "" {
		t.Errorf("Record mismatch (-want +got):\n%s", diff)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	f1 := fact("f1", "auth uses JWT")
	d := diffOf([]store.Change{added(f1)}, nil)
	fs := newFake(d)
	gateCalls := 0
	gate := GateFunc("count", func(context.Context, *store.MergePlan) ([]store.Offense, error) {
		gateCalls++
		return nil, nil
	})
	res, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, DryRun: true, Gate: gate})
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	if fs.applyCalls != 0 {
		t.Errorf("ApplyMerge called %d times on a dry run", fs.applyCalls)
	}
	if res.Applied {
		t.Error("Applied = true on a dry run")
	}
	if gateCalls != 1 {
		t.Errorf("gate called %d times, want 1", gateCalls)
	}
	want := wantPlan(store.Native)
	want.Puts = []store.Record{f1}
	want.Record.Merged = []store.MergeItem{{Ref: ref(f1), Action: store.ActionAdopt}}
	if diff := cmp.Diff(want, res.Plan); diff != "" {
		t.Errorf("Plan mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Record, res.Record); diff != "" {
		t.Errorf("Record mismatch (-want +got):\n%s", diff)
	}
	if res.Diff != d {
		t.Error("Diff is not the store's diff")
	}
}

func TestDryRunReportsConflicts(t *testing.T) {
	t.Parallel()
	b := fact("f2", "base")
	c := bothChanged(updated(b, withText(b, "source")), updated(b, withText(b, "target")))
	fs := newFake(diffOf([]store.Change{c.Source}, []store.Change{c.Target}, c))
	_, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, DryRun: true})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Merge: err = %v, want ErrConflict", err)
	}
}

func TestGate(t *testing.T) {
	t.Parallel()
	f1 := fact("f1", "auth uses JWT")
	f2 := fact("f2", "tokens never expire")
	offense := store.Offense{Ref: ref(f2), Reason: "invalidated"}
	blocking := GateFunc("require-verified", func(_ context.Context, p *store.MergePlan) ([]store.Offense, error) {
		if len(p.Puts) != 2 {
			return nil, fmt.Errorf("gate saw %d puts, want 2", len(p.Puts))
		}
		return []store.Offense{offense}, nil
	})
	allowing := GateFunc("allow", func(_ context.Context, p *store.MergePlan) ([]store.Offense, error) {
		// A gate changing its copy must not change what is applied.
		p.Puts = p.Puts[:1]
		p.Puts[0] = fact("evil", "injected")
		p.Record.Merged = nil
		return nil, nil
	})
	boom := errors.New("judge unavailable")
	failing := GateFunc("judge", func(context.Context, *store.MergePlan) ([]store.Offense, error) { return nil, boom })
	newDiff := func() *store.Diff { return diffOf([]store.Change{added(f1), added(f2)}, nil) }

	t.Run("engine gate blocks", func(t *testing.T) {
		t.Parallel()
		fs := newFake(newDiff())
		e := testEngine(fs)
		e.Gate = blocking
		_, err := e.Merge(context.Background(), Request{Source: src, Target: tgt})
		var blocked *store.MergeBlockedError
		if !errors.As(err, &blocked) || !errors.Is(err, store.ErrMergeBlocked) {
			t.Fatalf("Merge: err = %v, want a *store.MergeBlockedError", err)
		}
		want := &store.MergeBlockedError{Source: src, Target: tgt, Gate: "require-verified", Offenses: []store.Offense{offense}}
		if diff := cmp.Diff(want, blocked); diff != "" {
			t.Errorf("error mismatch (-want +got):\n%s", diff)
		}
		if fs.applyCalls != 0 {
			t.Errorf("ApplyMerge called %d times after the gate refused", fs.applyCalls)
		}
	})
	t.Run("request gate overrides engine gate", func(t *testing.T) {
		t.Parallel()
		fs := newFake(newDiff())
		e := testEngine(fs)
		e.Gate = blocking
		res, err := e.Merge(context.Background(), Request{Source: src, Target: tgt, Gate: allowing})
		if err != nil {
			t.Fatalf("Merge: %v", err)
		}
		want := wantPlan(store.Native)
		want.Puts = []store.Record{f1, f2}
		want.Record.Merged = []store.MergeItem{{Ref: ref(f1), Action: store.ActionAdopt}, {Ref: ref(f2), Action: store.ActionAdopt}}
		if diff := cmp.Diff([]store.MergePlan{want}, fs.applied); diff != "" {
			t.Errorf("applied plans mismatch (-want +got):\n%s", diff)
		}
		if !res.Applied {
			t.Error("Applied = false")
		}
	})
	t.Run("gate error aborts", func(t *testing.T) {
		t.Parallel()
		fs := newFake(newDiff())
		_, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Gate: failing})
		if !errors.Is(err, boom) {
			t.Fatalf("Merge: err = %v, want %v", err, boom)
		}
		if fs.applyCalls != 0 {
			t.Errorf("ApplyMerge called %d times after the gate failed", fs.applyCalls)
		}
	})
	t.Run("nil gate function allows", func(t *testing.T) {
		t.Parallel()
		fs := newFake(newDiff())
		if _, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt, Gate: GateFunc("none", nil)}); err != nil {
			t.Fatalf("Merge: %v", err)
		}
		if fs.applyCalls != 1 {
			t.Errorf("ApplyMerge called %d times, want 1", fs.applyCalls)
		}
	})
}

func TestStaleRetry(t *testing.T) {
	t.Parallel()
	f1 := fact("f1", "auth uses JWT")
	f2 := fact("f2", "refresh tokens rotate")
	first := diffOf([]store.Change{added(f1)}, nil)
	second := diffOf([]store.Change{added(f1), added(f2)}, nil)
	second.TargetHead = 9
	stale := fmt.Errorf("%w: head moved", store.ErrStale)

	t.Run("replans and succeeds", func(t *testing.T) {
		t.Parallel()
		fs := newFake(first, second)
		fs.apply = []error{stale}
		e := testEngine(fs)
		var logged strings.Builder
		e.Logger = slog.New(slog.NewTextHandler(&logged, nil))
		res, err := e.Merge(context.Background(), Request{Source: src, Target: tgt})
		if err != nil {
			t.Fatalf("Merge: %v", err)
		}
		if l := logged.String(); strings.Count(l, "planning again") != 1 || !strings.Contains(l, "target="+tgt) || !strings.Contains(l, "attempt=1") {
			t.Errorf("the log of a merge planned twice:\n%s", l)
		}
		if fs.diffCalls != 2 || fs.applyCalls != 2 {
			t.Fatalf("%d diffs and %d applies, want 2 and 2", fs.diffCalls, fs.applyCalls)
		}
		if got := []uint64{fs.plans[0].ExpectHead, fs.plans[1].ExpectHead}; !cmp.Equal(got, []uint64{7, 9}) {
			t.Errorf("ExpectHeads = %v, want [7 9]", got)
		}
		if fs.plans[0].Record.ID != fs.plans[1].Record.ID {
			t.Errorf("record ids differ between attempts: %q, %q", fs.plans[0].Record.ID, fs.plans[1].Record.ID)
		}
		if res.Diff != second || len(res.Plan.Puts) != 2 || !res.Applied {
			t.Errorf("result does not come from the second attempt: %+v", res)
		}
	})
	for _, tt := range []struct {
		name     string
		retries  int
		attempts int
	}{
		{"default retries", 0, 1 + DefaultRetries},
		{"two retries", 2, 3},
		{"no retry", -1, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := newFake(first)
			for range 10 {
				fs.apply = append(fs.apply, stale)
			}
			e := testEngine(fs)
			e.Retries = tt.retries
			_, err := e.Merge(context.Background(), Request{Source: src, Target: tgt})
			if !errors.Is(err, store.ErrStale) {
				t.Fatalf("Merge: err = %v, want ErrStale", err)
			}
			if fs.diffCalls != tt.attempts || fs.applyCalls != tt.attempts {
				t.Errorf("%d diffs and %d applies, want %d of each", fs.diffCalls, fs.applyCalls, tt.attempts)
			}
		})
	}
}

func TestStoreErrors(t *testing.T) {
	t.Parallel()
	t.Run("diff", func(t *testing.T) {
		t.Parallel()
		fs := newFake()
		fs.diffErr = fmt.Errorf("%w: %q", store.ErrBranchNotFound, src)
		_, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt})
		if !errors.Is(err, store.ErrBranchNotFound) {
			t.Fatalf("Merge: err = %v, want ErrBranchNotFound", err)
		}
	})
	t.Run("nil diff", func(t *testing.T) {
		t.Parallel()
		fs := newFake(nil)
		if _, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt}); err == nil {
			t.Fatal("Merge: no error for a nil diff")
		}
		if fs.applyCalls != 0 {
			t.Errorf("ApplyMerge called %d times", fs.applyCalls)
		}
	})
	t.Run("apply", func(t *testing.T) {
		t.Parallel()
		fs := newFake(diffOf(nil, nil))
		fs.apply = []error{store.ErrBranchArchived}
		_, err := testEngine(fs).Merge(context.Background(), Request{Source: src, Target: tgt})
		if !errors.Is(err, store.ErrBranchArchived) {
			t.Fatalf("Merge: err = %v, want ErrBranchArchived", err)
		}
		if fs.applyCalls != 1 {
			t.Errorf("ApplyMerge called %d times, want 1 (no retry for a non-stale error)", fs.applyCalls)
		}
	})
}

func TestContextCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fs := newFake(diffOf(nil, nil))
	_, err := testEngine(fs).Merge(ctx, Request{Source: src, Target: tgt})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Merge: err = %v, want context.Canceled", err)
	}
	if fs.diffCalls != 0 || fs.applyCalls != 0 {
		t.Errorf("store called (%d diffs, %d applies) with a canceled context", fs.diffCalls, fs.applyCalls)
	}
}

func TestContextCanceledByResolver(t *testing.T) {
	t.Parallel()
	b := fact("f2", "base")
	c := bothChanged(updated(b, withText(b, "source")), updated(b, withText(b, "target")))
	fs := newFake(diffOf([]store.Change{c.Source}, []store.Change{c.Target}, c, c))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := testEngine(fs)
	e.Resolver = ResolverFunc("cancel", func(context.Context, store.Conflict) (Decision, error) {
		cancel()
		return Decision{Action: store.ActionKeepTarget}, nil
	})
	_, err := e.Merge(ctx, Request{Source: src, Target: tgt, Strategy: store.Auto})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Merge: err = %v, want context.Canceled", err)
	}
	if fs.applyCalls != 0 {
		t.Errorf("ApplyMerge called %d times", fs.applyCalls)
	}
}

func TestDefaultIDsAndClock(t *testing.T) {
	t.Parallel()
	fs := newFake(diffOf(nil, nil))
	res, err := (&Engine{Store: fs}).Merge(context.Background(), Request{Source: src, Target: tgt})
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	if err := store.ValidateID("MergeRecord.ID", res.Record.ID); err != nil {
		t.Errorf("default record id: %v", err)
	}
	if res.Record.CreatedAt.IsZero() {
		t.Error("CreatedAt is zero")
	}
}

func TestConcurrentMerges(t *testing.T) {
	t.Parallel()
	b := fact("f2", "base")
	s, tg := withText(b, "source"), withText(b, "target")
	s.Confidence = 0.9
	c := bothChanged(updated(b, s), updated(b, tg))
	f1 := fact("f1", "auth uses JWT")
	fs := newFake(diffOf([]store.Change{added(f1), c.Source}, []store.Change{c.Target}, c))
	e := &Engine{Store: fs}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.Merge(context.Background(), Request{Source: src, Target: tgt, Strategy: store.Auto}); err != nil {
				t.Errorf("Merge: %v", err)
			}
		}()
	}
	wg.Wait()
	if len(fs.applied) != 8 {
		t.Fatalf("%d merges applied, want 8", len(fs.applied))
	}
	ids := map[string]bool{}
	for _, p := range fs.applied {
		ids[p.Record.ID] = true
	}
	if len(ids) != 8 {
		t.Errorf("%d distinct record ids for 8 merges", len(ids))
	}
}

func TestNewTimeID(t *testing.T) {
	t.Parallel()
	a, b := newTimeID(t0), newTimeID(t0)
	if a == b {
		t.Errorf("two ids are equal: %q", a)
	}
	later := newTimeID(t1)
	for _, id := range []string{a, b, later} {
		if err := store.ValidateID("id", id); err != nil {
			t.Errorf("newTimeID: %v", err)
		}
	}
	if later < a {
		t.Errorf("a later id sorts first: %q < %q", later, a)
	}
}

func TestKeepBothID(t *testing.T) {
	t.Parallel()
	r := factRef("f2")
	id := keepBothID(src, r)
	if id != keepBothID(src, r) {
		t.Error("keepBothID is not deterministic")
	}
	if id == keepBothID("other", r) {
		t.Error("keepBothID ignores the source branch")
	}
	long := store.Ref{Kind: store.KindFact, ID: fmt.Sprintf("%0*d", store.MaxIDLen, 1)}
	for _, got := range []string{id, keepBothID(src, long)} {
		if err := store.ValidateID("id", got); err != nil {
			t.Errorf("keepBothID: %v", err)
		}
	}
	if got := keepBothID(src, long); len(got) != store.MaxIDLen {
		t.Errorf("len(keepBothID(long)) = %d, want %d", len(got), store.MaxIDLen)
	}
}

// A gated merge, or one asking to Promote, writes the verified facts it brings with
// status promoted; unverified facts keep theirs, and an ungated merge changes none.
func TestMergePromotes(t *testing.T) {
	t.Parallel()
	ok := fact("f1", "auth uses JWT")
	ok.Status = store.FactVerified
	judged := fact("f2", "tokens last an hour")
	judged.Verify.Status = store.Verified
	open := fact("f3", "maybe clock skew")
	allow := GateFunc("allow", func(context.Context, *store.MergePlan) ([]store.Offense, error) { return nil, nil })
	promoted := func(f store.Fact) store.Fact { f.Status = store.FactPromoted; return f }
	for _, tc := range []struct {
		name string
		req  Request
		want []store.Record
	}{
		{"ungated", Request{Source: src, Target: tgt}, []store.Record{ok, judged, open}},
		{"gated", Request{Source: src, Target: tgt, Gate: allow}, []store.Record{promoted(ok), promoted(judged), open}},
		{"promote", Request{Source: src, Target: tgt, Promote: true}, []store.Record{promoted(ok), promoted(judged), open}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := newFake(diffOf([]store.Change{added(ok), added(judged), added(open)}, nil))
			res, err := testEngine(fs).Merge(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, res.Plan.Puts); diff != "" {
				t.Errorf("puts (-want +got):\n%s", diff)
			}
		})
	}
}
