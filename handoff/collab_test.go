package handoff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

func TestPhases(t *testing.T) {
	t.Parallel()
	allowed := map[[2]Phase]bool{
		{PhaseDiscovery, PhaseNegotiation}:  true,
		{PhaseDiscovery, PhaseCompletion}:   true,
		{PhaseNegotiation, PhaseAgreement}:  true,
		{PhaseNegotiation, PhaseDiscovery}:  true,
		{PhaseNegotiation, PhaseCompletion}: true,
		{PhaseAgreement, PhaseExecution}:    true,
		{PhaseAgreement, PhaseNegotiation}:  true,
		{PhaseAgreement, PhaseCompletion}:   true,
		{PhaseExecution, PhaseCompletion}:   true,
	}
	for _, from := range Phases() {
		for _, to := range Phases() {
			want := allowed[[2]Phase{from, to}]
			if got := CanAdvance(from, to); got != want {
				t.Errorf("CanAdvance(%s, %s) = %v, want %v", from, to, got, want)
			}
			err := Advance(from, to)
			var pe *PhaseError
			switch {
			case want && err != nil:
				t.Errorf("Advance(%s, %s) = %v, want nil", from, to, err)
			case !want && (!errors.As(err, &pe) || pe.From != from || pe.To != to || !errors.Is(err, store.ErrConflict)):
				t.Errorf("Advance(%s, %s) = %v, want a *PhaseError matching store.ErrConflict", from, to, err)
			}
		}
	}
	// The normal course is the first choice at every step.
	var course []Phase
	for p := PhaseDiscovery; ; p = p.Next()[0] {
		course = append(course, p)
		if len(p.Next()) == 0 {
			break
		}
	}
	if diff := cmp.Diff(Phases(), course); diff != "" {
		t.Errorf("normal course (-want +got)\n%s", diff)
	}
	if got, want := Advance(PhaseExecution, PhaseNegotiation).Error(), "day1: a collaboration cannot go from phase execution to negotiation; allowed next: completion"; got != want {
		t.Errorf("PhaseError = %q, want %q", got, want)
	}
	var ve *store.ValidationError
	if err := Advance("idle", PhaseCompletion); !errors.As(err, &ve) || ve.Field != "from" {
		t.Errorf("Advance from an unknown phase = %v", err)
	}
	if err := Advance(PhaseDiscovery, "done"); !errors.As(err, &ve) || ve.Field != "to" {
		t.Errorf("Advance to an unknown phase = %v", err)
	}
	if p, err := ParsePhase(" Negotiation"); err != nil || p != PhaseNegotiation {
		t.Errorf("ParsePhase = %q, %v", p, err)
	}
	if _, err := ParsePhase("planning"); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("ParsePhase(planning) error = %v", err)
	}
}

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func validMessage(typ MessageType) Message {
	m := Message{ID: "m2", SessionID: "s1", Type: typ, Sender: "agent-a", Receiver: "agent-b", CreatedAt: t0}
	switch typ {
	case MessageBroadcast:
		m.Receiver = ""
	case MessageResponse, MessageAcknowledge, MessageReject:
		m.CorrelationID = "m1"
	}
	return m
}

