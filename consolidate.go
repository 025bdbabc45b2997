package day1

import (
	"context"

	"github.com/day1ai/day1/curation"
)

// Consolidation types. They are the curation package's.
type (
	// ConsolidateRequest selects the observations to consolidate: a branch and a
	// session, task or agent.
	ConsolidateRequest = curation.ConsolidateRequest
	// ConsolidateResult is what Consolidate wrote.
	ConsolidateResult = curation.ConsolidateResult
)

// Consolidate turns the observations of a session (or task, or agent) on a branch into
// candidate facts on that branch, in one atomic batch, for VerifyBranch to judge next.
// With Config.Model the model states the facts and names the existing facts they
// contradict, which are superseded; without one, every discovery, decision, insight
// and error observation becomes a candidate (confidence 0.7). Repeats are
// deduplicated, and a second run skips what the first wrote.
//
// Errors: *ValidationError when no session, task or agent is named;
// ErrBranchNotFound; the model's errors; ErrClosed; ctx's error.
func (c *Client) Consolidate(ctx context.Context, req ConsolidateRequest) (ConsolidateResult, error) {
	if err := c.use(ctx); err != nil {
		return ConsolidateResult{}, err
	}
	return c.curator().Consolidate(ctx, req)
}
