package handoff

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/day1ai/day1/store"
)

// DefaultCollabTTL is how long a collaboration session lives when its spec gives no
// TTL: 24 hours, after which CleanupCollaborations removes it with its messages.
const DefaultCollabTTL = 24 * time.Hour

// MaxParticipants bounds the participants of one collaboration session.
const MaxParticipants = 20

// Payload actions of the messages the helper methods send.
const (
	ActionHandoffRequest  = "handoff_request"
	ActionCapabilityQuery = "capability_query"
	ActionNegotiateTerms  = "negotiate_terms"
)

// CollabSession is a collaboration between agents, stored so that an agent that
// crashed can read where it stood and the messages it missed.
type CollabSession struct {
	ID        string `json:"id"`
	Initiator string `json:"initiator"`
	// Participants are every agent taking part, the initiator included, sorted.
	Participants []string `json:"participants"`
	Phase        Phase    `json:"phase"`
	// Task and Handoff link the collaboration to a task and a handoff, if any.
	Task    string `json:"task,omitempty"`
	Handoff string `json:"handoff,omitempty"`
	// Context is shared data the initiator gave.
	Context map[string]any `json:"context,omitempty"`
	// Terms are the terms agreed: the "terms" of the last negotiate message that an
	// acknowledge answered.
	Terms map[string]any `json:"terms,omitempty"`
	// Outcome and Result are set when the collaboration completes.
	Outcome string         `json:"outcome,omitempty"`
	Result  map[string]any `json:"result,omitempty"`
	// History lists the phase changes, oldest first.
	History     []PhaseChange `json:"history,omitempty"`
	CreatedAt   time.Time     `json:"created_at"`
	UpdatedAt   time.Time     `json:"updated_at"`
	CompletedAt time.Time     `json:"completed_at,omitzero"`
	// ExpiresAt is when the session expires and stops taking messages.
	ExpiresAt time.Time `json:"expires_at"`
	Version   uint64    `json:"-"`
}

// PhaseChange is one phase change of a collaboration.
type PhaseChange struct {
	From Phase     `json:"from"`
	To   Phase     `json:"to"`
	By   string    `json:"by,omitempty"`
	At   time.Time `json:"at"`
	Note string    `json:"note,omitempty"`
}

// CollabSpec describes a collaboration session to open.
type CollabSpec struct {
	// ID identifies the session. Default: a generated ID.
	ID string
	// Initiator is the agent opening it. Required.
	Initiator string
	// Participants are the other agents; more may not join later. At most
	// MaxParticipants, the initiator included.
	Participants []string
	// Task and Handoff link the session. Optional; a named task must exist.
	Task    string
	Handoff string
	// Context is shared data, stored as JSON.
	Context map[string]any
	// TTL is how long the session lives. Default DefaultCollabTTL; must not be
	// negative.
	TTL time.Duration
}

// CollabFilter selects collaboration sessions. Zero fields match everything.
type CollabFilter struct {
	Participant string
	Task        string
	Phase       Phase
	// IncludeExpired keeps sessions past their ExpiresAt. Default false.
	IncludeExpired bool
}

// MessageFilter selects the messages of a collaboration session.
type MessageFilter struct {
	// Session is the session's ID. Required.
	Session string
	// Receiver keeps the messages the agent receives: addressed to it, or to every
	// participant and not sent by it.
	Receiver string
	// Since keeps messages created at or after it.
	Since time.Time
	// IncludeExpired keeps messages whose TTL ran out. Default false.
	IncludeExpired bool
}

// CleanupResult counts what CleanupCollaborations removed.
type CleanupResult struct {
	Sessions int
	Messages int
}

func sessionWrite(s CollabSession, cond store.DocCond) (store.DocWrite, error) {
	keys := map[string]string{"phase": string(s.Phase)}
	if s.Task != "" {
		keys["task"] = s.Task
	}
	for _, p := range s.Participants {
		keys["participant:"+p] = "1"
	}
	return docWrite(SessionCollection, s.ID, s, keys, cond, s.Version)
}

func messageWrite(m Message) (store.DocWrite, error) {
	keys := map[string]string{"session": m.SessionID, "type": string(m.Type), "sender": m.Sender, "receiver": openReceiver}
	if m.Receiver != "" {
		keys["receiver"] = m.Receiver
	}
	return docWrite(MessageCollection, m.ID, m, keys, store.DocCreate, 0)
}

