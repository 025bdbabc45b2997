// Command scenario plays the design's end-to-end story in nine steps: three agents fix a
// bug on a task (an investigator, an OAuth2 expert it hands over to, a tester),
// cherry-pick the right decisions, verify their knowledge, complete the task into main,
// replay the run, and share the result as a bundle that a second memory imports.
//
// It runs offline by default: the embedded store in memory, the local embedder, and a
// scripted judge. With DAY1_MODEL (and OPENAI_BASE_URL, OPENAI_API_KEY) set, a real
// OpenAI-compatible model judges instead; DAY1_EMBED_MODEL picks its embedder. The
// second memory is a durable embedded store in a temporary folder, or MatrixOne with
// -import-dsn.
//
//	go run ./examples/scenario
//	go run ./examples/scenario -import-dsn 'root:111@tcp(127.0.0.1:6001)/day1_scenario'
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/localmem"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/llmfake"
)

func main() {
	importDSN := flag.String("import-dsn", "", "MatrixOne DSN of the memory that imports the bundle (default: a durable embedded store in a temporary folder)")
	flag.Parse()
	if _, err := run(context.Background(), os.Stdout, options{importDSN: *importDSN}); err != nil {
		fmt.Fprintln(os.Stderr, "scenario:", err)
		os.Exit(1)
	}
}

const task = "fix-oauth-token-refresh"

type options struct {
	importDSN  string // MatrixOne for the second memory; empty: a durable embedded store
	importPath string // the second memory's folder; empty: a temporary one
}

// result is what the scenario did, for its test.
type result struct {
	taskBranch, investigatorBranch, expertBranch string
	packetFacts, packetConversations             int
	packetBlockers                               []string
	verified, invalidated                        int
	fixOnMain, guessOnMain                       bool
	replayKinds                                  map[day1.ReplayEventKind]int
	replayAgents                                 int
	outcome                                      day1.TaskOutcome
	bundle                                       day1.Bundle
	imported                                     day1.ImportBundleResult
	found                                        string // the text the second memory's search found first
	fixID, guessID                               string
	guessImported                                bool
}

