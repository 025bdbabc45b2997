package handoff

import (
	"errors"
	"fmt"
	"strings"

	"github.com/day1ai/day1/store"
)

// Sentinel errors of the handoff package. Test with errors.Is; the typed errors below
// match them.
var (
	// ErrIdleTimeout: WaitIdle gave up because the source did not report idle before
	// the graceful timeout.
	ErrIdleTimeout = errors.New("day1: source agent did not become idle before the graceful timeout")
	// ErrNoHandler: a Dispatcher has no handler for the message's type.
	// *NoHandlerError matches it.
	ErrNoHandler = errors.New("day1: no handler for message type")
	// ErrMessageExpired: a message's TTL ran out before it was dispatched or stored.
	ErrMessageExpired = errors.New("day1: message expired")

	// ErrTaskExists: a task with that name exists already. It also matches
	// store.ErrExists.
	ErrTaskExists = store.NewSentinel("day1: task already exists", store.ErrExists)
	// ErrTaskClosed: the task is completed and accepts no more changes. It also
	// matches store.ErrConflict.
	ErrTaskClosed = store.NewSentinel("day1: task is completed", store.ErrConflict)
	// ErrNotMember: the agent has not joined the task, or has left it. It also
	// matches store.ErrNotFound.
	ErrNotMember = fmt.Errorf("day1: agent is not an active member of the task: %w", store.ErrNotFound)
	// ErrHandoffExpired: the handoff was not accepted before it expired. It also
	// matches store.ErrConflict.
	ErrHandoffExpired = fmt.Errorf("day1: handoff expired: %w", store.ErrConflict)
	// ErrRolledBack: an accept or a transfer failed midway and what it had done was
	// undone; the handoff shows rolled_back. *RollbackError matches it when the
	// rollback succeeded.
	ErrRolledBack = errors.New("day1: the handoff failed midway and was rolled back")
	// ErrNoCandidate: no registered agent meets the required capabilities. It also
	// matches store.ErrNotFound.
	ErrNoCandidate = fmt.Errorf("day1: no registered agent meets the required capabilities: %w", store.ErrNotFound)
	// ErrReceiverRefused: the agent may not receive the handoff: it is busy or
	// offline, does not take the type, or lacks a required permission.
	// *ReceiverError matches it. It also matches store.ErrConflict.
	ErrReceiverRefused = store.NewSentinel("day1: the agent may not receive the handoff", store.ErrConflict)
	// ErrNotReady: a conditional policy's trigger did not fire, so the handoff did
	// not happen; it shows failed.
	ErrNotReady = errors.New("day1: the handoff's condition was not met")
	// ErrCollabClosed: the collaboration session is completed or expired and accepts
	// no more messages. It also matches store.ErrConflict.
	ErrCollabClosed = fmt.Errorf("day1: collaboration session is closed: %w", store.ErrConflict)
)

// RollbackError reports an accept or transfer that failed after it had claimed the
// handoff. Cause says why it failed. When RollbackErr is nil, everything it had done
// was undone and the record shows rolled_back: the error matches ErrRolledBack. When
// the rollback failed too, RollbackErr says why and the record may still show
// accepting or transferring. errors.Is and errors.As reach both errors.
type RollbackError struct {
	Op          string // "accept" or "transfer"
	Handoff     string // the handoff's ID
	Cause       error  // why the operation failed
	RollbackErr error  // why the rollback failed; nil when it succeeded
}

// Error says what failed and whether it was undone.
func (e *RollbackError) Error() string {
	if e.RollbackErr != nil {
		return fmt.Sprintf("day1: %s of handoff %s failed (%v) and rolling it back failed too (%v); check the branch and the record by hand", e.Op, e.Handoff, e.Cause, e.RollbackErr)
	}
	return fmt.Sprintf("day1: %s of handoff %s failed and was rolled back: %v", e.Op, e.Handoff, e.Cause)
}

// Is makes errors.Is(err, ErrRolledBack) true when the rollback succeeded.
func (e *RollbackError) Is(target error) bool { return target == ErrRolledBack && e.RollbackErr == nil }

// Unwrap returns Cause and RollbackErr.
func (e *RollbackError) Unwrap() []error {
	if e.RollbackErr == nil {
		return []error{e.Cause}
	}
	return []error{e.Cause, e.RollbackErr}
}

// TransitionError reports a handoff status change the state machine does not allow,
// such as rejecting a handoff that was accepted. It matches store.ErrConflict: the
// record is not in a state that permits the change; read it again and decide.
type TransitionError struct {
	From Status // the current status
	To   Status // the status refused
}

// Error names both statuses and the changes allowed from From.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("day1: a handoff cannot go from %s to %s; %s", e.From, e.To, allowedText(e.From.Next()))
}

// Unwrap returns store.ErrConflict.
func (e *TransitionError) Unwrap() error { return store.ErrConflict }

// PhaseError reports a collaboration phase change that is not allowed. It matches
// store.ErrConflict.
type PhaseError struct {
	From Phase // the current phase
	To   Phase // the phase refused
}

// Error names both phases and the changes allowed from From.
func (e *PhaseError) Error() string {
	return fmt.Sprintf("day1: a collaboration cannot go from phase %s to %s; %s", e.From, e.To, allowedText(e.From.Next()))
}

// Unwrap returns store.ErrConflict.
func (e *PhaseError) Unwrap() error { return store.ErrConflict }

// NoHandlerError reports that a Dispatcher has no handler registered for a message
// type. It matches ErrNoHandler.
type NoHandlerError struct {
	Type MessageType // the type of the message that found no handler
}

// Error names the message type without a handler.
func (e *NoHandlerError) Error() string {
	return fmt.Sprintf("day1: no handler registered for %s messages; call Dispatcher.Register first", e.Type)
}

// Is makes errors.Is(err, ErrNoHandler) true.
func (e *NoHandlerError) Is(target error) bool { return target == ErrNoHandler }

// allowedText lists the allowed next states for an error message.
func allowedText[T ~string](next []T) string {
	if len(next) == 0 {
		return "it is final and allows no change"
	}
	s := make([]string, len(next))
	for i, n := range next {
		s[i] = string(n)
	}
	return "allowed next: " + strings.Join(s, ", ")
}

// oneOf renders allowed values for a validation message: "one of a, b, c".
func oneOf[T ~string](vals []T) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = string(v)
	}
	return "must be one of " + strings.Join(s, ", ")
}
