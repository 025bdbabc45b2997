package day1

import (
	"context"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/store"
)

// Verification types. They are the curation package's, so values move between the
// Client and the engine without conversion.
type (
	// Policy turns a judge's overall score into a verdict: verified at VerifyAt or
	// above, invalidated below InvalidateBelow, pending between; conversations have
	// thresholds of their own when ConversationVerifyAt or ConversationInvalidateBelow
	// is set. The zero Policy means DefaultPolicy().
	Policy = curation.Policy
	// Scores are a judge's per-dimension scores, 0 to 1 each, kept in
	// Verification.Scores.
	Scores = store.Scores
	// Verdict is a judge's decision about a fact or a conversation: status, overall
	// and per-dimension scores, explanation, and who judged ("model:<name>" or
	// "heuristic").
	Verdict = curation.Verdict
	// FactVerdict is a fact's verdict and the fact as stored with it.
	FactVerdict = curation.FactVerdict
	// ConversationVerdict is a conversation's verdict and the conversation as stored
	// with it.
	ConversationVerdict = curation.ConversationVerdict
	// VerifyBranchRequest asks VerifyBranch to judge the unverified facts and
	// conversations of a branch, with an optional policy and progress callback.
	VerifyBranchRequest = curation.BatchRequest
	// VerifyBranchResult is what VerifyBranch did: counts and verdicts.
	VerifyBranchResult = curation.BatchResult
	// VerifyProgress reports one finished record of a VerifyBranch batch.
	VerifyProgress = curation.Progress
	// VerificationSummary counts a branch's verified, pending, unverified and
	// invalidated facts and conversations.
	VerificationSummary = curation.Summary
	// VerificationCounts counts records by verification state.
	VerificationCounts = curation.Counts
	// VerificationGate is the merge gate of curation: set it as MergeRequest.Gate (or
	// Config.MergeGate) and a merge that would write an invalidated record, or a fact
	// that is not verified (unless AllowUnverified), fails with a *MergeBlockedError
	// listing them, and nothing changes. Its zero value requires verified facts.
	VerificationGate = curation.Gate
)

// DefaultPolicy returns the default verification thresholds: verified at 0.6 or more,
// invalidated under 0.3.
func DefaultPolicy() Policy { return curation.DefaultPolicy() }

// StrictPolicy returns the stricter verification thresholds of the design: facts
// verified at 0.7 or more, conversations at 0.6 or more, both invalidated under 0.4.
func StrictPolicy() Policy { return curation.StrictPolicy() }

// curator returns the curation engine over the Client's store, model and embedder.
func (c *Client) curator() *curation.Engine {
	return &curation.Engine{
		Store:           c.st,
		Model:           c.cfg.Model,
		Embedder:        c.emb,
		DedupeThreshold: c.dedupe,
		Policy:          c.cfg.Verification,
		NewID:           c.cfg.Test.NewID,
		Now:             c.cfg.Test.Now,
	}
}

// VerifyFact judges one fact of a branch (empty means DefaultBranch) and writes a new
// version of it carrying the verdict: Verify (status, overall score, per-dimension
// Scores, judge, time) and Status (FactVerified, FactInvalidated, or FactActive while
// pending review).
//
// With Config.Model the model scores accuracy, relevance and specificity, shown the
// fact's source and related facts of the branch (possible conflicts). Without one the
// heuristic scores: accuracy is the fact's Confidence, relevance 0.7 for the
// categories bug_fix and architecture and 0.5 otherwise, specificity the number of
// words over 20 (at most 1). Config.Verification's thresholds decide.
//
// Errors: ErrNotFound for an unknown fact; ErrBranchNotFound; *ValidationError for a
// bad id; the model's error, or a *llm.MalformedOutputError for a reply that is not
// the JSON asked for; ErrStale when the fact changed while judged; ErrClosed; ctx's
// error. Nothing is written on error.
func (c *Client) VerifyFact(ctx context.Context, branch, id string) (_ FactVerdict, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpVerify, Method: "VerifyFact", Branch: branchOrMain(branch), RecordID: id})
	defer func() { end(OperationEnd{Err: err, Records: succeeded(err, 1)}) }()
	if err := c.use(ctx); err != nil {
		return FactVerdict{}, err
	}
	return c.curator().VerifyFact(ctx, branch, id)
}

// VerifyConversation judges one conversation of a branch (empty means DefaultBranch) on
// its tools, reasoning, outcome and errors, and writes the verdict in its Verify.
// Without Config.Model the heuristic of curation.HeuristicConversationScores scores.
// Errors: as VerifyFact.
func (c *Client) VerifyConversation(ctx context.Context, branch, id string) (ConversationVerdict, error) {
	if err := c.use(ctx); err != nil {
		return ConversationVerdict{}, err
	}
	return c.curator().VerifyConversation(ctx, branch, id)
}

// VerifyBranch judges every fact and conversation of a branch that has not been judged
// yet, a few at a time, and writes each verdict as VerifyFact does. req.Progress, when
// set, hears about each record as it finishes. The first error stops the batch; the
// verdicts already written stay, the partial result comes back with the error, and
// running it again picks up what is left.
//
// Facts and conversations are judged by the thresholds of their kind (see Policy);
// req.FactThreshold moves the facts' verified threshold for this batch alone.
//
// Errors: *ValidationError for a bad branch, kind or policy (thresholds outside 0..1
// or inverted); ErrBranchNotFound; the first record's error; ErrClosed; ctx's error.
func (c *Client) VerifyBranch(ctx context.Context, req VerifyBranchRequest) (res VerifyBranchResult, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpVerify, Method: "VerifyBranch", Branch: branchOrMain(req.Branch)})
	defer func() { end(OperationEnd{Err: err, Records: res.Total}) }()
	if err := c.use(ctx); err != nil {
		return VerifyBranchResult{}, err
	}
	return c.curator().VerifyBranch(ctx, req)
}

// VerificationSummary counts the verified, pending, unverified and invalidated facts
// (superseded ones are history and left out) and conversations of a branch (empty
// means DefaultBranch). Ready reports whether VerificationGate{} would let all its
// facts through. Errors: ErrBranchNotFound, *ValidationError, ErrClosed, ctx's error.
func (c *Client) VerificationSummary(ctx context.Context, branch string) (VerificationSummary, error) {
	if err := c.use(ctx); err != nil {
		return VerificationSummary{}, err
	}
	return c.curator().Summarize(ctx, branch)
}
