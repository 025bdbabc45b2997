package handoff

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/internal/testkit"
	"github.com/day1ai/day1/store"
)

func TestCollaborationProtocol(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	var mu sync.Mutex
	var seen []string
	d := &Dispatcher{Now: v.clk.Now}
	for _, mt := range []MessageType{MessageRequest, MessageAcknowledge} {
		if err := d.Register(mt, func(_ context.Context, m Message) error {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, string(m.Type)+">"+m.Receiver)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	v.e.Dispatcher = d

	s, err := v.e.OpenCollaboration(bg, CollabSpec{ID: "col-1", Initiator: "inv", Participants: []string{"expert", "novice"}, Task: "t1",
		Context: map[string]any{"topic": "oauth"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Phase != PhaseDiscovery || !cmp.Equal(s.Participants, []string{"expert", "inv", "novice"}) {
		t.Errorf("session = %+v", s)
	}
	q, err := v.e.QueryCapabilities(bg, CapabilityAsk{Session: "col-1", From: "inv", Required: []string{"oauth2"}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := v.e.RequestHandoff(bg, HandoffAsk{Session: "col-1", From: "inv", To: "novice", Description: "take the fix", Required: []string{"oauth2"}})
	if err != nil {
		t.Fatal(err)
	}
	if req.Payload["task"] != "t1" || req.Payload["action"] != ActionHandoffRequest {
		t.Errorf("request payload = %v", req.Payload)
	}
	if _, err := v.e.Respond(bg, Reply{Session: "col-1", From: "novice", To: "inv", Correlation: req.ID, Reason: "no oauth2"}); err != nil {
		t.Fatal(err)
	}
	req2, err := v.e.RequestHandoff(bg, HandoffAsk{Session: "col-1", From: "inv", To: "expert", Description: "take the fix", Required: []string{"oauth2"}})
	if err != nil {
		t.Fatal(err)
	}
	terms, err := v.e.ProposeTerms(bg, TermsOffer{Session: "col-1", From: "expert", To: "inv", Terms: map[string]any{"deadline": "friday", "objectives": []any{1.0, 2.0}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.Respond(bg, Reply{Session: "col-1", From: "inv", To: "expert", Correlation: terms.ID, Accepted: true, Reason: "agreed"}); err != nil {
		t.Fatal(err)
	}
	s, err = v.e.GetCollaboration(bg, "col-1")
	if err != nil {
		t.Fatal(err)
	}
	var phases []Phase
	for _, c := range s.History {
		phases = append(phases, c.To)
	}
	want := []Phase{PhaseNegotiation, PhaseDiscovery, PhaseNegotiation, PhaseAgreement}
	if diff := cmp.Diff(want, phases); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"deadline": "friday", "objectives": []any{1.0, 2.0}}, s.Terms); diff != "" {
		t.Errorf("terms (-want +got):\n%s", diff)
	}
	mu.Lock()
	if diff := cmp.Diff([]string{"request>novice", "request>expert", "acknowledge>expert"}, seen); diff != "" {
		t.Errorf("dispatched (-want +got):\n%s", diff)
	}
	mu.Unlock()

	// The expert crashed: it reads what it was sent, and every broadcast.
	inbox, err := v.e.Messages(bg, MessageFilter{Session: "col-1", Receiver: "expert"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range inbox {
		ids = append(ids, m.ID)
	}
	acks, _ := v.e.Messages(bg, MessageFilter{Session: "col-1"})
	if diff := cmp.Diff([]string{q.ID, req2.ID, acks[len(acks)-1].ID}, ids); diff != "" {
		t.Errorf("inbox of expert (-want +got):\n%s", diff)
	}

	s, err = v.e.AdvanceCollaboration(bg, PhaseAdvance{Session: "col-1", To: PhaseExecution, By: "expert"})
	if err != nil || s.Phase != PhaseExecution {
		t.Fatalf("advance: %s, %v", s.Phase, err)
	}
	if _, err := v.e.AdvanceCollaboration(bg, PhaseAdvance{Session: "col-1", To: PhaseDiscovery, By: "expert"}); !errors.As(err, new(*PhaseError)) || !errors.Is(err, store.ErrConflict) {
		t.Errorf("executing back to discovery: %v, want a *PhaseError", err)
	}
	s, err = v.e.AdvanceCollaboration(bg, PhaseAdvance{Session: "col-1", To: PhaseCompletion, By: "expert", Outcome: "fixed"})
	if err != nil || s.Outcome != "fixed" || s.CompletedAt.IsZero() {
		t.Fatalf("complete: %+v, %v", s, err)
	}
	if _, err := v.e.Send(bg, Message{SessionID: "col-1", Type: MessageBroadcast, Sender: "inv"}); !errors.Is(err, ErrCollabClosed) {
		t.Errorf("sending to a completed session: %v, want ErrCollabClosed", err)
	}
	evs, _ := v.e.Events(bg, EventFilter{Task: "t1", Kind: EventCollabPhase})
	if len(evs) != 6 {
		t.Errorf("%d phase events, want 6", len(evs))
	}
}

func TestSendBadInput(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	if _, err := v.e.OpenCollaboration(bg, CollabSpec{ID: "s", Initiator: "a", Participants: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	first, err := v.e.Send(bg, Message{ID: "m1", SessionID: "s", Type: MessageRequest, Sender: "a", Receiver: "b"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m     Message
		field string
	}{
		{Message{SessionID: "s", Type: MessageRequest, Sender: "c", Receiver: "b"}, "Message.Sender"},
		{Message{SessionID: "s", Type: MessageRequest, Sender: "a", Receiver: "c"}, "Message.Receiver"},
		{Message{SessionID: "s", Type: MessageAcknowledge, Sender: "b", Receiver: "a"}, "Message.CorrelationID"},
		{Message{SessionID: "s", Type: "shout", Sender: "a"}, "Message.Type"},
	} {
		_, err := v.e.Send(bg, tc.m)
		wantField(t, err, tc.field)
	}
	if _, err := v.e.Send(bg, Message{SessionID: "s", Type: MessageAcknowledge, Sender: "b", Receiver: "a", CorrelationID: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("answering an unknown message: %v, want ErrNotFound", err)
	}
	if _, err := v.e.Send(bg, Message{SessionID: "nope", Type: MessageBroadcast, Sender: "a"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown session: %v, want ErrNotFound", err)
	}
	if _, err := v.e.Send(bg, Message{ID: first.ID, SessionID: "s", Type: MessageBroadcast, Sender: "a"}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a taken ID: %v, want ErrConflict", err)
	}
	old := Message{SessionID: "s", Type: MessageBroadcast, Sender: "a", CreatedAt: testkit.Start.Add(-time.Hour)}
	if _, err := v.e.Send(bg, old); !errors.Is(err, ErrMessageExpired) {
		t.Errorf("an expired message: %v, want ErrMessageExpired", err)
	}
	_, err = v.e.OpenCollaboration(bg, CollabSpec{Initiator: "a", Participants: []string{"a"}})
	wantField(t, err, "CollabSpec.Participants[0]")
	_, err = v.e.OpenCollaboration(bg, CollabSpec{Initiator: "a", Context: map[string]any{"f": func() {}}})
	wantField(t, err, "CollabSpec.Context")
	if _, err := v.e.OpenCollaboration(bg, CollabSpec{Initiator: "a", Task: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown task: %v", err)
	}
}

func TestSendHandlerErrorKeepsMessage(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	boom := errors.New("handler failed")
	v.e.Dispatcher = &Dispatcher{Now: v.clk.Now}
	_ = v.e.Dispatcher.Register(MessageBroadcast, func(context.Context, Message) error { return boom })
	if _, err := v.e.OpenCollaboration(bg, CollabSpec{ID: "s", Initiator: "a"}); err != nil {
		t.Fatal(err)
	}
	m, err := v.e.Send(bg, Message{SessionID: "s", Type: MessageBroadcast, Sender: "a"})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the handler's", err)
	}
	ms, _ := v.e.Messages(bg, MessageFilter{Session: "s"})
	if len(ms) != 1 || ms[0].ID != m.ID {
		t.Errorf("stored = %v", ms)
	}
	// No handler for a type is not an error.
	if _, err := v.e.Send(bg, Message{SessionID: "s", Type: MessageCancel, Sender: "a", CorrelationID: m.ID}); err != nil {
		t.Errorf("a message without a handler: %v", err)
	}
}

func TestCleanupCollaborations(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	if _, err := v.e.OpenCollaboration(bg, CollabSpec{ID: "short", Initiator: "a", Participants: []string{"b"}, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.OpenCollaboration(bg, CollabSpec{ID: "long", Initiator: "a", Participants: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	send := func(session string, ttl time.Duration) {
		t.Helper()
		if _, err := v.e.Send(bg, Message{SessionID: session, Type: MessageBroadcast, Sender: "a", TTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	send("short", 10*time.Hour)
	send("long", time.Minute)
	send("long", 10*time.Hour)
	v.clk.Advance(2 * time.Hour)
	if ss, err := v.e.ListCollaborations(bg, CollabFilter{Participant: "b"}); err != nil || len(ss) != 1 || ss[0].ID != "long" {
		t.Errorf("unexpired sessions of b = %v (%v)", ss, err)
	}
	if _, err := v.e.AdvanceCollaboration(bg, PhaseAdvance{Session: "short", To: PhaseNegotiation, By: "a"}); !errors.Is(err, ErrCollabClosed) {
		t.Errorf("advancing an expired session: %v, want ErrCollabClosed", err)
	}
	if _, err := v.e.AdvanceCollaboration(bg, PhaseAdvance{Session: "long", To: PhaseNegotiation, By: "a"}); err != nil {
		t.Errorf("advancing a live session: %v", err)
	}
	res, err := v.e.CleanupCollaborations(bg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(CleanupResult{Sessions: 1, Messages: 2}, res); diff != "" {
		t.Errorf("cleanup (-want +got):\n%s", diff)
	}
	if _, err := v.e.GetCollaboration(bg, "short"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired session kept: %v", err)
	}
	ms, _ := v.e.Messages(bg, MessageFilter{Session: "long", IncludeExpired: true})
	if len(ms) != 1 {
		t.Errorf("%d messages left in long, want 1", len(ms))
	}
	if ss, _ := v.e.ListCollaborations(bg, CollabFilter{IncludeExpired: true}); len(ss) != 1 {
		t.Errorf("%d sessions left, want 1", len(ss))
	}
}
