package handoff

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
	"github.com/google/go-cmp/cmp"
)

var goReq = []Requirement{{Name: "go"}}

// guarded is a task t1 with source src and registered agents: a1, a2 and a3 know Go
// at 1, 0.9 and 0.8; busy and gone know it fully but are busy and offline; nogo
// knows no Go.
func guarded(t *testing.T) *env {
	t.Helper()
	v := newEnv(t)
	v.task(t, "t1", []string{"fix it"}, "src")
	for _, a := range []AgentProfile{
		{ID: "a1", Capabilities: []Capability{{Name: "go", Proficiency: 1}}, Permissions: []string{"deploy"}},
		{ID: "a2", Capabilities: []Capability{{Name: "go", Proficiency: 0.9}}, Permissions: []string{"deploy"}},
		{ID: "a3", Capabilities: []Capability{{Name: "go", Proficiency: 0.8}}},
		{ID: "busy", Capabilities: []Capability{{Name: "go"}}, Availability: AvailabilityBusy},
		{ID: "gone", Capabilities: []Capability{{Name: "go"}}, Availability: AvailabilityOffline},
		{ID: "nogo", Capabilities: []Capability{{Name: "python"}}, AcceptTypes: []Type{TypePartial}},
	} {
		if _, err := v.e.RegisterAgent(bg, a); err != nil {
			t.Fatalf("RegisterAgent %s: %v", a.ID, err)
		}
	}
	return v
}

func kinds(t *testing.T, v *env, f EventFilter) []string {
	t.Helper()
	evs, err := v.e.Events(bg, f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, string(ev.Kind)+":"+ev.To)
	}
	return out
}

func TestAgentProfileValidatesSafeguards(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p     AgentProfile
		field string
	}{
		{AgentProfile{ID: "a", Availability: "asleep"}, "AgentProfile.Availability"},
		{AgentProfile{ID: "a", AcceptTypes: []Type{"gift"}}, "AgentProfile.AcceptTypes[0]"},
		{AgentProfile{ID: "a", Permissions: []string{"x", " y"}}, "AgentProfile.Permissions[1]"},
		{AgentProfile{ID: "a", Permissions: []string{"x", "x"}}, "AgentProfile.Permissions[1]"},
	} {
		wantField(t, tc.p.Validate(), tc.field)
	}
	if err := (AgentProfile{ID: "a", Availability: AvailabilityBusy, AcceptTypes: []Type{TypeFull}, Permissions: []string{"x"}}).Validate(); err != nil {
		t.Errorf("a valid profile: %v", err)
	}
}

func TestOfferChecksReceiver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		req    HandoffRequest
		reason RefusalReason
		field  string
	}{
		{"available", HandoffRequest{ToAgent: "a1"}, "", ""},
		{"unregistered agents are not checked", HandoffRequest{ToAgent: "stranger", Permissions: []string{"deploy"}}, "", ""},
		{"busy", HandoffRequest{ToAgent: "busy"}, RefusedUnavailable, "AgentProfile.Availability"},
		{"offline", HandoffRequest{ToAgent: "gone"}, RefusedUnavailable, "AgentProfile.Availability"},
		{"type not accepted", HandoffRequest{ToAgent: "nogo"}, RefusedType, "AgentProfile.AcceptTypes"},
		{"type accepted", HandoffRequest{ToAgent: "nogo", Type: TypePartial}, "", ""},
		{"permission held", HandoffRequest{ToAgent: "a2", Permissions: []string{"deploy"}}, "", ""},
		{"permission missing", HandoffRequest{ToAgent: "a3", Permissions: []string{"deploy"}}, RefusedPermission, "AgentProfile.Permissions"},
		{"chosen among the permitted", HandoffRequest{Required: goReq, Permissions: []string{"deploy"}}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := guarded(t)
			tc.req.Task, tc.req.FromAgent = "t1", "src"
			h, err := v.e.CreateHandoff(bg, tc.req)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("CreateHandoff: %v", err)
				}
				if tc.req.ToAgent == "" && h.ToAgent != "a1" {
					t.Errorf("chosen %s, want a1", h.ToAgent)
				}
				return
			}
			var re *ReceiverError
			if !errors.As(err, &re) || !errors.Is(err, ErrReceiverRefused) || !errors.Is(err, store.ErrConflict) {
				t.Fatalf("err = %v, want a *ReceiverError", err)
			}
			if re.Reason != tc.reason || re.ProfileField != tc.field || re.Field != "HandoffRequest.ToAgent" || re.Agent != tc.req.ToAgent {
				t.Errorf("refusal = %+v, want %s on %s", re, tc.reason, tc.field)
			}
			evs, err := v.e.Events(bg, EventFilter{Task: "t1", Kind: EventHandoffRefused})
			if err != nil || len(evs) != 1 || !strings.HasPrefix(evs[0].Note, string(tc.reason)) || evs[0].Actor != "src" {
				t.Errorf("refused events = %+v, %v", evs, err)
			}
			if hs, _ := v.e.ListHandoffs(bg, HandoffFilter{Task: "t1"}); len(hs) != 0 {
				t.Errorf("a refused offer left %d handoffs", len(hs))
			}
		})
	}
}

