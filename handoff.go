package day1

import (
	"context"

	"github.com/day1ai/day1/handoff"
)

// Handoff types. They are the handoff package's.
type (
	// HandoffRecord is one handoff: source, receiver, frozen packet, status and its
	// history.
	HandoffRecord = handoff.Handoff
	// HandoffType is the kind of a handoff: full, partial, escalation, checkpoint,
	// task_continuation, agent_switch or session_handoff.
	HandoffType = handoff.Type
	// HandoffStatus is where a handoff stands; see handoff.Status for both state
	// machines.
	HandoffStatus = handoff.Status
	// HandoffStatusChange is one status change of a handoff.
	HandoffStatusChange = handoff.StatusChange
	// HandoffPriority orders pending handoffs: low, normal, high, urgent.
	HandoffPriority = handoff.Priority
	// HandoffRequest offers a task's work to a receiver.
	HandoffRequest = handoff.HandoffRequest
	// AcceptRequest accepts a pending handoff.
	AcceptRequest = handoff.AcceptRequest
	// Acceptance is an accepted handoff, its packet and the receiver's branch.
	Acceptance = handoff.Acceptance
	// RejectRequest declines a pending handoff.
	RejectRequest = handoff.RejectRequest
	// HandoffFilter narrows Client.Handoffs.
	HandoffFilter = handoff.HandoffFilter
	// PendingFilter narrows Client.PendingHandoffs by task and receiver.
	PendingFilter = handoff.PendingFilter
	// TransferRequest asks for a policy-driven handoff.
	TransferRequest = handoff.TransferRequest
	// HandoffPolicy says how a transfer proceeds: immediate, graceful or
	// conditional.
	HandoffPolicy = handoff.Policy
	// PolicyKind names a HandoffPolicy.
	PolicyKind = handoff.PolicyKind
	// Trigger decides when a handoff should happen: a condition, an event, a
	// timeout, an error type, missing capabilities, or an explicit request.
	Trigger = handoff.Trigger
	// TriggerKind names what makes a Trigger fire.
	TriggerKind = handoff.TriggerKind
	// Signal is the observable state of an agent that a Trigger reads.
	Signal = handoff.Signal
	// Condition is a compiled condition expression; see CompileCondition.
	Condition = handoff.Expr
	// HandoffEvent is one entry of the audit trail of tasks and handoffs.
	HandoffEvent = handoff.Event
	// HandoffEventKind names what an audit event records.
	HandoffEventKind = handoff.EventKind
	// HandoffEventFilter selects audit events by task, agent, handoff or kind.
	HandoffEventFilter = handoff.EventFilter
	// TaskCheckpoint is an agent's saved context, without a change of ownership.
	TaskCheckpoint = handoff.Checkpoint
	// CheckpointRequest asks for a checkpoint.
	CheckpointRequest = handoff.CheckpointRequest
	// CheckpointFilter narrows Client.Checkpoints.
	CheckpointFilter = handoff.CheckpointFilter
	// ResumeRequest asks to resume a task from its latest checkpoint.
	ResumeRequest = handoff.ResumeRequest
	// Resumption is the checkpoint resumed from and the agent's membership.
	Resumption = handoff.Resumption
	// StallQuery asks which tasks and agents have gone quiet.
	StallQuery = handoff.StallQuery
	// Stall is a task or agent without a sign of life for too long.
	Stall = handoff.Stall
	// AgentProfile is an agent's capabilities, for matching.
	AgentProfile = handoff.AgentProfile
	// Capability is something an agent can do, with its proficiency from 0 to 1.
	Capability = handoff.Capability
	// Requirement is a capability a task needs, with a weight and a minimum.
	Requirement = handoff.Requirement
	// MatchOptions tune FindAgents: minimum score, exclusions, limit.
	MatchOptions = handoff.MatchOptions
	// Candidate is an agent ranked by FindAgents.
	Candidate = handoff.Candidate
	// TransitionError reports a status change the state machine refuses, such as
	// rejecting an accepted handoff. It matches ErrConflict.
	TransitionError = handoff.TransitionError
	// RollbackError reports an accept or transfer that failed midway; it matches
	// ErrRolledBack when everything it did was undone.
	RollbackError = handoff.RollbackError
	// AgentAvailability says whether a registered agent takes work now: available
	// (or empty), busy or offline.
	AgentAvailability = handoff.Availability
	// ReceiverError reports an agent that may not receive a handoff: busy or
	// offline, not taking the type, or lacking a permission. It matches
	// ErrReceiverRefused and ErrConflict.
	ReceiverError = handoff.ReceiverError
	// RefusalReason says why a ReceiverError refused an agent.
	RefusalReason = handoff.RefusalReason
)