func TestMessageValidate(t *testing.T) {
	t.Parallel()
	for _, typ := range MessageTypes() {
		if err := validMessage(typ).Validate(); err != nil {
			t.Errorf("valid %s message: %v", typ, err)
		}
	}
	cancelAll := validMessage(MessageCancel)
	cancelAll.Receiver = ""
	if err := cancelAll.Validate(); err != nil {
		t.Errorf("cancel to everyone: %v", err)
	}
	withPayload := validMessage(MessageRequest)
	withPayload.Payload = map[string]any{"action": "handoff_request", "requirements": []string{"oauth2"}}
	if err := withPayload.Validate(); err != nil {
		t.Errorf("request with payload: %v", err)
	}

	edit := func(typ MessageType, f func(*Message)) Message {
		m := validMessage(typ)
		f(&m)
		return m
	}
	tests := []struct {
		name  string
		m     Message
		field string
	}{
		{"no id", edit(MessageRequest, func(m *Message) { m.ID = "" }), "Message.ID"},
		{"bad id", edit(MessageRequest, func(m *Message) { m.ID = "m 2" }), "Message.ID"},
		{"no session", edit(MessageRequest, func(m *Message) { m.SessionID = "" }), "Message.SessionID"},
		{"unknown type", edit(MessageRequest, func(m *Message) { m.Type = "ping" }), "Message.Type"},
		{"no sender", edit(MessageRequest, func(m *Message) { m.Sender = "" }), "Message.Sender"},
		{"broadcast with receiver", edit(MessageBroadcast, func(m *Message) { m.Receiver = "agent-b" }), "Message.Receiver"},
		{"request without receiver", edit(MessageRequest, func(m *Message) { m.Receiver = "" }), "Message.Receiver"},
		{"negotiate without receiver", edit(MessageNegotiate, func(m *Message) { m.Receiver = "" }), "Message.Receiver"},
		{"reject without receiver", edit(MessageReject, func(m *Message) { m.Receiver = "" }), "Message.Receiver"},
		{"message to oneself", edit(MessageRequest, func(m *Message) { m.Receiver = "agent-a" }), "Message.Receiver"},
		{"bad receiver", edit(MessageRequest, func(m *Message) { m.Receiver = "agent b" }), "Message.Receiver"},
		{"response without correlation", edit(MessageResponse, func(m *Message) { m.CorrelationID = "" }), "Message.CorrelationID"},
		{"acknowledge without correlation", edit(MessageAcknowledge, func(m *Message) { m.CorrelationID = "" }), "Message.CorrelationID"},
		{"reject without correlation", edit(MessageReject, func(m *Message) { m.CorrelationID = "" }), "Message.CorrelationID"},
		{"correlated to itself", edit(MessageResponse, func(m *Message) { m.CorrelationID = m.ID }), "Message.CorrelationID"},
		{"bad correlation", edit(MessageCancel, func(m *Message) { m.CorrelationID = "?" }), "Message.CorrelationID"},
		{"no time", edit(MessageRequest, func(m *Message) { m.CreatedAt = time.Time{} }), "Message.CreatedAt"},
		{"negative ttl", edit(MessageRequest, func(m *Message) { m.TTL = -time.Second }), "Message.TTL"},
		{"payload not JSON", edit(MessageRequest, func(m *Message) { m.Payload = map[string]any{"f": func() {}} }), "Message.Payload"},
		{"payload NaN", edit(MessageRequest, func(m *Message) { m.Payload = map[string]any{"x": math.NaN()} }), "Message.Payload"},
		{"payload too big", edit(MessageRequest, func(m *Message) {
			m.Payload = map[string]any{"x": strings.Repeat("a", MaxPayloadBytes)}
		}), "Message.Payload"},
	}
	for _, tc := range tests {
		err := tc.m.Validate()
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: Validate() = %v, want a ValidationError on %s", tc.name, err, tc.field)
		}
	}
}

func TestMessageExpiry(t *testing.T) {
	t.Parallel()
	m := validMessage(MessageRequest)
	if got := m.ExpiresAt(); !got.Equal(t0.Add(DefaultMessageTTL)) {
		t.Errorf("ExpiresAt with zero TTL = %v, want CreatedAt + 60s", got)
	}
	for _, tc := range []struct {
		ttl  time.Duration
		now  time.Time
		want bool
	}{
		{0, t0, false},
		{0, t0.Add(DefaultMessageTTL - 1), false},
		{0, t0.Add(DefaultMessageTTL), true},
		{time.Second, t0.Add(999 * time.Millisecond), false},
		{time.Second, t0.Add(time.Second), true},
		{time.Hour, t0.Add(-time.Hour), false},
	} {
		m.TTL = tc.ttl
		if got := m.Expired(tc.now); got != tc.want {
			t.Errorf("TTL %v, now CreatedAt%+v: Expired = %v, want %v", tc.ttl, tc.now.Sub(t0), got, tc.want)
		}
	}
	if !validMessage(MessageBroadcast).IsBroadcast() || validMessage(MessageRequest).IsBroadcast() {
		t.Error("IsBroadcast wrong")
	}
}

func TestMessageJSON(t *testing.T) {
	t.Parallel()
	m := validMessage(MessageAcknowledge)
	m.Payload = map[string]any{"accepted": true, "reason": "ok"}
	m.TTL = 30 * time.Second
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, back); diff != "" {
		t.Errorf("JSON round trip (-want +got)\n%s", diff)
	}
	if _, err := ParseMessageType("Acknowledge"); err != nil {
		t.Error(err)
	}
	if _, err := ParseMessageType("ack"); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("ParseMessageType(ack) error = %v", err)
	}
}

