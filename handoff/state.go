package handoff

import (
	"github.com/day1ai/day1/store"
)

// Status is where a handoff stands. Two state machines share the type.
//
// A simple handoff (a record offered to a receiver) starts at StatusPending:
//
//	pending ──▶ accepting ──▶ accepted     a receiver claimed it, then its branch
//	   │            │                      and membership were made (final)
//	   │            └───────▶ rolled_back  the accept failed midway and its partial
//	   │                                   effects were undone (final)
//	   │──────▶ accepted        a receiver took it in one step (final)
//	   │──────▶ rejected        the receiver declined it (final)
//	   │──────▶ expired         nobody accepted it in time (final)
//	   └──────▶ rolled_back     the record was closed without an accept, so it cannot
//	                            be accepted twice; the source may offer a new one (final)
//
// An accept that has side effects outside the record (a branch) first claims the
// record (accepting), so that of two receivers accepting at once exactly one gets
// the claim, then commits (accepted) or undoes its effects (rolled_back).
//
// A policy-driven handoff (run by a controller under a Policy) starts at
// StatusInitiated:
//
//	initiated ──▶ validating ──▶ transferring ──▶ completed (final)
//	    │              │               │
//	    └──────────────┴───────────────┴────▶ failed ──▶ rolled_back (final)
//	                   └───────────────┴────────────────▶ rolled_back
//
// failed is not final: a rollback may follow it (a conditional handoff whose trigger
// did not fire fails without a rollback and simply stays failed). Changing a status to
// itself is not a transition. Accepted, rejected, expired, completed and rolled_back
// allow no change: rejecting an accepted handoff is a *TransitionError.
type Status string

// Handoff statuses.
const (
	// StatusPending: offered and waiting for a receiver. Initial status of a simple
	// handoff.
	StatusPending Status = "pending"
	// StatusAccepting: a receiver has claimed it and its accept is under way; no
	// other receiver can claim it.
	StatusAccepting Status = "accepting"
	// StatusAccepted: a receiver accepted it.
	StatusAccepted Status = "accepted"
	// StatusRejected: the receiver declined it.
	StatusRejected Status = "rejected"
	// StatusExpired: nobody accepted it before it ran out of time.
	StatusExpired Status = "expired"
	// StatusInitiated: requested under a policy. Initial status of a policy-driven
	// handoff.
	StatusInitiated Status = "initiated"
	// StatusValidating: the source, target and required capabilities are being
	// checked.
	StatusValidating Status = "validating"
	// StatusTransferring: the context is being handed to the target.
	StatusTransferring Status = "transferring"
	// StatusCompleted: the target has the work.
	StatusCompleted Status = "completed"
	// StatusFailed: the handoff did not happen; a rollback may follow.
	StatusFailed Status = "failed"
	// StatusRolledBack: whatever the handoff had done was undone.
	StatusRolledBack Status = "rolled_back"
)

var allStatuses = []Status{StatusPending, StatusAccepting, StatusAccepted, StatusRejected, StatusExpired,
	StatusInitiated, StatusValidating, StatusTransferring, StatusCompleted, StatusFailed, StatusRolledBack}

// transitions lists, per status, the statuses it may change to, in a fixed order.
var transitions = map[Status][]Status{
	StatusPending:      {StatusAccepting, StatusAccepted, StatusRejected, StatusExpired, StatusRolledBack},
	StatusAccepting:    {StatusAccepted, StatusRolledBack},
	StatusInitiated:    {StatusValidating, StatusFailed},
	StatusValidating:   {StatusTransferring, StatusFailed, StatusRolledBack},
	StatusTransferring: {StatusCompleted, StatusFailed, StatusRolledBack},
	StatusFailed:       {StatusRolledBack},
}

// Statuses returns every valid Status: the simple machine's, then the policy
// machine's.
func Statuses() []Status { return append([]Status(nil), allStatuses...) }

// ParseStatus reads a status, ignoring surrounding spaces and case and accepting '-'
// or ' ' for '_'. Anything else is a *store.ValidationError naming the allowed values.
func ParseStatus(s string) (Status, error) {
	st := Status(normalizeName(s))
	if !st.Valid() {
		return "", store.Invalid("Status", oneOf(allStatuses), s)
	}
	return st, nil
}

// Valid reports whether s is a known status, spelt exactly.
func (s Status) Valid() bool {
	for _, v := range allStatuses {
		if s == v {
			return true
		}
	}
	return false
}

// Next returns the statuses s may change to, in a fixed order; none for a final or
// invalid status.
func (s Status) Next() []Status { return append([]Status(nil), transitions[s]...) }

// Terminal reports whether no transition leaves s. StatusFailed is not terminal, as a
// rollback may follow it.
func (s Status) Terminal() bool { return s.Valid() && len(transitions[s]) == 0 }

// String returns the status's name.
func (s Status) String() string { return string(s) }

// CanTransition reports whether a handoff may change from one status to another. It
// is false for unknown statuses and for from == to.
func CanTransition(from, to Status) bool {
	for _, n := range transitions[from] {
		if n == to {
			return true
		}
	}
	return false
}

// Transition checks the change from one status to another. It returns nil when
// CanTransition allows it, a *store.ValidationError (field "from" or "to") when either
// status is unknown, and otherwise a *TransitionError, which matches
// store.ErrConflict.
func Transition(from, to Status) error {
	if !from.Valid() {
		return store.Invalid("from", oneOf(allStatuses), string(from))
	}
	if !to.Valid() {
		return store.Invalid("to", oneOf(allStatuses), string(to))
	}
	if !CanTransition(from, to) {
		return &TransitionError{From: from, To: to}
	}
	return nil
}