func TestChooseReceiverSkipsUnavailable(t *testing.T) {
	t.Parallel()
	v := guarded(t)
	// busy and gone score 1 like a1 and sort first by ID; they must be skipped.
	for _, id := range []string{"a1", "a2"} {
		if err := v.e.UnregisterAgent(bg, id); err != nil {
			t.Fatal(err)
		}
	}
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "src", Required: goReq})
	if err != nil || h.ToAgent != "a3" {
		t.Fatalf("chosen %q, %v; want a3", h.ToAgent, err)
	}
	if _, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "src", Required: goReq, Permissions: []string{"deploy"}}); !errors.Is(err, ErrNoCandidate) {
		t.Errorf("no permitted agent: %v, want ErrNoCandidate", err)
	}
}

func TestAcceptChecksReceiverAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*AgentProfile)
		reason RefusalReason
	}{
		{"still available", func(*AgentProfile) {}, ""},
		{"went busy: may still accept", func(a *AgentProfile) { a.Availability = AvailabilityBusy }, ""},
		{"went offline", func(a *AgentProfile) { a.Availability = AvailabilityOffline }, RefusedUnavailable},
		{"lost the permission", func(a *AgentProfile) { a.Permissions = nil }, RefusedPermission},
		{"stopped taking the type", func(a *AgentProfile) { a.AcceptTypes = []Type{TypePartial} }, RefusedType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := guarded(t)
			h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "src", ToAgent: "a1", Permissions: []string{"deploy"}})
			if err != nil {
				t.Fatal(err)
			}
			a, _ := v.e.GetAgent(bg, "a1")
			tc.change(&a)
			if _, err := v.e.RegisterAgent(bg, a); err != nil {
				t.Fatal(err)
			}
			_, err = v.e.AcceptHandoff(bg, AcceptRequest{Handoff: h.ID, Agent: "a1"})
			got, _ := v.e.GetHandoff(bg, h.ID)
			if tc.reason == "" {
				if err != nil || got.Status != StatusAccepted {
					t.Fatalf("accept: %v, status %s", err, got.Status)
				}
				return
			}
			var re *ReceiverError
			if !errors.As(err, &re) || re.Reason != tc.reason || re.Field != "AcceptRequest.Agent" {
				t.Fatalf("err = %v, want a *ReceiverError %s on AcceptRequest.Agent", err, tc.reason)
			}
			if got.Status != StatusPending {
				t.Errorf("status = %s, want pending: a refused accept changes nothing", got.Status)
			}
			if diff := cmp.Diff([]string{"handoff.created:pending", "handoff.refused:"}, kinds(t, v, EventFilter{Handoff: h.ID})); diff != "" {
				t.Errorf("trail (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEscalationOnReject(t *testing.T) {
	t.Parallel()
	v := guarded(t)
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "src", Required: goReq, Escalate: true, TTL: time.Hour})
	if err != nil || h.ToAgent != "a1" || h.MaxEscalations != DefaultMaxEscalations {
		t.Fatalf("CreateHandoff = %s, max %d, %v", h.ToAgent, h.MaxEscalations, err)
	}
	got, err := v.e.RejectHandoff(bg, RejectRequest{Handoff: h.ID, Agent: "a1", Reason: "no time"})
	if err != nil || got.Status != StatusRejected || got.EscalatedTo == "" {
		t.Fatalf("RejectHandoff = %+v, %v", got, err)
	}
	next, err := v.e.GetHandoff(bg, got.EscalatedTo)
	if err != nil {
		t.Fatal(err)
	}
	if next.Status != StatusPending || next.ToAgent != "a2" || next.EscalatedFrom != h.ID || next.Attempt != 1 ||
		next.Packet.Handoff != next.ID || next.ExpiresAt.IsZero() || !next.Escalate {
		t.Errorf("next = %+v", next)
	}
	if diff := cmp.Diff([]string{"a1", "a2"}, next.Tried); diff != "" {
		t.Errorf("tried (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(h.Packet.Facts, next.Packet.Facts); diff != "" {
		t.Errorf("the packet changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"handoff.created:pending", "handoff.status:rejected", "handoff.escalated:pending"},
		kinds(t, v, EventFilter{Handoff: h.ID})); diff != "" {
		t.Errorf("trail (-want +got):\n%s", diff)
	}
	evs, _ := v.e.Events(bg, EventFilter{Kind: EventHandoffEscalated})
	if len(evs) != 1 || evs[0].Related != next.ID || evs[0].From != string(StatusRejected) {
		t.Errorf("escalated event = %+v", evs)
	}
	// The second link is rejected too: a3 is next, then the bound of 2 ends the chain.
	third, err := v.e.RejectHandoff(bg, RejectRequest{Handoff: next.ID, Agent: "a2"})
	if err != nil {
		t.Fatal(err)
	}
	last, _ := v.e.GetHandoff(bg, third.EscalatedTo)
	if last.ToAgent != "a3" || last.Attempt != 2 {
		t.Fatalf("third link = %s attempt %d", last.ToAgent, last.Attempt)
	}
	end, err := v.e.RejectHandoff(bg, RejectRequest{Handoff: last.ID, Agent: "a3"})
	if err != nil || end.Status != StatusRejected || end.EscalatedTo != "" {
		t.Fatalf("last reject = %+v, %v", end, err)
	}
	evs, _ = v.e.Events(bg, EventFilter{Handoff: last.ID, Kind: EventHandoffEscalationEnded})
	if len(evs) != 1 || !strings.Contains(evs[0].Note, "the bound is 2") {
		t.Errorf("ended event = %+v", evs)
	}
	if hs, _ := v.e.PendingHandoffs(bg, PendingFilter{Task: "t1"}); len(hs) != 0 {
		t.Errorf("%d pending after the chain ended", len(hs))
	}
}

func TestEscalationNoCandidate(t *testing.T) {
	t.Parallel()
	v := guarded(t)
	// Only a1 holds "deploy" besides a2; a2 unregistered leaves nobody after a1.
	if err := v.e.UnregisterAgent(bg, "a2"); err != nil {
		t.Fatal(err)
	}
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "src", Required: goReq, Permissions: []string{"deploy"}, Escalate: true, MaxEscalations: 5})
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.e.RejectHandoff(bg, RejectRequest{Handoff: h.ID, Agent: "a1"})
	if err != nil || got.EscalatedTo != "" || got.Status != StatusRejected {
		t.Fatalf("RejectHandoff = %+v, %v", got, err)
	}
	evs, _ := v.e.Events(bg, EventFilter{Handoff: h.ID, Kind: EventHandoffEscalationEnded})
	if len(evs) != 1 || !strings.Contains(evs[0].Note, "no next receiver") {
		t.Errorf("ended event = %+v", evs)
	}
}

