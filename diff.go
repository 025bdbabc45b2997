package day1

import "context"

// Diff lists what changed on source and on target since their merge base, per record:
// added, updated or deleted, with the conflicts between the two sides (both changed the
// same record, or both superseded the same fact). It is what a Native merge of source
// into target would adopt. The result's Filter method narrows it, e.g. to one category
// of facts: d.Filter(Filter{Category: "bug_fix"}). Errors: ErrBranchNotFound, ErrClosed, ctx's error.
func (c *Client) Diff(ctx context.Context, source, target string) (*Diff, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.st.Diff(ctx, source, target)
}