// run plays the nine steps on a memory of its own and writes what happens to w.
func run(ctx context.Context, w io.Writer, o options) (result, error) {
	var res result
	cfg, _, err := localmem.Config(localmem.Options{InMemory: true})
	if err != nil {
		return res, err
	}
	if cfg.Model == nil {
		cfg.Model = judge()
	}
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer c.Close()
	say := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }

	// 1. The task, with its objectives, on a branch of its own.
	tk, err := c.CreateTask(ctx, day1.TaskSpec{Name: task, Type: "bug_fix", Objectives: []string{
		"Identify root cause of token refresh failure", "Implement fix", "Add regression tests"}})
	if err != nil {
		return res, err
	}
	res.taskBranch = tk.Branch
	say("1. task %s on %s with %d objectives", tk.Name, tk.Branch, len(tk.Objectives))

	// 2. The investigator joins on objective 1, investigates and records what it finds.
	inv, err := c.JoinTask(ctx, day1.JoinRequest{Task: task, Agent: "agent-investigator", Role: "investigator", Objectives: []int{1}})
	if err != nil {
		return res, err
	}
	res.investigatorBranch = inv.Branch
	if _, err := c.WriteFact(ctx, day1.Fact{Branch: inv.Branch, TaskID: task, AgentID: "agent-investigator", Category: "bug_fix", Confidence: 0.9,
		Text: "token_service.py line 142 drops the refresh token when the OAuth2 refresh call fails"}); err != nil {
		return res, err
	}
	if _, err := c.WriteObservation(ctx, day1.Observation{Branch: inv.Branch, TaskID: task, AgentID: "agent-investigator", Type: day1.ObsError,
		Tool: "pytest", Summary: "test_refresh fails: refresh token is None after a 503 from the provider"}); err != nil {
		return res, err
	}
	if _, err := conversation(ctx, c, inv.Branch, "agent-investigator", "Investigating the refresh failure", []day1.Message{
		{Role: day1.RoleUser, Content: "Users are logged out when the OAuth2 refresh fails"},
		{Role: day1.RoleToolCall, Tool: "grep", Content: "grep -n refresh_token token_service.py"},
		{Role: day1.RoleToolResult, Tool: "grep", Content: "142: self.refresh_token = None"},
		{Role: day1.RoleAssistant, Content: "The token is cleared before the retry; the state machine after a failed refresh is unclear"},
	}); err != nil {
		return res, err
	}
	say("2. agent-investigator joined on %s: a finding, an error observation, a conversation", inv.Branch)

	// 3. Stuck, it escalates with instructions and a blocker.
	h, err := c.Handoff(ctx, day1.HandoffRequest{Task: task, Type: day1.HandoffEscalation, FromAgent: "agent-investigator", ToAgent: "agent-oauth-expert",
		Instructions:       "Found the issue in token_service.py:142 but the fix requires understanding the OAuth2 state machine",
		Blockers:           []string{"Unclear OAuth2 state transition after refresh failure"},
		PriorityObjectives: []int{1, 2}, IncludeUnverified: true})
	if err != nil {
		return res, err
	}
	say("3. escalation handoff %s offered to agent-oauth-expert", h.ID)

	// 4. The expert accepts and receives the frozen context packet.
	acc, err := c.AcceptHandoff(ctx, day1.AcceptRequest{Handoff: h.ID, Agent: "agent-oauth-expert", Role: "oauth-expert"})
	if err != nil {
		return res, err
	}
	res.expertBranch = acc.Branch
	res.packetFacts, res.packetConversations, res.packetBlockers = len(acc.Packet.Facts), len(acc.Packet.Conversations), acc.Packet.Blockers
	say("4. agent-oauth-expert accepted on %s: %d facts, %d conversations, blockers %q", acc.Branch,
		res.packetFacts, res.packetConversations, acc.Packet.Blockers)

	// 5. The expert fixes (and records a weak guess too); the tester joins and tests.
	fix, err := c.WriteFact(ctx, day1.Fact{Branch: acc.Branch, TaskID: task, AgentID: "agent-oauth-expert", Category: "bug_fix", Confidence: 0.95,
		Text: "Retry the OAuth2 refresh with exponential backoff and keep the old refresh token until a new one arrives"})
	if err != nil {
		return res, err
	}
	guess, err := c.WriteFact(ctx, day1.Fact{Branch: acc.Branch, TaskID: task, AgentID: "agent-oauth-expert", Confidence: 0.1, Text: "maybe redis"})
	if err != nil {
		return res, err
	}
	res.fixID, res.guessID = fix.Record.ID, guess.Record.ID
	expConv, err := conversation(ctx, c, acc.Branch, "agent-oauth-expert", "Fixing the refresh", []day1.Message{
		{Role: day1.RoleUser, Content: "How should a failed refresh be handled?"},
		{Role: day1.RoleAssistant, Content: "First I will read the state machine in oauth/state.py"},
		{Role: day1.RoleToolCall, Tool: "read", Content: "oauth/state.py"},
		{Role: day1.RoleToolResult, Tool: "read", Content: "REFRESHING -> FAILED clears tokens"},
		{Role: day1.RoleAssistant, Content: "Decision: keep the old refresh token and retry with exponential backoff instead of clearing it"},
		{Role: day1.RoleAssistant, Content: "Implemented the retry in token_service.py and the tests pass"},
	})
	if err != nil {
		return res, err
	}
	tester, err := c.JoinTask(ctx, day1.JoinRequest{Task: task, Agent: "agent-tester", Role: "tester", Objectives: []int{3}})
	if err != nil {
		return res, err
	}
	if _, err := c.WriteFact(ctx, day1.Fact{Branch: tester.Branch, TaskID: task, AgentID: "agent-tester", Category: "bug_fix", Confidence: 0.9,
		Text: "test_refresh_retry covers a provider 503 during refresh and passes with the backoff fix"}); err != nil {
		return res, err
	}
	say("5. the expert wrote the fix and a weak guess; agent-tester joined on %s and wrote a test", tester.Branch)

	// 6. The right part of the expert's conversation, and its decisions, go to the task.
	picked, err := c.CherryPickMessages(ctx, day1.MessagePick{Source: acc.Branch, Target: tk.Branch, ConversationID: expConv, FromSeq: 2, ToSeq: 6, Verify: true})
	if err != nil {
		return res, err
	}
	decisions, err := c.CherryPickDecisions(ctx, day1.DecisionPick{Source: acc.Branch, Target: tk.Branch, ConversationID: expConv})
	if err != nil {
		return res, err
	}
	say("6. cherry-picked %d messages and %d decision(s) of the expert's conversation to %s", len(picked.Messages), len(decisions.Messages), tk.Branch)

	// 7. The agents' work reaches the task branch, is verified, and completion promotes
	// only the verified knowledge to main.
	for _, b := range []string{acc.Branch, tester.Branch} {
		if _, err := c.Merge(ctx, day1.MergeRequest{Source: b, Target: tk.Branch}); err != nil {
			return res, err
		}
	}
	v, err := c.VerifyBranch(ctx, day1.VerifyBranchRequest{Branch: tk.Branch})
	if err != nil {
		return res, err
	}
	res.verified, res.invalidated = v.Verified, v.Invalidated
	done, err := c.CompleteTask(ctx, day1.CompleteRequest{Task: task, By: "agent-oauth-expert", Merge: true,
		ResultSummary: "Fixed OAuth2 token refresh by adding retry logic with exponential backoff"})
	if err != nil {
		return res, err
	}
	_, err = c.GetFact(ctx, day1.DefaultBranch, fix.Record.ID)
	res.fixOnMain = err == nil
	_, err = c.GetFact(ctx, day1.DefaultBranch, guess.Record.ID)
	res.guessOnMain = err == nil
	say("7. verified %d, invalidated %d; completion promoted %d records to main (the fix: %v, the guess: %v)",
		v.Verified, v.Invalidated, len(done.Promoted), res.fixOnMain, res.guessOnMain)

	// The run, replayed.
	tr, err := c.TaskReplay(ctx, task, day1.ReplayOptions{})
	if err != nil {
		return res, err
	}
	res.replayKinds, res.replayAgents, res.outcome = map[day1.ReplayEventKind]int{}, len(tr.Agents), tr.Outcome
	for _, ev := range tr.Timeline {
		res.replayKinds[ev.Kind]++
	}
	say("   replay: %d events by %d agents; outcome %s, %d fact(s) merged into %s", len(tr.Timeline), len(tr.Agents),
		tr.Outcome.Status, tr.Outcome.FactsMerged, tr.Outcome.MergedInto)

	// 8. The task's verified knowledge as a bundle, shared with the team by token.
	b, err := c.CreateBundle(ctx, day1.CreateBundleRequest{Name: "OAuth2 Token Refresh Fix Playbook", Task: task, Visibility: day1.BundleTeam})
	if err != nil {
		return res, err
	}
	res.bundle = b
	say("8. bundle %q: %d facts, %d conversations, %d messages; shared with a token", b.Name, b.Counts.Facts, b.Counts.Conversations, b.Counts.Messages)

	// 9. A future agent's memory resolves the token, takes the file and imports it.
	shared, err := c.SharedBundle(ctx, b.ShareToken)
	if err != nil {
		return res, err
	}
	var file bytes.Buffer
	if _, err := c.ExportBundle(ctx, shared.ID, &file, day1.ExportBundleOptions{Compress: true}); err != nil {
		return res, err
	}
	other, cleanup, err := secondMemory(ctx, o)
	if err != nil {
		return res, err
	}
	defer cleanup()
	defer other.Close()
	if res.imported, err = other.ImportBundle(ctx, day1.ImportBundleRequest{From: &file}); err != nil {
		return res, err
	}
	hits, err := other.Search(ctx, day1.SearchQuery{Text: "OAuth2 refresh backoff", Kinds: []day1.Kind{day1.KindFact}, Limit: 3})
	if err != nil {
		return res, err
	}
	if len(hits) > 0 {
		if f, ok := hits[0].Fact(); ok {
			res.found = f.Text
		}
	}
	_, err = other.GetFact(ctx, day1.DefaultBranch, guess.Record.ID)
	res.guessImported = err == nil
	say("9. imported %d records (seal %s...); the next agent's search finds: %s", res.imported.Created, res.imported.Hash[:12], res.found)
	return res, nil
}

