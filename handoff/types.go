package handoff

import (
	"fmt"
	"strings"

	"github.com/day1ai/day1/store"
)

// Type is the kind of a handoff. Two vocabularies exist in day1's design, and both
// are accepted:
//
//   - The four core types say how much context the packet carries: TypeFull,
//     TypePartial, TypeEscalation and TypeCheckpoint.
//   - Three further types say who receives the work: TypeTaskContinuation (a new
//     agent picks up the same task where the last one stopped), TypeAgentSwitch (a
//     different agent takes over, e.g. implementer to reviewer) and TypeSessionHandoff
//     (the same agent continues in a new session, e.g. its context window is full).
//
// The three are distinct types, not aliases: a record keeps the type it was given, and
// each has its own receiver rule (see Scope.Receiver). For the contents of the packet
// each behaves like a core type, reported by Core: all three carry the full context,
// as TypeFull does, because the receiver continues the whole task.
//
// The zero Type is invalid; DefaultType is the default of the design.
type Type string

// Handoff types.
const (
	// TypeFull: the source is done and hands over all of its work: the complete task
	// context and every conversation.
	TypeFull Type = "full"
	// TypePartial: the source finished part of the work and hands over the rest: the
	// facts of the completed objectives and the list of unfinished ones.
	TypePartial Type = "partial"
	// TypeEscalation: the source is stuck and asks a more capable agent: the complete
	// context plus blockers and the record of failed attempts.
	TypeEscalation Type = "escalation"
	// TypeCheckpoint: periodic progress saving with no receiver; ownership does not
	// change. Checkpoints enable stall detection and mid-task recovery.
	TypeCheckpoint Type = "checkpoint"
	// TypeTaskContinuation: the same task, continued by another agent from where the
	// source stopped. Core type TypeFull.
	TypeTaskContinuation Type = "task_continuation"
	// TypeAgentSwitch: a different agent takes over, e.g. an implementer hands to a
	// reviewer. Core type TypeFull.
	TypeAgentSwitch Type = "agent_switch"
	// TypeSessionHandoff: the same agent continues in a new session, e.g. because its
	// context window is exhausted. Core type TypeFull.
	TypeSessionHandoff Type = "session_handoff"
)

// DefaultType is the type a handoff gets when none is given: TypeFull.
const DefaultType = TypeFull

var allTypes = []Type{TypeFull, TypePartial, TypeEscalation, TypeCheckpoint,
	TypeTaskContinuation, TypeAgentSwitch, TypeSessionHandoff}

// Types returns every valid Type, the four core types first.
func Types() []Type { return append([]Type(nil), allTypes...) }

// ParseType reads a handoff type. It ignores surrounding spaces and case, and accepts
// '-' or ' ' for '_' ("Agent-Switch" is TypeAgentSwitch). Anything else, the empty
// string included, is a *store.ValidationError naming the allowed values.
func ParseType(s string) (Type, error) {
	t := Type(normalizeName(s))
	if !t.Valid() {
		return "", store.Invalid("Type", oneOf(allTypes), s)
	}
	return t, nil
}

// Valid reports whether t is one of the seven handoff types, spelt exactly.
func (t Type) Valid() bool {
	for _, v := range allTypes {
		if t == v {
			return true
		}
	}
	return false
}

// IsCore reports whether t is one of the four core types.
func (t Type) IsCore() bool { return t.Core() == t && t.Valid() }

// Core returns the core type whose packet contents t shares: t itself for the four
// core types, TypeFull for task_continuation, agent_switch and session_handoff, and ""
// for an invalid type.
func (t Type) Core() Type {
	switch t {
	case TypeFull, TypePartial, TypeEscalation, TypeCheckpoint:
		return t
	case TypeTaskContinuation, TypeAgentSwitch, TypeSessionHandoff:
		return TypeFull
	}
	return ""
}

// String returns the type's name.
func (t Type) String() string { return string(t) }

// Receiver says who may receive a handoff of a given type.
type Receiver string

// Receiver rules.
const (
	// ReceiverAny: any agent, the source included (in a new session).
	ReceiverAny Receiver = "any"
	// ReceiverOther: an agent other than the source.
	ReceiverOther Receiver = "other"
	// ReceiverSame: the source agent itself, in a new session.
	ReceiverSame Receiver = "same"
	// ReceiverNone: nobody; the record only saves progress.
	ReceiverNone Receiver = "none"
)

