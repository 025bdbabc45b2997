package day1

import "context"

// SnapshotOptions describe a snapshot to take.
type SnapshotOptions struct {
	// Description says what the snapshot marks, such as "before the auth refactor".
	Description string
}

// Snapshot names the current head of a branch (empty means DefaultBranch), so that
// TimeTravel(AtSnapshot(name)) and BranchOptions.At can return to it. Names follow the
// rules of ids. Errors: ErrSnapshotExists, ErrBranchNotFound, *ValidationError for a bad
// name, ErrClosed, ctx's error.
func (c *Client) Snapshot(ctx context.Context, branch, name string, opts SnapshotOptions) (_ Snapshot, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpSnapshot, Method: "Snapshot", Branch: branchOrMain(branch), RecordID: name})
	defer func() { end(OperationEnd{Err: err}) }()
	if err := c.use(ctx); err != nil {
		return Snapshot{}, err
	}
	return c.st.CreateSnapshot(ctx, branchOrMain(branch), name, opts.Description)
}

// GetSnapshot returns a snapshot, or an error matching ErrSnapshotNotFound.
func (c *Client) GetSnapshot(ctx context.Context, name string) (Snapshot, error) {
	if err := c.use(ctx); err != nil {
		return Snapshot{}, err
	}
	return c.st.GetSnapshot(ctx, name)
}

// Snapshots returns the snapshots of a branch, oldest first; an empty branch lists the
// snapshots of every branch.
func (c *Client) Snapshots(ctx context.Context, branch string) ([]Snapshot, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.st.ListSnapshots(ctx, branch)
}

// DeleteSnapshot removes a snapshot. Branches forked from it are unaffected. Errors:
// ErrSnapshotNotFound, ErrClosed, ctx's error.
func (c *Client) DeleteSnapshot(ctx context.Context, name string) error {
	if err := c.use(ctx); err != nil {
		return err
	}
	return c.st.DeleteSnapshot(ctx, name)
}
