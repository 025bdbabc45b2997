package handoff_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/store"
)

func ExampleCompile() {
	cond, err := handoff.Compile(`context.tokens_used > 100000 or (agent.error_count >= 3 and agent.role in ["implementer", "tester"])`)
	if err != nil {
		panic(err)
	}
	ctx := map[string]any{
		"context": map[string]any{"tokens_used": 42000},
		"agent":   map[string]any{"error_count": 4, "role": "implementer"},
	}
	fired, err := cond.Eval(ctx)
	fmt.Println(fired, err)
	fmt.Println(cond.Paths())

	// Malformed source is a *SyntaxError with the offset of the problem.
	_, err = handoff.Compile("agent.error_count = 3")
	var se *handoff.SyntaxError
	fmt.Println(errors.As(err, &se), se.Pos)
	fmt.Println(err)
	// Output:
	// true <nil>
	// [context.tokens_used agent.error_count agent.role]
	// true 18
	// day1: condition syntax error at offset 18: unexpected '='; expected '==' to test equality
}

func ExampleExpr_Eval_errors() {
	cond, _ := handoff.Compile("agent.error_count > 3")

	// A string compared with a number is a type error, not a silent false.
	_, err := cond.Eval(map[string]any{"agent": map[string]any{"error_count": "many"}})
	fmt.Println(errors.Is(err, handoff.ErrTypeMismatch), err)

	// A missing key is an error by default...
	_, err = cond.Eval(map[string]any{"agent": map[string]any{}})
	fmt.Println(errors.Is(err, handoff.ErrMissingKey))

	// ...or null when asked, so a guard can test for it first.
	guarded, _ := handoff.Compile("agent.error_count != null and agent.error_count > 3")
	fired, err := guarded.EvalWith(map[string]any{"agent": map[string]any{}}, handoff.EvalOptions{MissingAsNull: true})
	fmt.Println(fired, err)
	// Output:
	// true day1: condition at offset 18: > needs two numbers or two strings, got string and number
	// true
	// false <nil>
}

func ExampleTrigger_Evaluate() {
	cond, _ := handoff.Compile("agent.error_count >= 3")
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	sig := handoff.Signal{
		Context:      map[string]any{"agent": map[string]any{"error_count": 1}},
		Now:          now,
		LastActivity: now.Add(-7 * time.Minute),
		ErrorType:    "rate_limit",
		Capabilities: []string{"go", "sql"},
	}
	triggers := []handoff.Trigger{
		{Kind: handoff.TriggerCondition, Condition: cond},
		{Kind: handoff.TriggerTimeout, Timeout: 5 * time.Minute},
		{Kind: handoff.TriggerError, ErrorTypes: []string{"rate_limit", "context_overflow"}},
		{Kind: handoff.TriggerCapability, Capabilities: []string{"go", "oauth2"}},
		{Kind: handoff.TriggerEvent, Event: "tests_failed"},
	}
	for _, tr := range triggers {
		fired, reason, err := tr.Evaluate(sig)
		fmt.Printf("%-10s %-5v %s %v\n", tr.Kind, fired, reason, err)
	}
	// Output:
	// condition  false  <nil>
	// timeout    true  no activity for 7m0s, timeout 5m0s <nil>
	// error      true  error "rate_limit" matches <nil>
	// capability true  agent lacks capabilities: oauth2 <nil>
	// event      false  <nil>
}

func ExampleWaitIdle() {
	busy := 2 // the source reports busy twice, then idle
	idle := func(ctx context.Context) (bool, error) {
		busy--
		return busy < 0, nil
	}
	p := handoff.Policy{}.WithDefaults() // graceful, 300s timeout, 1s poll
	fmt.Println(p.Kind, p.Timeout, p.Poll)

	err := handoff.WaitIdle(context.Background(), idle, time.Millisecond, p.Timeout)
	fmt.Println(err)
	// Output:
	// graceful 5m0s 1s
	// <nil>
}

