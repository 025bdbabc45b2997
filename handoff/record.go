package handoff

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/day1ai/day1/store"
)

// Limits on a handoff's guidance.
const (
	// MaxBlockers bounds the blockers of one handoff.
	MaxBlockers = 50
	// MaxBlockerLen bounds each blocker, in bytes.
	MaxBlockerLen = 1000
)

// openReceiver is the receiver key of a handoff that any agent may accept.
const openReceiver = "*"

// DefaultReceiverRole is the role a receiver gets on the task when it had none and its
// request names none.
const DefaultReceiverRole = "receiver"

// Handoff is the record of one handoff: who hands what to whom, the frozen context
// packet, and where it stands.
type Handoff struct {
	ID   string `json:"id"`
	Task string `json:"task"`
	Type Type   `json:"type"`
	// Status follows the state machines of Status: pending → accepting → accepted
	// (or rejected, expired, rolled_back) for a handoff offered with Handoff;
	// initiated → validating → transferring → completed (or failed, rolled_back)
	// for one run with Transfer.
	Status   Status   `json:"status"`
	Priority Priority `json:"priority"`
	// FromAgent and FromSession are the source; FromAgent is empty for a handoff
	// that starts a task.
	FromAgent   string `json:"from_agent,omitempty"`
	FromSession string `json:"from_session,omitempty"`
	// ToAgent is the receiver: named at creation, chosen by capability matching, or
	// set by the agent that claims an open handoff. ToSession is its session.
	ToAgent   string `json:"to_agent,omitempty"`
	ToSession string `json:"to_session,omitempty"`
	// Required are the capabilities asked of the receiver.
	Required []Requirement `json:"required,omitempty"`
	// Permissions are the named permissions the receiver must hold, when it has a
	// registered profile.
	Permissions []string `json:"permissions,omitempty"`
	// MinScore is the least match score of a chosen receiver; 0 means
	// DefaultMinScore.
	MinScore float64 `json:"min_score,omitempty"`
	// Escalate says the handoff is offered to the next best agent when it is
	// rejected, expires or is rolled back, up to MaxEscalations times along the
	// chain. See HandoffRequest.Escalate.
	Escalate       bool `json:"escalate,omitempty"`
	MaxEscalations int  `json:"max_escalations,omitempty"`
	// TTL is the time to live each handoff of the chain gets.
	TTL time.Duration `json:"ttl,omitempty"`
	// EscalatedFrom is the handoff this one escalates, the previous link of the
	// chain; empty for the first. EscalatedTo is the handoff that escalated this
	// one, once it has.
	EscalatedFrom string `json:"escalated_from,omitempty"`
	EscalatedTo   string `json:"escalated_to,omitempty"`
	// Attempt counts the escalations before this handoff: 0 for the first of a
	// chain.
	Attempt int `json:"attempt,omitempty"`
	// Tried lists the receivers offered the chain so far, this one's included,
	// in order.
	Tried []string `json:"tried,omitempty"`
	// Policy governs a transfer; nil for a handoff offered with Handoff.
	Policy             *Policy  `json:"policy,omitempty"`
	Reason             string   `json:"reason,omitempty"`
	Instructions       string   `json:"instructions,omitempty"`
	PriorityObjectives []int    `json:"priority_objectives,omitempty"`
	Blockers           []string `json:"blockers,omitempty"`
	// Packet is the context, frozen when the handoff was offered (or, for a
	// transfer, when it started transferring).
	Packet Packet `json:"packet"`
	// ReceiverBranch is the receiver's branch, task/<task>/<agent>, once accepted.
	ReceiverBranch string `json:"receiver_branch,omitempty"`
	// RejectReason says why the receiver declined; Error why it failed or was
	// rolled back.
	RejectReason string `json:"reject_reason,omitempty"`
	Error        string `json:"error,omitempty"`
	// ExpiresAt is when a pending handoff expires; zero means never.
	ExpiresAt time.Time         `json:"expires_at,omitzero"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	// History lists every status change, oldest first.
	History   []StatusChange `json:"history"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	// ClosedAt is when it reached a final status.
	ClosedAt time.Time `json:"closed_at,omitzero"`
	Version  uint64    `json:"-"`
}

// StatusChange is one status change of a handoff.
type StatusChange struct {
	From Status    `json:"from,omitempty"`
	To   Status    `json:"to"`
	By   string    `json:"by,omitempty"`
	At   time.Time `json:"at"`
	Note string    `json:"note,omitempty"`
}

