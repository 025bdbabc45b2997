package handoff

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

func statuses(h Handoff) []Status {
	var out []Status
	for _, c := range h.History {
		out = append(out, c.To)
	}
	return out
}

func TestTransferImmediate(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	h, err := v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "inv", ToAgent: "reviewer", Role: "reviewer",
		Policy: Policy{Kind: PolicyImmediate}, Reason: "implementation done"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Status{StatusInitiated, StatusValidating, StatusTransferring, StatusCompleted}
	if diff := cmp.Diff(want, statuses(h)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if h.Type != TypeAgentSwitch || h.Packet.Handoff != h.ID || len(h.Packet.Facts) != 1 || h.ReceiverBranch != "task/t1/reviewer" {
		t.Errorf("record = %+v", h)
	}
	m, found, _ := v.e.readMember(bg, "t1", "reviewer")
	if !found || m.Status != MemberActive || m.Role != "reviewer" {
		t.Errorf("receiver member = %+v", m)
	}
	src, _, _ := v.e.readMember(bg, "t1", "inv")
	if src.Status != MemberLeft {
		t.Errorf("source = %s, want left", src.Status)
	}
	evs, _ := v.e.Events(bg, EventFilter{Handoff: h.ID, Kind: EventHandoffStatus})
	if len(evs) != 3 {
		t.Errorf("%d status events, want 3", len(evs))
	}
	stored, _ := v.e.GetHandoff(bg, h.ID)
	if stored.Status != StatusCompleted || stored.Policy == nil || stored.Policy.Kind != PolicyImmediate {
		t.Errorf("stored = %s, policy %+v", stored.Status, stored.Policy)
	}
}

func TestTransferConditional(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	cond, err := Compile("context.tokens_used > 100000 or agent.error_count >= 3")
	if err != nil {
		t.Fatal(err)
	}
	pol := Policy{Kind: PolicyConditional, Poll: time.Millisecond, Timeout: time.Second, Trigger: &Trigger{Kind: TriggerCondition, Condition: cond}}
	sig := Signal{Context: map[string]any{"context": map[string]any{"tokens_used": 5000}, "agent": map[string]any{"error_count": 1}}}

	h, err := v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "inv", ToAgent: "b", Policy: pol, Signal: sig})
	if !errors.Is(err, ErrNotReady) {
		t.Fatalf("err = %v, want ErrNotReady", err)
	}
	if diff := cmp.Diff([]Status{StatusInitiated, StatusValidating, StatusFailed}, statuses(h)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if _, err := v.mem.GetBranch(bg, "task/t1/b"); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("a failed transfer created a branch: %v", err)
	}

	// A context of the wrong type fails evaluation, and the transfer.
	bad := Signal{Context: map[string]any{"context": map[string]any{"tokens_used": "lots"}, "agent": map[string]any{"error_count": 1}}}
	if _, err := v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "inv", ToAgent: "b", Policy: pol, Signal: bad}); !errors.Is(err, ErrTypeMismatch) {
		t.Errorf("a type error in the condition: %v, want ErrTypeMismatch", err)
	}

	sig.Context["agent"] = map[string]any{"error_count": 3}
	h, err = v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "inv", ToAgent: "b", Policy: pol, Signal: sig})
	if err != nil || h.Status != StatusCompleted {
		t.Fatalf("transfer = %s, %v", h.Status, err)
	}
	if !strings.Contains(h.Reason, "condition") {
		t.Errorf("reason = %q, want the trigger's reason", h.Reason)
	}
}

func TestTransferTriggersFromStore(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	if _, err := v.e.RegisterAgent(bg, AgentProfile{ID: "inv", Capabilities: []Capability{{Name: "go"}}}); err != nil {
		t.Fatal(err)
	}
	// The source's registered capabilities fill the signal: it lacks oauth2.
	capPol := Policy{Kind: PolicyConditional, Poll: time.Millisecond, Trigger: &Trigger{Kind: TriggerCapability, Capabilities: []string{"oauth2"}}}
	if h, err := v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "inv", ToAgent: "b", Policy: capPol}); err != nil {
		t.Fatalf("capability trigger: %s, %v", h.Status, err)
	}
	if _, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "c"}); err != nil {
		t.Fatal(err)
	}
	// The source's last activity fills the signal of a timeout trigger.
	toPol := Policy{Kind: PolicyConditional, Poll: time.Millisecond, Trigger: &Trigger{Kind: TriggerTimeout, Timeout: time.Hour}}
	if _, err := v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "c", ToAgent: "d", Policy: toPol}); !errors.Is(err, ErrNotReady) {
		t.Errorf("an active source: %v, want ErrNotReady", err)
	}
	v.clk.Advance(2 * time.Hour)
	if h, err := v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "c", ToAgent: "d", Policy: toPol}); err != nil {
		t.Errorf("an idle source: %s, %v", h.Status, err)
	}
}

