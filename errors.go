package day1

import "github.com/day1ai/day1/store"

// Sentinel errors. Every error the Client returns wraps one of them or a context error;
// test with errors.Is. They are the store package's sentinels, so errors from an
// engine package or a store.Store match them too.
var (
	// ErrNotFound: the record, session or other object does not exist.
	ErrNotFound = store.ErrNotFound
	// ErrBranchNotFound: no branch has that name. It also matches ErrNotFound.
	ErrBranchNotFound = store.ErrBranchNotFound
	// ErrSnapshotNotFound: no snapshot has that name. It also matches ErrNotFound.
	ErrSnapshotNotFound = store.ErrSnapshotNotFound
	// ErrExists: an object with that name or id exists already. ErrBranchExists,
	// ErrSnapshotExists and handoff.ErrTaskExists match it.
	ErrExists = store.ErrExists
	// ErrBranchExists: a branch with that name exists already. It also matches
	// ErrExists.
	ErrBranchExists = store.ErrBranchExists
	// ErrSnapshotExists: a snapshot with that name exists already. It also matches
	// ErrExists.
	ErrSnapshotExists = store.ErrSnapshotExists
	// ErrBranchArchived: the branch is archived and refuses writes; reactivate it first
	// with Client.ReactivateBranch.
	ErrBranchArchived = store.ErrBranchArchived
	// ErrInvalidArgument: the input is not acceptable. *ValidationError matches it.
	ErrInvalidArgument = store.ErrInvalidArgument
	// ErrConflict: a merge met conflicts its policy does not settle.
	// *MergeConflictError matches it.
	ErrConflict = store.ErrConflict
	// ErrMergeBlocked: a merge gate refused the merge. *MergeBlockedError matches it.
	ErrMergeBlocked = store.ErrMergeBlocked
	// ErrStale: the target branch kept changing while a merge was planned; retry.
	ErrStale = store.ErrStale
	// ErrClosed: the Client (or its store) is closed.
	ErrClosed = store.ErrClosed
	// ErrNotSupported: the store or the configuration cannot do this, for example a
	// vector search with Config.NoEmbeddings.
	ErrNotSupported = store.ErrNotSupported
	// ErrLocked: a write to the durable embedded store waited longer than its lock
	// timeout (sqlite.Options.LockTimeout or memstore.Options.LockTimeout, 30 s by
	// default) for the writes of other
	// Clients on the same path, or until its context ended.
	ErrLocked = store.ErrLocked
	// ErrReadOnly: the Client's store was opened read-only (the ReadOnly of
	// sqlite.Options or memstore.Options) and refuses writes.
	ErrReadOnly = store.ErrReadOnly
	// ErrTooOld: the point in time is before the history the store keeps: before the
	// branch read existed (its ForkedAt), or beyond the store's retention.
	ErrTooOld = store.ErrTooOld
)

// Errors that carry data. Use errors.As to reach them.
type (
	// ValidationError names the input field that is wrong and says what is allowed.
	// It matches ErrInvalidArgument.
	ValidationError = store.ValidationError
	// MergeConflictError lists the conflicts that stopped a merge; nothing was changed.
	// It matches ErrConflict.
	MergeConflictError = store.MergeConflictError
	// MergeBlockedError lists the records a merge gate refused; nothing was changed.
	// It matches ErrMergeBlocked.
	MergeBlockedError = store.MergeBlockedError
	// Offense is one record a merge gate objects to.
	Offense = store.Offense
)

// Tenant errors. ErrTenantNotFound matches ErrNotFound and ErrTenantExists matches
// ErrExists.
var (
	// ErrTenantNotFound: the Tenants manager has no tenant of that name; create it
	// with Tenants.Create, or set TenantsConfig.AutoCreate.
	ErrTenantNotFound = store.NewSentinel("day1: tenant not found", ErrNotFound)
	// ErrTenantExists: Tenants.Create was given the name of an existing tenant.
	ErrTenantExists = store.NewSentinel("day1: tenant already exists", ErrExists)
)
