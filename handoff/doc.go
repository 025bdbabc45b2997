// Package handoff holds day1's protocol for passing a task from one agent (or session)
// to another: tasks with objectives and members on branches of their own, handoff
// records carrying a frozen context packet, accept and reject, checkpoints and stall
// detection, policy-driven transfers, capability matching, collaboration sessions
// between agents, and an audit trail of every change.
//
// Two layers live here. The pure layer (types, state machines, conditions, triggers,
// policies, Match, Message and Dispatcher) has no storage and no goroutines; time
// comes from the caller (Signal.Now, Dispatcher.Now), except in WaitIdle, which waits
// on real timers bounded by its context and timeout. The Engine builds on it: it keeps
// every record as a document of a store.Store (one collection per record type, see
// TaskCollection and the others), written in atomic batches with version
// preconditions, and creates the branches tasks need. The package depends on the
// store, llm and merge packages only.
//
// # Tasks
//
// Engine.CreateTask makes a task with numbered objectives on its own branch
// task/<name>, forked from a parent (main by default); a name that is not a branch
// segment is a *store.ValidationError. Engine.JoinTask adds an agent with a role and
// assigned objectives on task/<name>/<agent>; Engine.UpdateObjective records each
// status change with who and when; Engine.LeaveTask records the agent's summary.
// Engine.CompleteTask records the result and, when asked, promotes the task's verified
// facts and its verified or cherry-picked conversations to the parent with a
// cherry-pick merge, leaving the rest on the task branch. Engine.GetTask,
// Engine.ListTasks and Engine.TaskContext read them back.
//
// # Handoffs and packets
//
// Engine.CreateHandoff freezes a Packet (task state and progress, members and their
// summaries, verified facts, key relations and conversations with their decision
// messages, pending objectives, blockers, recent errors, instructions, the branch
// pointer and a summary written by Engine.Model or from the contents) into a pending
// record. Packets have a stable JSON form and are bounded by Limits, recording what
// they cut. When no receiver is named, Required capabilities choose the best
// registered agent (Engine.RegisterAgent, Engine.FindAgents).
//
// Engine.AcceptHandoff claims the record (pending → accepting) with a version
// precondition, so of two agents accepting at once exactly one wins and the other
// gets a *TransitionError; it then creates the receiver's branch from the task branch
// and commits the membership, the owner and the record (accepted) in one batch. If a
// step fails the branch is deleted and the record shows rolled_back (*RollbackError,
// ErrRolledBack). Engine.RejectHandoff, Engine.PendingHandoffs (by task and by
// receiver), Engine.ListHandoffs and Engine.ExpireHandoffs complete the set.
//
// Engine.Transfer runs a policy-driven handoff through initiated → validating →
// transferring → completed, asking the Policy (immediate, graceful with WaitIdle,
// conditional on a Trigger) and rolling back on failure.
//
// # Safeguards and escalation
//
// A registered agent's profile says whether it is available (AgentProfile.Availability:
// available, busy, offline), which handoff types it takes (AcceptTypes) and which named
// permissions it holds (Permissions); a handoff may require permissions
// (HandoffRequest.Permissions). Offering to a named receiver that is busy, offline, not
// taking the type or lacking a permission fails with a *ReceiverError
// (ErrReceiverRefused) naming the reason and the profile's field; the accept checks
// again, so an agent gone offline or stripped of a permission since cannot accept (a
// busy one still may). A receiver chosen by capability is picked among the agents that
// pass. An agent without a registered profile is not checked. Every refusal is an
// EventHandoffRefused event.
//
// With HandoffRequest.Escalate, a handoff that is rejected, expires or is rolled back
// after a failed accept is offered again, in the same atomic batch, to the best agent
// meeting Required that is available, permitted and not yet tried: a new pending
// handoff with the same packet, linked by EscalatedFrom and EscalatedTo, its Attempt
// and the agents Tried recorded, and an EventHandoffEscalated event. After
// MaxEscalations (default DefaultMaxEscalations, 2) or when no agent qualifies, the last
// handoff keeps its status and an EventHandoffEscalationEnded event says why. The
// version precondition on the ending handoff means two rejects at once escalate once.
//
// # Checkpoints and stalls
//
// Engine.Checkpoint freezes an agent's context without changing ownership;
// Engine.ResumeFromCheckpoint picks the latest one up after a crash; Engine.StalledTasks
// lists the tasks and agents that showed no activity, checkpoint or write for a given
// duration, at the Engine's clock.
//
// # Stored collaboration
//
// Engine.OpenCollaboration, Engine.Send, Engine.Messages and
// Engine.AdvanceCollaboration keep collaboration sessions and their messages as
// documents, moving phases as the messages imply and handing each message to
// Engine.Dispatcher's handlers; Engine.CleanupCollaborations removes what expired.
//
// # Audit trail
//
// Every change writes an Event in the same batch; Engine.Events reads them by task,
// agent, handoff or kind.
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
// Status covers two machines. A simple handoff goes pending → accepting → accepted, or
// to rejected or expired (or rolled_back when an accept fails midway); a policy-driven
// handoff goes
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
// store.ErrConflict); a Dispatcher without a handler returns *NoHandlerError. Unknown
// tasks, handoffs, objectives and sessions match store.ErrNotFound; ErrTaskExists,
// ErrTaskClosed, ErrNotMember, ErrHandoffExpired, ErrNoCandidate, ErrNotReady,
// ErrCollabClosed, *ReceiverError and *RollbackError say the rest. Nothing in this package panics on
// bad input.
package handoff
