package curation_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/store"
)

// seedBranch writes n unjudged facts f00.. plus records VerifyBranch must leave alone.
func seedBranch(t *testing.T, st store.Store, n int) {
	t.Helper()
	var recs []store.Record
	for i := range n {
		recs = append(recs, store.Fact{ID: fmt.Sprintf("f%02d", i), Text: fmt.Sprintf("fact number %d about the auth service and its tokens", i), Category: "bug_fix"})
	}
	recs = append(recs,
		store.Fact{ID: "done", Text: "already verified", Status: store.FactVerified, Verify: store.Verification{Status: store.Verified, Score: 0.9}},
		store.Fact{ID: "old", Text: "superseded history", Status: store.FactSuperseded},
		store.Fact{ID: "wrong", Text: "judged wrong", Status: store.FactInvalidated, Verify: store.Verification{Status: store.Invalidated}},
		store.Fact{ID: "review", Text: "left for review", Verify: store.Verification{Status: store.Pending, Score: 0.5}},
		store.Fact{ID: "expired", Text: "the freeze held until yesterday", CreatedAt: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), ExpiresAt: time.Date(2001, 1, 2, 0, 0, 0, 0, time.UTC)},
	)
	recs = append(recs, debugConversation("c1")...)
	put(t, st, "main", recs...)
}

func TestVerifyBranchHeuristic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	seedBranch(t, st, 5)
	var progress []curation.Progress
	res, err := e.VerifyBranch(ctx, curation.BatchRequest{Progress: func(p curation.Progress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, v := range res.Verdicts {
		refs = append(refs, v.Ref.String())
	}
	want := []string{"fact/f00", "fact/f01", "fact/f02", "fact/f03", "fact/f04", "conversation/c1"}
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if res.Total != 6 || res.Verified != 6 || res.Branch != "main" {
		t.Errorf("result = %+v", res)
	}
	if len(progress) != 6 || progress[5].Done != 6 || progress[5].Total != 6 {
		t.Errorf("progress = %+v", progress)
	}
	for i, p := range progress {
		if p.Done != i+1 || p.Err != nil || p.Status != store.Verified {
			t.Errorf("progress[%d] = %+v", i, p)
		}
	}
	if got := getFact(t, st, "main", "review").Verify.Status; got != store.Pending {
		t.Errorf("a pending fact was rejudged without Rejudge: %q", got)
	}
	if got := getFact(t, st, "main", "old").Verify.Status; got != store.Unverified {
		t.Errorf("a superseded fact was judged: %q", got)
	}
	if got := getFact(t, st, "main", "expired").Verify.Status; got != store.Unverified {
		t.Errorf("an expired fact was judged: %q", got)
	}
	// A second run finds nothing left; Rejudge picks up the pending fact.
	res, err = e.VerifyBranch(ctx, curation.BatchRequest{})
	if err != nil || res.Total != 0 {
		t.Errorf("second run = %+v, %v; want nothing to do", res, err)
	}
	res, err = e.VerifyBranch(ctx, curation.BatchRequest{Rejudge: true, Kinds: []store.Kind{store.KindFact}})
	if err != nil || res.Total != 1 || res.Verdicts[0].Ref.ID != "review" {
		t.Errorf("rejudge = %+v, %v; want the pending fact", res, err)
	}
}

func TestVerifyBranchPolicyOverride(t *testing.T) {
	t.Parallel()
	e, st := newEngine(t, nil)
	// 0.9 accuracy, 0.5 relevance, 0.5 specificity: 0.633, verified by default, pending
	// under the strict policy.
	put(t, st, "main", store.Fact{ID: "f", Text: "one two three four five six seven eight nine ten", Confidence: 0.9})
	res, err := e.VerifyBranch(context.Background(), curation.BatchRequest{Policy: curation.StrictPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending != 1 || getFact(t, st, "main", "f").Verify.Status != store.Pending {
		t.Errorf("strict batch = %+v; want the fact pending", res)
	}
}

func TestVerifyBranchBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newEngine(t, nil)
	for _, c := range []struct {
		req   curation.BatchRequest
		field string
	}{
		{curation.BatchRequest{Branch: "bad name"}, "BatchRequest.Branch"},
		{curation.BatchRequest{Kinds: []store.Kind{store.KindMessage}}, "BatchRequest.Kinds[0]"},
		{curation.BatchRequest{Policy: curation.Policy{VerifyAt: 0.2, InvalidateBelow: 0.5}}, "BatchRequest.Policy.InvalidateBelow"},
		{curation.BatchRequest{Policy: curation.Policy{VerifyAt: 1.1}}, "BatchRequest.Policy.VerifyAt"},
	} {
		_, err := e.VerifyBranch(ctx, c.req)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("VerifyBranch(%+v) = %v; want a ValidationError on %s", c.req, err, c.field)
		}
	}
	if _, err := e.VerifyBranch(ctx, curation.BatchRequest{Branch: "missing"}); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("missing branch = %v; want ErrBranchNotFound", err)
	}
}

// The batch never judges more records at once than Engine.Concurrency, and reaches
// that bound: each model call waits until the bound is reached (or every record has
// started), so a batch that ran fewer at once would never finish.
func TestVerifyBranchConcurrency(t *testing.T) {
	t.Parallel()
	const n, limit = 20, 3
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	inflight, started, peak := 0, 0, 0
	m := llmfake.NewModel().OnFunc(`.`, func(llm.Request) (string, error) {
		mu.Lock()
		inflight++
		started++
		peak = max(peak, inflight)
		cond.Broadcast()
		for inflight < limit && started < n {
			cond.Wait()
		}
		inflight--
		mu.Unlock()
		return `{"accuracy": 0.9, "relevance": 0.9, "specificity": 0.9}`, nil
	})
	e, st := newEngine(t, m)
	e.Concurrency = limit
	seedBranch(t, st, n)
	res, err := e.VerifyBranch(context.Background(), curation.BatchRequest{Kinds: []store.Kind{store.KindFact}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verified != n || peak != limit {
		t.Errorf("verified %d with at most %d at once; want %d and %d", res.Verified, peak, n, limit)
	}
	for i := range n {
		if f := getFact(t, st, "main", fmt.Sprintf("f%02d", i)); f.Status != store.FactVerified {
			t.Errorf("f%02d is %q", i, f.Status)
		}
	}
}

// A model failure stops the batch; what was written stays, and a rerun finishes it.
func TestVerifyBranchStopsOnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := llmfake.NewModel()
	calls := 0
	var mu sync.Mutex
	m.OnFunc(`.`, func(llm.Request) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 3 {
			return "", errors.New("quota exceeded")
		}
		return `{"accuracy": 0.9, "relevance": 0.9, "specificity": 0.9}`, nil
	})
	e, st := newEngine(t, m)
	e.Concurrency = 1
	seedBranch(t, st, 6)
	var failed []curation.Progress
	res, err := e.VerifyBranch(ctx, curation.BatchRequest{Kinds: []store.Kind{store.KindFact}, Progress: func(p curation.Progress) {
		if p.Err != nil {
			failed = append(failed, p)
		}
	}})
	if err == nil || !strings.Contains(err.Error(), "quota exceeded") {
		t.Fatalf("VerifyBranch = %v; want the model's error", err)
	}
	if len(res.Verdicts) != 2 || res.Verified != 2 || res.Total != 6 {
		t.Errorf("partial result = %+v; want 2 of 6 verified", res)
	}
	if len(failed) != 1 || failed[0].Ref.ID != "f02" {
		t.Errorf("failures reported = %+v; want f02", failed)
	}
	res, err = e.VerifyBranch(ctx, curation.BatchRequest{Kinds: []store.Kind{store.KindFact}})
	if err != nil || res.Total != 4 || res.Verified != 4 {
		t.Errorf("rerun = %+v, %v; want the 4 left", res, err)
	}
}

func TestVerifyBranchCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	m := llmfake.NewModel()
	var mu sync.Mutex
	calls := 0
	m.OnFunc(`.`, func(llm.Request) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if calls++; calls == 2 {
			cancel()
		}
		return `{"accuracy": 0.9, "relevance": 0.9, "specificity": 0.9}`, nil
	})
	e, st := newEngine(t, m)
	e.Concurrency = 1
	seedBranch(t, st, 6)
	res, err := e.VerifyBranch(ctx, curation.BatchRequest{Kinds: []store.Kind{store.KindFact}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("VerifyBranch = %v; want context.Canceled", err)
	}
	if res.Verified > 2 || m.CallCount() > 2 {
		t.Errorf("after cancellation: %d verified, %d model calls; want at most 2", res.Verified, m.CallCount())
	}
}