func TestEscalationOnExpiry(t *testing.T) {
	t.Parallel()
	v := guarded(t)
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "src", Required: goReq, Escalate: true, MaxEscalations: 1, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	v.clk.Advance(2 * time.Minute)
	if n, err := v.e.ExpireHandoffs(bg); err != nil || n != 1 {
		t.Fatalf("ExpireHandoffs = %d, %v", n, err)
	}
	got, _ := v.e.GetHandoff(bg, h.ID)
	next, err := v.e.GetHandoff(bg, got.EscalatedTo)
	if got.Status != StatusExpired || err != nil || next.ToAgent != "a2" || next.Status != StatusPending {
		t.Fatalf("expired %s → next %+v, %v", got.Status, next, err)
	}
	if !next.ExpiresAt.After(v.clk.Now()) {
		t.Errorf("the next link expires at %s, already past", next.ExpiresAt)
	}
	// The next link expires too, through an accept that finds it due: the bound of 1
	// ends the chain.
	v.clk.Advance(2 * time.Minute)
	if _, err := v.e.AcceptHandoff(bg, AcceptRequest{Handoff: next.ID, Agent: "a2"}); !errors.Is(err, ErrHandoffExpired) {
		t.Fatalf("accept: %v, want ErrHandoffExpired", err)
	}
	if diff := cmp.Diff([]string{"handoff.created:pending", "handoff.status:expired", "handoff.escalation_ended:expired"},
		kinds(t, v, EventFilter{Handoff: next.ID})); diff != "" {
		t.Errorf("trail (-want +got):\n%s", diff)
	}
}

