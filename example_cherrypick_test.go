package day1_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/llm/llmfake"
)

// exampleDebugSession writes a conversation on branch: a failed test, a recovery, a
// fix that works. It returns the conversation's id.
func exampleDebugSession(ctx context.Context, c *day1.Client, branch string) string {
	conv, err := c.WriteConversation(ctx, day1.Conversation{Branch: branch, Title: "fix the refresh bug", AgentID: "agent-a"})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range []day1.Message{
		{Role: day1.RoleUser, Content: "Fix the token refresh bug."},
		{Role: day1.RoleAssistant, Content: "Let me run the auth tests first."},
		{Role: day1.RoleToolCall, Tool: "bash", Content: "go test ./auth"},
		{Role: day1.RoleToolResult, Tool: "bash", Content: "FAILED: TestRefresh: token expired"},
		{Role: day1.RoleAssistant, Content: "The cause is that the refresh handler skips the expiry check. I will patch it."},
		{Role: day1.RoleToolCall, Tool: "edit", Content: "edit auth/refresh.go"},
		{Role: day1.RoleToolResult, Tool: "edit", Content: "ok"},
		{Role: day1.RoleAssistant, Content: "Done: all auth tests pass."},
		{Role: day1.RoleUser, Content: "Thanks!"},
	} {
		m.Branch, m.ConversationID = branch, conv.Record.ID
		if _, err := c.AppendMessage(ctx, m); err != nil {
			log.Fatal(err)
		}
	}
	return conv.Record.ID
}

