package day1_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1"
)

// The design's end-to-end scenario, steps 1 to 9: three agents fix a bug on a task,
// hand over with a context packet, cherry-pick the right decisions, verify, complete
// the task into main, replay it, and share the result as a bundle that a second
// memory, on another store, imports. Without DAY1_TEST_DSN the second memory is a
// durable embedded store; with it, MatrixOne.
func TestSeedScenario(t *testing.T) {
	ctx := context.Background()
	c, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	check := func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	const task = "fix-oauth-token-refresh"

	// 1. The task, with three objectives, on its own branch.
	tk, err := c.CreateTask(ctx, day1.TaskSpec{Name: task, Type: "bug_fix", Objectives: []string{
		"Identify root cause of token refresh failure", "Implement fix", "Add regression tests"}})
	check("create the task", err)
	if tk.Branch != "task/"+task {
		t.Errorf("task branch %q", tk.Branch)
	}

	// 2. The investigator joins on objective 1 and investigates.
	inv, err := c.JoinTask(ctx, day1.JoinRequest{Task: task, Agent: "agent-investigator", Role: "investigator", Objectives: []int{1}})
	check("join the investigator", err)
	if inv.Branch != tk.Branch+"/agent-investigator" {
		t.Errorf("investigator's branch %q", inv.Branch)
	}
	_, err = c.WriteFact(ctx, day1.Fact{Branch: inv.Branch, TaskID: task, AgentID: "agent-investigator", Category: "bug_fix", Confidence: 0.9,
		Text: "token_service.py line 142 drops the refresh token when the OAuth2 refresh call fails"})
	check("write the finding", err)
	_, err = c.WriteObservation(ctx, day1.Observation{Branch: inv.Branch, TaskID: task, AgentID: "agent-investigator", Type: day1.ObsError,
		Tool: "pytest", Summary: "test_refresh fails: refresh token is None after a 503 from the provider"})
	check("write an observation", err)
	invConv := conversation(t, c, inv.Branch, task, "agent-investigator", "Investigating the refresh failure", []day1.Message{
		{Role: day1.RoleUser, Content: "Users are logged out when the OAuth2 refresh fails"},
		{Role: day1.RoleToolCall, Tool: "grep", Content: "grep -n refresh_token token_service.py"},
		{Role: day1.RoleToolResult, Tool: "grep", Content: "142: self.refresh_token = None"},
		{Role: day1.RoleAssistant, Content: "The token is cleared before the retry; the state machine after a failed refresh is unclear"},
	})

	// 3. Stuck: an escalation handoff with instructions and a blocker.
	h, err := c.Handoff(ctx, day1.HandoffRequest{Task: task, Type: day1.HandoffEscalation, FromAgent: "agent-investigator", ToAgent: "agent-oauth-expert",
		Instructions:       "Found the issue in token_service.py:142 but the fix requires understanding the OAuth2 state machine",
		Blockers:           []string{"Unclear OAuth2 state transition after refresh failure"},
		PriorityObjectives: []int{1, 2}, IncludeUnverified: true})
	check("offer the handoff", err)

	// 4. The expert accepts and receives the frozen context.
	acc, err := c.AcceptHandoff(ctx, day1.AcceptRequest{Handoff: h.ID, Agent: "agent-oauth-expert", Role: "oauth-expert"})
	check("accept the handoff", err)
	p := acc.Packet
	if acc.Branch != tk.Branch+"/agent-oauth-expert" || !slices.Contains(p.Blockers, "Unclear OAuth2 state transition after refresh failure") ||
		!slices.Equal(p.PriorityObjectives, []int{1, 2}) || !strings.Contains(p.Instructions, "token_service.py:142") {
		t.Errorf("acceptance: branch %q, packet blockers %q, priorities %v, instructions %q", acc.Branch, p.Blockers, p.PriorityObjectives, p.Instructions)
	}
	if !slices.ContainsFunc(p.Facts, func(f day1.Fact) bool { return strings.Contains(f.Text, "line 142") }) {
		t.Errorf("the packet lacks the investigator's finding: %v", p.Facts)
	}
	if !slices.ContainsFunc(p.Conversations, func(cc day1.ConversationContext) bool { return cc.ID == invConv }) {
		t.Errorf("the packet lacks the investigator's conversation")
	}

	// 5. The expert fixes; the tester joins and tests.
	fix, err := c.WriteFact(ctx, day1.Fact{Branch: acc.Branch, TaskID: task, AgentID: "agent-oauth-expert", Category: "bug_fix", Confidence: 0.95,
		Text: "Retry the OAuth2 refresh with exponential backoff and keep the old refresh token until a new one arrives"})
	check("write the fix", err)
	wrong, err := c.WriteFact(ctx, day1.Fact{Branch: acc.Branch, TaskID: task, AgentID: "agent-oauth-expert", Confidence: 0.1, Text: "maybe redis"})
	check("write a weak guess", err)
	expConv := conversation(t, c, acc.Branch, task, "agent-oauth-expert", "Fixing the refresh", []day1.Message{
		{Role: day1.RoleUser, Content: "How should a failed refresh be handled?"},
		{Role: day1.RoleAssistant, Content: "First I will read the state machine in oauth/state.py"},
		{Role: day1.RoleToolCall, Tool: "read", Content: "oauth/state.py"},
		{Role: day1.RoleToolResult, Tool: "read", Content: "REFRESHING -> FAILED clears tokens"},
		{Role: day1.RoleAssistant, Content: "Decision: keep the old refresh token and retry with exponential backoff instead of clearing it"},
		{Role: day1.RoleAssistant, Content: "Implemented the retry in token_service.py and the tests pass"},
	})
	tester, err := c.JoinTask(ctx, day1.JoinRequest{Task: task, Agent: "agent-tester", Role: "tester", Objectives: []int{3}})
	check("join the tester", err)
	_, err = c.WriteFact(ctx, day1.Fact{Branch: tester.Branch, TaskID: task, AgentID: "agent-tester", Category: "bug_fix", Confidence: 0.9,
		Text: "test_refresh_retry covers a provider 503 during refresh and passes with the backoff fix"})
	check("write the test fact", err)

	// 6. The right parts of the expert's conversation go to the task branch.
	_, err = c.CherryPickMessages(ctx, day1.MessagePick{Source: acc.Branch, Target: tk.Branch, ConversationID: expConv, FromSeq: 2, ToSeq: 6, Verify: true})
	check("cherry-pick a range", err)
	_, err = c.CherryPickDecisions(ctx, day1.DecisionPick{Source: acc.Branch, Target: tk.Branch, ConversationID: expConv})
	check("cherry-pick the decisions", err)

	// 7. The agents' work reaches the task branch, is verified, and completion merges
	// only the verified knowledge into main.
	for _, b := range []string{acc.Branch, tester.Branch} {
		_, err := c.Merge(ctx, day1.MergeRequest{Source: b, Target: tk.Branch})
		check("merge "+b, err)
	}
	verdicts, err := c.VerifyBranch(ctx, day1.VerifyBranchRequest{Branch: tk.Branch})
	check("verify the task branch", err)
	if verdicts.Verified == 0 || verdicts.Invalidated == 0 {
		t.Errorf("verification: %+v; want verified and invalidated facts", verdicts)
	}
	done, err := c.CompleteTask(ctx, day1.CompleteRequest{Task: task, By: "agent-oauth-expert", Merge: true,
		ResultSummary: "Fixed OAuth2 token refresh by adding retry logic with exponential backoff"})
	check("complete the task", err)
	if done.Merge == nil {
		t.Fatal("the completion merged nothing")
	}
	if _, err := c.GetFact(ctx, "main", fix.Record.ID); err != nil {
		t.Errorf("the verified fix is not on main: %v", err)
	}
	if _, err := c.GetFact(ctx, "main", wrong.Record.ID); err == nil {
		t.Error("the invalidated guess reached main")
	}

	// The whole run, replayed.
	tr, err := c.TaskReplay(ctx, task, day1.ReplayOptions{})
	check("replay the task", err)
	kinds := map[day1.ReplayEventKind]int{}
	for _, ev := range tr.Timeline {
		kinds[ev.Kind]++
	}
	for _, k := range []day1.ReplayEventKind{day1.ReplayTaskCreated, day1.ReplayAgentJoined, day1.ReplayFact, day1.ReplayHandoffCreated,
		day1.ReplayVerification, day1.ReplayMerge, day1.ReplayTaskCompleted} {
		if kinds[k] == 0 {
			t.Errorf("the replay has no %s event: %v", k, kinds)
		}
	}
	if tr.Outcome.Status != day1.TaskCompleted || tr.Outcome.MergedInto != "main" || len(tr.Agents) != 3 {
		t.Errorf("replay outcome %+v with %d agents", tr.Outcome, len(tr.Agents))
	}

	// 8. The task's verified knowledge as a bundle shared with the team.
	b, err := c.CreateBundle(ctx, day1.CreateBundleRequest{Name: "OAuth2 Token Refresh Fix Playbook", Task: task, Visibility: day1.BundleTeam})
	check("create the bundle", err)
	if b.Counts.Facts == 0 || b.Counts.Conversations == 0 || b.ShareToken == "" {
		t.Errorf("bundle %+v", b)
	}
	shared, err := c.SharedBundle(ctx, b.ShareToken)
	check("resolve the token", err)
	var file bytes.Buffer
	_, err = c.ExportBundle(ctx, shared.ID, &file, day1.ExportBundleOptions{Compress: true})
	check("export the bundle", err)

	// 9. A future agent's memory, on another store, imports it into main.
	other := secondMemory(t)
	defer other.Close()
	res, err := other.ImportBundle(ctx, day1.ImportBundleRequest{From: &file})
	check("import the bundle", err)
	if res.Created != b.Counts.Total() {
		t.Errorf("import %+v; want %d created", res, b.Counts.Total())
	}
	hits, err := other.Search(ctx, day1.SearchQuery{Text: "OAuth2 refresh backoff", Mode: day1.Keyword, Limit: 3})
	check("search the imported knowledge", err)
	if len(hits) == 0 || hits[0].Record.RecordID() != fix.Record.ID {
		t.Errorf("the next agent's search finds %v; want the fix first", hits)
	}
	if _, err := other.GetFact(ctx, "main", wrong.Record.ID); err == nil {
		t.Error("the invalidated guess travelled in the bundle")
	}
}

// conversation writes a conversation and its messages and returns its id.
func conversation(t *testing.T, c *day1.Client, branch, task, agent, title string, msgs []day1.Message) string {
	t.Helper()
	ctx := context.Background()
	w, err := c.WriteConversation(ctx, day1.Conversation{Branch: branch, TaskID: task, AgentID: agent, Title: title})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		m.Branch, m.ConversationID, m.TaskID, m.AgentID = branch, w.Record.ID, task, agent
		if _, err := c.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	return w.Record.ID
}

// secondMemory opens another memory: MatrixOne when DAY1_TEST_DSN is set (in a
// database of its own), a durable embedded store otherwise.
func secondMemory(t *testing.T) *day1.Client {
	t.Helper()
	cfg := day1.Config{Path: t.TempDir()}
	if dsn := os.Getenv("DAY1_TEST_DSN"); dsn != "" {
		mc, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		mc.DBName = fmt.Sprintf("day1_scenario_%d", time.Now().UnixNano())
		t.Cleanup(func() { dropDatabases(t, dsn, mc.DBName) })
		cfg = day1.Config{DSN: mc.FormatDSN()}
	}
	c, err := day1.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