// HandoffRequest offers a task's work to a receiver.
type HandoffRequest struct {
	// Task is the task's name. Required; the task must be active.
	Task string
	// Type is the handoff's type. Default DefaultType (full). TypeCheckpoint is
	// refused: use Checkpoint.
	Type Type
	// FromAgent is the source, an active member of the task; empty for a handoff
	// that starts the task. FromSession is its session. Required for
	// session_handoff.
	FromAgent   string
	FromSession string
	// ToAgent names the receiver. Empty: when Required is set, the best registered
	// agent is chosen (see Required); for session_handoff, FromAgent; otherwise any
	// agent may accept (an open handoff). Type.CheckReceiver's rules apply.
	ToAgent   string
	ToSession string
	// Required are capabilities the receiver needs. When ToAgent is empty, the
	// registered agents are ranked with Match (the source excluded when the type
	// needs another agent) and the best one scoring at least MinScore is chosen;
	// none is ErrNoCandidate.
	Required []Requirement
	// MinScore is the least match score of a chosen receiver. Default
	// DefaultMinScore (0.5).
	MinScore float64
	// Permissions are named permissions the receiver must hold (see
	// AgentProfile.Permissions). A registered receiver is also checked for its
	// availability and accepted types: offering to a named receiver that fails a
	// check, or accepting by one, is a *ReceiverError, recorded in the audit trail;
	// a chosen receiver is picked among those that pass. An agent without a
	// registered profile is not checked. At most MaxPermissions. Default none.
	Permissions []string
	// Escalate offers the handoff again, automatically, when it is rejected,
	// expires or its accept fails and is rolled back: to the best agent meeting
	// Required that is available, permitted and not yet tried (the source excluded
	// when the type needs another agent), as a new pending handoff with the same
	// packet, linked by EscalatedFrom and EscalatedTo, in the same atomic batch as
	// the end of the previous one. Requires Required. Default false.
	Escalate bool
	// MaxEscalations bounds the chain: after that many escalations, or when no agent
	// qualifies, the last handoff keeps its final status and an
	// EventHandoffEscalationEnded event says why. Default DefaultMaxEscalations (2)
	// when Escalate is set; at most MaxEscalationsLimit.
	MaxEscalations int
	// Instructions guide the receiver. At most MaxTextLen bytes.
	Instructions string
	// PriorityObjectives are the numbers of the objectives to tackle first.
	PriorityObjectives []int
	// Blockers are known obstacles: at most MaxBlockers of MaxBlockerLen bytes.
	Blockers []string
	// Priority orders pending handoffs. Default PriorityNormal.
	Priority Priority
	// Reason says why the handoff happens.
	Reason string
	// IncludeUnverified adds unverified facts to the packet. Default false: only
	// verified facts travel.
	IncludeUnverified bool
	// Consolidate turns the source agent's observations on its branch
	// (task/<task>/<agent>) into candidate facts there before the packet is frozen,
	// through Engine.Consolidate. The candidates are unverified: they travel when
	// IncludeUnverified is set. Requires FromAgent. Default false.
	Consolidate bool
	// TTL is how long the handoff stays pending before it expires. Default 0: it
	// never expires. Must not be negative.
	TTL time.Duration
	// Limits bound the packet; the zero value means the defaults.
	Limits Limits
	// Metadata is kept with the record.
	Metadata map[string]string
}

// AcceptRequest accepts a pending handoff.
type AcceptRequest struct {
	// Handoff is the handoff's ID. Required.
	Handoff string
	// Agent is the receiver. Required; it must be the named receiver when the
	// handoff has one, and satisfy the type's receiver rule.
	Agent string
	// Session is the receiver's session. Optional.
	Session string
	// Role is the receiver's role on the task when it joins by accepting. Default:
	// its current role, or DefaultReceiverRole.
	Role string
}

// Acceptance is what an accept returns: the record, the packet, and where to work.
type Acceptance struct {
	// Handoff is the record, now accepted.
	Handoff Handoff
	// Packet is the context frozen when the handoff was offered.
	Packet Packet
	// Member is the receiver's membership of the task.
	Member Member
	// Branch is the receiver's branch, task/<task>/<agent>; BranchCreated reports
	// whether the accept created it (false when it existed).
	Branch        string
	BranchCreated bool
}

// RejectRequest declines a pending handoff.
type RejectRequest struct {
	Handoff string // the handoff's ID; required
	Agent   string // who declines; required, the named receiver when there is one
	Reason  string // why; optional
}

// HandoffFilter selects handoff records. Zero fields match everything.
type HandoffFilter struct {
	Task   string
	Status Status
	Type   Type
	// Agent keeps the handoffs from or to the agent.
	Agent string
	// Limit keeps the first Limit records, oldest first; 0 means all.
	Limit int
}

// PendingFilter selects the pending handoffs waiting for a receiver.
type PendingFilter struct {
	// Task keeps one task's handoffs.
	Task string
	// Receiver keeps the handoffs the agent may accept: addressed to it, or open and
	// allowed to it by the type's receiver rule.
	Receiver string
}