func (e *Engine) readSession(ctx context.Context, id string) (CollabSession, error) {
	var s CollabSession
	v, err := readDoc(ctx, e.Store, SessionCollection, id, fmt.Sprintf("collaboration session %q", id), &s)
	if err != nil {
		return CollabSession{}, err
	}
	s.Version = v
	return s, nil
}

// OpenCollaboration opens a collaboration session in the discovery phase, with an
// audit event.
//
// Errors: a *store.ValidationError for bad input (no initiator, too many or repeated
// participants, a negative TTL, a context that is not JSON); an error matching
// store.ErrNotFound for an unknown task; store.ErrStale when the ID is taken; the
// store's and ctx's errors.
func (e *Engine) OpenCollaboration(ctx context.Context, spec CollabSpec) (CollabSession, error) {
	if err := e.check(); err != nil {
		return CollabSession{}, err
	}
	if spec.ID == "" {
		spec.ID = e.newID()
	} else if err := store.ValidateID("CollabSpec.ID", spec.ID); err != nil {
		return CollabSession{}, err
	}
	if err := validAgent("CollabSpec.Initiator", spec.Initiator); err != nil {
		return CollabSession{}, err
	}
	parts := []string{spec.Initiator}
	for i, p := range spec.Participants {
		if err := validAgent(fmt.Sprintf("CollabSpec.Participants[%d]", i), p); err != nil {
			return CollabSession{}, err
		}
		if slices.Contains(parts, p) {
			return CollabSession{}, store.Invalid(fmt.Sprintf("CollabSpec.Participants[%d]", i), "is listed twice or is the initiator; list each other agent once", p)
		}
		parts = append(parts, p)
	}
	if len(parts) > MaxParticipants {
		return CollabSession{}, store.Invalid("CollabSpec.Participants", fmt.Sprintf("holds %d agents with the initiator; at most %d are allowed", len(parts), MaxParticipants), nil)
	}
	if spec.TTL < 0 {
		return CollabSession{}, store.Invalid("CollabSpec.TTL", "must not be negative (0 means 24h)", spec.TTL)
	}
	if spec.TTL == 0 {
		spec.TTL = DefaultCollabTTL
	}
	if spec.Task != "" {
		if err := validTaskName("CollabSpec.Task", spec.Task); err != nil {
			return CollabSession{}, err
		}
		if _, err := e.readTask(ctx, spec.Task); err != nil {
			return CollabSession{}, err
		}
	}
	if err := validOptionalID("CollabSpec.Handoff", spec.Handoff); err != nil {
		return CollabSession{}, err
	}
	sort.Strings(parts)
	now := e.now()
	s := CollabSession{
		ID: spec.ID, Initiator: spec.Initiator, Participants: parts, Phase: PhaseDiscovery,
		Task: spec.Task, Handoff: spec.Handoff, Context: maps.Clone(spec.Context),
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(spec.TTL),
	}
	b := e.batch()
	b.put(jsonField("CollabSpec.Context")(sessionWrite(s, store.DocCreate)))
	b.put(e.event(Event{Kind: EventCollabOpened, Task: s.Task, Handoff: s.Handoff, Actor: s.Initiator, To: string(PhaseDiscovery), Note: s.ID}, parts...))
	docs, err := b.commit(ctx)
	if err != nil {
		return CollabSession{}, err
	}
	s.Version = docs[0].Version
	return s, nil
}

// jsonField returns a function that turns an encoding failure of a document write
// into a validation error naming field, the caller's value that would not encode.
// Validation errors (a document too large) pass unchanged.
func jsonField(field string) func(store.DocWrite, error) (store.DocWrite, error) {
	return func(w store.DocWrite, err error) (store.DocWrite, error) {
		if err != nil && !errors.Is(err, store.ErrInvalidArgument) {
			return w, store.Invalid(field, "must encode as JSON: "+err.Error(), nil)
		}
		return w, err
	}
}

// GetCollaboration returns a collaboration session. Errors: an error matching
// store.ErrNotFound for an unknown session; the store's and ctx's errors.
func (e *Engine) GetCollaboration(ctx context.Context, id string) (CollabSession, error) {
	if err := e.check(); err != nil {
		return CollabSession{}, err
	}
	if err := store.ValidateID("id", id); err != nil {
		return CollabSession{}, err
	}
	return e.readSession(ctx, id)
}

