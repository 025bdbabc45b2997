package handoff

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/day1ai/day1/store"
)

// Phase is the stage a collaboration between agents is in. The normal course is
//
//	discovery ──▶ negotiation ──▶ agreement ──▶ execution ──▶ completion
//
// with three ways back or out: negotiation ──▶ discovery (the candidate declined;
// look for another), agreement ──▶ negotiation (terms reopened before work began), and
// any phase before execution ──▶ completion (the collaboration ends early, e.g.
// cancelled). Once executing, a collaboration can only complete. Completion is final.
type Phase string

// Collaboration phases.
const (
	// PhaseDiscovery: finding agents able to take the work. The initial phase.
	PhaseDiscovery Phase = "discovery"
	// PhaseNegotiation: a request was made; terms are being discussed.
	PhaseNegotiation Phase = "negotiation"
	// PhaseAgreement: the receiver acknowledged; both sides agree.
	PhaseAgreement Phase = "agreement"
	// PhaseExecution: the agreed work is being done.
	PhaseExecution Phase = "execution"
	// PhaseCompletion: the collaboration is over, whatever its outcome. Final.
	PhaseCompletion Phase = "completion"
)

var allPhases = []Phase{PhaseDiscovery, PhaseNegotiation, PhaseAgreement, PhaseExecution, PhaseCompletion}

var phaseTransitions = map[Phase][]Phase{
	PhaseDiscovery:   {PhaseNegotiation, PhaseCompletion},
	PhaseNegotiation: {PhaseAgreement, PhaseDiscovery, PhaseCompletion},
	PhaseAgreement:   {PhaseExecution, PhaseNegotiation, PhaseCompletion},
	PhaseExecution:   {PhaseCompletion},
}

// Phases returns every phase in their normal order.
func Phases() []Phase { return append([]Phase(nil), allPhases...) }

// ParsePhase reads a phase, ignoring surrounding spaces and case. Anything else is a
// *store.ValidationError naming the allowed values.
func ParsePhase(s string) (Phase, error) {
	p := Phase(normalizeName(s))
	if !p.Valid() {
		return "", store.Invalid("Phase", oneOf(allPhases), s)
	}
	return p, nil
}

// Valid reports whether p is a known phase, spelt exactly.
func (p Phase) Valid() bool {
	for _, v := range allPhases {
		if p == v {
			return true
		}
	}
	return false
}

// Next returns the phases p may change to, the normal next phase first; none for
// PhaseCompletion or an invalid phase.
func (p Phase) Next() []Phase { return append([]Phase(nil), phaseTransitions[p]...) }

// CanAdvance reports whether a collaboration may change from one phase to another; false
// for unknown phases and for from == to.
func CanAdvance(from, to Phase) bool {
	for _, n := range phaseTransitions[from] {
		if n == to {
			return true
		}
	}
	return false
}

// Advance checks a phase change: nil when CanAdvance allows it, a
// *store.ValidationError (field "from" or "to") for an unknown phase, and otherwise a
// *PhaseError, which matches store.ErrConflict.
func Advance(from, to Phase) error {
	if !from.Valid() {
		return store.Invalid("from", oneOf(allPhases), string(from))
	}
	if !to.Valid() {
		return store.Invalid("to", oneOf(allPhases), string(to))
	}
	if !CanAdvance(from, to) {
		return &PhaseError{From: from, To: to}
	}
	return nil
}

// MessageType is the kind of a collaboration message.
type MessageType string

// Message types.
const (
	// MessageRequest asks one agent to do something, e.g. take a handoff.
	MessageRequest MessageType = "request"
	// MessageResponse answers a request. Needs a CorrelationID.
	MessageResponse MessageType = "response"
	// MessageBroadcast goes to every participant, e.g. a capability query. Has no
	// Receiver.
	MessageBroadcast MessageType = "broadcast"
	// MessageNegotiate proposes or counters terms.
	MessageNegotiate MessageType = "negotiate"
	// MessageAcknowledge accepts a request or proposal. Needs a CorrelationID.
	MessageAcknowledge MessageType = "acknowledge"
	// MessageReject declines a request or proposal. Needs a CorrelationID.
	MessageReject MessageType = "reject"
	// MessageCancel withdraws an earlier message (CorrelationID) or, without one, the
	// sender's part in the collaboration. Its Receiver may be empty to tell everyone.
	MessageCancel MessageType = "cancel"
)