func (r *HandoffRequest) validate() error {
	if err := validTaskName("HandoffRequest.Task", r.Task); err != nil {
		return err
	}
	if r.Type == "" {
		r.Type = DefaultType
	}
	if !r.Type.Valid() {
		return store.Invalid("HandoffRequest.Type", oneOf(allTypes), string(r.Type))
	}
	if r.Type == TypeCheckpoint {
		return store.Invalid("HandoffRequest.Type", "a checkpoint has no receiver; record it with Checkpoint", string(r.Type))
	}
	if r.FromAgent != "" {
		if err := validAgent("HandoffRequest.FromAgent", r.FromAgent); err != nil {
			return err
		}
	}
	if r.ToAgent != "" {
		if err := validAgent("HandoffRequest.ToAgent", r.ToAgent); err != nil {
			return err
		}
	}
	for _, f := range []struct{ field, v string }{{"HandoffRequest.FromSession", r.FromSession}, {"HandoffRequest.ToSession", r.ToSession}} {
		if err := validOptionalID(f.field, f.v); err != nil {
			return err
		}
	}
	if r.Type.Scope().Receiver == ReceiverSame && r.ToAgent == "" {
		r.ToAgent = r.FromAgent
	}
	if err := r.Type.CheckReceiver(r.FromAgent, r.ToAgent); err != nil {
		return prefixField(err, "HandoffRequest.")
	}
	if err := validRequired("HandoffRequest.Required", r.Required); err != nil {
		return err
	}
	if err := validPermissions("HandoffRequest.Permissions", r.Permissions); err != nil {
		return err
	}
	if err := r.validEscalation(); err != nil {
		return err
	}
	if !unit(r.MinScore) {
		return store.Invalid("HandoffRequest.MinScore", "must be between 0 and 1 (0 means the default, 0.5)", r.MinScore)
	}
	if err := validGuidance("HandoffRequest", r.Instructions, r.Reason, r.Blockers); err != nil {
		return err
	}
	if !r.Priority.Valid() {
		return store.Invalid("HandoffRequest.Priority", "must be from -1 (low) to 2 (urgent)", int(r.Priority))
	}
	if r.TTL < 0 {
		return store.Invalid("HandoffRequest.TTL", "must not be negative (0 means it never expires)", r.TTL)
	}
	if len(r.Metadata) > store.MaxMetadataPairs {
		return store.Invalid("HandoffRequest.Metadata", fmt.Sprintf("holds %d pairs; at most %d are allowed", len(r.Metadata), store.MaxMetadataPairs), nil)
	}
	return r.Limits.Validate("HandoffRequest.Limits")
}

func (r *HandoffRequest) validEscalation() error {
	switch {
	case r.MaxEscalations < 0 || r.MaxEscalations > MaxEscalationsLimit:
		return store.Invalid("HandoffRequest.MaxEscalations", fmt.Sprintf("must be from 0 (the default, %d) to %d", DefaultMaxEscalations, MaxEscalationsLimit), r.MaxEscalations)
	case !r.Escalate && r.MaxEscalations > 0:
		return store.Invalid("HandoffRequest.MaxEscalations", "bounds escalation; set Escalate too", r.MaxEscalations)
	case r.Escalate && len(r.Required) == 0:
		return store.Invalid("HandoffRequest.Escalate", "needs Required, the capabilities the next receiver is chosen by", nil)
	case r.Escalate && r.MaxEscalations == 0:
		r.MaxEscalations = DefaultMaxEscalations
	}
	return nil
}

func validRequired(field string, rs []Requirement) error {
	seen := map[string]bool{}
	for i, q := range rs {
		if err := q.Validate(); err != nil {
			return store.AtIndex(err, field, i)
		}
		if k := capabilityKey(q.Name); seen[k] {
			return store.Invalid(fmt.Sprintf("%s[%d].Requirement.Name", field, i), "is listed twice; list each requirement once", q.Name)
		} else {
			seen[k] = true
		}
	}
	return nil
}

func validGuidance(what, instructions, reason string, blockers []string) error {
	if err := validText(what+".Instructions", instructions); err != nil {
		return err
	}
	if err := validText(what+".Reason", reason); err != nil {
		return err
	}
	if len(blockers) > MaxBlockers {
		return store.Invalid(what+".Blockers", fmt.Sprintf("holds %d blockers; at most %d are allowed", len(blockers), MaxBlockers), nil)
	}
	for i, b := range blockers {
		if strings.TrimSpace(b) == "" || len(b) > MaxBlockerLen {
			return store.Invalid(fmt.Sprintf("%s.Blockers[%d]", what, i), fmt.Sprintf("must be 1 to %d bytes describing the obstacle", MaxBlockerLen), b)
		}
	}
	return nil
}

// prefixField prefixes the field of a *store.ValidationError.
func prefixField(err error, prefix string) error {
	var ve *store.ValidationError
	if errors.As(err, &ve) {
		c := *ve
		c.Field = prefix + ve.Field
		return &c
	}
	return err
}

func handoffNotFound(id string) string { return fmt.Sprintf("handoff %q", id) }

func handoffWrite(h Handoff, cond store.DocCond) (store.DocWrite, error) {
	keys := map[string]string{"task": h.Task, "type": string(h.Type), "status": string(h.Status), "receiver": openReceiver}
	if h.FromAgent != "" {
		keys["from"] = h.FromAgent
	}
	if h.ToAgent != "" {
		keys["receiver"] = h.ToAgent
	}
	return docWrite(HandoffCollection, h.ID, h, keys, cond, h.Version)
}

func (e *Engine) readHandoff(ctx context.Context, id string) (Handoff, error) {
	var h Handoff
	v, err := readDoc(ctx, e.Store, HandoffCollection, id, handoffNotFound(id), &h)
	if err != nil {
		return Handoff{}, err
	}
	h.Version = v
	return h, nil
}

// moveTo changes h's status (after Transition allowed it) and records the change.
func moveTo(h *Handoff, to Status, by, note string, now time.Time) {
	h.History = append(h.History, StatusChange{From: h.Status, To: to, By: by, At: now, Note: note})
	h.Status, h.UpdatedAt = to, now
	if to.Terminal() || to == StatusFailed {
		h.ClosedAt = now
	}
}

