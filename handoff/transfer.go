package handoff

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/day1ai/day1/store"
)

// TransferRequest asks for a policy-driven handoff: the source's work passes to a
// receiver as soon as the policy allows, without waiting for the receiver to accept.
type TransferRequest struct {
	// Task is the task's name. Required; the task must be active.
	Task string
	// FromAgent is the source, an active member of the task. Required.
	FromAgent   string
	FromSession string
	// ToAgent names the receiver. Empty: the best registered agent for Required (the
	// source excluded when the type needs another agent); for session_handoff,
	// FromAgent.
	ToAgent   string
	ToSession string
	// Type is the handoff's type. Default TypeAgentSwitch. TypeCheckpoint is
	// refused.
	Type Type
	// Required are capabilities the receiver needs. A named receiver must be
	// registered and have all of them; otherwise the transfer fails in validation.
	Required []Requirement
	// MinScore is the least match score of a chosen receiver. Default
	// DefaultMinScore (0.5).
	MinScore float64
	// Policy says how the transfer proceeds. Zero fields take Policy.WithDefaults:
	// graceful, 300s.
	Policy Policy
	// Signal is what a conditional policy's trigger is evaluated against. Zero Now,
	// LastActivity and Capabilities are filled from the Engine's clock, the source's
	// last recorded activity and its registered capabilities.
	Signal Signal
	// Idle reports whether the source is idle, for graceful and conditional policies,
	// which wait for it (see WaitIdle). Default nil: the source is idle at once.
	Idle func(ctx context.Context) (bool, error)
	// Role is the receiver's role on the task. Default: its current role, or
	// DefaultReceiverRole.
	Role               string
	Reason             string
	Instructions       string
	PriorityObjectives []int
	Blockers           []string
	// IncludeUnverified adds unverified facts to the packet. Default false.
	IncludeUnverified bool
	// Limits bound the packet; the zero value means the defaults.
	Limits   Limits
	Metadata map[string]string
}

// Transfer runs a policy-driven handoff through initiated → validating →
// transferring → completed, recording each status in the record and the audit trail.
//
// Validating checks the source's membership, picks or checks the receiver (its
// capabilities against Required), asks the policy whether to proceed
// (Policy.Ready: a conditional policy proceeds only when its trigger fires) and, for
// graceful and conditional policies, waits for the source to be idle (WaitIdle with
// Policy.Poll and Policy.Timeout). Any of these failing ends the record at failed,
// with nothing to undo.
//
// Transferring freezes the packet, creates the receiver's branch from the task's
// branch (unless it exists) and commits, in one batch, the record (completed), the
// receiver's membership, the task's owner (for types that transfer ownership) and the
// source's departure. If that fails, the branch is deleted and the record ends at
// rolled_back.
//
// Transfer returns the record as it ended, and a nil error only when it completed.
// Errors: a *store.ValidationError for bad input (checked before any record is
// written); an error matching store.ErrNotFound for an unknown task or agent;
// ErrTaskClosed; ErrNotMember; ErrNoCandidate; ErrNotReady when a conditional
// policy's trigger did not fire; the trigger's evaluation errors; ErrIdleTimeout when
// the source stayed busy; a *RollbackError when transferring failed; the store's and
// ctx's errors.
func (e *Engine) Transfer(ctx context.Context, r TransferRequest) (Handoff, error) {
	if err := e.check(); err != nil {
		return Handoff{}, err
	}
	if r.Type == "" {
		r.Type = TypeAgentSwitch
	}
	if err := validAgent("TransferRequest.FromAgent", r.FromAgent); err != nil {
		return Handoff{}, err
	}
	hr := HandoffRequest{
		Task: r.Task, Type: r.Type, FromAgent: r.FromAgent, FromSession: r.FromSession, ToAgent: r.ToAgent,
		ToSession: r.ToSession, Required: r.Required, MinScore: r.MinScore, Instructions: r.Instructions,
		PriorityObjectives: r.PriorityObjectives, Blockers: r.Blockers, Reason: r.Reason,
		IncludeUnverified: r.IncludeUnverified, Limits: r.Limits, Metadata: r.Metadata,
	}
	if err := hr.validate(); err != nil {
		return Handoff{}, prefixTransfer(err)
	}
	r.ToAgent = hr.ToAgent
	if r.ToAgent == "" && len(r.Required) == 0 {
		return Handoff{}, store.Invalid("TransferRequest.ToAgent", "name the receiver, or list Required capabilities to choose one", nil)
	}
	pol := r.Policy.WithDefaults()
	if err := pol.Validate(); err != nil {
		return Handoff{}, prefixField(err, "TransferRequest.")
	}
	if err := validText("TransferRequest.Role", r.Role); err != nil {
		return Handoff{}, err
	}
	t, err := e.activeTask(ctx, r.Task)
	if err != nil {
		return Handoff{}, err
	}
	src, err := e.activeMember(ctx, r.Task, r.FromAgent)
	if err != nil {
		return Handoff{}, err
	}
	prio, err := checkObjectives("TransferRequest.PriorityObjectives", t, r.PriorityObjectives)
	if err != nil {
		return Handoff{}, err
	}

	now := e.now()
	h := Handoff{
		ID: e.newID(), Task: r.Task, Type: r.Type, FromAgent: r.FromAgent, FromSession: r.FromSession,
		ToAgent: r.ToAgent, ToSession: r.ToSession, Required: r.Required, Policy: &pol, Reason: r.Reason,
		Instructions: r.Instructions, PriorityObjectives: prio, Blockers: slices.Clone(r.Blockers),
		Metadata: maps.Clone(r.Metadata), CreatedAt: now, UpdatedAt: now,
	}
	moveTo(&h, StatusInitiated, r.FromAgent, r.Reason, now)
	if err := e.step(ctx, &h, store.DocCreate, r.FromAgent); err != nil {
		return Handoff{}, err
	}
	if err := e.advance(ctx, &h, StatusValidating, r.FromAgent, ""); err != nil {
		return h, err
	}

	if cause := e.validateTransfer(ctx, &h, &r, pol, src); cause != nil {
		if err := e.advance(ctx, &h, StatusFailed, r.FromAgent, cause.Error()); err != nil {
			return h, fmt.Errorf("%w (recording the failure failed too: %v)", cause, err)
		}
		h.Error = cause.Error()
		return h, cause
	}

	if err := e.advance(ctx, &h, StatusTransferring, r.FromAgent, ""); err != nil {
		return h, err
	}
	t, err = e.GetTask(ctx, r.Task)
	if err == nil {
		h.Packet, err = e.buildPacket(ctx, t, packetSpec{
			handoff: h.ID, from: r.FromAgent, typ: r.Type, scope: r.Type.Scope(), includeUnverified: r.IncludeUnverified,
			instructions: r.Instructions, blockers: r.Blockers, priority: prio, limits: r.Limits,
		})
	}
	if err != nil {
		return h, e.rollback(ctx, &h, receipt{agent: r.FromAgent, op: "transfer"}, err, "", false)
	}
	if _, err := e.receive(ctx, &h, receipt{agent: h.ToAgent, session: r.ToSession, role: r.Role, final: StatusCompleted, op: "transfer"}); err != nil {
		return h, err
	}
	return h, nil
}

