package day1_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// A task gets its own branch; agents join it on branches of their own, objectives
// change status with who and when, and agents leave with a summary.
func ExampleClient_CreateTask() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	t, err := c.CreateTask(ctx, day1.TaskSpec{
		Name: "fix-oauth-token-refresh", Type: "bug_fix",
		Objectives: []string{"Identify the root cause of the refresh failure", "Implement the fix", "Add regression tests"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.Branch, "forked from", t.Parent)

	m, err := c.JoinTask(ctx, day1.JoinRequest{Task: t.Name, Agent: "agent-investigator", Role: "investigator", Objectives: []int{1}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Agent, "works on", m.Branch)

	o, err := c.UpdateObjective(ctx, day1.ObjectiveUpdate{Task: t.Name, Objective: 1, Status: day1.ObjectiveDone,
		By: "agent-investigator", Note: "token_service.py:142 drops the refresh token"})
	if err != nil {
		log.Fatal(err)
	}
	ch := o.History[0]
	fmt.Printf("objective %d: %s -> %s by %s (%s)\n", o.ID, ch.From, ch.To, ch.By, ch.Note)

	if _, err := c.LeaveTask(ctx, day1.LeaveRequest{Task: t.Name, Agent: "agent-investigator", Summary: "found the cause"}); err != nil {
		log.Fatal(err)
	}
	t, err = c.GetTask(ctx, t.Name)
	if err != nil {
		log.Fatal(err)
	}
	done, total := t.Progress()
	fmt.Printf("%d of %d objectives done; %s %s: %q\n", done, total, t.Members[0].Agent, t.Members[0].Status, t.Members[0].Summary)

	_, err = c.CreateTask(ctx, day1.TaskSpec{Name: "fix/oauth"})
	var ve *day1.ValidationError
	fmt.Println(errors.As(err, &ve), ve.Field)
	// Output:
	// task/fix-oauth-token-refresh forked from main
	// agent-investigator works on task/fix-oauth-token-refresh/agent-investigator
	// objective 1: pending -> done by agent-investigator (token_service.py:142 drops the refresh token)
	// 1 of 3 objectives done; agent-investigator left: "found the cause"
	// true TaskSpec.Name
}

// Completing a task with a merge promotes only what is verified: verified facts and
// cherry-picked conversations reach the parent branch; the rest stays on the task
// branch.
func ExampleClient_CompleteTask() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	t, err := c.CreateTask(ctx, day1.TaskSpec{Name: "fix-auth", Objectives: []string{"fix the refresh bug"}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.JoinTask(ctx, day1.JoinRequest{Task: t.Name, Agent: "agent-a", Role: "implementer"}); err != nil {
		log.Fatal(err)
	}
	// The agent's debugging session is cherry-picked to the task branch.
	conv := exampleDebugSession(ctx, c, "task/fix-auth/agent-a")
	if _, err := c.CherryPickConversation(ctx, day1.ConversationPick{Source: "task/fix-auth/agent-a", Target: t.Branch, ConversationID: conv}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteFacts(ctx, []day1.Fact{
		{ID: "f-fix", Branch: t.Branch, Text: "The refresh handler must check the token expiry", Status: day1.FactVerified},
		{ID: "f-hunch", Branch: t.Branch, Text: "The clock of the CI runner may be skewed"},
	}); err != nil {
		log.Fatal(err)
	}

	res, err := c.CompleteTask(ctx, day1.CompleteRequest{Task: t.Name, By: "agent-a", ResultSummary: "expiry check added", Merge: true, Archive: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Task.Status, "-", res.Task.ResultSummary)
	fmt.Println("promoted:", len(res.Promoted), "records; kept on the task branch:", res.Kept)
	if _, err := c.GetFact(ctx, "main", "f-fix"); err == nil {
		fmt.Println("main has f-fix")
	}
	if _, err := c.GetFact(ctx, "main", "f-hunch"); errors.Is(err, day1.ErrNotFound) {
		fmt.Println("main lacks f-hunch")
	}
	msgs, err := c.Messages(ctx, "main", conv)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("main has the conversation with", len(msgs), "messages")
	b, _ := c.GetBranch(ctx, t.Branch)
	fmt.Println(b.Name, b.Status)
	// Output:
	// completed - expiry check added
	// promoted: 11 records; kept on the task branch: [fact/f-hunch]
	// main has f-fix
	// main lacks f-hunch
	// main has the conversation with 9 messages
	// task/fix-auth archived
}