// statusEvent builds the audit event of h's last status change.
func (e *Engine) statusEvent(h Handoff, by string) (store.DocWrite, error) {
	c := h.History[len(h.History)-1]
	kind := EventHandoffStatus
	if c.From == "" {
		kind = EventHandoffCreated
	}
	return e.event(Event{Kind: kind, Task: h.Task, Handoff: h.ID, Actor: by, From: string(c.From), To: string(c.To), Note: c.Note}, h.FromAgent, h.ToAgent)
}

// chooseReceiver ranks the registered agents that may receive a handoff of type typ
// requiring permissions (see AgentProfile.CanReceive) against required, and returns
// the best, leaving out exclude.
func (e *Engine) chooseReceiver(ctx context.Context, required []Requirement, minScore float64, exclude []string, typ Type, permissions []string) (Candidate, error) {
	if minScore == 0 {
		minScore = DefaultMinScore
	}
	agents, err := e.ListAgents(ctx)
	if err != nil {
		return Candidate{}, err
	}
	agents = slices.DeleteFunc(agents, func(a AgentProfile) bool { return a.refusal(typ, permissions, false) != nil })
	cs, err := Match(required, agents, MatchOptions{MinScore: minScore, Limit: 1, Exclude: exclude})
	if err != nil {
		return Candidate{}, err
	}
	if len(cs) == 0 {
		names := make([]string, len(required))
		for i, r := range required {
			names[i] = r.Name
		}
		return Candidate{}, fmt.Errorf("%w: none of the available, permitted agents not yet tried scores %.2f or more for %s; register one with RegisterAgent or lower MinScore",
			ErrNoCandidate, minScore, strings.Join(names, ", "))
	}
	return cs[0], nil
}

// CreateHandoff offers a task's work to a receiver. It freezes the task's context in
// a packet (see Packet and Limits; the type's Scope decides what it carries), then
// writes the record, pending, with its audit event and the task's and source's
// activity, in one atomic batch.
//
// Errors: a *store.ValidationError for bad input (a checkpoint type, a receiver the
// type does not allow, an unknown priority objective, bad limits...); an error
// matching store.ErrNotFound for an unknown task; ErrTaskClosed; ErrNotMember when
// FromAgent is not an active member; a *ReceiverError (ErrReceiverRefused) when the
// named receiver's registered profile refuses it (busy, offline, another type, a
// missing permission), recorded as an EventHandoffRefused event; ErrNoCandidate when
// no available, permitted registered agent meets Required; the store's and ctx's
// errors.
func (e *Engine) CreateHandoff(ctx context.Context, r HandoffRequest) (Handoff, error) {
	if err := e.check(); err != nil {
		return Handoff{}, err
	}
	if err := r.validate(); err != nil {
		return Handoff{}, err
	}
	t, err := e.activeTask(ctx, r.Task)
	if err != nil {
		return Handoff{}, err
	}
	if err := e.fill(ctx, &t); err != nil {
		return Handoff{}, err
	}
	if r.FromAgent != "" {
		if _, err := e.activeMember(ctx, r.Task, r.FromAgent); err != nil {
			return Handoff{}, err
		}
	}
	prio, err := checkObjectives("HandoffRequest.PriorityObjectives", t, r.PriorityObjectives)
	if err != nil {
		return Handoff{}, err
	}
	if r.ToAgent != "" {
		if err := e.checkReceiver(ctx, receiverCheck{task: r.Task, actor: r.FromAgent, agent: r.ToAgent, typ: r.Type,
			permissions: r.Permissions, field: "HandoffRequest.ToAgent"}); err != nil {
			return Handoff{}, err
		}
	}
	if r.Consolidate {
		if err := e.consolidateSource(ctx, r.Task, r.FromAgent); err != nil {
			return Handoff{}, err
		}
	}
	if r.ToAgent == "" && len(r.Required) > 0 {
		var exclude []string
		if r.Type.Scope().Receiver == ReceiverOther && r.FromAgent != "" {
			exclude = []string{r.FromAgent}
		}
		c, err := e.chooseReceiver(ctx, r.Required, r.MinScore, exclude, r.Type, r.Permissions)
		if err != nil {
			return Handoff{}, err
		}
		r.ToAgent = c.AgentID
	}
	now := e.now()
	h := Handoff{
		ID: e.newID(), Task: r.Task, Type: r.Type, Priority: r.Priority,
		FromAgent: r.FromAgent, FromSession: r.FromSession, ToAgent: r.ToAgent, ToSession: r.ToSession,
		Required: r.Required, Reason: r.Reason, Instructions: r.Instructions, PriorityObjectives: prio,
		Blockers: slices.Clone(r.Blockers), Metadata: maps.Clone(r.Metadata), CreatedAt: now, UpdatedAt: now,
		Permissions: slices.Clone(r.Permissions), MinScore: r.MinScore,
		Escalate: r.Escalate, MaxEscalations: r.MaxEscalations, TTL: r.TTL,
	}
	if r.ToAgent != "" {
		h.Tried = []string{r.ToAgent}
	}
	if r.TTL > 0 {
		h.ExpiresAt = now.Add(r.TTL)
	}
	h.Packet, err = e.buildPacket(ctx, t, packetSpec{
		handoff: h.ID, from: r.FromAgent, typ: r.Type, scope: r.Type.Scope(), includeUnverified: r.IncludeUnverified,
		instructions: r.Instructions, blockers: r.Blockers, priority: prio, limits: r.Limits,
	})
	if err != nil {
		return Handoff{}, err
	}
	moveTo(&h, StatusPending, r.FromAgent, r.Reason, now)
	docs, err := e.update(ctx, func(b *batch) error {
		t, err := e.activeTask(ctx, r.Task)
		if err != nil {
			return err
		}
		touch(&t, now)
		b.put(handoffWrite(h, store.DocCreate))
		b.put(taskWrite(t, store.DocMatch))
		b.put(e.statusEvent(h, r.FromAgent))
		if r.FromAgent != "" {
			m, err := e.activeMember(ctx, r.Task, r.FromAgent)
			if err != nil {
				return err
			}
			m.LastActivity = now
			b.put(memberWrite(m, store.DocMatch))
		}
		return nil
	})
	if err != nil {
		return Handoff{}, err
	}
	h.Version = docs[0].Version
	return h, nil
}