var allMessageTypes = []MessageType{MessageRequest, MessageResponse, MessageBroadcast,
	MessageNegotiate, MessageAcknowledge, MessageReject, MessageCancel}

// MessageTypes returns every message type.
func MessageTypes() []MessageType { return append([]MessageType(nil), allMessageTypes...) }

// ParseMessageType reads a message type, ignoring surrounding spaces and case. Anything
// else is a *store.ValidationError naming the allowed values.
func ParseMessageType(s string) (MessageType, error) {
	t := MessageType(normalizeName(s))
	if !t.Valid() {
		return "", store.Invalid("Message.Type", oneOf(allMessageTypes), s)
	}
	return t, nil
}

// Valid reports whether t is a known message type, spelt exactly.
func (t MessageType) Valid() bool {
	for _, v := range allMessageTypes {
		if t == v {
			return true
		}
	}
	return false
}

// NeedsCorrelation reports whether a message of type t answers an earlier one and so
// needs a CorrelationID: response, acknowledge and reject.
func (t MessageType) NeedsCorrelation() bool {
	return t == MessageResponse || t == MessageAcknowledge || t == MessageReject
}

// Limits and defaults of Message.
const (
	// DefaultMessageTTL is how long a message lives when its TTL is zero.
	DefaultMessageTTL = 60 * time.Second
	// MaxPayloadBytes is the largest payload accepted, measured as JSON.
	MaxPayloadBytes = 1 << 20
)

// Message is one message of a collaboration between agents.
type Message struct {
	// ID identifies the message; see store.ValidateID. Required.
	ID string `json:"id"`
	// SessionID is the collaboration the message belongs to. Required.
	SessionID string `json:"session_id"`
	// Type is the kind of message. Required.
	Type MessageType `json:"type"`
	// Sender is the sending agent's ID. Required.
	Sender string `json:"sender"`
	// Receiver is the receiving agent's ID; empty means every participant, which only
	// broadcast and cancel messages allow. A broadcast must leave it empty.
	Receiver string `json:"receiver,omitempty"`
	// CorrelationID is the ID of the message this one answers. Required for
	// response, acknowledge and reject; optional for cancel; must differ from ID.
	CorrelationID string `json:"correlation_id,omitempty"`
	// Payload is the message's content; it must encode as JSON within
	// MaxPayloadBytes. Optional.
	Payload map[string]any `json:"payload,omitempty"`
	// CreatedAt is when the message was sent. Required.
	CreatedAt time.Time `json:"created_at"`
	// TTL is how long the message stays valid after CreatedAt. Zero means
	// DefaultMessageTTL (60s); negative is invalid. In JSON, nanoseconds.
	TTL time.Duration `json:"ttl,omitempty"`
}

// IsBroadcast reports whether the message goes to every participant (no Receiver).
func (m Message) IsBroadcast() bool { return m.Receiver == "" }

// ExpiresAt returns CreatedAt plus the effective TTL.
func (m Message) ExpiresAt() time.Time {
	ttl := m.TTL
	if ttl == 0 {
		ttl = DefaultMessageTTL
	}
	return m.CreatedAt.Add(ttl)
}

// Expired reports whether the message's TTL has run out at now: now is at or after
// ExpiresAt.
func (m Message) Expired(now time.Time) bool { return !now.Before(m.ExpiresAt()) }

