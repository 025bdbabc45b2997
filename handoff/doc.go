// Package handoff holds day1's protocol for passing a task from one agent (or session)
// to another: the vocabulary of handoffs, their state machines, the rules that decide
// when a handoff should happen and who should receive it, and the messages agents
// exchange while they agree on it.
//
// Everything here is pure logic: no storage and no goroutines. Time comes from the
// caller (Signal.Now, Dispatcher.Now), except in WaitIdle, which waits on real timers
// bounded by its context and timeout. The storage-backed parts of handoffs (tasks, handoff records and their audit trail, the
// context packet, accept and reject, pending lists, checkpoints and stall detection)
// build on these types; the types carry JSON tags and Valid or Validate methods so
// records can embed them.
//
// # Handoff types
//
// Type names a handoff: the four core types full, partial, escalation and checkpoint
// say how much context travels; task_continuation, agent_switch and session_handoff
// say who receives it. All seven are accepted (ParseType). Type.Core maps the three to
// the core type whose packet contents they share (full), Type.Scope says what the
// packet carries, and Type.CheckReceiver enforces who may receive it (another agent
// for an agent switch, the same agent for a session handoff, nobody for a checkpoint).
//
// # State machines
//
// Status covers two machines. A simple handoff goes pending → accepted, rejected or
// expired (or rolled_back when an accept fails midway); a policy-driven handoff goes
// initiated → validating → transferring → completed, or to failed and rolled_back.
// CanTransition answers yes or no; Transition returns a *TransitionError matching
// store.ErrConflict, so rejecting an accepted handoff fails like any other conflict:
//
//	if err := handoff.Transition(rec.Status, handoff.StatusRejected); err != nil {
//		return err // errors.Is(err, store.ErrConflict)
//	}
//
// # Conditions
//
// Compile turns a condition such as
//
//	context.tokens_used > 100000 or agent.error_count >= 3
//
// into an Expr evaluated over a map. It is a small language of comparisons, and/or/not,
// literals, dotted identifiers and in over lists, parsed and walked, never executed,
// and bounded in length (MaxExprLen) and nesting (MaxExprDepth). Malformed source is a
// *SyntaxError with its offset; evaluation fails with a *TypeError when types do not
// match (a string compared with a number) and, by default, with a *MissingKeyError
// when the context lacks a key.
//
// # Triggers and policies
//
// A Trigger fires on a condition, an event, an explicit request, a timeout since the
// last activity, an error type, or missing capabilities; Trigger.Evaluate takes a
// Signal describing the agent and says whether it fired and why. A Policy says how a
// requested handoff proceeds: immediate, graceful (WaitIdle waits, bounded by a
// timeout, for the source to report idle) or conditional (only when its trigger
// fires).
//
// # Capability matching
//
// Match ranks AgentProfiles against Requirements by a weighted mean of proficiency,
// with per-requirement minimums, exclusions, a minimum score and a deterministic
// tie-break by agent ID, and lists what each candidate is missing.
//
// # Collaboration
//
// Agents negotiate a handoff through phases (discovery → negotiation → agreement →
// execution → completion; CanAdvance, Advance) by exchanging Messages of seven types
// (request, response, broadcast, negotiate, acknowledge, reject, cancel). A Dispatcher
// routes each valid, unexpired message to the handlers registered for its type.
//
// # Errors
//
// Bad input is a *store.ValidationError (matching store.ErrInvalidArgument) naming the
// field and what is allowed. Condition errors are *SyntaxError, *TypeError and
// *MissingKeyError; disallowed changes are *TransitionError and *PhaseError (matching
// store.ErrConflict); a Dispatcher without a handler returns *NoHandlerError. Nothing
// in this package panics on bad input.
package handoff