// ListCollaborations returns the sessions the filter selects, oldest first.
func (e *Engine) ListCollaborations(ctx context.Context, f CollabFilter) ([]CollabSession, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if f.Phase != "" && !f.Phase.Valid() {
		return nil, store.Invalid("CollabFilter.Phase", oneOf(allPhases), string(f.Phase))
	}
	where := map[string]string{}
	if f.Participant != "" {
		where["participant:"+f.Participant] = "1"
	}
	if f.Task != "" {
		where["task"] = f.Task
	}
	if f.Phase != "" {
		where["phase"] = string(f.Phase)
	}
	ss, err := listDocs(ctx, e.Store, store.DocQuery{Collection: SessionCollection, Where: where},
		func(d store.Doc, s *CollabSession) { s.Version = d.Version })
	if err != nil {
		return nil, err
	}
	if !f.IncludeExpired {
		now := e.now()
		ss = slices.DeleteFunc(ss, func(s CollabSession) bool { return s.expired(now) })
	}
	return ss, nil
}

// expired reports whether the session's TTL ran out at now.
func (s CollabSession) expired(now time.Time) bool { return !now.Before(s.ExpiresAt) }

// open checks that a session takes messages at now.
func (s CollabSession) open(now time.Time) error {
	if s.Phase == PhaseCompletion {
		return fmt.Errorf("%w: session %s completed (%s)", ErrCollabClosed, s.ID, s.Outcome)
	}
	if s.expired(now) {
		return fmt.Errorf("%w: session %s expired at %s", ErrCollabClosed, s.ID, s.ExpiresAt.Format(time.RFC3339))
	}
	return nil
}

// phaseAfter returns the phase a message moves its session to, and whether it does.
func phaseAfter(cur Phase, m Message, s CollabSession) (Phase, bool) {
	var to Phase
	switch m.Type {
	case MessageRequest, MessageNegotiate:
		to = PhaseNegotiation
	case MessageAcknowledge:
		to = PhaseAgreement
	case MessageReject:
		to = PhaseDiscovery
	case MessageCancel:
		if m.CorrelationID == "" && m.Sender == s.Initiator {
			to = PhaseCompletion
		}
	}
	if to == "" || !CanAdvance(cur, to) {
		return "", false
	}
	return to, true
}

