package day1

import (
	"context"

	"github.com/day1ai/day1/handoff"
)

// Collaboration types. They are the handoff package's.
type (
	// CollabSession is a stored collaboration between agents: participants, phase,
	// agreed terms and history.
	CollabSession = handoff.CollabSession
	// CollabSpec describes a collaboration session to open.
	CollabSpec = handoff.CollabSpec
	// CollabFilter narrows Collab.List.
	CollabFilter = handoff.CollabFilter
	// CollabPhase is the stage of a collaboration: discovery, negotiation, agreement,
	// execution, completion.
	CollabPhase = handoff.Phase
	// CollabMessage is one message between agents, with sender, receiver (empty for
	// every participant), correlation id, payload and time to live.
	CollabMessage = handoff.Message
	// CollabMessageType is the kind of a message: request, response, broadcast,
	// negotiate, acknowledge, reject, cancel.
	CollabMessageType = handoff.MessageType
	// CollabMessageFilter selects the messages of a session, e.g. an agent's inbox.
	CollabMessageFilter = handoff.MessageFilter
	// CollabHandler handles one collaboration message.
	CollabHandler = handoff.Handler
	// CollabCleanup counts what Collab.Cleanup removed.
	CollabCleanup = handoff.CleanupResult
	// CollabAdvance asks for a session to move to another phase (Collab.Advance).
	CollabAdvance = handoff.PhaseAdvance
	// CollabHandoffAsk asks a participant to take a handoff (Collab.RequestHandoff).
	CollabHandoffAsk = handoff.HandoffAsk
	// CollabCapabilityAsk asks every participant about capabilities
	// (Collab.QueryCapabilities).
	CollabCapabilityAsk = handoff.CapabilityAsk
	// CollabTermsOffer proposes terms (Collab.ProposeTerms).
	CollabTermsOffer = handoff.TermsOffer
	// CollabReply answers a message (Collab.Respond).
	CollabReply = handoff.Reply
	// PhaseError reports a phase change the protocol refuses. It matches
	// ErrConflict.
	PhaseError = handoff.PhaseError
)

// Collaboration phases and message types.
const (
	PhaseDiscovery   = handoff.PhaseDiscovery
	PhaseNegotiation = handoff.PhaseNegotiation
	PhaseAgreement   = handoff.PhaseAgreement
	PhaseExecution   = handoff.PhaseExecution
	PhaseCompletion  = handoff.PhaseCompletion

	MessageRequest     = handoff.MessageRequest
	MessageResponse    = handoff.MessageResponse
	MessageBroadcast   = handoff.MessageBroadcast
	MessageNegotiate   = handoff.MessageNegotiate
	MessageAcknowledge = handoff.MessageAcknowledge
	MessageReject      = handoff.MessageReject
	MessageCancel      = handoff.MessageCancel
)

// ErrCollabClosed: the collaboration session is completed or expired and takes no
// more messages. It also matches ErrConflict.
var ErrCollabClosed = handoff.ErrCollabClosed

// Collab speaks the collaboration protocol between agents over a Client's memory.
// Sessions and messages are stored, so an agent that crashed reads where it stood
// (Get) and what it missed (Messages). Each Collab has its own handlers: messages it
// sends are stored first, then handed to the handlers registered for their type. It
// is safe for concurrent use.
type Collab struct {
	c *Client
	d *handoff.Dispatcher
}

// Collab returns a new Collab with no handlers.
func (c *Client) Collab() *Collab {
	return &Collab{c: c, d: &handoff.Dispatcher{Now: c.cfg.Test.Now}}
}

func (k *Collab) engine() *handoff.Engine {
	e := k.c.handoffs()
	e.Dispatcher = k.d
	return e
}

// Handle registers h for messages of type t sent through this Collab; handlers of a
// type run in registration order. Errors: *ValidationError for an unknown type or a
// nil handler.
func (k *Collab) Handle(t CollabMessageType, h CollabHandler) error { return k.d.Register(t, h) }