// Agent availabilities; the zero value counts as AgentAvailable.
const (
	AgentAvailable = handoff.AvailabilityAvailable
	AgentBusy      = handoff.AvailabilityBusy
	AgentOffline   = handoff.AvailabilityOffline
)

// Reasons a receiver is refused.
const (
	RefusedUnavailable = handoff.RefusedUnavailable
	RefusedType        = handoff.RefusedType
	RefusedPermission  = handoff.RefusedPermission
)

// Audit event kinds of handoff safeguards. The handoff package lists them all.
const (
	// HandoffEventRefused: an agent refused as a receiver; Note says why.
	HandoffEventRefused = handoff.EventHandoffRefused
	// HandoffEventEscalated: a rejected, expired or rolled back handoff offered to
	// the next agent; Related is the new handoff.
	HandoffEventEscalated = handoff.EventHandoffEscalated
	// HandoffEventEscalationEnded: an escalation chain stopped; Note says why.
	HandoffEventEscalationEnded = handoff.EventHandoffEscalationEnded
)

// Handoff types.
const (
	HandoffFull             = handoff.TypeFull
	HandoffPartial          = handoff.TypePartial
	HandoffEscalation       = handoff.TypeEscalation
	HandoffCheckpoint       = handoff.TypeCheckpoint
	HandoffTaskContinuation = handoff.TypeTaskContinuation
	HandoffAgentSwitch      = handoff.TypeAgentSwitch
	HandoffSessionHandoff   = handoff.TypeSessionHandoff
)

// Handoff statuses.
const (
	HandoffPending      = handoff.StatusPending
	HandoffAccepting    = handoff.StatusAccepting
	HandoffAccepted     = handoff.StatusAccepted
	HandoffRejected     = handoff.StatusRejected
	HandoffExpired      = handoff.StatusExpired
	HandoffInitiated    = handoff.StatusInitiated
	HandoffValidating   = handoff.StatusValidating
	HandoffTransferring = handoff.StatusTransferring
	HandoffCompleted    = handoff.StatusCompleted
	HandoffFailed       = handoff.StatusFailed
	HandoffRolledBack   = handoff.StatusRolledBack
)

// Handoff priorities.
const (
	PriorityLow    = handoff.PriorityLow
	PriorityNormal = handoff.PriorityNormal
	PriorityHigh   = handoff.PriorityHigh
	PriorityUrgent = handoff.PriorityUrgent
)

// Handoff policies and trigger kinds.
const (
	PolicyImmediate   = handoff.PolicyImmediate
	PolicyGraceful    = handoff.PolicyGraceful
	PolicyConditional = handoff.PolicyConditional

	TriggerCondition  = handoff.TriggerCondition
	TriggerEvent      = handoff.TriggerEvent
	TriggerExplicit   = handoff.TriggerExplicit
	TriggerTimeout    = handoff.TriggerTimeout
	TriggerError      = handoff.TriggerError
	TriggerCapability = handoff.TriggerCapability
)

// Handoff errors. Test with errors.Is.
var (
	// ErrHandoffExpired: the handoff was not accepted before its TTL ran out. It also
	// matches ErrConflict.
	ErrHandoffExpired = handoff.ErrHandoffExpired
	// ErrRolledBack: an accept or transfer failed midway and was undone; the record
	// shows rolled_back.
	ErrRolledBack = handoff.ErrRolledBack
	// ErrNoCandidate: no registered agent meets the required capabilities. It also
	// matches ErrNotFound.
	ErrNoCandidate = handoff.ErrNoCandidate
	// ErrReceiverRefused: the agent may not receive the handoff (see ReceiverError).
	// It also matches ErrConflict.
	ErrReceiverRefused = handoff.ErrReceiverRefused
	// ErrNotReady: a conditional policy's trigger did not fire.
	ErrNotReady = handoff.ErrNotReady
	// ErrIdleTimeout: a graceful transfer's source stayed busy past the timeout.
	ErrIdleTimeout = handoff.ErrIdleTimeout
)

