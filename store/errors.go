package store

import (
	"errors"
	"fmt"
	"strings"

	"github.com/day1ai/day1/llm"
)

// Sentinel errors. Stores wrap them; test with errors.Is.
var (
	// ErrNotFound: the record, session or other object does not exist.
	ErrNotFound = errors.New("day1: not found")
	// ErrBranchNotFound: no branch has that name. It also matches ErrNotFound.
	ErrBranchNotFound = NewSentinel("day1: branch not found", ErrNotFound)
	// ErrSnapshotNotFound: no snapshot has that name. It also matches ErrNotFound.
	ErrSnapshotNotFound = NewSentinel("day1: snapshot not found", ErrNotFound)
	// ErrExists: an object with that name or id exists already. ErrBranchExists,
	// ErrSnapshotExists and the engines' own (a task that exists) match it.
	ErrExists = errors.New("day1: already exists")
	// ErrBranchExists: a branch with that name exists already. It also matches
	// ErrExists.
	ErrBranchExists = NewSentinel("day1: branch already exists", ErrExists)
	// ErrSnapshotExists: a snapshot with that name exists already. It also matches
	// ErrExists.
	ErrSnapshotExists = NewSentinel("day1: snapshot already exists", ErrExists)
	// ErrBranchArchived: the branch is archived and refuses writes; reactivate it first.
	ErrBranchArchived = errors.New("day1: branch is archived")
	// ErrInvalidArgument: the input is not acceptable. *ValidationError matches it.
	ErrInvalidArgument = llm.ErrInvalidArgument
	// ErrConflict: a merge met conflicts its policy does not settle. *MergeConflictError
	// matches it.
	ErrConflict = errors.New("day1: merge conflict")
	// ErrMergeBlocked: a merge gate refused the merge. *MergeBlockedError matches it.
	ErrMergeBlocked = errors.New("day1: merge blocked by gate")
	// ErrStale: what the caller read has changed since: the target branch of a merge
	// (diff again) or a document written with a precondition (read it again).
	// *DocConflictError matches it.
	ErrStale = errors.New("day1: changed since it was read")
	// ErrClosed: the store or client is closed.
	ErrClosed = errors.New("day1: closed")
	// ErrNotSupported: the backend cannot do this.
	ErrNotSupported = errors.New("day1: not supported by this store")
	// ErrLocked: a write to a durable store waited longer than it may for the writes
	// of the other stores open on the same files, in this process or another.
	ErrLocked = errors.New("day1: store is locked")
	// ErrReadOnly: the store was opened read-only and refuses writes.
	ErrReadOnly = errors.New("day1: store is read-only")
	// ErrTooOld: the point in time is before the history the store keeps: before the
	// branch read existed (its ForkedAt), or beyond a store's retention.
	ErrTooOld = errors.New("day1: point in time is outside the retained history")
	// ErrCorrupt: a durable store's file is damaged, or was written by a newer
	// version of day1 in a form this one cannot tell from damage. The error names
	// the file and what to do; nothing was changed.
	ErrCorrupt = errors.New("day1: a store file is damaged")
)

// NewSentinel returns a sentinel error with a message of its own that also matches
// general (errors.Is), for an error that is one case of a broader one: the way
// ErrBranchNotFound is a case of ErrNotFound. Engines define theirs with it.
func NewSentinel(msg string, general error) error {
	return &sentinel{msg: msg, general: general}
}

type sentinel struct {
	msg     string
	general error
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.general }

// ValidationError says which input field is wrong and what is allowed. It matches
// ErrInvalidArgument. It is llm.ValidationError, so that the llm packages report bad
// input with the same type without depending on storage.
type ValidationError = llm.ValidationError

// Invalid returns a *ValidationError for field.
func Invalid(field, reason string, value any) *ValidationError {
	return llm.Invalid(field, reason, value)
}

// MergeConflictError lists the conflicts that stopped a merge. Nothing was changed.
// It matches ErrConflict.
type MergeConflictError struct {
	Source, Target string
	Conflicts      []Conflict
}

func (e *MergeConflictError) Error() string {
	refs := make([]string, 0, len(e.Conflicts))
	for i, c := range e.Conflicts {
		if i == 5 {
			refs = append(refs, fmt.Sprintf("and %d more", len(e.Conflicts)-5))
			break
		}
		refs = append(refs, c.Ref.String()+" ("+string(c.Reason)+")")
	}
	return fmt.Sprintf("day1: merge %s into %s: %d conflict(s): %s; choose a conflict policy (skip, accept) or the auto strategy",
		e.Source, e.Target, len(e.Conflicts), strings.Join(refs, ", "))
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *MergeConflictError) Is(target error) bool { return target == ErrConflict }

// Offense is one record a merge gate objects to.
type Offense struct {
	Ref    Ref
	Reason string
}

// MergeBlockedError lists what a merge gate refused. Nothing was changed.
// It matches ErrMergeBlocked.
type MergeBlockedError struct {
	Source, Target string
	Gate           string
	Offenses       []Offense
}

func (e *MergeBlockedError) Error() string {
	parts := make([]string, 0, len(e.Offenses))
	for i, o := range e.Offenses {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Offenses)-5))
			break
		}
		parts = append(parts, o.Ref.String()+": "+o.Reason)
	}
	return fmt.Sprintf("day1: merge %s into %s blocked by gate %s: %s",
		e.Source, e.Target, e.Gate, strings.Join(parts, "; "))
}

// Is makes errors.Is(err, ErrMergeBlocked) true.
func (e *MergeBlockedError) Is(target error) bool { return target == ErrMergeBlocked }

// retryable is implemented by errors that know whether retrying is safe.
type retryable interface{ Retryable() bool }

// IsRetryable reports whether err is transient and the operation that failed may be
// retried safely (for idempotent operations only). Backends mark such errors by
// implementing Retryable() bool.
func IsRetryable(err error) bool {
	var r retryable
	return errors.As(err, &r) && r.Retryable()
}

// AtIndex places a validation error inside a list: the field "Fact.Text" of element 3 of
// "records" becomes "records[3].Fact.Text". Other errors are returned unchanged.
func AtIndex(err error, list string, i int) error {
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	c := *ve
	c.Field = fmt.Sprintf("%s[%d].%s", list, i, ve.Field)
	return &c
}
