package agenttool

import (
	"context"
	"fmt"
	"slices"

	"github.com/day1ai/day1"
)

// defaultSessionLimit is the most sessions memory_session_list returns by default.
const defaultSessionLimit = 10

// SessionStartIn is the input of memory_session_start.
type SessionStartIn struct {
	SessionID string `json:"session_id" jsonschema:"the session's id, e.g. the agent runtime's session id; starting it again is harmless"`
	AgentID   string `json:"agent_id,omitempty" jsonschema:"the agent running the session"`
	Branch    string `json:"branch,omitempty" jsonschema:"the branch the session works on (default: this session's current branch, else main)"`
	TaskID    string `json:"task_id,omitempty" jsonschema:"the task the session works on"`
}

// SessionEndIn is the input of memory_session_end.
type SessionEndIn struct {
	SessionID   string `json:"session_id" jsonschema:"the session to end"`
	Summary     string `json:"summary,omitempty" jsonschema:"what the session did"`
	Status      string `json:"status,omitempty" jsonschema:"completed (default) or abandoned"`
	Consolidate *bool  `json:"consolidate,omitempty" jsonschema:"turn the session's observations into candidate facts on its branch (default true)"`
}

// ConsolidatedView is what ending a session consolidated into candidate facts.
type ConsolidatedView struct {
	Observations int        `json:"observations" jsonschema:"observations read"`
	Facts        []FactView `json:"facts" jsonschema:"candidate facts written"`
	Superseded   []string   `json:"superseded" jsonschema:"ids of facts the new ones replaced"`
	By           string     `json:"by" jsonschema:"model:<name> or heuristic"`
}

// SessionEndOut is the output of memory_session_end.
type SessionEndOut struct {
	Session      SessionView       `json:"session"`
	Consolidated *ConsolidatedView `json:"consolidated,omitempty"`
}

// SessionListIn is the input of memory_session_list.
type SessionListIn struct {
	AgentID string `json:"agent_id,omitempty" jsonschema:"keep this agent's sessions"`
	Branch  string `json:"branch,omitempty" jsonschema:"keep the sessions of this branch"`
	Limit   int    `json:"limit,omitempty" jsonschema:"most sessions to return, newest first (default 10)"`
}

// SessionListOut is the output of memory_session_list.
type SessionListOut struct {
	Sessions []SessionView `json:"sessions" jsonschema:"newest first"`
}

func sessionTools() []Tool {
	return []Tool{
		tool("memory_session_start",
			"Record the start of an agent session, so that its observations, facts and summary can be found later by session.",
			(*caller).sessionStart),
		tool("memory_session_end",
			"End a session with a summary and status; by default its observations are consolidated into candidate facts.",
			(*caller).sessionEnd),
		tool("memory_session_list",
			"List recent sessions, newest first, with their summaries: what was done before in this project.",
			(*caller).sessionList)}
}

func (m *caller) sessionStart(ctx context.Context, in SessionStartIn) (SessionView, string, error) {
	s, err := m.c.StartSession(ctx, day1.Session{ID: in.SessionID, AgentID: in.AgentID, Branch: m.branch(in.Branch), TaskID: in.TaskID})
	if err != nil {
		return SessionView{}, "", err
	}
	return viewSession(s), fmt.Sprintf("session %s started on %s", s.ID, s.Branch), nil
}

func (m *caller) sessionEnd(ctx context.Context, in SessionEndIn) (SessionEndOut, string, error) {
	s, err := m.c.EndSession(ctx, in.SessionID, day1.SessionStatus(in.Status), in.Summary)
	if err != nil {
		return SessionEndOut{}, "", err
	}
	out := SessionEndOut{Session: viewSession(s)}
	text := fmt.Sprintf("session %s %s", s.ID, s.Status)
	if orDefault(in.Consolidate, true) {
		res, err := m.c.Consolidate(ctx, day1.ConsolidateRequest{Branch: s.Branch, SessionID: s.ID})
		if err != nil {
			return SessionEndOut{}, "", err
		}
		cv := &ConsolidatedView{Observations: res.Observations, Facts: []FactView{}, Superseded: append([]string{}, res.Superseded...), By: res.By}
		for _, w := range res.Facts {
			cv.Facts = append(cv.Facts, viewFact(w.Fact))
		}
		out.Consolidated = cv
		text += fmt.Sprintf("; %d observations consolidated into %d candidate facts", cv.Observations, len(cv.Facts))
	}
	return out, text, nil
}

func (m *caller) sessionList(ctx context.Context, in SessionListIn) (SessionListOut, string, error) {
	ss, err := m.c.Sessions(ctx, day1.SessionFilter{AgentID: in.AgentID, Branch: in.Branch})
	if err != nil {
		return SessionListOut{}, "", err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = defaultSessionLimit
	}
	slices.SortStableFunc(ss, func(a, b day1.Session) int { return b.StartedAt.Compare(a.StartedAt) })
	ss = ss[:min(limit, len(ss))]
	out := SessionListOut{Sessions: make([]SessionView, len(ss))}
	for i, s := range ss {
		out.Sessions[i] = viewSession(s)
	}
	return out, fmt.Sprintf("%d sessions", len(ss)), nil
}
