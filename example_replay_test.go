package day1_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// exampleOAuthRun plays the three-agent bug fix of the design on task name: an
// investigator finds the cause and escalates to an expert, whose fix is verified and
// merged into the task; a tester joins; the task is completed, promoting its verified
// knowledge to main.
func exampleOAuthRun(ctx context.Context, c *day1.Client, name, fix string) {
	check := func(err error) {
		if err != nil {
			log.Fatal(err)
		}
	}
	t, err := c.CreateTask(ctx, day1.TaskSpec{Name: name, Type: "bug_fix",
		Objectives: []string{"Identify the root cause", "Implement the fix", "Add regression tests"}})
	check(err)
	inv, err := c.JoinTask(ctx, day1.JoinRequest{Task: name, Agent: "investigator", Role: "investigator", Objectives: []int{1}})
	check(err)
	conv, err := c.WriteConversation(ctx, day1.Conversation{Branch: inv.Branch, Title: "Investigate the refresh failure", TaskID: name, AgentID: "investigator"})
	check(err)
	for _, m := range []day1.Message{
		{Role: day1.RoleUser, Content: "Token refresh fails after one hour"},
		{Role: day1.RoleAssistant, Content: "I'll grep the token service for the refresh path"},
		{Role: day1.RoleToolCall, Tool: "grep", Content: "grep -n refresh token_service.py"},
		{Role: day1.RoleToolResult, Tool: "grep", Content: "142: def refresh(token):"},
	} {
		m.Branch, m.ConversationID, m.TaskID, m.AgentID = inv.Branch, conv.Record.ID, name, "investigator"
		_, err := c.AppendMessage(ctx, m)
		check(err)
	}
	_, err = c.WriteFact(ctx, day1.Fact{Branch: inv.Branch, Text: "token_service.py line 142 drops the refresh token when the refresh fails",
		Category: "bug_fix", Confidence: 0.9, TaskID: name, AgentID: "investigator"})
	check(err)
	h, err := c.Handoff(ctx, day1.HandoffRequest{Task: name, Type: day1.HandoffEscalation, FromAgent: "investigator", ToAgent: "expert",
		Instructions: "The fix needs the OAuth2 state machine"})
	check(err)
	acc, err := c.AcceptHandoff(ctx, day1.AcceptRequest{Handoff: h.ID, Agent: "expert", Role: "oauth-expert"})
	check(err)
	f, err := c.WriteFact(ctx, day1.Fact{Branch: acc.Branch, Text: fix, Category: "bug_fix", Confidence: 0.95, TaskID: name, AgentID: "expert"})
	check(err)
	_, err = c.VerifyFact(ctx, acc.Branch, f.Record.ID)
	check(err)
	_, err = c.Merge(ctx, day1.MergeRequest{Source: acc.Branch, Target: t.Branch, Strategy: day1.Native, MergedBy: "expert"})
	check(err)
	tester, err := c.JoinTask(ctx, day1.JoinRequest{Task: name, Agent: "tester", Role: "tester", Objectives: []int{3}})
	check(err)
	_, err = c.WriteFact(ctx, day1.Fact{Branch: tester.Branch, Text: "A regression test covers a refresh that fails once",
		Category: "testing", Confidence: 0.4, TaskID: name, AgentID: "tester"})
	check(err)
	_, err = c.CompleteTask(ctx, day1.CompleteRequest{Task: name, By: "expert", ResultSummary: "refresh retried with backoff", Merge: true})
	check(err)
}

