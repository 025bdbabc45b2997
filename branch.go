package day1

import (
	"context"

	"github.com/day1ai/day1/store"
)

// BranchOptions describe a branch to create.
type BranchOptions struct {
	// From is the parent branch. Empty means DefaultBranch, or the snapshot's branch
	// when At names a snapshot.
	From string
	// At forks from a point in the parent's past: a snapshot (AtSnapshot) or an instant
	// (AtTime). The zero At forks from the parent's head.
	At At
	// Description says what the branch is for.
	Description string
	// Metadata is kept with the branch.
	Metadata map[string]string
}

// Branch creates a branch named name, like "task/fix-auth/agent-a", forked from a
// parent. The branch sees the parent's records as they were at the fork and nothing
// the parent writes afterwards; creating it copies nothing. Errors: ErrBranchExists,
// ErrBranchNotFound (no such parent), ErrSnapshotNotFound, *ValidationError for a bad
// name, ErrClosed, ctx's error.
func (c *Client) Branch(ctx context.Context, name string, opts BranchOptions) (_ Branch, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpBranch, Method: "Branch", Branch: name})
	defer func() { end(OperationEnd{Err: err}) }()
	if err := c.use(ctx); err != nil {
		return Branch{}, err
	}
	at, err := checkAt("BranchOptions.At", opts.At)
	if err != nil {
		return Branch{}, err
	}
	return c.st.CreateBranch(ctx, store.BranchSpec{
		Name:        name,
		From:        opts.From,
		At:          at,
		Description: opts.Description,
		Metadata:    opts.Metadata,
	})
}

// GetBranch returns a branch, or an error matching ErrBranchNotFound.
func (c *Client) GetBranch(ctx context.Context, name string) (Branch, error) {
	if err := c.use(ctx); err != nil {
		return Branch{}, err
	}
	return c.st.GetBranch(ctx, name)
}

// Branches returns the branches the filter matches, sorted by name. The zero filter
// matches every branch.
func (c *Client) Branches(ctx context.Context, f BranchFilter) ([]Branch, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.st.ListBranches(ctx, f)
}

// ArchiveBranch archives a branch: it stays readable and refuses writes with
// ErrBranchArchived until ReactivateBranch.
func (c *Client) ArchiveBranch(ctx context.Context, name string) (Branch, error) {
	if err := c.use(ctx); err != nil {
		return Branch{}, err
	}
	return c.st.SetBranchStatus(ctx, name, BranchArchived)
}

// ReactivateBranch makes an archived or merged branch active again. An archived branch
// refuses writes until then; a merged branch (see MergeRequest.MarkMerged) stays
// writable, so for it this only changes the label.
func (c *Client) ReactivateBranch(ctx context.Context, name string) (Branch, error) {
	if err := c.use(ctx); err != nil {
		return Branch{}, err
	}
	return c.st.SetBranchStatus(ctx, name, BranchActive)
}

// DeleteBranch removes a branch and its records. The default branch, a branch with
// children and a branch with snapshots cannot be deleted (*ValidationError says why).
func (c *Client) DeleteBranch(ctx context.Context, name string) (err error) {
	ctx, end := c.start(ctx, Operation{Name: OpBranch, Method: "DeleteBranch", Branch: name})
	defer func() { end(OperationEnd{Err: err}) }()
	if err := c.use(ctx); err != nil {
		return err
	}
	return c.st.DeleteBranch(ctx, name)
}
