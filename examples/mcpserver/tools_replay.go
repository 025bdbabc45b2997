package main

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1"
)

type taskReplayIn struct {
	TaskID              string `json:"task_id" jsonschema:"the task's name"`
	VerifiedOnly        bool   `json:"verified_only,omitempty" jsonschema:"keep only verified facts and conversations among the record steps"`
	IncludeObservations bool   `json:"include_observations,omitempty" jsonschema:"put observations in the timeline too"`
}

type contributionView struct {
	Agent         string `json:"agent_id"`
	Role          string `json:"role,omitempty"`
	Branch        string `json:"branch,omitempty"`
	Summary       string `json:"summary"`
	Facts         int    `json:"facts"`
	FactsVerified int    `json:"facts_verified"`
	Observations  int    `json:"observations"`
	Errors        int    `json:"errors"`
	Conversations int    `json:"conversations"`
}

type outcomeView struct {
	Status            string  `json:"status"`
	ResultSummary     string  `json:"result_summary,omitempty"`
	MergeID           string  `json:"merge_id,omitempty"`
	MergedInto        string  `json:"merged_into,omitempty"`
	Facts             int     `json:"facts"`
	FactsVerified     int     `json:"facts_verified"`
	VerificationScore float64 `json:"verification_score"`
	DurationSeconds   float64 `json:"duration_seconds"`
}

type taskReplayOut struct {
	TaskID   string             `json:"task_id"`
	Timeline []eventView        `json:"timeline"`
	Agents   []contributionView `json:"agents"`
	KeyFacts []factView         `json:"key_facts" jsonschema:"the verified facts, oldest first"`
	// Decisions are the run's decision points.
	Decisions []decisionView `json:"decisions" jsonschema:"the decision points of the task's conversations, in order"`
	Outcome   outcomeView    `json:"outcome"`
}

// decisionView is a decision point of a replayed task.
type decisionView struct {
	ConversationID string   `json:"conversation_id"`
	MessageID      string   `json:"message_id"`
	Seq            int      `json:"seq"`
	Agent          string   `json:"agent,omitempty"`
	Content        string   `json:"content"`
	Reasons        []string `json:"reasons" jsonschema:"why the message is a decision point: intent, recovery, tool_success"`
}

type compareTasksIn struct {
	TaskIDA string `json:"task_id_a" jsonschema:"the first run's task"`
	TaskIDB string `json:"task_id_b" jsonschema:"the second run's task"`
}

type runView struct {
	TaskID            string   `json:"task_id"`
	Status            string   `json:"status"`
	DurationSeconds   float64  `json:"duration_seconds"`
	Facts             int      `json:"facts"`
	FactsVerified     int      `json:"facts_verified"`
	VerificationScore float64  `json:"verification_score"`
	Handoffs          int      `json:"handoffs"`
	Errors            []string `json:"errors"`
	Decisions         int      `json:"decisions"`
}

type compareTasksOut struct {
	A               runView  `json:"a"`
	B               runView  `json:"b"`
	SharedFacts     []string `json:"shared_facts" jsonschema:"facts both runs produced (as run A wrote them)"`
	OnlyA           []string `json:"only_a"`
	OnlyB           []string `json:"only_b"`
	SharedDecisions int      `json:"shared_decisions"`
	Method          string   `json:"method" jsonschema:"how texts were matched: embedding or text"`
	ScoreDelta      float64  `json:"score_delta" jsonschema:"B's mean verification score minus A's"`
	DurationDelta   float64  `json:"duration_delta_seconds" jsonschema:"B's duration minus A's"`
}

func (m *memServer) addReplayTools(s *mcp.Server) {
	addTool(s, "memory_task_replay",
		"Replay a task's run from memory: every step in order (joins, facts, conversations, verifications, handoffs, merges), each agent's contribution, the verified facts and the outcome.",
		m.taskReplay)
	addTool(s, "memory_compare_tasks",
		"Compare two runs of a task: facts and decisions both made or only one did, scores, durations, handoffs and errors.",
		m.compareTasks)
}