// consolidateSource turns the source agent's observations into candidate facts on
// its branch, for a handoff that asks for it.
func (e *Engine) consolidateSource(ctx context.Context, task, agent string) error {
	if agent == "" {
		return store.Invalid("HandoffRequest.Consolidate", "needs FromAgent, whose observations become candidate facts", nil)
	}
	if e.Consolidate == nil {
		return store.Invalid("HandoffRequest.Consolidate", "needs Engine.Consolidate to be set", nil)
	}
	branch := AgentBranch(task, agent)
	if _, err := e.Store.GetBranch(ctx, branch); errors.Is(err, store.ErrBranchNotFound) {
		return nil // the agent never wrote on a branch of its own
	} else if err != nil {
		return err
	}
	if _, err := e.Consolidate(ctx, branch, task, agent); err != nil {
		return fmt.Errorf("day1: consolidating the observations of %s before the handoff: %w", agent, err)
	}
	return nil
}

// GetHandoff returns a handoff record with its packet. Errors: an error matching
// store.ErrNotFound for an unknown handoff; the store's and ctx's errors.
func (e *Engine) GetHandoff(ctx context.Context, id string) (Handoff, error) {
	if err := e.check(); err != nil {
		return Handoff{}, err
	}
	if err := store.ValidateID("id", id); err != nil {
		return Handoff{}, err
	}
	return e.readHandoff(ctx, id)
}

// expireIfDue moves a pending handoff whose time ran out to expired and reports
// whether it did. It returns the store's error, including store.ErrStale when the
// record changed since it was read.
func (e *Engine) expireIfDue(ctx context.Context, h *Handoff) (bool, error) {
	now := e.now()
	switch {
	case h.Status == StatusAccepting && !now.Before(h.UpdatedAt.Add(e.claimTimeout())):
		msg := "the accept claimed at " + h.UpdatedAt.Format(time.RFC3339) + " did not finish within " + e.claimTimeout().String()
		moveTo(h, StatusRolledBack, "", msg, now)
		h.Error = msg
	case h.Status != StatusPending || h.ExpiresAt.IsZero() || now.Before(h.ExpiresAt):
		return false, nil
	default:
		moveTo(h, StatusExpired, "", "not accepted before "+h.ExpiresAt.Format(time.RFC3339), now)
	}
	more := e.escalate(ctx, h, "", "")
	b := e.batch()
	b.put(handoffWrite(*h, store.DocMatch))
	b.put(e.statusEvent(*h, ""))
	b.build(more...)
	docs, err := b.commit(ctx)
	if err != nil {
		return false, err
	}
	h.Version = docs[0].Version
	return true, nil
}