func ExampleMatch() {
	agents := []handoff.AgentProfile{
		{ID: "agent-investigator", Capabilities: []handoff.Capability{{Name: "debugging", Proficiency: 0.9}, {Name: "go", Proficiency: 0.7}}},
		{ID: "agent-oauth-expert", Capabilities: []handoff.Capability{{Name: "oauth2", Proficiency: 0.95}, {Name: "go", Proficiency: 0.8}}},
		{ID: "agent-tester", Capabilities: []handoff.Capability{{Name: "testing"}, {Name: "go", Proficiency: 0.5}}},
	}
	required := []handoff.Requirement{
		{Name: "oauth2", Weight: 2, MinProficiency: 0.6},
		{Name: "go"},
	}
	cands, err := handoff.Match(required, agents, handoff.MatchOptions{
		Exclude: []string{"agent-investigator"}, // the source of the escalation
	})
	if err != nil {
		panic(err)
	}
	for _, c := range cands {
		fmt.Printf("%s %.2f matched=%v missing=%v\n", c.AgentID, c.Score, c.Matched, c.Missing)
	}

	_, err = handoff.Match([]handoff.Requirement{{Name: "go", Weight: -1}}, agents, handoff.MatchOptions{})
	fmt.Println(err)
	// Output:
	// agent-oauth-expert 0.90 matched=[oauth2 go] missing=[]
	// agent-tester 0.17 matched=[go] missing=[oauth2]
	// day1: invalid required[0].Requirement.Weight "-1": must be a finite number, 0 or more (0 counts as 1)
}

func ExampleTransition() {
	status := handoff.StatusPending
	for _, next := range []handoff.Status{handoff.StatusAccepted, handoff.StatusRejected} {
		if err := handoff.Transition(status, next); err != nil {
			fmt.Println(errors.Is(err, store.ErrConflict), err)
			continue
		}
		status = next
		fmt.Println("now", status)
	}
	fmt.Println(handoff.StatusTransferring.Next())
	// Output:
	// now accepted
	// true day1: a handoff cannot go from accepted to rejected; it is final and allows no change
	// [completed failed rolled_back]
}

func ExampleParseType() {
	for _, s := range []string{"escalation", "agent-switch", "session_handoff", "checkpoint"} {
		t, err := handoff.ParseType(s)
		if err != nil {
			panic(err)
		}
		sc := t.Scope()
		fmt.Printf("%s core=%s receiver=%s transfers=%v\n", t, t.Core(), sc.Receiver, sc.TransfersOwnership)
	}
	err := handoff.TypeSessionHandoff.CheckReceiver("agent-a", "agent-b")
	fmt.Println(err)
	// Output:
	// escalation core=escalation receiver=other transfers=true
	// agent_switch core=full receiver=other transfers=true
	// session_handoff core=full receiver=same transfers=true
	// checkpoint core=checkpoint receiver=none transfers=false
	// day1: invalid ToAgent "agent-b": a session_handoff handoff stays with the source agent "agent-a"; another agent cannot receive it
}

func ExampleDispatcher() {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	d := &handoff.Dispatcher{Now: func() time.Time { return now }}
	_ = d.Register(handoff.MessageRequest, func(ctx context.Context, m handoff.Message) error {
		fmt.Printf("%s asks %s: %v\n", m.Sender, m.Receiver, m.Payload["action"])
		return nil
	})
	req := handoff.Message{
		ID: "msg-1", SessionID: "collab-1", Type: handoff.MessageRequest,
		Sender: "agent-a", Receiver: "agent-b", CreatedAt: now,
		Payload: map[string]any{"action": "handoff_request"},
	}
	fmt.Println(d.Dispatch(context.Background(), req))

	ack := handoff.Message{
		ID: "msg-2", SessionID: "collab-1", Type: handoff.MessageAcknowledge,
		Sender: "agent-b", Receiver: "agent-a", CorrelationID: "msg-1", CreatedAt: now,
	}
	fmt.Println(d.Dispatch(context.Background(), ack))
	fmt.Println(handoff.Advance(handoff.PhaseNegotiation, handoff.PhaseAgreement))
	// Output:
	// agent-a asks agent-b: handoff_request
	// <nil>
	// day1: no handler registered for acknowledge messages; call Dispatcher.Register first
	// <nil>
}
