package handoff

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/day1ai/day1/store"
)

// Availability says whether a registered agent can take work now.
type Availability string

// Agent availabilities. The zero value, "", counts as AvailabilityAvailable.
const (
	// AvailabilityAvailable: the agent takes handoffs.
	AvailabilityAvailable Availability = "available"
	// AvailabilityBusy: the agent is working; it is not offered handoffs nor chosen
	// as a receiver, but it may still accept one offered to it earlier.
	AvailabilityBusy Availability = "busy"
	// AvailabilityOffline: the agent is gone; it is not offered handoffs, not chosen,
	// and cannot accept one.
	AvailabilityOffline Availability = "offline"
)

var allAvailabilities = []Availability{AvailabilityAvailable, AvailabilityBusy, AvailabilityOffline}

// Valid reports whether a is a known availability or empty.
func (a Availability) Valid() bool { return a == "" || slices.Contains(allAvailabilities, a) }

// Available reports whether a lets the agent be offered work: empty or available.
func (a Availability) Available() bool { return a == "" || a == AvailabilityAvailable }

// Limits on permissions.
const (
	// MaxPermissions bounds the permissions of a profile or a handoff.
	MaxPermissions = 50
	// MaxPermissionLen bounds each permission's name, in bytes.
	MaxPermissionLen = 100
)

func validPermissions(field string, ps []string) error {
	if len(ps) > MaxPermissions {
		return store.Invalid(field, fmt.Sprintf("holds %d permissions; at most %d are allowed", len(ps), MaxPermissions), nil)
	}
	for i, p := range ps {
		if p == "" || len(p) > MaxPermissionLen || strings.TrimSpace(p) != p {
			return store.Invalid(fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("must be 1 to %d bytes without surrounding spaces, e.g. deploy:prod", MaxPermissionLen), p)
		}
		if slices.Contains(ps[:i], p) {
			return store.Invalid(fmt.Sprintf("%s[%d]", field, i), "is listed twice; list each permission once", p)
		}
	}
	return nil
}

// RefusalReason says why an agent may not receive a handoff.
type RefusalReason string

// Refusal reasons of a *ReceiverError.
const (
	// RefusedUnavailable: the agent is busy or offline (AgentProfile.Availability).
	RefusedUnavailable RefusalReason = "unavailable"
	// RefusedType: the agent does not receive handoffs of this type
	// (AgentProfile.AcceptTypes).
	RefusedType RefusalReason = "type_not_accepted"
	// RefusedPermission: the agent lacks a permission the handoff requires
	// (AgentProfile.Permissions).
	RefusedPermission RefusalReason = "permission_missing"
)

// ReceiverError reports an agent that may not receive a handoff: offered to it, chosen
// for it, or accepting it. It matches ErrReceiverRefused and store.ErrConflict. The
// refusal is also in the audit trail, as an EventHandoffRefused event.
type ReceiverError struct {
	// Agent is the agent refused.
	Agent string
	// Field is the request field that named the agent, e.g. "HandoffRequest.ToAgent"
	// or "AcceptRequest.Agent".
	Field string
	// Reason says why.
	Reason RefusalReason
	// ProfileField is the field of the agent's profile that refused it, e.g.
	// "AgentProfile.Availability".
	ProfileField string
	// Detail says more: the availability, the type, or the missing permissions.
	Detail string
}

// Error names the agent, the request field, the reason and what to do.
func (e *ReceiverError) Error() string {
	return fmt.Sprintf("day1: agent %s (%s) cannot receive the handoff: %s (%s: %s); choose another receiver or update its profile with RegisterAgent",
		e.Agent, e.Field, e.Reason, e.ProfileField, e.Detail)
}

// Unwrap returns ErrReceiverRefused.
func (e *ReceiverError) Unwrap() error { return ErrReceiverRefused }

// note is the refusal as the audit trail records it.
func (e *ReceiverError) note() string {
	return fmt.Sprintf("%s: %s (%s)", e.Reason, e.Detail, e.ProfileField)
}

// CanReceive reports whether the agent may be offered a handoff of type typ that
// requires permissions: nil when it may, otherwise a *ReceiverError (its Field
// empty). The agent must be available, accept the type (AcceptTypes empty or listing
// it) and hold every permission.
func (a AgentProfile) CanReceive(typ Type, permissions []string) error {
	if re := a.refusal(typ, permissions, false); re != nil {
		return re
	}
	return nil
}