// AcceptHandoff accepts a pending handoff for r.Agent and returns its frozen packet,
// atomically: the receiver gets its branch task/<task>/<agent> (forked from the
// task's branch unless it exists), becomes an active member of the task, the owner
// when the type transfers ownership (the source, if another agent, then leaves the
// task with a summary naming the handoff), and the record shows accepted; or nothing
// of this remains and the record shows rolled_back.
//
// The accept first claims the record (pending → accepting, a write with a version
// precondition), so of two agents accepting at once exactly one proceeds and the
// other gets a *TransitionError (store.ErrConflict). It then creates the branch and
// commits the membership, the task and the record (accepting → accepted) in one
// batch. If the branch or the commit fails, the branch it created is deleted and the
// record moves to rolled_back: the error is a *RollbackError matching ErrRolledBack
// and the cause.
//
// Errors: a *store.ValidationError for bad input, an agent other than the named
// receiver, or one the type's receiver rule refuses; an error matching
// store.ErrNotFound for an unknown handoff; a *TransitionError (store.ErrConflict)
// when the handoff is not pending (accepted, rejected, claimed by another...);
// ErrHandoffExpired when it expired (it then shows expired); ErrTaskClosed; a
// *ReceiverError when r.Agent's registered profile refuses it now (offline, another
// type, a missing permission): the handoff stays pending; a *RollbackError; the
// store's and ctx's errors. An expired or rolled back handoff with Escalate set is
// offered to the next agent (see HandoffRequest.Escalate).
func (e *Engine) AcceptHandoff(ctx context.Context, r AcceptRequest) (Acceptance, error) {
	if err := e.check(); err != nil {
		return Acceptance{}, err
	}
	if err := store.ValidateID("AcceptRequest.Handoff", r.Handoff); err != nil {
		return Acceptance{}, err
	}
	if err := validAgent("AcceptRequest.Agent", r.Agent); err != nil {
		return Acceptance{}, err
	}
	if err := validOptionalID("AcceptRequest.Session", r.Session); err != nil {
		return Acceptance{}, err
	}
	if err := validText("AcceptRequest.Role", r.Role); err != nil {
		return Acceptance{}, err
	}
	var h Handoff
	docs, err := e.update(ctx, func(b *batch) error {
		var err error
		if h, err = e.readHandoff(ctx, r.Handoff); err != nil {
			return err
		}
		if expired, err := e.expireIfDue(ctx, &h); err != nil {
			return err
		} else if expired {
			return fmt.Errorf("%w: handoff %s was not accepted before %s", ErrHandoffExpired, h.ID, h.ExpiresAt.Format(time.RFC3339))
		}
		if err := Transition(h.Status, StatusAccepting); err != nil {
			return fmt.Errorf("day1: handoff %s cannot be accepted: %w", h.ID, err)
		}
		if h.ToAgent != "" && h.ToAgent != r.Agent {
			return store.Invalid("AcceptRequest.Agent", fmt.Sprintf("handoff %s is addressed to %s; only that agent may accept it", h.ID, h.ToAgent), r.Agent)
		}
		if err := h.Type.CheckReceiver(h.FromAgent, r.Agent); err != nil {
			return prefixField(err, "AcceptRequest.")
		}
		if _, err := e.activeTask(ctx, h.Task); err != nil {
			return err
		}
		if err := e.checkReceiver(ctx, receiverCheck{task: h.Task, handoff: h.ID, actor: r.Agent, agent: r.Agent, typ: h.Type,
			permissions: h.Permissions, field: "AcceptRequest.Agent", accepting: true}); err != nil {
			return err
		}
		moveTo(&h, StatusAccepting, r.Agent, "", e.now())
		h.ToAgent = r.Agent
		if r.Session != "" {
			h.ToSession = r.Session
		}
		b.put(handoffWrite(h, store.DocMatch))
		b.put(e.statusEvent(h, r.Agent))
		return nil
	})
	if err != nil {
		return Acceptance{}, err
	}
	h.Version = docs[0].Version
	acc, err := e.receive(ctx, &h, receipt{agent: r.Agent, session: r.Session, role: r.Role, final: StatusAccepted, op: "accept"})
	if err != nil {
		return Acceptance{}, err
	}
	return acc, nil
}

// receipt says who receives a claimed handoff and how (Engine.receive).
type receipt struct {
	agent, session, role string // the receiver, its session and its role in the task
	final                Status // the record's status once received
	op                   string // "accept" or "transfer", as a RollbackError names it
}

// receive gives a claimed handoff (accepting or transferring) to agent: it creates
// the agent's branch if needed, then commits the membership, the task and the record
// at status final. On failure it undoes the branch and moves the record to
// rolled_back.
func (e *Engine) receive(ctx context.Context, h *Handoff, rc receipt) (Acceptance, error) {
	agent, session, role, final := rc.agent, rc.session, rc.role, rc.final
	branch := AgentBranch(h.Task, agent)
	acc := Acceptance{Branch: branch}
	t, err := e.readTask(ctx, h.Task)
	if err != nil {
		return Acceptance{}, e.rollback(ctx, h, rc, err, branch, false)
	}
	created, err := e.ensureBranch(ctx, branch, t.Branch, "agent "+agent+" on task "+h.Task,
		map[string]string{"task": h.Task, "agent": agent})
	if err != nil {
		return Acceptance{}, e.rollback(ctx, h, rc, err, branch, false)
	}
	acc.BranchCreated = created
	claimed := h.Version
	var hv Handoff
	var m Member
	var docs []store.Doc
	err = e.retry(ctx, func() error {
		b := e.batch()
		t, err := e.activeTask(ctx, h.Task)
		if err != nil {
			return err
		}
		now := e.now()
		var found bool
		m, found, err = e.readMember(ctx, h.Task, agent)
		if err != nil {
			return err
		}
		cond := store.DocMatch
		if !found {
			cond = store.DocCreate
			m = Member{Task: h.Task, Agent: agent, Branch: branch, JoinedAt: now}
		}
		if m.Status != MemberActive {
			m.Status, m.Summary, m.LeftAt = MemberActive, "", time.Time{}
		}
		if role != "" {
			m.Role = role
		} else if m.Role == "" {
			m.Role = DefaultReceiverRole
		}
		for _, n := range h.PriorityObjectives {
			if !slices.Contains(m.Objectives, n) {
				m.Objectives = append(m.Objectives, n)
			}
		}
		sort.Ints(m.Objectives)
		if session != "" {
			m.Session = session
		}
		m.LastActivity = now
		scope := h.Type.Scope()
		if scope.TransfersOwnership || t.Owner == "" {
			t.Owner = agent
		}
		touch(&t, now)
		hv = *h
		hv.Version = claimed
		hv.ReceiverBranch = branch
		moveTo(&hv, final, agent, "", now)
		b.put(handoffWrite(hv, store.DocMatch))
		b.put(memberWrite(m, cond))
		b.put(taskWrite(t, store.DocMatch))
		b.put(e.statusEvent(hv, agent))
		if scope.TransfersOwnership && h.FromAgent != "" && h.FromAgent != agent {
			src, found, err := e.readMember(ctx, h.Task, h.FromAgent)
			if err != nil {
				return err
			}
			if found && src.Status == MemberActive {
				summary := fmt.Sprintf("handed over to %s (%s handoff %s)", agent, h.Type, h.ID)
				src.Status, src.Summary, src.LeftAt, src.LastActivity = MemberLeft, summary, now, now
				b.put(memberWrite(src, store.DocMatch))
				b.put(e.event(Event{Kind: EventAgentLeft, Task: h.Task, Handoff: h.ID, Actor: h.FromAgent, From: string(MemberActive), To: string(MemberLeft), Note: summary}))
			}
		}
		docs, err = b.commit(ctx)
		var dc *store.DocConflictError
		if errors.As(err, &dc) && dc.Collection == HandoffCollection {
			// The claimed record changed under us: not a race to retry.
			return fmt.Errorf("day1: handoff %s changed while it was being received: %w", h.ID, store.ErrConflict)
		}
		return err
	})
	if err != nil {
		return Acceptance{}, e.rollback(ctx, h, rc, err, branch, created)
	}
	hv.Version, m.Version = docs[0].Version, docs[1].Version
	*h = hv
	acc.Handoff, acc.Packet, acc.Member = hv, hv.Packet, m
	return acc, nil
}

