package curation

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/day1ai/day1/store"
)

// BatchRequest asks VerifyBranch to judge the unverified records of a branch.
type BatchRequest struct {
	// Branch to verify. Empty means store.DefaultBranch.
	Branch string
	// Kinds to verify: store.KindFact and store.KindConversation. Empty means both.
	Kinds []store.Kind
	// Policy overrides the Engine's thresholds for this batch. The zero Policy means
	// the Engine's.
	Policy Policy
	// FactThreshold, when above zero, is the score at or above which a fact of this
	// batch is verified, as the design's fact_threshold (0.7 there): the batch's policy
	// (Policy, or the Engine's) with Policy.WithFactThreshold applied. Conversations
	// keep that policy's thresholds. Default 0: the policy's fact threshold.
	FactThreshold float64
	// Rejudge also judges records left pending by an earlier verdict. Default false:
	// only records never judged.
	Rejudge bool
	// Progress, when set, is called after each record is judged and written, or has
	// failed. Calls never overlap and come in completion order; Progress must not
	// block for long, since judging waits for it.
	Progress func(Progress)
}

// Progress reports one finished record of a VerifyBranch batch.
type Progress struct {
	Done  int       // records finished so far, this one included
	Total int       // records in the batch
	Ref   store.Ref // the record just finished
	// Status is its new verification status; empty when Err is set.
	Status store.VerificationStatus
	Err    error // why the record failed, or nil
}

// BatchResult is what VerifyBranch did.
type BatchResult struct {
	Branch string `json:"branch"`
	// Total is the number of records the batch selected.
	Total int `json:"total"`
	// Verified, Invalidated and Pending count the verdicts written.
	Verified    int `json:"verified"`
	Invalidated int `json:"invalidated"`
	Pending     int `json:"pending"`
	// Verdicts are the verdicts written, facts first, each kind by id.
	Verdicts []Verdict `json:"verdicts"`
}

// VerifyBranch judges every unverified fact and conversation of a branch, a bounded
// number at a time (Engine.Concurrency), and writes each verdict as VerifyFact and
// VerifyConversation do.
//
// It selects the facts whose Status is active and whose Verify.Status is empty (or
// pending, with Rejudge), and the conversations whose Verify.Status is empty (or
// pending). Records already verified or invalidated, and superseded facts, are left
// alone, so running it again only picks up what is still unjudged.
//
// Each verdict is its own write. The first error stops the batch: records still being
// judged are abandoned, the verdicts written so far stay, and the partial result is
// returned with the error. A cancelled ctx stops it the same way.
//
// Errors: a *store.ValidationError for a bad branch, kind or policy;
// store.ErrBranchNotFound; the first record's error (see VerifyFact); ctx's error.
func (e *Engine) VerifyBranch(ctx context.Context, req BatchRequest) (BatchResult, error) {
	if err := e.check(); err != nil {
		return BatchResult{}, err
	}
	branch, err := validBranch("BatchRequest.Branch", req.Branch)
	if err != nil {
		return BatchResult{}, err
	}
	if err := req.Policy.Validate("BatchRequest.Policy"); err != nil {
		return BatchResult{}, err
	}
	if math.IsNaN(req.FactThreshold) || req.FactThreshold < 0 || req.FactThreshold > 1 {
		return BatchResult{}, store.Invalid("BatchRequest.FactThreshold", "must be between 0 and 1 (0 means the policy's)", req.FactThreshold)
	}
	policy := req.Policy
	if policy.IsZero() {
		policy = e.Policy
	}
	if req.FactThreshold > 0 {
		policy = policy.WithFactThreshold(req.FactThreshold)
	}
	kinds := req.Kinds
	if len(kinds) == 0 {
		kinds = []store.Kind{store.KindFact, store.KindConversation}
	}
	for i, k := range kinds {
		if k != store.KindFact && k != store.KindConversation {
			return BatchResult{}, store.Invalid(fmt.Sprintf("BatchRequest.Kinds[%d]", i), "must be fact or conversation", k)
		}
	}
	if _, err := e.Store.GetBranch(ctx, branch); err != nil {
		return BatchResult{}, err
	}
	unjudged := func(s store.VerificationStatus) bool {
		return s == store.Unverified || req.Rejudge && s == store.Pending
	}
	var todo []store.Record
	if slices.Contains(kinds, store.KindFact) {
		recs, err := e.Store.List(ctx, store.View{Branch: branch}, store.ListQuery{
			Kind: store.KindFact, Filter: store.Filter{Status: store.FactActive}, Order: store.OrderID,
		})
		if err != nil {
			return BatchResult{}, err
		}
		now := e.now()
		for _, r := range recs {
			// An expired fact is no longer asserted: judging it would spend a model
			// call on what nobody reads.
			if f, ok := r.(store.Fact); ok && unjudged(f.Verify.Status) && !f.Expired(now) {
				todo = append(todo, f)
			}
		}
	}
	if slices.Contains(kinds, store.KindConversation) {
		recs, err := e.Store.List(ctx, store.View{Branch: branch}, store.ListQuery{Kind: store.KindConversation, Order: store.OrderID})
		if err != nil {
			return BatchResult{}, err
		}
		for _, r := range recs {
			if c, ok := r.(store.Conversation); ok && unjudged(c.Verify.Status) {
				todo = append(todo, c)
			}
		}
	}

	res := BatchResult{Branch: branch, Total: len(todo)}
	verdicts := make([]*Verdict, len(todo))
	var mu sync.Mutex // guards res counters, done and Progress calls
	done := 0
	report := func(i int, v *Verdict, err error) {
		mu.Lock()
		defer mu.Unlock()
		done++
		p := Progress{Done: done, Total: len(todo), Ref: store.RefOf(todo[i]), Err: err}
		if v != nil {
			verdicts[i] = v
			p.Status = v.Status
			switch v.Status {
			case store.Verified:
				res.Verified++
			case store.Invalidated:
				res.Invalidated++
			default:
				res.Pending++
			}
		}
		if req.Progress != nil {
			req.Progress(p)
		}
	}

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.concurrency())
	for i, rec := range todo {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			var v Verdict
			var err error
			switch r := rec.(type) {
			case store.Fact:
				var fv FactVerdict
				fv, err = e.verifyFact(gctx, branch, r, policy)
				v = fv.Verdict
			case store.Conversation:
				var cv ConversationVerdict
				cv, err = e.verifyConversation(gctx, branch, r, policy)
				v = cv.Verdict
			}
			if err != nil {
				report(i, nil, err)
				return err
			}
			report(i, &v, nil)
			return nil
		})
	}
	err = g.Wait()
	for _, v := range verdicts {
		if v != nil {
			res.Verdicts = append(res.Verdicts, *v)
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return res, fmt.Errorf("day1: verifying branch %s: %d of %d records done: %w", branch, len(res.Verdicts), len(todo), err)
	}
	return res, nil
}