func TestEscalationOnFailedAccept(t *testing.T) {
	t.Parallel()
	v := guarded(t)
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "src", Required: goReq, Escalate: true})
	if err != nil {
		t.Fatal(err)
	}
	// WriteDocs 1 claims the record, 2 commits (fails), 3 rolls back and escalates.
	v.st.arm(func(m string, n int) error {
		if m == "WriteDocs" && n == 2 {
			return errInjected
		}
		return nil
	})
	_, err = v.e.AcceptHandoff(bg, AcceptRequest{Handoff: h.ID, Agent: "a1"})
	v.st.arm(nil)
	if !errors.Is(err, ErrRolledBack) {
		t.Fatalf("accept: %v, want ErrRolledBack", err)
	}
	got, _ := v.e.GetHandoff(bg, h.ID)
	next, err := v.e.GetHandoff(bg, got.EscalatedTo)
	if got.Status != StatusRolledBack || err != nil || next.ToAgent != "a2" {
		t.Fatalf("rolled back %s → next %+v, %v", got.Status, next, err)
	}
	if _, err := v.e.AcceptHandoff(bg, AcceptRequest{Handoff: next.ID, Agent: "a2"}); err != nil {
		t.Fatalf("the next agent accepts: %v", err)
	}
}

func TestEscalationOnAbandonedClaim(t *testing.T) {
	t.Parallel()
	v := guarded(t)
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "src", Required: goReq, Escalate: true})
	if err != nil {
		t.Fatal(err)
	}
	// The accept claims the record, then its branch creation fails and so does the
	// rollback's write: the claim is left, as if the process had died.
	v.st.arm(func(m string, n int) error {
		if m == "CreateBranch" || m == "WriteDocs" && n == 2 {
			return errInjected
		}
		return nil
	})
	_, _ = v.e.AcceptHandoff(bg, AcceptRequest{Handoff: h.ID, Agent: "a1"})
	v.st.arm(nil)
	v.clk.Advance(DefaultClaimTimeout + time.Second)
	if n, err := v.e.ExpireHandoffs(bg); err != nil || n != 1 {
		t.Fatalf("ExpireHandoffs = %d, %v", n, err)
	}
	got, _ := v.e.GetHandoff(bg, h.ID)
	if got.Status != StatusRolledBack || got.EscalatedTo == "" {
		t.Fatalf("abandoned claim: %s, escalated to %q", got.Status, got.EscalatedTo)
	}
}

func TestConcurrentRejectsEscalateOnce(t *testing.T) {
	t.Parallel()
	v := guarded(t)
	// An open handoff: any agent may reject it, so two can race.
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "src", Required: goReq, Escalate: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = v.e.RejectHandoff(bg, RejectRequest{Handoff: h.ID, Agent: "a1"})
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		var te *TransitionError
		switch {
		case err == nil:
			ok++
		case !errors.As(err, &te):
			t.Errorf("losing reject: %v, want a *TransitionError", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d rejects succeeded, want 1: %v", ok, errs)
	}
	pending, err := v.e.PendingHandoffs(bg, PendingFilter{Task: "t1"})
	if err != nil || len(pending) != 1 || pending[0].EscalatedFrom != h.ID {
		t.Errorf("pending = %+v, %v; want the one escalation", pending, err)
	}
	if evs, _ := v.e.Events(bg, EventFilter{Kind: EventHandoffEscalated}); len(evs) != 1 {
		t.Errorf("%d escalated events, want 1", len(evs))
	}
}

func TestEscalationBadInput(t *testing.T) {
	t.Parallel()
	v := guarded(t)
	for _, tc := range []struct {
		req   HandoffRequest
		field string
	}{
		{HandoffRequest{Escalate: true, ToAgent: "a1"}, "HandoffRequest.Escalate"},
		{HandoffRequest{MaxEscalations: 3, Required: goReq}, "HandoffRequest.MaxEscalations"},
		{HandoffRequest{Escalate: true, Required: goReq, MaxEscalations: MaxEscalationsLimit + 1}, "HandoffRequest.MaxEscalations"},
		{HandoffRequest{Escalate: true, Required: goReq, MaxEscalations: -1}, "HandoffRequest.MaxEscalations"},
		{HandoffRequest{Permissions: []string{""}}, "HandoffRequest.Permissions[0]"},
	} {
		tc.req.Task, tc.req.FromAgent = "t1", "src"
		_, err := v.e.CreateHandoff(bg, tc.req)
		wantField(t, err, tc.field)
	}
}
