package day1

import (
	"context"

	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// Diff lists what changed on source and on target since their merge base, per record:
// added, updated or deleted, with the conflicts between the two sides (both changed the
// same record, both superseded the same fact, or each added a fact that contradicts the
// other's, unless Config.Contradictions is off). It is what a Native merge of source
// into target would adopt. The result's Filter method narrows it, e.g. to one category
// of facts: d.Filter(Filter{Category: "bug_fix"}).
//
// The records of a diff carry no embeddings: a diff says what changed, and on
// MatrixOne reading the vectors of records spread over a large table is most of a
// diff's cost. Get, ListFacts and the other reads return records whole. Errors:
// ErrBranchNotFound, ErrClosed, ctx's error.
func (c *Client) Diff(ctx context.Context, source, target string) (d *Diff, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpDiff, Method: "Diff", Branch: source, Target: target})
	defer func() { end(OperationEnd{Err: err, Records: diffSize(d)}) }()
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	d, err = store.DiffLean(ctx, c.st, source, target)
	if err != nil {
		return nil, err
	}
	merge.AddContradictions(d, c.contradicts())
	if err := merge.AddDuplicates(ctx, d, c.duplicates()); err != nil {
		return nil, err
	}
	return d, nil
}
