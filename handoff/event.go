package handoff

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/day1ai/day1/store"
)

// EventKind names what an audit event records.
type EventKind string

// Audit event kinds. Every change the Engine makes to a task, a membership, an
// objective, a handoff or a checkpoint writes one event in the same atomic batch as
// the change itself.
const (
	EventTaskCreated      EventKind = "task.created"
	EventTaskCompleted    EventKind = "task.completed"
	EventAgentJoined      EventKind = "agent.joined"
	EventAgentLeft        EventKind = "agent.left"
	EventObjectiveUpdated EventKind = "objective.updated"
	// EventHandoffCreated records a new handoff; To is its first status (pending or
	// initiated).
	EventHandoffCreated EventKind = "handoff.created"
	// EventHandoffStatus records a status change of a handoff: From and To.
	EventHandoffStatus EventKind = "handoff.status"
	// EventHandoffRefused records an agent refused as a receiver, by its profile's
	// availability, accepted types or permissions: Note says why (see
	// ReceiverError). Handoff is empty when the refusal stopped the offer.
	EventHandoffRefused EventKind = "handoff.refused"
	// EventHandoffEscalated records a rejected, expired or rolled back handoff
	// offered again to the next best agent: Handoff is the one that ended, Related
	// the new one, From its final status.
	EventHandoffEscalated EventKind = "handoff.escalated"
	// EventHandoffEscalationEnded records an escalation chain that stops: the bound
	// was reached or no agent qualifies. Note says why; the handoff keeps its final
	// status.
	EventHandoffEscalationEnded EventKind = "handoff.escalation_ended"

	EventCheckpoint      EventKind = "checkpoint.created"
	EventCheckpointUsed  EventKind = "checkpoint.resumed"
	EventCollabOpened    EventKind = "collab.opened"
	EventCollabPhase     EventKind = "collab.phase"
	EventAgentRegistered EventKind = "agent.registered"
)

// Event is one entry of the audit trail.
type Event struct {
	ID   string    `json:"id"`
	Kind EventKind `json:"kind"`
	// Task is the task's name; empty for events outside a task.
	Task string `json:"task,omitempty"`
	// Handoff is the handoff's ID, for handoff events.
	Handoff string `json:"handoff,omitempty"`
	// Related is another handoff the event links to: the new handoff of an
	// escalation.
	Related string `json:"related,omitempty"`
	// Actor is who made the change: an agent ID, or empty when unknown.
	Actor string `json:"actor,omitempty"`
	// Agents lists every agent the event concerns (the actor, the source and the
	// receiver of a handoff...), sorted, each once.
	Agents []string `json:"agents,omitempty"`
	// From and To are the status (or phase) before and after a change.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Note says more: a reason, a summary, an error.
	Note string    `json:"note,omitempty"`
	At   time.Time `json:"at"`
}

// EventFilter selects audit events. Zero fields match everything; at least one of
// Task, Agent and Handoff is usually set.
type EventFilter struct {
	// Task keeps the events of one task.
	Task string
	// Agent keeps the events that concern one agent.
	Agent string
	// Handoff keeps the events of one handoff.
	Handoff string
	// Kind keeps one kind of event.
	Kind EventKind
	// Limit keeps the newest Limit events; 0 means all.
	Limit int
}

// event builds the write of ev, giving it an ID and a time. agents are the agents
// the event concerns besides ev.Actor, kept in ev.Agents (sorted, once each).
func (e *Engine) event(ev Event, agents ...string) (store.DocWrite, error) {
	ev.ID, ev.At = e.newID(), e.now()
	kind, task, handoff := ev.Kind, ev.Task, ev.Handoff
	for _, a := range append(agents, ev.Actor) {
		if a != "" && !slices.Contains(ev.Agents, a) {
			ev.Agents = append(ev.Agents, a)
		}
	}
	sort.Strings(ev.Agents)
	keys := map[string]string{"kind": string(kind)}
	if task != "" {
		keys["task"] = task
	}
	if handoff != "" {
		keys["handoff"] = handoff
	}
	for _, a := range ev.Agents {
		keys["agent:"+a] = "1"
	}
	return docWrite(EventCollection, ev.ID, ev, keys, store.DocCreate, 0)
}

// Events returns the audit events the filter selects, oldest first (in the order they
// were stored, then by id); with a Limit, the newest Limit of them. Errors: a *store.ValidationError for a negative Limit; the store's errors.
func (e *Engine) Events(ctx context.Context, f EventFilter) ([]Event, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if f.Limit < 0 {
		return nil, store.Invalid("EventFilter.Limit", "must not be negative (0 means every event)", f.Limit)
	}
	where := map[string]string{}
	if f.Task != "" {
		where["task"] = f.Task
	}
	if f.Handoff != "" {
		where["handoff"] = f.Handoff
	}
	if f.Agent != "" {
		where["agent:"+f.Agent] = "1"
	}
	if f.Kind != "" {
		where["kind"] = string(f.Kind)
	}
	// The store orders by commit time and limits: the newest Limit events are read
	// newest first and turned around, not the whole trail.
	q := store.DocQuery{Collection: EventCollection, Where: where, Limit: f.Limit, Desc: f.Limit > 0}
	evs, err := listDocs[Event](ctx, e.Store, q, nil)
	if err != nil {
		return nil, err
	}
	if q.Desc {
		slices.Reverse(evs)
	}
	return evs, nil
}