// conversation writes a conversation and its messages and returns its id.
func conversation(ctx context.Context, c *day1.Client, branch, agent, title string, msgs []day1.Message) (string, error) {
	w, err := c.WriteConversation(ctx, day1.Conversation{Branch: branch, TaskID: task, AgentID: agent, Title: title})
	if err != nil {
		return "", err
	}
	for _, m := range msgs {
		m.Branch, m.ConversationID, m.TaskID, m.AgentID = branch, w.Record.ID, task, agent
		if _, err := c.AppendMessage(ctx, m); err != nil {
			return "", err
		}
	}
	return w.Record.ID, nil
}

// secondMemory opens the memory that imports the bundle.
func secondMemory(ctx context.Context, o options) (*day1.Client, func(), error) {
	if o.importDSN != "" {
		c, err := day1.Open(ctx, day1.Config{DSN: o.importDSN})
		return c, func() {}, err
	}
	dir, cleanup := o.importPath, func() {}
	if dir == "" {
		d, err := os.MkdirTemp("", "day1-scenario-")
		if err != nil {
			return nil, nil, err
		}
		dir, cleanup = d, func() { os.RemoveAll(d) }
	}
	c, err := day1.Open(ctx, day1.Config{Path: dir})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return c, cleanup, nil
}

// judge is the scripted model of an offline run: it scores facts that hedge ("maybe",
// "might") low and others high, scores conversations high, and names the messages
// that state a decision as the decision points.
func judge() llm.Model {
	m := llmfake.NewModel()
	m.OnFunc(`Judge ONE fact`, func(req llm.Request) (string, error) {
		if m := factLine.FindStringSubmatch(prompt(req)); m != nil && hedge.MatchString(m[1]) {
			return `{"accuracy": 0.2, "relevance": 0.2, "specificity": 0.1, "explanation": "a guess, not a finding"}`, nil
		}
		return `{"accuracy": 0.9, "relevance": 0.9, "specificity": 0.8, "explanation": "a concrete, supported finding"}`, nil
	})
	m.On(`Judge ONE conversation`, `{"tools": 0.9, "reasoning": 0.9, "outcome": 0.9, "errors": 0.9, "explanation": "a sound investigation that reached a fix", "key_decisions": []}`)
	m.OnFunc(`Name the messages that carry the key decisions`, func(req llm.Request) (string, error) {
		var ds []string
		for _, line := range strings.Split(prompt(req), "\n") {
			if mm := decisionLine.FindStringSubmatch(line); mm != nil {
				ds = append(ds, fmt.Sprintf(`{"seq": %s, "reason": "states the decision"}`, mm[1]))
			}
		}
		return `{"decisions": [` + strings.Join(ds, ", ") + `]}`, nil
	})
	return m
}

var (
	factLine     = regexp.MustCompile(`Fact to verify: (.*)`)
	hedge        = regexp.MustCompile(`(?i)\b(maybe|might)\b`)
	decisionLine = regexp.MustCompile(`^\[?(\d+)\]?.*Decision:`)
)

func prompt(req llm.Request) string {
	parts := []string{req.System}
	for _, m := range req.Messages {
		parts = append(parts, m.Content)
	}
	return strings.Join(parts, "\n")
}