// rollback undoes a failed receive: deletes the branch if this call created it and
// moves the claimed record to rolled_back. It runs even when ctx was cancelled.
func (e *Engine) rollback(ctx context.Context, h *Handoff, rc receipt, cause error, branch string, created bool) error {
	agent, op := rc.agent, rc.op
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	re := &RollbackError{Op: op, Handoff: h.ID, Cause: cause}
	if created {
		if err := e.Store.DeleteBranch(ctx, branch); err != nil && !errors.Is(err, store.ErrBranchNotFound) {
			re.RollbackErr = fmt.Errorf("deleting the branch %s: %w", branch, err)
			return re
		}
	}
	hv := *h
	msg := cause.Error()
	if len(msg) > MaxBlockerLen {
		msg = msg[:MaxBlockerLen]
	}
	moveTo(&hv, StatusRolledBack, agent, msg, e.now())
	hv.Error = msg
	more := e.escalate(ctx, &hv, agent, agent)
	b := e.batch()
	b.put(handoffWrite(hv, store.DocMatch))
	b.put(e.statusEvent(hv, agent))
	b.build(more...)
	docs, err := b.commit(ctx)
	if err != nil {
		re.RollbackErr = fmt.Errorf("marking the handoff rolled back: %w", err)
		return re
	}
	hv.Version = docs[0].Version
	*h = hv
	return re
}

// RejectHandoff declines a pending handoff: it moves to rejected, with the reason,
// and nobody can accept it any more. With Escalate set, the same batch offers it to
// the next agent (see HandoffRequest.Escalate); the returned record's EscalatedTo
// names the new handoff, empty when the chain ended.
//
// Errors: a *store.ValidationError for bad input or an agent other than the named
// receiver; an error matching store.ErrNotFound for an unknown handoff; a
// *TransitionError (store.ErrConflict) when it is not pending, e.g. already accepted;
// the store's and ctx's errors.
func (e *Engine) RejectHandoff(ctx context.Context, r RejectRequest) (Handoff, error) {
	if err := e.check(); err != nil {
		return Handoff{}, err
	}
	if err := store.ValidateID("RejectRequest.Handoff", r.Handoff); err != nil {
		return Handoff{}, err
	}
	if err := validAgent("RejectRequest.Agent", r.Agent); err != nil {
		return Handoff{}, err
	}
	if err := validText("RejectRequest.Reason", r.Reason); err != nil {
		return Handoff{}, err
	}
	var h Handoff
	docs, err := e.update(ctx, func(b *batch) error {
		var err error
		if h, err = e.readHandoff(ctx, r.Handoff); err != nil {
			return err
		}
		if err := Transition(h.Status, StatusRejected); err != nil {
			return fmt.Errorf("day1: handoff %s cannot be rejected: %w", h.ID, err)
		}
		if h.ToAgent != "" && h.ToAgent != r.Agent {
			return store.Invalid("RejectRequest.Agent", fmt.Sprintf("handoff %s is addressed to %s; only that agent may reject it", h.ID, h.ToAgent), r.Agent)
		}
		moveTo(&h, StatusRejected, r.Agent, r.Reason, e.now())
		h.RejectReason = r.Reason
		more := e.escalate(ctx, &h, r.Agent, r.Agent)
		b.put(handoffWrite(h, store.DocMatch))
		b.put(e.statusEvent(h, r.Agent))
		b.build(more...)
		return nil
	})
	if err != nil {
		return Handoff{}, err
	}
	h.Version = docs[0].Version
	return h, nil
}

