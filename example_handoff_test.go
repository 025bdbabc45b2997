package day1_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/testkit"
)

// The seeds' scenario: an investigator finds the cause of a bug but is stuck on the
// OAuth2 state machine, escalates, and an expert accepts with the investigator's
// verified facts, its conversation and the blocker in hand.
func ExampleClient_AcceptHandoff() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	const task, inv = "fix-oauth-token-refresh", "agent-investigator"
	if _, err := c.CreateTask(ctx, day1.TaskSpec{Name: task, Type: "bug_fix",
		Objectives: []string{"Identify the root cause", "Implement the fix", "Add regression tests"}}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.JoinTask(ctx, day1.JoinRequest{Task: task, Agent: inv, Role: "investigator", Objectives: []int{1}}); err != nil {
		log.Fatal(err)
	}
	branch := "task/" + task + "/" + inv
	if _, err := c.WriteFacts(ctx, []day1.Fact{
		{Branch: branch, Text: "token_service.py:142 drops the refresh token after a 401", Status: day1.FactVerified},
		{Branch: branch, Text: "The CI clock may be skewed"},
	}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteObservation(ctx, day1.Observation{Branch: branch, Type: day1.ObsError, Summary: "refresh failed: invalid_grant"}); err != nil {
		log.Fatal(err)
	}
	exampleDebugSession(ctx, c, branch)

	h, err := c.Handoff(ctx, day1.HandoffRequest{
		Task: task, Type: day1.HandoffEscalation, FromAgent: inv,
		Instructions:       "The fix needs someone who knows the OAuth2 state machine.",
		Blockers:           []string{"Unclear OAuth2 state transition after a failed refresh"},
		PriorityObjectives: []int{1, 2},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(h.Type, h.Status)

	acc, err := c.AcceptHandoff(ctx, day1.AcceptRequest{Handoff: h.ID, Agent: "agent-oauth-expert"})
	if err != nil {
		log.Fatal(err)
	}
	p := acc.Packet
	fmt.Println("expert works on", acc.Branch)
	for _, f := range p.Facts {
		fmt.Println("fact:", f.Text)
	}
	for _, cv := range p.Conversations {
		fmt.Printf("conversation %q: %d messages\n", cv.Title, cv.MessageCount)
		for _, m := range cv.Messages {
			if m.Decision {
				fmt.Println("  decision:", m.Content)
			}
		}
	}
	fmt.Println("blocker:", p.Blockers[0])
	fmt.Println("error:", p.RecentErrors[0].Summary)
	fmt.Println("priority objectives:", p.PriorityObjectives, "continue from", p.Branch)

	t, _ := c.GetTask(ctx, task)
	fmt.Println("owner:", t.Owner)

	// The handoff is taken: a second accept is a conflict.
	_, err = c.AcceptHandoff(ctx, day1.AcceptRequest{Handoff: h.ID, Agent: "agent-latecomer"})
	var te *day1.TransitionError
	fmt.Println(errors.As(err, &te), errors.Is(err, day1.ErrConflict))
	// Output:
	// escalation pending
	// expert works on task/fix-oauth-token-refresh/agent-oauth-expert
	// fact: token_service.py:142 drops the refresh token after a 401
	// conversation "fix the refresh bug": 9 messages
	//   decision: Let me run the auth tests first.
	//   decision: The cause is that the refresh handler skips the expiry check. I will patch it.
	// blocker: Unclear OAuth2 state transition after a failed refresh
	// error: refresh failed: invalid_grant
	// priority objectives: [1 2] continue from task/fix-oauth-token-refresh
	// owner: agent-oauth-expert
	// true true
}

// With no receiver named, the required capabilities choose one among the registered
// agents; it finds the handoff among its pending ones.
func ExampleClient_PendingHandoffs() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	for _, a := range []day1.AgentProfile{
		{ID: "generalist", Capabilities: []day1.Capability{{Name: "oauth2", Proficiency: 0.4}, {Name: "python", Proficiency: 0.9}}},
		{ID: "oauth-expert", Capabilities: []day1.Capability{{Name: "oauth2", Proficiency: 0.95}, {Name: "python", Proficiency: 0.7}}},
	} {
		if _, err := c.RegisterAgent(ctx, a); err != nil {
			log.Fatal(err)
		}
	}
	need := []day1.Requirement{{Name: "oauth2", Weight: 2}, {Name: "python"}}
	cands, err := c.FindAgents(ctx, need, day1.MatchOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, cd := range cands {
		fmt.Printf("%s %.2f\n", cd.AgentID, cd.Score)
	}

	if _, err := c.CreateTask(ctx, day1.TaskSpec{Name: "fix-auth"}); err != nil {
		log.Fatal(err)
	}
	h, err := c.Handoff(ctx, day1.HandoffRequest{Task: "fix-auth", Required: need, Priority: day1.PriorityHigh})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("addressed to", h.ToAgent)
	pending, err := c.PendingHandoffs(ctx, day1.PendingFilter{Receiver: "oauth-expert"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(pending), pending[0].ID == h.ID, pending[0].Priority)
	// Output:
	// oauth-expert 0.87
	// generalist 0.57
	// addressed to oauth-expert
	// 1 true high
}

// Checkpoints save progress without changing who owns the task; an agent silent for
// too long shows up as stalled, and resumes from its latest checkpoint.
func ExampleClient_StalledTasks() {
	ctx := context.Background()
	clk := testkit.NewClock(time.Second)
	cfg := exampleConfig()
	cfg.Test.Now = clk.Now
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.CreateTask(ctx, day1.TaskSpec{Name: "migrate-db", Objectives: []string{"plan", "migrate"}}); err != nil {
		log.Fatal(err)
	}
	for _, a := range []string{"planner", "migrator"} {
		if _, err := c.JoinTask(ctx, day1.JoinRequest{Task: "migrate-db", Agent: a}); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := c.WriteFact(ctx, day1.Fact{Branch: "task/migrate-db/migrator", Text: "Table users needs a new index"}); err != nil {
		log.Fatal(err)
	}
	clk.Advance(20 * time.Minute)
	cp, err := c.Checkpoint(ctx, day1.CheckpointRequest{Task: "migrate-db", Agent: "migrator", Note: "index planned"})
	if err != nil {
		log.Fatal(err)
	}
	clk.Advance(20 * time.Minute)

	stalls, err := c.StalledTasks(ctx, day1.StallQuery{Idle: 30 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range stalls {
		fmt.Printf("stalled: %s/%s for %s\n", s.Task, s.Agent, s.Idle.Round(time.Minute))
	}

	// The migrator crashes and comes back in a new session.
	res, err := c.ResumeFromCheckpoint(ctx, day1.ResumeRequest{Task: "migrate-db", Agent: "migrator", Session: "s-2"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Checkpoint.ID == cp.ID, res.Checkpoint.Note, len(res.Checkpoint.Packet.Facts), "fact(s), owner unchanged:", res.Checkpoint.Packet.Task.Owner)
	// Output:
	// stalled: migrate-db/planner for 40m0s
	// true index planned 1 fact(s), owner unchanged: planner
}

// A policy-driven transfer happens only when its condition holds over what the agent
// reports.
func ExampleClient_TransferTask() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.CreateTask(ctx, day1.TaskSpec{Name: "long-refactor"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.JoinTask(ctx, day1.JoinRequest{Task: "long-refactor", Agent: "session-agent"}); err != nil {
		log.Fatal(err)
	}
	cond, err := day1.CompileCondition("context.tokens_used > 100000")
	if err != nil {
		log.Fatal(err)
	}
	req := day1.TransferRequest{
		Task: "long-refactor", FromAgent: "session-agent", ToAgent: "fresh-agent",
		Policy: day1.HandoffPolicy{Kind: day1.PolicyConditional, Trigger: &day1.Trigger{Kind: day1.TriggerCondition, Condition: cond}},
		Signal: day1.Signal{Context: map[string]any{"context": map[string]any{"tokens_used": 42000}}},
	}
	h, err := c.TransferTask(ctx, req)
	fmt.Println(h.Status, errors.Is(err, day1.ErrNotReady))

	req.Signal.Context["context"] = map[string]any{"tokens_used": 120000}
	h, err = c.TransferTask(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	var trail []day1.HandoffStatus
	for _, ch := range h.History {
		trail = append(trail, ch.To)
	}
	fmt.Println(trail)
	fmt.Println(h.Reason)

	_, err = day1.CompileCondition("context.tokens_used >> 3")
	fmt.Println(err)
	// Output:
	// failed true
	// [initiated validating transferring completed]
	// condition "context.tokens_used > 100000" is true
	// day1: condition syntax error at offset 21: unexpected '>'; expected an operand: a number, a string, true, false, null, an identifier or '('
}

// A packet that summarises: each key conversation carries a summary (the heuristic's
// here, the model's with Config.Model), and Consolidate turns the source agent's
// observations into candidate facts before the packet is frozen.
func ExampleClient_Handoff_consolidate() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	const task, inv = "fix-refresh", "agent-investigator"
	if _, err := c.CreateTask(ctx, day1.TaskSpec{Name: task, Objectives: []string{"Find the cause"}}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.JoinTask(ctx, day1.JoinRequest{Task: task, Agent: inv}); err != nil {
		log.Fatal(err)
	}
	branch := "task/" + task + "/" + inv
	if _, err := c.WriteObservation(ctx, day1.Observation{Branch: branch, TaskID: task, AgentID: inv, Type: day1.ObsDiscovery,
		Summary: "The refresh handler skips the token expiry check"}); err != nil {
		log.Fatal(err)
	}
	exampleDebugSession(ctx, c, branch)

	h, err := c.Handoff(ctx, day1.HandoffRequest{Task: task, FromAgent: inv, Type: day1.HandoffEscalation,
		Consolidate: true, IncludeUnverified: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range h.Packet.Facts {
		fmt.Println("candidate fact:", f.Text)
	}
	for _, cv := range h.Packet.Conversations {
		fmt.Println(cv.SummaryBy+":", cv.Summary)
	}
	// Output:
	// candidate fact: The refresh handler skips the token expiry check
	// heuristic: 9 messages; asked: Fix the token refresh bug.; tools: bash, edit; 2 decision points; last: Done: all auth tests pass.
}