// Facts and conversations are judged by thresholds of their own: the strict policy
// verifies conversations at 0.6 and facts at 0.7, and a batch's FactThreshold moves the
// facts' alone.
func TestVerifyBranchThresholdsPerKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	all := `{"accuracy": 0.65, "relevance": 0.65, "specificity": 0.65, "tools": 0.65, "reasoning": 0.65, "outcome": 0.65, "errors": 0.65}`
	for _, tc := range []struct {
		name           string
		req            curation.BatchRequest
		fact, converse store.VerificationStatus
	}{
		{"strict", curation.BatchRequest{Policy: curation.StrictPolicy()}, store.Pending, store.Verified},
		{"fact threshold 0.7", curation.BatchRequest{FactThreshold: 0.7}, store.Pending, store.Verified},
		{"fact threshold 0.6 on strict", curation.BatchRequest{Policy: curation.StrictPolicy(), FactThreshold: 0.6}, store.Verified, store.Verified},
		{"conversations apart", curation.BatchRequest{Policy: curation.Policy{VerifyAt: 0.6, InvalidateBelow: 0.3, ConversationVerifyAt: 0.8, ConversationInvalidateBelow: 0.3}}, store.Verified, store.Pending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, st := newEngine(t, llmfake.NewModel().Default(all))
			put(t, st, "main",
				store.Fact{ID: "f", Text: "the refresh handler retries once", Confidence: 0.9},
				store.Conversation{ID: "c", Title: "debugging"},
				store.Message{ID: "m1", ConversationID: "c", Seq: 1, Role: store.RoleUser, Content: "fix it"})
			if _, err := e.VerifyBranch(ctx, tc.req); err != nil {
				t.Fatal(err)
			}
			if got := getFact(t, st, "main", "f").Verify.Status; got != tc.fact {
				t.Errorf("fact = %q; want %q", got, tc.fact)
			}
			if got := getConv(t, st, "main", "c").Verify.Status; got != tc.converse {
				t.Errorf("conversation = %q; want %q", got, tc.converse)
			}
		})
	}
	e, _ := newEngine(t, nil)
	var ve *store.ValidationError
	if _, err := e.VerifyBranch(ctx, curation.BatchRequest{FactThreshold: 1.5}); !errors.As(err, &ve) || ve.Field != "BatchRequest.FactThreshold" {
		t.Errorf("FactThreshold 1.5: %v; want a *ValidationError on BatchRequest.FactThreshold", err)
	}
	bad := curation.Policy{VerifyAt: 0.6, ConversationVerifyAt: 0.3, ConversationInvalidateBelow: 0.5}
	if err := bad.Validate(""); !errors.As(err, &ve) || ve.Field != "Policy.ConversationInvalidateBelow" {
		t.Errorf("inverted conversation thresholds: %v", err)
	}
}