// Scope describes what a handoff of some type carries and who may receive it. Storage
// code builds the packet from it; it is pure data.
type Scope struct {
	// Core is the core type whose packet contents apply.
	Core Type `json:"core"`
	// AllConversations: the packet carries every conversation of the task, not only
	// those of completed objectives.
	AllConversations bool `json:"all_conversations"`
	// CompletedObjectivesOnly: facts are limited to completed objectives, and the
	// unfinished objectives are listed for the receiver (partial handoffs).
	CompletedObjectivesOnly bool `json:"completed_objectives_only"`
	// FailedAttempts: the packet carries blockers and the recent errors that record
	// failed attempts (escalations).
	FailedAttempts bool `json:"failed_attempts"`
	// TransfersOwnership: the receiver takes over the work; false only for
	// checkpoints.
	TransfersOwnership bool `json:"transfers_ownership"`
	// Receiver says who may accept.
	Receiver Receiver `json:"receiver"`
}

// Scope returns what a handoff of type t carries and who may receive it; the zero
// Scope for an invalid type.
func (t Type) Scope() Scope {
	var s Scope
	switch t.Core() {
	case TypeFull:
		s = Scope{Core: TypeFull, AllConversations: true, TransfersOwnership: true, Receiver: ReceiverAny}
	case TypePartial:
		s = Scope{Core: TypePartial, CompletedObjectivesOnly: true, TransfersOwnership: true, Receiver: ReceiverAny}
	case TypeEscalation:
		s = Scope{Core: TypeEscalation, AllConversations: true, FailedAttempts: true, TransfersOwnership: true, Receiver: ReceiverOther}
	case TypeCheckpoint:
		s = Scope{Core: TypeCheckpoint, Receiver: ReceiverNone}
	default:
		return Scope{}
	}
	switch t {
	case TypeTaskContinuation, TypeAgentSwitch:
		s.Receiver = ReceiverOther
	case TypeSessionHandoff:
		s.Receiver = ReceiverSame
	}
	return s
}

// CheckReceiver checks that agent to may receive a handoff of type t from agent from,
// following t.Scope().Receiver. Call it when the handoff is created, with the named
// receiver (empty: anyone may claim it), and again on accept, with the accepting
// agent. An empty from (a handoff that starts a task) satisfies ReceiverOther. It
// returns a *store.ValidationError for an invalid type, for a receiver that is the
// source when another agent is required, for one that differs from the source (or a
// missing source) when the same agent is required, and for any receiver of a
// checkpoint other than its source.
func (t Type) CheckReceiver(from, to string) error {
	if !t.Valid() {
		return store.Invalid("Type", oneOf(allTypes), string(t))
	}
	switch t.Scope().Receiver {
	case ReceiverOther:
		if to != "" && to == from {
			return store.Invalid("ToAgent", fmt.Sprintf("a %s handoff goes to another agent; it must differ from the source agent", t), to)
		}
	case ReceiverSame:
		if from == "" {
			return store.Invalid("FromAgent", fmt.Sprintf("a %s handoff continues the source agent in a new session; name the source agent", t), nil)
		}
		if to != "" && to != from {
			return store.Invalid("ToAgent", fmt.Sprintf("a %s handoff stays with the source agent %q; another agent cannot receive it", t, from), to)
		}
	case ReceiverNone:
		if to != "" && to != from {
			return store.Invalid("ToAgent", "a checkpoint has no receiver; leave it empty", to)
		}
	}
	return nil
}

// Priority orders handoffs waiting for a receiver: higher is more urgent. The design
// gives a handoff an integer priority defaulting to 0, PriorityNormal; the named
// levels cover the range Valid accepts.
type Priority int

// Priority levels.
const (
	PriorityLow    Priority = -1
	PriorityNormal Priority = 0 // the default
	PriorityHigh   Priority = 1
	PriorityUrgent Priority = 2
)

// Valid reports whether p is between PriorityLow and PriorityUrgent.
func (p Priority) Valid() bool { return p >= PriorityLow && p <= PriorityUrgent }

// String returns the level's name ("low", "normal", "high", "urgent"), or the number
// for a value outside the range.
func (p Priority) String() string {
	switch p {
	case PriorityLow:
		return "low"
	case PriorityNormal:
		return "normal"
	case PriorityHigh:
		return "high"
	case PriorityUrgent:
		return "urgent"
	}
	return fmt.Sprintf("Priority(%d)", int(p))
}

// ParsePriority reads a priority by name (case-insensitive: low, normal, high, urgent)
// or as an integer in the valid range. An empty string is PriorityNormal. Anything
// else is a *store.ValidationError.
func ParsePriority(s string) (Priority, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	for p := PriorityLow; p <= PriorityUrgent; p++ {
		if n == p.String() {
			return p, nil
		}
	}
	if n == "" {
		return PriorityNormal, nil
	}
	var i int
	if _, err := fmt.Sscanf(n, "%d", &i); err == nil && fmt.Sprint(i) == n && Priority(i).Valid() {
		return Priority(i), nil
	}
	return 0, store.Invalid("Priority", "must be low, normal, high or urgent, or an integer from -1 to 2", s)
}

// normalizeName lower-cases s, trims it, and turns '-' and ' ' into '_'.
func normalizeName(s string) string {
	return strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
}