// CompileCondition compiles a trigger condition such as
// `context.tokens_used > 100000 or agent.error_count >= 3`: comparisons, and, or,
// not, in, numbers, strings, booleans and null over dotted keys of a map. It is
// parsed, never executed. Errors: a *handoff.SyntaxError (ErrInvalidArgument) with
// the offset of the problem.
func CompileCondition(src string) (*Condition, error) { return handoff.Compile(src) }

// Handoff offers a task's work to a receiver: it freezes the task's context in a
// packet (verified facts only unless r.IncludeUnverified; what else travels depends on
// r.Type) and stores a pending record. With no ToAgent and some Required capabilities,
// the best registered agent is named; with neither, any agent may accept.
//
// Errors: *ValidationError (a checkpoint type, a receiver the type forbids, an unknown
// priority objective...); ErrNotFound for an unknown task; ErrTaskClosed;
// ErrNotMember for a source that is not an active member; ErrNoCandidate; ErrClosed;
// ctx's error.
func (c *Client) Handoff(ctx context.Context, r HandoffRequest) (_ HandoffRecord, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpHandoff, Method: "Handoff", RecordID: r.Task})
	defer func() { end(OperationEnd{Err: err}) }()
	if err := c.use(ctx); err != nil {
		return HandoffRecord{}, err
	}
	return c.handoffs().CreateHandoff(ctx, r)
}

// GetHandoff returns a handoff with its packet, or an error matching ErrNotFound.
func (c *Client) GetHandoff(ctx context.Context, id string) (HandoffRecord, error) {
	if err := c.use(ctx); err != nil {
		return HandoffRecord{}, err
	}
	return c.handoffs().GetHandoff(ctx, id)
}

// AcceptHandoff accepts a pending handoff and returns its frozen packet, atomically:
// the receiver's branch task/<task>/<agent> is created from the task's branch, the
// receiver becomes an active member (and the owner, for types that transfer
// ownership; the source then leaves), and the record shows accepted; or, if any step
// fails, the branch is removed and the record shows rolled_back. Of two agents
// accepting at once, exactly one wins.
//
// Errors: *ValidationError (an agent other than the named receiver...); ErrNotFound;
// *TransitionError (ErrConflict) when the handoff is not pending: accepted, claimed by
// another, rejected; ErrHandoffExpired; ErrTaskClosed; *RollbackError (ErrRolledBack);
// ErrClosed; ctx's error.
func (c *Client) AcceptHandoff(ctx context.Context, r AcceptRequest) (a Acceptance, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpHandoff, Method: "AcceptHandoff", RecordID: r.Handoff})
	defer func() { end(OperationEnd{Err: err}) }()
	if err := c.use(ctx); err != nil {
		return Acceptance{}, err
	}
	return c.handoffs().AcceptHandoff(ctx, r)
}

// RejectHandoff declines a pending handoff. Errors: *ValidationError; ErrNotFound;
// *TransitionError (ErrConflict) when it is not pending, e.g. accepted; ErrClosed;
// ctx's error.
func (c *Client) RejectHandoff(ctx context.Context, r RejectRequest) (HandoffRecord, error) {
	if err := c.use(ctx); err != nil {
		return HandoffRecord{}, err
	}
	return c.handoffs().RejectHandoff(ctx, r)
}

// Handoffs returns the handoff records the filter selects, oldest first.
func (c *Client) Handoffs(ctx context.Context, f HandoffFilter) ([]HandoffRecord, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.handoffs().ListHandoffs(ctx, f)
}

// PendingHandoffs returns the pending, unexpired handoffs of a task or for a receiver
// (addressed to it, or open to it), most urgent first.
func (c *Client) PendingHandoffs(ctx context.Context, f PendingFilter) ([]HandoffRecord, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.handoffs().PendingHandoffs(ctx, f)
}

// ExpireHandoffs marks every pending handoff whose TTL ran out as expired, rolls back
// every handoff whose accept claimed it and did not finish within
// handoff.DefaultClaimTimeout (its process died midway), and returns how many it
// changed. Run it now and then, as a sweeper.
func (c *Client) ExpireHandoffs(ctx context.Context) (int, error) {
	if err := c.use(ctx); err != nil {
		return 0, err
	}
	return c.handoffs().ExpireHandoffs(ctx)
}