// Validate checks the message. It returns a *store.ValidationError naming the field
// when an ID is missing or malformed, the type is unknown, CreatedAt is zero, TTL is
// negative, a broadcast names a Receiver, another type (but cancel) leaves it empty,
// Sender and Receiver are the same, a response, acknowledge or reject lacks a
// CorrelationID, CorrelationID equals ID, or the payload does not encode as JSON
// within MaxPayloadBytes.
func (m Message) Validate() error {
	if err := store.ValidateID("Message.ID", m.ID); err != nil {
		return err
	}
	if err := store.ValidateID("Message.SessionID", m.SessionID); err != nil {
		return err
	}
	if !m.Type.Valid() {
		return store.Invalid("Message.Type", oneOf(allMessageTypes), string(m.Type))
	}
	if err := store.ValidateID("Message.Sender", m.Sender); err != nil {
		return err
	}
	switch {
	case m.Type == MessageBroadcast && m.Receiver != "":
		return store.Invalid("Message.Receiver", "must be empty for a broadcast, which goes to every participant", m.Receiver)
	case m.Receiver == "" && m.Type != MessageBroadcast && m.Type != MessageCancel:
		return store.Invalid("Message.Receiver", fmt.Sprintf("is required for a %s message; only broadcast and cancel messages go to every participant", m.Type), nil)
	case m.Receiver != "":
		if err := store.ValidateID("Message.Receiver", m.Receiver); err != nil {
			return err
		}
		if m.Receiver == m.Sender {
			return store.Invalid("Message.Receiver", "must differ from the sender", m.Receiver)
		}
	}
	switch {
	case m.CorrelationID == "" && m.Type.NeedsCorrelation():
		return store.Invalid("Message.CorrelationID", fmt.Sprintf("is required for a %s message: the ID of the message it answers", m.Type), nil)
	case m.CorrelationID != "":
		if err := store.ValidateID("Message.CorrelationID", m.CorrelationID); err != nil {
			return err
		}
		if m.CorrelationID == m.ID {
			return store.Invalid("Message.CorrelationID", "must name another message, not this one", m.CorrelationID)
		}
	}
	if m.CreatedAt.IsZero() {
		return store.Invalid("Message.CreatedAt", "is required: when the message was sent", nil)
	}
	if m.TTL < 0 {
		return store.Invalid("Message.TTL", "must not be negative (0 means the default, 60s)", m.TTL)
	}
	if len(m.Payload) > 0 {
		b, err := json.Marshal(m.Payload)
		if err != nil {
			return store.Invalid("Message.Payload", "must encode as JSON: "+err.Error(), nil)
		}
		if len(b) > MaxPayloadBytes {
			return store.Invalid("Message.Payload", fmt.Sprintf("is %d bytes as JSON; at most %d are allowed", len(b), MaxPayloadBytes), nil)
		}
	}
	return nil
}

// Handler handles one collaboration message. It should honour ctx.
type Handler func(ctx context.Context, m Message) error

// Dispatcher routes messages to the handlers registered for their type. The zero
// value is ready to use, reads the wall clock and has no handlers. It is safe for
// concurrent use; handlers run on the caller's goroutine, outside any lock, so they
// may register further handlers. A Dispatcher must not be copied after first use.
type Dispatcher struct {
	// Now returns the current time, used to drop expired messages. Default
	// time.Now. Set it before first use.
	Now func() time.Time

	mu       sync.RWMutex
	handlers map[MessageType][]Handler
}

// Register adds h to the handlers of message type t; handlers of a type run in the
// order they were registered. It returns a *store.ValidationError for an unknown type
// or a nil handler.
func (d *Dispatcher) Register(t MessageType, h Handler) error {
	if !t.Valid() {
		return store.Invalid("Message.Type", oneOf(allMessageTypes), string(t))
	}
	if h == nil {
		return store.Invalid("handler", "must not be nil", nil)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.handlers == nil {
		d.handlers = make(map[MessageType][]Handler)
	}
	d.handlers[t] = append(d.handlers[t], h)
	return nil
}

// Handlers returns how many handlers are registered for t.
func (d *Dispatcher) Handlers(t MessageType) int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.handlers[t])
}

// Dispatch validates m and runs the handlers registered for its type, in order,
// stopping at the first error. It returns ctx.Err() if ctx has ended (checked before
// each handler), Message.Validate's *store.ValidationError, an error matching
// ErrMessageExpired when m is expired at d.Now(), a *NoHandlerError when its type has
// no handler, or the first handler error, wrapped with the message's ID and type.
func (d *Dispatcher) Dispatch(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	if at := now(); m.Expired(at) {
		return fmt.Errorf("%w: %s message %s expired at %s", ErrMessageExpired, m.Type, m.ID, m.ExpiresAt().Format(time.RFC3339Nano))
	}
	d.mu.RLock()
	hs := append([]Handler(nil), d.handlers[m.Type]...)
	d.mu.RUnlock()
	if len(hs) == 0 {
		return &NoHandlerError{Type: m.Type}
	}
	for i, h := range hs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := h(ctx, m); err != nil {
			return fmt.Errorf("day1: handler %d of %s message %s: %w", i, m.Type, m.ID, err)
		}
	}
	return nil
}
