package agenttool

import (
	"context"
	"fmt"

	"github.com/day1ai/day1"
)

// TaskReplayIn is the input of memory_task_replay.
type TaskReplayIn struct {
	TaskID              string `json:"task_id" jsonschema:"the task's name"`
	VerifiedOnly        bool   `json:"verified_only,omitempty" jsonschema:"keep only verified facts and conversations among the record steps"`
	IncludeObservations bool   `json:"include_observations,omitempty" jsonschema:"put observations in the timeline too"`
}

// ContributionView is what one agent did in a replayed task.
type ContributionView struct {
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

// OutcomeView is how a replayed task ended.
type OutcomeView struct {
	Status            string  `json:"status"`
	ResultSummary     string  `json:"result_summary,omitempty"`
	MergeID           string  `json:"merge_id,omitempty"`
	MergedInto        string  `json:"merged_into,omitempty"`
	Facts             int     `json:"facts"`
	FactsVerified     int     `json:"facts_verified"`
	VerificationScore float64 `json:"verification_score"`
	DurationSeconds   float64 `json:"duration_seconds"`
}

// TaskReplayOut is the output of memory_task_replay.
type TaskReplayOut struct {
	TaskID   string             `json:"task_id"`
	Timeline []EventView        `json:"timeline"`
	Agents   []ContributionView `json:"agents"`
	KeyFacts []FactView         `json:"key_facts" jsonschema:"the verified facts, oldest first"`
	// Decisions are the run's decision points.
	Decisions []DecisionView `json:"decisions" jsonschema:"the decision points of the task's conversations, in order"`
	Outcome   OutcomeView    `json:"outcome"`
}

// DecisionView is a decision point of a replayed task.
type DecisionView struct {
	ConversationID string   `json:"conversation_id"`
	MessageID      string   `json:"message_id"`
	Seq            int      `json:"seq"`
	Agent          string   `json:"agent,omitempty"`
	Content        string   `json:"content"`
	Reasons        []string `json:"reasons" jsonschema:"why the message is a decision point: intent, recovery, tool_success"`
}

// CompareTasksIn is the input of memory_compare_tasks.
type CompareTasksIn struct {
	TaskIDA string `json:"task_id_a" jsonschema:"the first run's task"`
	TaskIDB string `json:"task_id_b" jsonschema:"the second run's task"`
}

// RunView is one task run in a comparison of tasks.
type RunView struct {
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

// CompareTasksOut is the output of memory_compare_tasks.
type CompareTasksOut struct {
	A               RunView  `json:"a"`
	B               RunView  `json:"b"`
	SharedFacts     []string `json:"shared_facts" jsonschema:"facts both runs produced (as run A wrote them)"`
	OnlyA           []string `json:"only_a"`
	OnlyB           []string `json:"only_b"`
	SharedDecisions int      `json:"shared_decisions"`
	Method          string   `json:"method" jsonschema:"how texts were matched: embedding or text"`
	ScoreDelta      float64  `json:"score_delta" jsonschema:"B's mean verification score minus A's"`
	DurationDelta   float64  `json:"duration_delta_seconds" jsonschema:"B's duration minus A's"`
}

func replayTools() []Tool {
	return []Tool{
		tool("memory_task_replay",
			"Replay a task's run from memory: every step in order (joins, facts, conversations, verifications, handoffs, merges), each agent's contribution, the verified facts and the outcome.",
			(*caller).taskReplay),
		tool("memory_compare_tasks",
			"Compare two runs of a task: facts and decisions both made or only one did, scores, durations, handoffs and errors.",
			(*caller).compareTasks)}
}

func (m *caller) taskReplay(ctx context.Context, in TaskReplayIn) (TaskReplayOut, string, error) {
	tr, err := m.c.TaskReplay(ctx, in.TaskID, day1.ReplayOptions{VerifiedOnly: in.VerifiedOnly, IncludeObservations: in.IncludeObservations})
	if err != nil {
		return TaskReplayOut{}, "", err
	}
	out := viewReplay(tr)
	return out, fmt.Sprintf("task %s: %d steps by %d agents, %s", out.TaskID, len(out.Timeline), len(out.Agents), out.Outcome.Status), nil
}

func viewReplay(tr day1.TaskReplay) TaskReplayOut {
	out := TaskReplayOut{
		TaskID: tr.Task.Name, Timeline: make([]EventView, len(tr.Timeline)),
		Agents: make([]ContributionView, len(tr.Agents)), KeyFacts: viewFacts(tr.KeyFacts),
		Outcome: OutcomeView{
			Status: string(tr.Outcome.Status), ResultSummary: tr.Outcome.ResultSummary,
			MergeID: tr.Outcome.MergeID, MergedInto: tr.Outcome.MergedInto,
			Facts: tr.Outcome.Facts, FactsVerified: tr.Outcome.FactsVerified,
			VerificationScore: tr.Outcome.VerificationScore, DurationSeconds: tr.Outcome.Duration.Seconds(),
		},
	}
	out.Decisions = make([]DecisionView, len(tr.Decisions))
	for i, d := range tr.Decisions {
		out.Decisions[i] = DecisionView{ConversationID: d.Conversation, MessageID: d.MessageID, Seq: d.Seq, Agent: d.Agent, Content: d.Content, Reasons: d.Reasons}
	}
	for i, e := range tr.Timeline {
		out.Timeline[i] = EventView{At: e.At, Kind: string(e.Kind), ID: e.ID, Branch: e.Branch, Agent: e.Agent, Summary: e.Summary}
	}
	for i, a := range tr.Agents {
		out.Agents[i] = ContributionView{
			Agent: a.Agent, Role: a.Role, Branch: a.Branch, Summary: a.Summary, Facts: len(a.Facts),
			FactsVerified: a.FactsVerified, Observations: a.Observations, Errors: a.Errors, Conversations: len(a.Conversations),
		}
	}
	return out
}

func (m *caller) compareTasks(ctx context.Context, in CompareTasksIn) (CompareTasksOut, string, error) {
	rc, err := m.c.CompareTaskRuns(ctx, in.TaskIDA, in.TaskIDB)
	if err != nil {
		return CompareTasksOut{}, "", err
	}
	out := CompareTasksOut{
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

func viewRun(r day1.RunSummary) RunView {
	v := RunView{
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