func (m *memServer) taskReplay(ctx context.Context, _ *mcp.ServerSession, in taskReplayIn) (taskReplayOut, string, error) {
	tr, err := m.c.TaskReplay(ctx, in.TaskID, day1.ReplayOptions{VerifiedOnly: in.VerifiedOnly, IncludeObservations: in.IncludeObservations})
	if err != nil {
		return taskReplayOut{}, "", err
	}
	out := viewReplay(tr)
	return out, fmt.Sprintf("task %s: %d steps by %d agents, %s", out.TaskID, len(out.Timeline), len(out.Agents), out.Outcome.Status), nil
}

func viewReplay(tr day1.TaskReplay) taskReplayOut {
	out := taskReplayOut{
		TaskID: tr.Task.Name, Timeline: make([]eventView, len(tr.Timeline)),
		Agents: make([]contributionView, len(tr.Agents)), KeyFacts: viewFacts(tr.KeyFacts),
		Outcome: outcomeView{
			Status: string(tr.Outcome.Status), ResultSummary: tr.Outcome.ResultSummary,
			MergeID: tr.Outcome.MergeID, MergedInto: tr.Outcome.MergedInto,
			Facts: tr.Outcome.Facts, FactsVerified: tr.Outcome.FactsVerified,
			VerificationScore: tr.Outcome.VerificationScore, DurationSeconds: tr.Outcome.Duration.Seconds(),
		},
	}
	out.Decisions = make([]decisionView, len(tr.Decisions))
	for i, d := range tr.Decisions {
		out.Decisions[i] = decisionView{ConversationID: d.Conversation, MessageID: d.MessageID, Seq: d.Seq, Agent: d.Agent, Content: d.Content, Reasons: d.Reasons}
	}
	for i, e := range tr.Timeline {
		out.Timeline[i] = eventView{At: e.At, Kind: string(e.Kind), ID: e.ID, Branch: e.Branch, Agent: e.Agent, Summary: e.Summary}
	}
	for i, a := range tr.Agents {
		out.Agents[i] = contributionView{
			Agent: a.Agent, Role: a.Role, Branch: a.Branch, Summary: a.Summary, Facts: len(a.Facts),
			FactsVerified: a.FactsVerified, Observations: a.Observations, Errors: a.Errors, Conversations: len(a.Conversations),
		}
	}
	return out
}

func (m *memServer) compareTasks(ctx context.Context, _ *mcp.ServerSession, in compareTasksIn) (compareTasksOut, string, error) {
	rc, err := m.c.CompareTaskRuns(ctx, in.TaskIDA, in.TaskIDB)
	if err != nil {
		return compareTasksOut{}, "", err
	}
	out := compareTasksOut{
		A: viewRun(rc.A), B: viewRun(rc.B), SharedFacts: []string{}, OnlyA: factTexts(rc.OnlyA), OnlyB: factTexts(rc.OnlyB),
		SharedDecisions: len(rc.SharedDecisions), Method: rc.Method, ScoreDelta: rc.ScoreDelta,
		DurationDelta: rc.DurationDelta.Seconds(),
	}
	for _, f := range rc.SharedFacts {
		out.SharedFacts = append(out.SharedFacts, f.A.Text)
	}
	return out, fmt.Sprintf("%d facts shared, %d only in %s, %d only in %s",
		len(out.SharedFacts), len(out.OnlyA), in.TaskIDA, len(out.OnlyB), in.TaskIDB), nil
}

func viewRun(r day1.RunSummary) runView {
	v := runView{
		TaskID: r.Task, Status: string(r.Status), DurationSeconds: r.Duration.Seconds(), Facts: r.Facts,
		FactsVerified: r.FactsVerified, VerificationScore: r.VerificationScore, Handoffs: len(r.Handoffs),
		Errors: []string{}, Decisions: len(r.Decisions),
	}
	for _, o := range r.Errors {
		v.Errors = append(v.Errors, o.Summary)
	}
	return v
}

func factTexts(fs []day1.Fact) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Text
	}
	return out
}