// A task's run is replayed from memory: who did what in which order, each agent's
// contribution and the outcome. Every step carries the instant at which TimeTravel
// shows memory as that step left it.
func ExampleClient_TaskReplay() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	exampleOAuthRun(ctx, c, "fix-oauth", "Retry the refresh with exponential backoff before dropping the token")

	tr, err := c.TaskReplay(ctx, "fix-oauth", day1.ReplayOptions{ExcludeConversations: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, ev := range tr.Timeline {
		fmt.Println(ev.At.Format("15:04:05"), ev.Kind, ev.Agent, "|", ev.Summary)
	}
	for _, a := range tr.Agents {
		fmt.Println(a.Agent, "-", a.Summary)
	}
	o := tr.Outcome
	fmt.Printf("%s: %q; %d fact merged into %s; mean score %.2f\n", o.Status, o.ResultSummary, o.FactsMerged, o.MergedInto, o.VerificationScore)

	// Memory at the verification step: the fix is verified on the expert's branch.
	for _, ev := range tr.Timeline {
		if ev.Kind == day1.ReplayVerification {
			f, err := c.TimeTravel(day1.AtTime(ev.At)).GetFact(ctx, ev.Branch, ev.ID)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println("at", ev.At.Format("15:04:05"), "the fix is", f.Status)
		}
	}
	// Output:
	// 09:00:05 task.created  | task fix-oauth created
	// 09:00:09 agent.joined investigator | investigator joined as investigator
	// 09:00:15 fact investigator | token_service.py line 142 drops the refresh token when the refresh fails
	// 09:00:19 handoff.created investigator | escalation handoff id-9 offered by investigator to expert
	// 09:00:23 handoff.status expert | escalation handoff id-9: pending -> accepting by expert
	// 09:00:28 agent.joined expert | expert joined as oauth-expert
	// 09:00:28 handoff.status expert | escalation handoff id-9: accepting -> accepted by expert
	// 09:00:28 agent.left investigator | investigator left: handed over to expert (escalation handoff id-9)
	// 09:00:29 fact expert | Retry the refresh with exponential backoff before dropping the token
	// 09:00:32 verification expert | fact id-14 judged verified (0.72) by heuristic
	// 09:00:34 merge expert | merged 1 records of task/fix-oauth/expert into task/fix-oauth (native)
	// 09:00:38 agent.joined tester | tester joined as tester
	// 09:00:39 fact tester | A regression test covers a refresh that fails once
	// 09:00:41 merge expert | merged 1 records of task/fix-oauth into main (cherry_pick)
	// 09:00:44 task.completed expert | task completed: refresh retried with backoff
	// investigator - investigator: 1 fact (0 verified), 1 conversation, 0 observations, 1 handoff given; first: "token_service.py line 142 drops the refresh token when the refresh fails"; left saying "handed over to expert (escalation handoff id-9)"
	// expert - oauth-expert: 1 fact (1 verified), 0 conversations, 0 observations, 1 handoff received; first: "Retry the refresh with exponential backoff before dropping the token"
	// tester - tester: 1 fact (0 verified), 0 conversations, 0 observations; first: "A regression test covers a refresh that fails once"
	// completed: "refresh retried with backoff"; 1 fact merged into main; mean score 0.72
	// at 09:00:32 the fix is verified
}

// Two runs of the same task, the second with the fix in other words, compared: the
// agents side by side, and the facts both runs produced matched as near-duplicates by
// the embedder.
func ExampleClient_CompareTaskRuns() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	exampleOAuthRun(ctx, c, "oauth-run-1", "Retry the refresh call with exponential backoff before dropping the token")
	exampleOAuthRun(ctx, c, "oauth-run-2", "Retry the refresh call with exponential backoff before you drop the token")

	cmp, err := c.CompareTaskRuns(ctx, "oauth-run-1", "oauth-run-2")
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range cmp.Agents {
		fmt.Printf("%s: %d vs %d facts\n", p.Key, len(p.A.Facts), len(p.B.Facts))
	}
	fmt.Println(cmp.Method, "shared:", len(cmp.SharedFacts), "only in run 1:", len(cmp.OnlyA), "only in run 2:", len(cmp.OnlyB))
	for _, d := range cmp.SharedDecisions {
		fmt.Printf("both decided: %q\n", d.A.Content)
	}
	// Output:
	// investigator: 1 vs 1 facts
	// expert: 1 vs 1 facts
	// tester: 1 vs 1 facts
	// embedding shared: 3 only in run 1: 0 only in run 2: 0
	// both decided: "I'll grep the token service for the refresh path"
}

// A conversation is forked after its second message to be run again from there; the
// rerun takes another tool, and the diff says where the two part.
func ExampleClient_ForkConversation() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	conv := exampleDebugSession(ctx, c, "main")

	f, err := c.ForkConversation(ctx, day1.ForkRequest{Conversation: conv, AtSeq: 2, NewBranch: "rerun"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Branch.Name, "keeps", len(f.Kept), "messages; removed", len(f.Removed))

	if _, err := c.AppendMessage(ctx, day1.Message{Branch: "rerun", ConversationID: conv, Role: day1.RoleToolCall, Tool: "grep", Content: "grep -rn expiry auth/"}); err != nil {
		log.Fatal(err)
	}
	d, err := c.DiffConversations(ctx, day1.ConversationOn{ID: conv}, day1.ConversationOn{Branch: "rerun", ID: conv})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("diverge at message", d.DivergeAt+1, "after", d.Common, "in common")
	p := d.ToolDiffs[0]
	fmt.Printf("tool: %s %q vs %s %q\n", p.A.Tool, p.A.Content, p.B.Tool, p.B.Content)
	// Output:
	// rerun keeps 2 messages; removed 7
	// diverge at message 3 after 2 in common
	// tool: bash "go test ./auth" vs grep "grep -rn expiry auth/"
}

// A replay lists the decision points of the task's conversations, and reads the task
// at any point of the past with the same At as every other read.
func ExampleClient_TaskReplay_decisions() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	exampleOAuthRun(ctx, c, "fix-oauth", "Retry the refresh with exponential backoff before dropping the token")

	tr, err := c.TaskReplay(ctx, "fix-oauth", day1.ReplayOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range tr.Decisions {
		fmt.Printf("%s, message %d: %s %v\n", d.Agent, d.Seq, d.Content, d.Reasons)
	}
	// The task as it stood when the investigator wrote its first fact.
	var first day1.ReplayEvent
	for _, ev := range tr.Timeline {
		if ev.Kind == day1.ReplayFact {
			first = ev
			break
		}
	}
	then, err := c.TaskReplay(ctx, "fix-oauth", day1.ReplayOptions{AsOf: day1.AtTime(first.At)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(then.Agents), "agent then;", then.Task.Status)
	// Output:
	// investigator, message 2: I'll grep the token service for the refresh path [intent before a successful tool call]
	// 1 agent then; active
}