// TransferTask runs a policy-driven handoff: initiated → validating → transferring →
// completed, or failed (the receiver lacks capabilities, a conditional trigger did not
// fire, the source stayed busy) or rolled_back (the transfer failed midway). It
// returns the record as it ended; the error is nil only when it completed. See
// handoff.Engine.Transfer.
func (c *Client) TransferTask(ctx context.Context, r TransferRequest) (HandoffRecord, error) {
	if err := c.use(ctx); err != nil {
		return HandoffRecord{}, err
	}
	return c.handoffs().Transfer(ctx, r)
}

// HandoffEvents returns the audit trail the filter selects, oldest first: every change
// to tasks, members, objectives, handoffs, checkpoints and collaborations.
func (c *Client) HandoffEvents(ctx context.Context, f HandoffEventFilter) ([]HandoffEvent, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.handoffs().Events(ctx, f)
}

// Checkpoint saves an agent's progress on a task: a frozen context (unverified work
// included) without any change of ownership, also a sign of life for StalledTasks.
// Errors: *ValidationError; ErrNotFound; ErrTaskClosed; ErrNotMember; ErrClosed;
// ctx's error.
func (c *Client) Checkpoint(ctx context.Context, r CheckpointRequest) (TaskCheckpoint, error) {
	if err := c.use(ctx); err != nil {
		return TaskCheckpoint{}, err
	}
	return c.handoffs().Checkpoint(ctx, r)
}

// Checkpoints returns the checkpoints the filter selects, newest first.
func (c *Client) Checkpoints(ctx context.Context, f CheckpointFilter) ([]TaskCheckpoint, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.handoffs().ListCheckpoints(ctx, f)
}

// ResumeFromCheckpoint picks a task up after a crash from the latest checkpoint (of
// r.Agent, or of the task): the agent is active again, its branch exists, and the
// checkpoint's packet says where it stood. Errors: *ValidationError; ErrNotFound
// (unknown task, no checkpoint); ErrTaskClosed; ErrClosed; ctx's error.
func (c *Client) ResumeFromCheckpoint(ctx context.Context, r ResumeRequest) (Resumption, error) {
	if err := c.use(ctx); err != nil {
		return Resumption{}, err
	}
	return c.handoffs().ResumeFromCheckpoint(ctx, r)
}

// StalledTasks lists the active tasks, and their active agents, without any activity,
// checkpoint or write for at least q.Idle (Config.Test.Now is the clock). Errors:
// *ValidationError for a non-positive Idle; ErrNotFound for an unknown q.Task;
// ErrClosed; ctx's error.
func (c *Client) StalledTasks(ctx context.Context, q StallQuery) ([]Stall, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.handoffs().StalledTasks(ctx, q)
}

// RegisterAgent records an agent's capabilities and proficiency, replacing an earlier
// profile. Errors: *ValidationError (an ID that cannot name a branch, a proficiency
// outside 0..1, a capability listed twice); ErrClosed; ctx's error.
func (c *Client) RegisterAgent(ctx context.Context, a AgentProfile) (AgentProfile, error) {
	if err := c.use(ctx); err != nil {
		return AgentProfile{}, err
	}
	return c.handoffs().RegisterAgent(ctx, a)
}

// GetAgent returns a registered agent's profile, or an error matching ErrNotFound.
func (c *Client) GetAgent(ctx context.Context, id string) (AgentProfile, error) {
	if err := c.use(ctx); err != nil {
		return AgentProfile{}, err
	}
	return c.handoffs().GetAgent(ctx, id)
}

// UnregisterAgent removes an agent's profile; ErrNotFound when it has none.
func (c *Client) UnregisterAgent(ctx context.Context, id string) error {
	if err := c.use(ctx); err != nil {
		return err
	}
	return c.handoffs().UnregisterAgent(ctx, id)
}

// Agents returns every registered agent profile.
func (c *Client) Agents(ctx context.Context) ([]AgentProfile, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.handoffs().ListAgents(ctx)
}

// FindAgents ranks the registered agents for the required capabilities: a
// proficiency-weighted score from 0 to 1, best first, ties by agent ID, with opts'
// minimum score, exclusions and limit. Errors: *ValidationError; ErrClosed; ctx's
// error.
func (c *Client) FindAgents(ctx context.Context, required []Requirement, opts MatchOptions) ([]Candidate, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.handoffs().FindAgents(ctx, required, opts)
}