// Open opens a session in the discovery phase. Errors: *ValidationError (no
// initiator, repeated participants...); ErrNotFound for an unknown task; ErrStale when
// the ID is taken; ErrClosed; ctx's error.
func (k *Collab) Open(ctx context.Context, spec CollabSpec) (CollabSession, error) {
	if err := k.c.use(ctx); err != nil {
		return CollabSession{}, err
	}
	return k.engine().OpenCollaboration(ctx, spec)
}

// Get returns a session, or an error matching ErrNotFound.
func (k *Collab) Get(ctx context.Context, id string) (CollabSession, error) {
	if err := k.c.use(ctx); err != nil {
		return CollabSession{}, err
	}
	return k.engine().GetCollaboration(ctx, id)
}

// List returns the sessions the filter selects, oldest first; expired ones only with
// f.IncludeExpired.
func (k *Collab) List(ctx context.Context, f CollabFilter) ([]CollabSession, error) {
	if err := k.c.use(ctx); err != nil {
		return nil, err
	}
	return k.engine().ListCollaborations(ctx, f)
}

// Send stores a message, moves its session's phase as the protocol says (a request
// opens negotiation, an acknowledge reaches agreement and fixes the negotiated terms,
// a reject goes back to discovery, the initiator's cancel completes it), then runs
// this Collab's handlers. See handoff.Engine.Send for every rule and error.
func (k *Collab) Send(ctx context.Context, m CollabMessage) (CollabMessage, error) {
	if err := k.c.use(ctx); err != nil {
		return CollabMessage{}, err
	}
	return k.engine().Send(ctx, m)
}

// Messages returns the messages of a session the filter selects, oldest first.
func (k *Collab) Messages(ctx context.Context, f CollabMessageFilter) ([]CollabMessage, error) {
	if err := k.c.use(ctx); err != nil {
		return nil, err
	}
	return k.engine().Messages(ctx, f)
}

// Advance moves a session to another phase; to PhaseCompletion with an outcome.
// Errors: *PhaseError (ErrConflict) for a change the protocol refuses; ErrNotFound;
// ErrCollabClosed for an expired session; ErrClosed; ctx's error.
func (k *Collab) Advance(ctx context.Context, r CollabAdvance) (CollabSession, error) {
	if err := k.c.use(ctx); err != nil {
		return CollabSession{}, err
	}
	return k.engine().AdvanceCollaboration(ctx, r)
}

// Cleanup deletes expired messages and expired sessions with their messages.
func (k *Collab) Cleanup(ctx context.Context) (CollabCleanup, error) {
	if err := k.c.use(ctx); err != nil {
		return CollabCleanup{}, err
	}
	return k.engine().CleanupCollaborations(ctx)
}

// RequestHandoff sends a request asking another participant to take a handoff, with
// the session's task and handoff, a description and the required capabilities.
func (k *Collab) RequestHandoff(ctx context.Context, r CollabHandoffAsk) (CollabMessage, error) {
	if err := k.c.use(ctx); err != nil {
		return CollabMessage{}, err
	}
	return k.engine().RequestHandoff(ctx, r)
}

// QueryCapabilities broadcasts which capabilities are needed to every participant.
func (k *Collab) QueryCapabilities(ctx context.Context, r CollabCapabilityAsk) (CollabMessage, error) {
	if err := k.c.use(ctx); err != nil {
		return CollabMessage{}, err
	}
	return k.engine().QueryCapabilities(ctx, r)
}

// ProposeTerms sends terms to another participant; an acknowledge of it makes them
// the session's Terms.
func (k *Collab) ProposeTerms(ctx context.Context, r CollabTermsOffer) (CollabMessage, error) {
	if err := k.c.use(ctx); err != nil {
		return CollabMessage{}, err
	}
	return k.engine().ProposeTerms(ctx, r)
}

// Respond answers a message: acknowledge when accepted, reject otherwise.
func (k *Collab) Respond(ctx context.Context, r CollabReply) (CollabMessage, error) {
	if err := k.c.use(ctx); err != nil {
		return CollabMessage{}, err
	}
	return k.engine().Respond(ctx, r)
}