func TestDispatcher(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := &Dispatcher{Now: func() time.Time { return t0.Add(time.Second) }}

	var got []string
	record := func(tag string) Handler {
		return func(_ context.Context, m Message) error {
			got = append(got, tag+":"+m.ID)
			return nil
		}
	}
	if err := d.Register(MessageRequest, record("first")); err != nil {
		t.Fatal(err)
	}
	if err := d.Register(MessageRequest, record("second")); err != nil {
		t.Fatal(err)
	}
	if err := d.Dispatch(ctx, validMessage(MessageRequest)); err != nil {
		t.Fatalf("Dispatch: %v", err)
	}
	if diff := cmp.Diff([]string{"first:m2", "second:m2"}, got); diff != "" {
		t.Errorf("handlers ran (-want +got)\n%s", diff)
	}
	if d.Handlers(MessageRequest) != 2 || d.Handlers(MessageCancel) != 0 {
		t.Errorf("Handlers counts = %d, %d", d.Handlers(MessageRequest), d.Handlers(MessageCancel))
	}

	// No handler for the type.
	err := d.Dispatch(ctx, validMessage(MessageReject))
	var nh *NoHandlerError
	if !errors.As(err, &nh) || nh.Type != MessageReject || !errors.Is(err, ErrNoHandler) {
		t.Errorf("Dispatch without a handler = %v, want *NoHandlerError{reject}", err)
	}

	// Invalid and expired messages reach no handler.
	got = nil
	bad := validMessage(MessageRequest)
	bad.Receiver = ""
	if err := d.Dispatch(ctx, bad); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("Dispatch of an invalid message = %v", err)
	}
	old := validMessage(MessageRequest)
	old.CreatedAt = t0.Add(-time.Hour)
	if err := d.Dispatch(ctx, old); !errors.Is(err, ErrMessageExpired) {
		t.Errorf("Dispatch of an expired message = %v, want ErrMessageExpired", err)
	}
	if len(got) != 0 {
		t.Errorf("handlers ran for rejected messages: %v", got)
	}

	// A failing handler stops the chain; its error is wrapped.
	boom := errors.New("receiver busy")
	d2 := &Dispatcher{Now: d.Now}
	calls := 0
	_ = d2.Register(MessageNegotiate, func(context.Context, Message) error { calls++; return boom })
	_ = d2.Register(MessageNegotiate, func(context.Context, Message) error { calls++; return nil })
	if err := d2.Dispatch(ctx, validMessage(MessageNegotiate)); !errors.Is(err, boom) || calls != 1 {
		t.Errorf("Dispatch with a failing handler = %v after %d calls; want the error after 1", err, calls)
	}

	// A cancelled context runs nothing; a handler cancelling it stops the rest.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.Dispatch(cctx, validMessage(MessageRequest)); !errors.Is(err, context.Canceled) {
		t.Errorf("Dispatch with a cancelled context = %v", err)
	}
	d3 := &Dispatcher{Now: d.Now}
	cctx, cancel = context.WithCancel(ctx)
	calls = 0
	_ = d3.Register(MessageCancel, func(context.Context, Message) error { calls++; cancel(); return nil })
	_ = d3.Register(MessageCancel, func(context.Context, Message) error { calls++; return nil })
	if err := d3.Dispatch(cctx, validMessage(MessageCancel)); !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("Dispatch cancelled by a handler = %v after %d calls", err, calls)
	}

	// Register rejects bad input.
	var ve *store.ValidationError
	if err := d.Register("ping", record("x")); !errors.As(err, &ve) || ve.Field != "Message.Type" {
		t.Errorf("Register(unknown type) = %v", err)
	}
	if err := d.Register(MessageRequest, nil); !errors.As(err, &ve) || ve.Field != "handler" {
		t.Errorf("Register(nil) = %v", err)
	}
}

func TestDispatcherZeroValueUsesWallClock(t *testing.T) {
	t.Parallel()
	var d Dispatcher
	_ = d.Register(MessageBroadcast, func(context.Context, Message) error { return nil })
	m := validMessage(MessageBroadcast) // created in 2025 with a 60s TTL: long expired
	if err := d.Dispatch(context.Background(), m); !errors.Is(err, ErrMessageExpired) {
		t.Errorf("Dispatch = %v, want ErrMessageExpired", err)
	}
	m.CreatedAt = time.Now()
	m.TTL = time.Hour
	if err := d.Dispatch(context.Background(), m); err != nil {
		t.Errorf("Dispatch of a fresh message = %v", err)
	}
}

func TestDispatcherConcurrent(t *testing.T) {
	t.Parallel()
	d := &Dispatcher{Now: func() time.Time { return t0 }}
	var mu sync.Mutex
	seen := map[string]int{}
	handler := func(_ context.Context, m Message) error {
		mu.Lock()
		seen[m.ID]++
		mu.Unlock()
		return nil
	}
	if err := d.Register(MessageRequest, handler); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				m := validMessage(MessageRequest)
				m.ID = fmt.Sprintf("m-%d-%d", g, i)
				if err := d.Dispatch(context.Background(), m); err != nil {
					t.Error(err)
					return
				}
				// Registering while others dispatch is safe; these handlers
				// serve another type.
				if err := d.Register(MessageBroadcast, handler); err != nil {
					t.Error(err)
					return
				}
				_ = d.Handlers(MessageBroadcast)
			}
		}()
	}
	wg.Wait()
	if len(seen) != 400 {
		t.Errorf("%d distinct messages handled, want 400", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("message %s handled %d times", id, n)
		}
	}
	if got := d.Handlers(MessageBroadcast); got != 400 {
		t.Errorf("%d broadcast handlers registered, want 400", got)
	}
}

func TestDispatcherHandlerMayRegister(t *testing.T) {
	t.Parallel()
	d := &Dispatcher{Now: func() time.Time { return t0 }}
	_ = d.Register(MessageRequest, func(context.Context, Message) error {
		// Would deadlock if Dispatch held the lock while running handlers.
		return d.Register(MessageResponse, func(context.Context, Message) error { return nil })
	})
	if err := d.Dispatch(context.Background(), validMessage(MessageRequest)); err != nil {
		t.Fatal(err)
	}
	if err := d.Dispatch(context.Background(), validMessage(MessageResponse)); err != nil {
		t.Errorf("handler registered from a handler did not run: %v", err)
	}
}