func TestTransferGraceful(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	var checks atomic.Int32
	idle := func(context.Context) (bool, error) { return checks.Add(1) >= 3, nil }
	pol := Policy{Kind: PolicyGraceful, Poll: time.Millisecond, Timeout: time.Minute}
	h, err := v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "inv", ToAgent: "b", Policy: pol, Idle: idle})
	if err != nil || h.Status != StatusCompleted {
		t.Fatalf("transfer = %s, %v", h.Status, err)
	}
	if checks.Load() != 3 {
		t.Errorf("idle checked %d times, want 3", checks.Load())
	}

	if _, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "busy"}); err != nil {
		t.Fatal(err)
	}
	never := func(context.Context) (bool, error) { return false, nil }
	pol.Timeout = 5 * time.Millisecond
	h, err = v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "busy", ToAgent: "c", Policy: pol, Idle: never})
	if !errors.Is(err, ErrIdleTimeout) || h.Status != StatusFailed {
		t.Errorf("a busy source: %s, %v; want failed with ErrIdleTimeout", h.Status, err)
	}
}

func TestTransferRollsBack(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	// WriteDocs 1 to 3 record initiated, validating and transferring; 4 commits.
	v.st.arm(func(m string, n int) error {
		if m == "WriteDocs" && n == 4 {
			return errInjected
		}
		return nil
	})
	h, err := v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "inv", ToAgent: "b", Policy: Policy{Kind: PolicyImmediate}})
	if !errors.Is(err, ErrRolledBack) || !errors.Is(err, errInjected) {
		t.Fatalf("err = %v, want a rollback of the injected failure", err)
	}
	v.st.arm(nil)
	want := []Status{StatusInitiated, StatusValidating, StatusTransferring, StatusRolledBack}
	if diff := cmp.Diff(want, statuses(h)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if got, _ := v.e.GetHandoff(bg, h.ID); got.Status != StatusRolledBack {
		t.Errorf("stored status = %s", got.Status)
	}
	if _, err := v.mem.GetBranch(bg, "task/t1/b"); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("branch survived: %v", err)
	}
}

func TestTransferChoosesAndChecksReceiver(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	if _, err := v.e.RegisterAgent(bg, AgentProfile{ID: "expert", Capabilities: []Capability{{Name: "oauth2", Proficiency: 0.9}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.RegisterAgent(bg, AgentProfile{ID: "novice", Capabilities: []Capability{{Name: "go"}}}); err != nil {
		t.Fatal(err)
	}
	req := []Requirement{{Name: "oauth2"}}
	h, err := v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "inv", Required: req, Type: TypeEscalation, Policy: Policy{Kind: PolicyImmediate}})
	if err != nil || h.ToAgent != "expert" {
		t.Fatalf("transfer to %q, %v; want expert", h.ToAgent, err)
	}
	_, err = v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "expert", ToAgent: "novice", Required: req, Policy: Policy{Kind: PolicyImmediate}})
	if !errors.Is(err, ErrNoCandidate) {
		t.Errorf("a named receiver without the capability: %v, want ErrNoCandidate", err)
	}
	for _, tc := range []struct {
		r     TransferRequest
		field string
	}{
		{TransferRequest{Task: "t1", FromAgent: "expert"}, "TransferRequest.ToAgent"},
		{TransferRequest{Task: "t1", ToAgent: "x"}, "TransferRequest.FromAgent"},
		{TransferRequest{Task: "t1", FromAgent: "expert", ToAgent: "x", Type: TypeCheckpoint}, "TransferRequest.Type"},
		{TransferRequest{Task: "t1", FromAgent: "expert", ToAgent: "x", Policy: Policy{Kind: "eventually"}}, "TransferRequest.Policy.Kind"},
		{TransferRequest{Task: "t1", FromAgent: "expert", ToAgent: "x", Policy: Policy{Kind: PolicyConditional}}, "TransferRequest.Policy.Trigger"},
	} {
		_, err := v.e.Transfer(bg, tc.r)
		wantField(t, err, tc.field)
	}
	if _, err := v.e.Transfer(bg, TransferRequest{Task: "t1", FromAgent: "ghost", ToAgent: "x"}); !errors.Is(err, ErrNotMember) {
		t.Errorf("a source that is not a member: %v, want ErrNotMember", err)
	}
}