// refusal checks a against a handoff. At accept time only an offline agent is refused
// for its availability: a busy one may finish taking what it was offered.
func (a AgentProfile) refusal(typ Type, permissions []string, accepting bool) *ReceiverError {
	re := &ReceiverError{Agent: a.ID}
	switch {
	case accepting && a.Availability == AvailabilityOffline, !accepting && !a.Availability.Available():
		re.Reason, re.ProfileField, re.Detail = RefusedUnavailable, "AgentProfile.Availability", string(a.Availability)
		return re
	case len(a.AcceptTypes) > 0 && !slices.Contains(a.AcceptTypes, typ):
		re.Reason, re.ProfileField, re.Detail = RefusedType, "AgentProfile.AcceptTypes", fmt.Sprintf("%s is not among %v", typ, a.AcceptTypes)
		return re
	}
	var missing []string
	for _, p := range permissions {
		if !slices.Contains(a.Permissions, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		re.Reason, re.ProfileField, re.Detail = RefusedPermission, "AgentProfile.Permissions", "lacks "+strings.Join(missing, ", ")
		return re
	}
	return nil
}

// receiverCheck asks checkReceiver whether agent may receive a handoff of a type
// with the permissions it grants: on offering it (a handoff not yet written, Handoff
// empty) or on accepting it.
type receiverCheck struct {
	task, handoff string
	actor         string // who offers or accepts
	agent         string // the receiver
	typ           Type
	permissions   []string
	field         string // the request field a refusal names
	accepting     bool
}

// checkReceiver checks a receiver against its registered profile. An agent without a
// profile is not checked: registering agents is optional, and the checks apply to
// those that are. A refusal is written to the audit trail and returned as a
// *ReceiverError naming the request's field.
func (e *Engine) checkReceiver(ctx context.Context, c receiverCheck) error {
	var a AgentProfile
	_, err := readDoc(ctx, e.Store, AgentCollection, c.agent, "agent "+c.agent, &a)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	re := a.refusal(c.typ, c.permissions, c.accepting)
	if re == nil {
		return nil
	}
	re.Field = c.field
	ev, err := e.event(Event{Kind: EventHandoffRefused, Task: c.task, Handoff: c.handoff, Actor: c.actor, Note: re.note()}, c.agent)
	if err == nil {
		_, err = e.writeDocs(ctx, []store.DocWrite{ev})
	}
	if err != nil {
		return errors.Join(re, fmt.Errorf("day1: recording the refusal in the audit trail: %w", err))
	}
	return re
}

// Escalation bounds.
const (
	// DefaultMaxEscalations is HandoffRequest.MaxEscalations when Escalate is set
	// and it is 0.
	DefaultMaxEscalations = 2
	// MaxEscalationsLimit is the largest HandoffRequest.MaxEscalations allowed.
	MaxEscalationsLimit = 10
)

// escalate returns the writes that follow h's end (h has just moved to rejected,
// expired or rolled_back, by actor; receiver is the agent that declined or failed, if
// any): when h escalates, a new pending handoff offered to the next best capable and
// available agent, linked both ways, with its audit events; when the chain is
// exhausted or no agent qualifies, an EventHandoffEscalationEnded event saying why.
// It returns no writes for a handoff that does not escalate. It sets h.EscalatedTo,
// so h must be written after it is called. A failure to choose the next agent ends
// the chain with the error in the trail rather than failing the change of h.
func (e *Engine) escalate(ctx context.Context, h *Handoff, actor, receiver string) []func() (store.DocWrite, error) {
	if !h.Escalate {
		return nil
	}
	tried := slices.Clone(h.Tried)
	for _, a := range []string{h.ToAgent, receiver} {
		if a != "" && !slices.Contains(tried, a) {
			tried = append(tried, a)
		}
	}
	end := func(why string) []func() (store.DocWrite, error) {
		return []func() (store.DocWrite, error){func() (store.DocWrite, error) {
			return e.event(Event{Kind: EventHandoffEscalationEnded, Task: h.Task, Handoff: h.ID, Actor: actor, From: string(h.Status), To: string(h.Status), Note: why}, append(tried, h.FromAgent)...)
		}}
	}
	if h.Attempt >= h.MaxEscalations {
		return end(fmt.Sprintf("the chain ended: %d escalations made, the bound is %d; tried %s", h.Attempt, h.MaxEscalations, strings.Join(tried, ", ")))
	}
	if _, err := e.activeTask(ctx, h.Task); err != nil {
		return end("the chain ended: " + err.Error())
	}
	exclude := slices.Clone(tried)
	if h.Type.Scope().Receiver == ReceiverOther && h.FromAgent != "" {
		exclude = append(exclude, h.FromAgent)
	}
	c, err := e.chooseReceiver(ctx, h.Required, h.MinScore, exclude, h.Type, h.Permissions)
	if err != nil {
		return end("the chain ended: no next receiver: " + err.Error())
	}
	now := e.now()
	n := Handoff{
		ID: e.newID(), Task: h.Task, Type: h.Type, Priority: h.Priority,
		FromAgent: h.FromAgent, FromSession: h.FromSession, ToAgent: c.AgentID,
		Required: slices.Clone(h.Required), Permissions: slices.Clone(h.Permissions), MinScore: h.MinScore,
		Reason: h.Reason, Instructions: h.Instructions, PriorityObjectives: slices.Clone(h.PriorityObjectives),
		Blockers: slices.Clone(h.Blockers), Packet: h.Packet, Metadata: h.Metadata,
		Escalate: true, MaxEscalations: h.MaxEscalations, TTL: h.TTL,
		EscalatedFrom: h.ID, Attempt: h.Attempt + 1, Tried: append(slices.Clone(tried), c.AgentID),
		CreatedAt: now, UpdatedAt: now,
	}
	n.Packet.Handoff = n.ID
	if n.TTL > 0 {
		n.ExpiresAt = now.Add(n.TTL)
	}
	moveTo(&n, StatusPending, actor, fmt.Sprintf("escalated from handoff %s, %s", h.ID, h.Status), now)
	h.EscalatedTo = n.ID
	note := fmt.Sprintf("handoff %s was %s; offered to %s (score %.2f) as handoff %s, escalation %d of %d",
		h.ID, h.Status, c.AgentID, c.Score, n.ID, n.Attempt, n.MaxEscalations)
	return []func() (store.DocWrite, error){
		func() (store.DocWrite, error) { return handoffWrite(n, store.DocCreate) },
		func() (store.DocWrite, error) { return e.statusEvent(n, actor) },
		func() (store.DocWrite, error) {
			return e.event(Event{Kind: EventHandoffEscalated, Task: h.Task, Handoff: h.ID, Related: n.ID, Actor: actor,
				From: string(h.Status), To: string(StatusPending), Note: note}, append(tried, h.FromAgent, c.AgentID)...)
		},
	}
}