// A range of messages, by sequence number, is picked into a new conversation on the
// task branch; the source messages remember where they went.
func ExampleClient_CherryPickMessages() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	const task, agent = "task/fix-auth", "task/fix-auth/agent-a"
	if _, err := c.Branch(ctx, task, day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Branch(ctx, agent, day1.BranchOptions{From: task}); err != nil {
		log.Fatal(err)
	}
	conv := exampleDebugSession(ctx, c, agent)

	res, err := c.CherryPickMessages(ctx, day1.MessagePick{
		Source: agent, Target: task, ConversationID: conv, FromSeq: 3, ToSeq: 8, Verify: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q on %s, %s (%.2f)\n", res.Conversation.Title, res.Conversation.Branch, res.Verdict.Status, res.Verdict.Score)
	for _, m := range res.Messages {
		fmt.Println(m.Seq, m.Role, m.Content)
	}
	src, err := c.GetMessage(ctx, agent, res.Picked[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("source message", src.Seq, "picked to", src.PickedTo)

	_, err = c.CherryPickMessages(ctx, day1.MessagePick{Source: agent, Target: task, ConversationID: conv, FromSeq: 8, ToSeq: 3})
	fmt.Println(err)
	// Output:
	// "fix the refresh bug (messages 3 to 8)" on task/fix-auth, verified (0.73)
	// 1 tool_call go test ./auth
	// 2 tool_result FAILED: TestRefresh: token expired
	// 3 assistant The cause is that the refresh handler skips the expiry check. I will patch it.
	// 4 tool_call edit auth/refresh.go
	// 5 tool_result ok
	// 6 assistant Done: all auth tests pass.
	// source message 3 picked to [task/fix-auth]
	// day1: invalid MessagePick.ToSeq "3": must be at least FromSeq (8); the range is inverted
}

// A whole conversation moves to another branch under the same ids, so a later merge of
// the two branches has nothing to reconcile.
func ExampleClient_CherryPickConversation() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Branch(ctx, "agent", day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	conv := exampleDebugSession(ctx, c, "agent")
	res, err := c.CherryPickConversation(ctx, day1.ConversationPick{Source: "agent", Target: "main", ConversationID: conv})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Conversation.ID == conv, len(res.Messages), "messages on", res.Conversation.Branch)
	d, err := c.Diff(ctx, "agent", "main")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("changes left to merge:", len(d.SourceChanges))
	// Output:
	// true 9 messages on main
	// changes left to merge: 0
}

// Decision points are found by heuristics without a model: intent ("I will"),
// recovery after a failed tool call, the step before a tool call that worked.
func ExampleClient_CherryPickDecisions() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Branch(ctx, "agent", day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	conv := exampleDebugSession(ctx, c, "agent")
	res, err := c.CherryPickDecisions(ctx, day1.DecisionPick{Source: "agent", Target: "main", ConversationID: conv})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q by %s\n", res.Conversation.Title, res.By)
	for _, d := range res.Decisions {
		fmt.Println(d.Seq, d.Reasons)
	}
	// Output:
	// "fix the refresh bug (decisions)" by heuristic
	// 2 [intent]
	// 5 [intent recovery after a tool error before a successful tool call]
}

// With a model, a conversation becomes facts that land verified on the target.
func ExampleClient_CherryPickFacts() {
	ctx := context.Background()
	cfg := exampleConfig()
	cfg.Model = llmfake.NewModel().On(`extract durable knowledge`, `{"facts": [
		{"text": "The token refresh handler must check the expiry before issuing tokens", "category": "bug_fix", "confidence": 0.9},
		{"text": "Auth tests run with go test ./auth", "category": "tooling", "confidence": 0.8}
	]}`)
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Branch(ctx, "agent", day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	conv := exampleDebugSession(ctx, c, "agent")
	res, err := c.CherryPickFacts(ctx, day1.FactPick{Source: "agent", Target: "main", ConversationID: conv})
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range res.Facts {
		fmt.Println(w.Outcome, w.Fact.Status, w.Fact.Verify.Score, w.Fact.Text)
	}
	// Output:
	// created verified 0.9 The token refresh handler must check the expiry before issuing tokens
	// created verified 0.8 Auth tests run with go test ./auth
}

// Consolidation turns a session's observations into candidate facts; repeats of a
// known fact are deduplicated.
func ExampleClient_Consolidate() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.WriteFact(ctx, day1.Fact{Text: "Tokens expire after 15 minutes"}); err != nil {
		log.Fatal(err)
	}
	for _, o := range []day1.Observation{
		{Type: day1.ObsToolUse, Tool: "bash", Summary: "ran go test ./auth"},
		{Type: day1.ObsDiscovery, Summary: "The refresh handler skips the expiry check"},
		{Type: day1.ObsInsight, Summary: "tokens expire after 15 minutes"},
	} {
		o.SessionID = "s1"
		if _, err := c.WriteObservation(ctx, o); err != nil {
			log.Fatal(err)
		}
	}
	res, err := c.Consolidate(ctx, day1.ConsolidateRequest{SessionID: "s1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Observations, "observations by", res.By)
	for _, w := range res.Facts {
		fmt.Println(w.Outcome, w.Fact.Text)
	}
	// Output:
	// 3 observations by heuristic
	// created The refresh handler skips the expiry check
	// deduplicated Tokens expire after 15 minutes
}

// A tool sequence is picked as one unit: the assistant message that introduces it,
// the tool calls and their results. The source messages record each pick: the branch,
// the conversation that received them and when.
func ExampleClient_CherryPickToolSequences() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Branch(ctx, "agent", day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	conv := exampleDebugSession(ctx, c, "agent")
	res, err := c.CherryPickToolSequences(ctx, day1.ToolSequencePick{Source: "agent", Target: "main", ConversationID: conv, Tool: "edit"})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range res.Sequences {
		fmt.Println("sequence", s.FromSeq, "to", s.ToSeq, s.Tools)
	}
	for _, m := range res.Messages {
		fmt.Println(m.Seq, m.Role, m.Content)
	}
	msgs, err := c.Messages(ctx, "agent", conv)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		for _, p := range m.Picks {
			fmt.Println("message", m.Seq, "picked to", p.Branch, p.ConversationID == res.Conversation.ID, !p.At.IsZero())
		}
	}
	// Output:
	// sequence 5 to 7 [edit]
	// 1 assistant The cause is that the refresh handler skips the expiry check. I will patch it.
	// 2 tool_call edit auth/refresh.go
	// 3 tool_result ok
	// message 5 picked to main true true
	// message 6 picked to main true true
	// message 7 picked to main true true
}