// Send stores a collaboration message, moves its session's phase as the message
// implies, then hands the message to Engine.Dispatcher's handlers.
//
// A zero ID is generated and a zero CreatedAt is now. The session must be open (not
// completed, not expired), the sender and a named receiver must be participants, the
// message must not be expired, and a CorrelationID must name a message of the same
// session. Phases move as the design's protocol does, when the phase machine allows:
// a request or negotiate message opens negotiation (a negotiate reopens an agreement);
// an acknowledge reaches agreement, and when it answers a negotiate message the
// session's Terms become that message's "terms" payload; a reject goes back to
// discovery; a cancel from the initiator without a CorrelationID completes the
// session. Other messages leave the phase as it is. The message, the session and the
// audit event of a phase change are one atomic batch.
//
// Errors: Message.Validate's *store.ValidationError; a *store.ValidationError for a
// sender or receiver that is not a participant; ErrMessageExpired; ErrCollabClosed;
// an error matching store.ErrNotFound for an unknown session or correlated message;
// an error matching store.ErrConflict when the ID is taken; a handler's error
// (wrapped; the message stays stored). Having no handler is not an error.
func (e *Engine) Send(ctx context.Context, m Message) (Message, error) {
	if err := e.check(); err != nil {
		return Message{}, err
	}
	if m.ID == "" {
		m.ID = e.newID()
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = e.now()
	}
	m.CreatedAt = m.CreatedAt.UTC()
	if err := m.Validate(); err != nil {
		return Message{}, err
	}
	_, err := e.update(ctx, func(b *batch) error {
		s, err := e.readSession(ctx, m.SessionID)
		if err != nil {
			return err
		}
		now := e.now()
		if err := s.open(now); err != nil {
			return err
		}
		if m.Expired(now) {
			return fmt.Errorf("%w: %s message %s expired at %s", ErrMessageExpired, m.Type, m.ID, m.ExpiresAt().Format(time.RFC3339))
		}
		if !slices.Contains(s.Participants, m.Sender) {
			return store.Invalid("Message.Sender", fmt.Sprintf("is not a participant of session %s (%v)", s.ID, s.Participants), m.Sender)
		}
		if m.Receiver != "" && !slices.Contains(s.Participants, m.Receiver) {
			return store.Invalid("Message.Receiver", fmt.Sprintf("is not a participant of session %s (%v)", s.ID, s.Participants), m.Receiver)
		}
		if _, err := e.Store.GetDoc(ctx, MessageCollection, m.ID); err == nil {
			return fmt.Errorf("day1: a collaboration message with ID %s exists already: %w", m.ID, store.ErrConflict)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		var corr Message
		if m.CorrelationID != "" {
			if _, err := readDoc(ctx, e.Store, MessageCollection, m.CorrelationID, fmt.Sprintf("message %q that %s answers", m.CorrelationID, m.ID), &corr); err != nil {
				return err
			}
			if corr.SessionID != m.SessionID {
				return store.Invalid("Message.CorrelationID", fmt.Sprintf("names a message of session %s, not of %s", corr.SessionID, m.SessionID), m.CorrelationID)
			}
		}
		b.put(jsonField("Message.Payload")(messageWrite(m)))
		s.UpdatedAt = now
		if m.Type == MessageAcknowledge && corr.Type == MessageNegotiate {
			if terms, ok := corr.Payload["terms"].(map[string]any); ok {
				s.Terms = terms
			}
		}
		if to, ok := phaseAfter(s.Phase, m, s); ok {
			s.History = append(s.History, PhaseChange{From: s.Phase, To: to, By: m.Sender, At: now, Note: string(m.Type) + " " + m.ID})
			from := s.Phase
			s.Phase = to
			if to == PhaseCompletion {
				s.CompletedAt, s.Outcome = now, "cancelled"
			}
			b.put(e.event(Event{Kind: EventCollabPhase, Task: s.Task, Handoff: s.Handoff, Actor: m.Sender, From: string(from), To: string(to), Note: s.ID}, m.Receiver))
		}
		b.put(sessionWrite(s, store.DocMatch))
		return nil
	})
	if err != nil {
		return Message{}, err
	}
	if e.Dispatcher != nil {
		if err := e.Dispatcher.Dispatch(ctx, m); err != nil && !errors.Is(err, ErrNoHandler) {
			return m, err
		}
	}
	return m, nil
}

// Messages returns the messages of a session the filter selects, oldest first (by
// creation time, then ID): what an agent reads to catch up after a crash.
//
// Errors: a *store.ValidationError for a missing session; the store's and ctx's
// errors.
func (e *Engine) Messages(ctx context.Context, f MessageFilter) ([]Message, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if err := store.ValidateID("MessageFilter.Session", f.Session); err != nil {
		return nil, err
	}
	ms, err := listDocs[Message](ctx, e.Store, store.DocQuery{Collection: MessageCollection, Where: map[string]string{"session": f.Session}}, nil)
	if err != nil {
		return nil, err
	}
	now := e.now()
	ms = slices.DeleteFunc(ms, func(m Message) bool {
		if !f.IncludeExpired && m.Expired(now) {
			return true
		}
		if !f.Since.IsZero() && m.CreatedAt.Before(f.Since) {
			return true
		}
		if f.Receiver != "" {
			return !(m.Receiver == f.Receiver || m.Receiver == "" && m.Sender != f.Receiver)
		}
		return false
	})
	sort.SliceStable(ms, func(i, j int) bool {
		if !ms[i].CreatedAt.Equal(ms[j].CreatedAt) {
			return ms[i].CreatedAt.Before(ms[j].CreatedAt)
		}
		return ms[i].ID < ms[j].ID
	})
	return ms, nil
}

// PhaseAdvance asks for a collaboration session to move to another phase.
type PhaseAdvance struct {
	// Session is the session's id.
	Session string
	// To is the phase to move to, as CanAdvance allows.
	To Phase
	// By is who moves it; it goes into the session's History and the audit event.
	By string
	// Outcome is recorded when To is PhaseCompletion.
	Outcome string
}

// AdvanceCollaboration moves a session to another phase, as CanAdvance allows, with
// an audit event. Moving to PhaseCompletion records outcome. Errors: a *PhaseError
// (store.ErrConflict) for a change the phase machine refuses; a
// *store.ValidationError for an unknown phase; an error matching store.ErrNotFound
// for an unknown session; ErrCollabClosed for an expired session; the store's and
// ctx's errors.
func (e *Engine) AdvanceCollaboration(ctx context.Context, r PhaseAdvance) (CollabSession, error) {
	if err := e.check(); err != nil {
		return CollabSession{}, err
	}
	if err := store.ValidateID("PhaseAdvance.Session", r.Session); err != nil {
		return CollabSession{}, err
	}
	if err := validActor("PhaseAdvance.By", r.By); err != nil {
		return CollabSession{}, err
	}
	if err := validText("PhaseAdvance.Outcome", r.Outcome); err != nil {
		return CollabSession{}, err
	}
	id, to, by, outcome := r.Session, r.To, r.By, r.Outcome
	var s CollabSession
	docs, err := e.update(ctx, func(b *batch) error {
		var err error
		if s, err = e.readSession(ctx, id); err != nil {
			return err
		}
		if err := Advance(s.Phase, to); err != nil {
			return err
		}
		// Advance refused a completed session; open now checks expiry alone.
		now := e.now()
		if err := s.open(now); err != nil {
			return err
		}
		from := s.Phase
		s.History = append(s.History, PhaseChange{From: from, To: to, By: by, At: now, Note: outcome})
		s.Phase, s.UpdatedAt = to, now
		if to == PhaseCompletion {
			s.CompletedAt, s.Outcome = now, outcome
		}
		b.put(sessionWrite(s, store.DocMatch))
		b.put(e.event(Event{Kind: EventCollabPhase, Task: s.Task, Handoff: s.Handoff, Actor: by, From: string(from), To: string(to), Note: s.ID}))
		return nil
	})
	if err != nil {
		return CollabSession{}, err
	}
	s.Version = docs[0].Version
	return s, nil
}

// CleanupCollaborations deletes the messages whose TTL ran out and the sessions past
// their ExpiresAt, with all their messages, and counts what it deleted. A session or
// message changed meanwhile is left for the next cleanup. Errors: the store's and
// ctx's errors.
func (e *Engine) CleanupCollaborations(ctx context.Context) (CleanupResult, error) {
	if err := e.check(); err != nil {
		return CleanupResult{}, err
	}
	now := e.now()
	var res CleanupResult
	sdocs, err := e.Store.ListDocs(ctx, store.DocQuery{Collection: SessionCollection})
	if err != nil {
		return res, err
	}
	expired := map[string]bool{}
	var sessions []store.DocWrite
	for _, d := range sdocs {
		var s CollabSession
		if _, err := decodeDoc(d, &s); err != nil {
			return res, err
		}
		if s.expired(now) {
			expired[s.ID] = true
			sessions = append(sessions, store.DocWrite{Doc: store.Doc{Collection: SessionCollection, ID: d.ID}, Cond: store.DocDelete, Version: d.Version})
		}
	}
	mdocs, err := e.Store.ListDocs(ctx, store.DocQuery{Collection: MessageCollection})
	if err != nil {
		return res, err
	}
	var msgs []store.DocWrite
	for _, d := range mdocs {
		var m Message
		if _, err := decodeDoc(d, &m); err != nil {
			return res, err
		}
		if expired[m.SessionID] || m.Expired(now) {
			msgs = append(msgs, store.DocWrite{Doc: store.Doc{Collection: MessageCollection, ID: d.ID}, Cond: store.DocDelete, Version: d.Version})
		}
	}
	if res.Messages, err = e.deleteEach(ctx, msgs); err != nil {
		return res, err
	}
	res.Sessions, err = e.deleteEach(ctx, sessions)
	return res, err
}

// deleteEach applies deletes in batches of at most store.MaxDocBatch; a batch that
// fails because a document changed is retried one document at a time, skipping the
// changed ones.
func (e *Engine) deleteEach(ctx context.Context, ws []store.DocWrite) (int, error) {
	n := 0
	for len(ws) > 0 {
		k := min(len(ws), store.MaxDocBatch)
		batch := ws[:k]
		ws = ws[k:]
		_, err := e.Store.WriteDocs(ctx, batch)
		if err == nil {
			n += len(batch)
			continue
		}
		if !errors.Is(err, store.ErrStale) && !errors.Is(err, store.ErrNotFound) {
			return n, err
		}
		for _, w := range batch {
			_, err := e.Store.WriteDocs(ctx, []store.DocWrite{w})
			switch {
			case err == nil:
				n++
			case errors.Is(err, store.ErrStale) || errors.Is(err, store.ErrNotFound):
			default:
				return n, err
			}
		}
	}
	return n, nil
}

// HandoffAsk asks another participant of a collaboration to take a handoff.
type HandoffAsk struct {
	// Session is the collaboration session's id; its task and handoff, when it names
	// them, go into the request.
	Session string
	// From and To are the sender and the receiver.
	From, To string
	// Description says what is to be taken over.
	Description string
	// Required lists the capabilities the receiver needs.
	Required []string
}

// RequestHandoff asks another participant to take a handoff: a request message whose
// payload holds the action ActionHandoffRequest, the task and handoff (when the
// session names them), a description and the required capabilities. See Send.
func (e *Engine) RequestHandoff(ctx context.Context, r HandoffAsk) (Message, error) {
	payload := map[string]any{"action": ActionHandoffRequest, "description": r.Description, "required_capabilities": stringsAny(r.Required)}
	if s, err := e.GetCollaboration(ctx, r.Session); err == nil {
		if s.Task != "" {
			payload["task"] = s.Task
		}
		if s.Handoff != "" {
			payload["handoff"] = s.Handoff
		}
	}
	return e.Send(ctx, Message{SessionID: r.Session, Type: MessageRequest, Sender: r.From, Receiver: r.To, Payload: payload})
}

// CapabilityAsk asks every participant of a collaboration which of some
// capabilities it has.
type CapabilityAsk struct {
	// Session is the collaboration session's id.
	Session string
	// From is the sender.
	From string
	// Required lists the capabilities asked about.
	Required []string
}

// QueryCapabilities asks every participant which of the capabilities it has: a
// broadcast whose payload holds the action ActionCapabilityQuery and the
// capabilities. See Send.
func (e *Engine) QueryCapabilities(ctx context.Context, r CapabilityAsk) (Message, error) {
	return e.Send(ctx, Message{SessionID: r.Session, Type: MessageBroadcast, Sender: r.From,
		Payload: map[string]any{"action": ActionCapabilityQuery, "required_capabilities": stringsAny(r.Required)}})
}

// TermsOffer proposes terms to another participant of a collaboration.
type TermsOffer struct {
	// Session is the collaboration session's id.
	Session string
	// From and To are the sender and the receiver.
	From, To string
	// Terms are what is proposed; an acknowledge of the offer makes them the
	// session's Terms.
	Terms map[string]any
}

// ProposeTerms proposes terms to another participant: a negotiate message whose
// payload holds the action ActionNegotiateTerms and the terms. An acknowledge that
// answers it makes them the session's Terms. See Send.
func (e *Engine) ProposeTerms(ctx context.Context, r TermsOffer) (Message, error) {
	return e.Send(ctx, Message{SessionID: r.Session, Type: MessageNegotiate, Sender: r.From, Receiver: r.To,
		Payload: map[string]any{"action": ActionNegotiateTerms, "terms": r.Terms}})
}

// Reply answers a message of a collaboration.
type Reply struct {
	// Session is the collaboration session's id.
	Session string
	// From and To are the sender of the reply and the sender of the message answered.
	From, To string
	// Correlation is the id of the message answered.
	Correlation string
	// Accepted makes the reply an acknowledge; false, a reject.
	Accepted bool
	// Reason says why.
	Reason string
}

// Respond answers a message: an acknowledge when accepted, a reject otherwise, with
// the reason in the payload. See Send.
func (e *Engine) Respond(ctx context.Context, r Reply) (Message, error) {
	t := MessageReject
	if r.Accepted {
		t = MessageAcknowledge
	}
	return e.Send(ctx, Message{SessionID: r.Session, Type: t, Sender: r.From, Receiver: r.To, CorrelationID: r.Correlation,
		Payload: map[string]any{"accepted": r.Accepted, "reason": r.Reason}})
}

func stringsAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