// ListHandoffs returns the handoff records the filter selects, oldest first (by
// creation, then ID). Errors: a *store.ValidationError for a bad filter; the store's
// and ctx's errors.
func (e *Engine) ListHandoffs(ctx context.Context, f HandoffFilter) ([]Handoff, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if f.Limit < 0 {
		return nil, store.Invalid("HandoffFilter.Limit", "must not be negative (0 means all)", f.Limit)
	}
	if f.Status != "" && !f.Status.Valid() {
		return nil, store.Invalid("HandoffFilter.Status", oneOf(allStatuses), string(f.Status))
	}
	if f.Type != "" && !f.Type.Valid() {
		return nil, store.Invalid("HandoffFilter.Type", oneOf(allTypes), string(f.Type))
	}
	where := map[string]string{}
	if f.Task != "" {
		where["task"] = f.Task
	}
	if f.Status != "" {
		where["status"] = string(f.Status)
	}
	if f.Type != "" {
		where["type"] = string(f.Type)
	}
	var queries []map[string]string
	if f.Agent == "" {
		queries = append(queries, where)
	} else {
		for _, k := range []string{"from", "receiver"} {
			w := maps.Clone(where)
			w[k] = f.Agent
			queries = append(queries, w)
		}
	}
	hs, err := e.queryHandoffs(ctx, queries)
	if err != nil {
		return nil, err
	}
	sortHandoffs(hs)
	if f.Limit > 0 && len(hs) > f.Limit {
		hs = hs[:f.Limit]
	}
	return hs, nil
}

// queryHandoffs runs each query and merges the results, each record once.
func (e *Engine) queryHandoffs(ctx context.Context, queries []map[string]string) ([]Handoff, error) {
	seen := map[string]bool{}
	var out []Handoff
	for _, w := range queries {
		hs, err := listDocs(ctx, e.Store, store.DocQuery{Collection: HandoffCollection, Where: w},
			func(d store.Doc, h *Handoff) { h.Version = d.Version })
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			if !seen[h.ID] {
				seen[h.ID] = true
				out = append(out, h)
			}
		}
	}
	return out, nil
}

func sortHandoffs(hs []Handoff) {
	sort.SliceStable(hs, func(i, j int) bool {
		if !hs[i].CreatedAt.Equal(hs[j].CreatedAt) {
			return hs[i].CreatedAt.Before(hs[j].CreatedAt)
		}
		return hs[i].ID < hs[j].ID
	})
}

// PendingHandoffs returns the pending, unexpired handoffs the filter selects, most
// urgent first (by priority, then oldest first). With a Receiver, only those it may
// accept: addressed to it, or open and allowed by the type's receiver rule.
//
// Errors: a *store.ValidationError for a bad filter; the store's and ctx's errors.
func (e *Engine) PendingHandoffs(ctx context.Context, f PendingFilter) ([]Handoff, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if f.Task != "" {
		if err := validTaskName("PendingFilter.Task", f.Task); err != nil {
			return nil, err
		}
	}
	if f.Receiver != "" {
		if err := validAgent("PendingFilter.Receiver", f.Receiver); err != nil {
			return nil, err
		}
	}
	where := map[string]string{"status": string(StatusPending)}
	if f.Task != "" {
		where["task"] = f.Task
	}
	queries := []map[string]string{where}
	if f.Receiver != "" {
		queries = nil
		for _, r := range []string{f.Receiver, openReceiver} {
			w := maps.Clone(where)
			w["receiver"] = r
			queries = append(queries, w)
		}
	}
	hs, err := e.queryHandoffs(ctx, queries)
	if err != nil {
		return nil, err
	}
	now := e.now()
	hs = slices.DeleteFunc(hs, func(h Handoff) bool {
		if !h.ExpiresAt.IsZero() && !now.Before(h.ExpiresAt) {
			return true
		}
		return f.Receiver != "" && h.ToAgent == "" && h.Type.CheckReceiver(h.FromAgent, f.Receiver) != nil
	})
	sortHandoffs(hs)
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].Priority > hs[j].Priority })
	return hs, nil
}

// ExpireHandoffs moves every pending handoff whose TTL ran out to expired, and every
// handoff claimed by an accept that has not finished within the Engine's
// ClaimTimeout to rolled_back, with an audit event each, and returns how many it
// moved. A handoff accepted or rejected meanwhile is left alone. An abandoned claim's
// receiver branch, if the accept created it, is left in place: it may also hold the
// receiver's earlier work. A handoff with Escalate set is offered to the next agent
// in the same batch (see HandoffRequest.Escalate). Errors: the store's and ctx's errors.
func (e *Engine) ExpireHandoffs(ctx context.Context) (int, error) {
	if err := e.check(); err != nil {
		return 0, err
	}
	hs, err := e.queryHandoffs(ctx, []map[string]string{{"status": string(StatusPending)}, {"status": string(StatusAccepting)}})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range hs {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		done, err := e.expireIfDue(ctx, &hs[i])
		if errors.Is(err, store.ErrStale) {
			continue
		}
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}
