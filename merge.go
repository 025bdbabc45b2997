package day1

import (
	"context"
	"errors"

	"github.com/day1ai/day1/merge"
)

// MergeRequest asks for one merge of a source branch into a target branch: Strategy
// (Native by default, CherryPick with Pick, Squash, Auto), a conflict Policy for Native
// and Squash, who merged and why, an optional Gate (VerificationGate{} refuses facts
// that are not verified and anything invalidated) and a DryRun switch. See
// merge.Request.
type MergeRequest = merge.Request

// MergeResult is what a merge did, or would do for a dry run: the merge record, the
// plan, the diff it came from, and whether it was applied. See merge.Result.
type MergeResult = merge.Result

// Merge merges req.Source into req.Target atomically: the whole plan lands and is
// recorded in the merge history, or nothing changes. Auto merges use
// Config.Resolver (by default the model's judge when Config.Model is set);
// Config.MergeGate checks every merge whose request has no Gate.
//
// Errors: *MergeConflictError (ErrConflict) when a Native or Squash merge with the fail
// policy meets conflicts; *MergeBlockedError (ErrMergeBlocked) when the gate refuses;
// *ValidationError for a bad request; ErrBranchNotFound; ErrStale when the target kept
// changing; ErrClosed; ctx's error.
func (c *Client) Merge(ctx context.Context, req MergeRequest) (res MergeResult, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpMerge, Method: "Merge", Branch: req.Source, Target: req.Target})
	defer func() {
		e := OperationEnd{Err: err, Records: len(res.Record.Merged)}
		var mc *MergeConflictError
		switch {
		case errors.As(err, &mc):
			e.Conflicts = len(mc.Conflicts)
		case res.Diff != nil:
			e.Conflicts = len(res.Diff.Conflicts)
		}
		end(e)
	}()
	if err := c.use(ctx); err != nil {
		return MergeResult{}, err
	}
	return c.engine.Merge(ctx, req)
}

// Merges returns the merge history the filter selects, newest first.
func (c *Client) Merges(ctx context.Context, f MergeFilter) ([]MergeRecord, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.st.ListMerges(ctx, f)
}