// validateTransfer is the validating step: it settles the receiver and asks the
// policy. It returns why the transfer cannot go on.
func (e *Engine) validateTransfer(ctx context.Context, h *Handoff, r *TransferRequest, pol Policy, src Member) error {
	if h.ToAgent == "" {
		var exclude []string
		if h.Type.Scope().Receiver == ReceiverOther && h.FromAgent != "" {
			exclude = []string{h.FromAgent}
		}
		c, err := e.chooseReceiver(ctx, r.Required, r.MinScore, exclude, h.Type, nil)
		if err != nil {
			return err
		}
		h.ToAgent = c.AgentID
	} else if len(r.Required) > 0 {
		a, err := e.GetAgent(ctx, h.ToAgent)
		if err != nil {
			return err
		}
		cs, err := Match(r.Required, []AgentProfile{a}, MatchOptions{RequireAll: true})
		if err != nil {
			return err
		}
		if len(cs) == 0 {
			all, _ := Match(r.Required, []AgentProfile{a}, MatchOptions{})
			return fmt.Errorf("%w: agent %s lacks %v", ErrNoCandidate, h.ToAgent, all[0].Missing)
		}
	}
	sig := r.Signal
	if sig.Now.IsZero() {
		sig.Now = e.now()
	}
	if sig.LastActivity.IsZero() {
		sig.LastActivity = src.LastActivity
	}
	if sig.Capabilities == nil {
		if a, err := e.GetAgent(ctx, h.FromAgent); err == nil {
			sig.Capabilities = a.CapabilityNames()
		}
	}
	ok, reason, err := pol.Ready(sig)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: the trigger of the conditional policy did not fire", ErrNotReady)
	}
	if h.Reason == "" {
		h.Reason = reason
	}
	if pol.Waits() {
		idle := r.Idle
		if idle == nil {
			idle = func(context.Context) (bool, error) { return true, nil }
		}
		if err := WaitIdle(ctx, idle, pol.Poll, pol.Timeout); err != nil {
			return err
		}
	}
	return nil
}

// advance moves h to status to (the state machine must allow it) and writes it with
// its audit event.
func (e *Engine) advance(ctx context.Context, h *Handoff, to Status, by, note string) error {
	if err := Transition(h.Status, to); err != nil {
		return err
	}
	moveTo(h, to, by, note, e.now())
	return e.step(ctx, h, store.DocMatch, by)
}

// step writes h and the audit event of its last status change.
func (e *Engine) step(ctx context.Context, h *Handoff, cond store.DocCond, by string) error {
	b := e.batch()
	b.put(handoffWrite(*h, cond))
	b.put(e.statusEvent(*h, by))
	docs, err := b.commit(ctx)
	if err != nil {
		return err
	}
	h.Version = docs[0].Version
	return nil
}

// prefixTransfer renames HandoffRequest fields to TransferRequest fields.
func prefixTransfer(err error) error {
	if ve, ok := err.(*store.ValidationError); ok {
		c := *ve
		if len(c.Field) > len("HandoffRequest.") && c.Field[:len("HandoffRequest.")] == "HandoffRequest." {
			c.Field = "TransferRequest." + c.Field[len("HandoffRequest."):]
		}
		return &c
	}
	return err
}
