package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1"
)

// defaultSessionLimit is the most sessions memory_session_list returns by default.
const defaultSessionLimit = 10

type sessionStartIn struct {
	SessionID string `json:"session_id" jsonschema:"the session's id, e.g. the agent runtime's session id; starting it again is harmless"`
	AgentID   string `json:"agent_id,omitempty" jsonschema:"the agent running the session"`
	Branch    string `json:"branch,omitempty" jsonschema:"the branch the session works on (default: this MCP session's current branch, else main)"`
	TaskID    string `json:"task_id,omitempty" jsonschema:"the task the session works on"`
}

type sessionEndIn struct {
	SessionID   string `json:"session_id" jsonschema:"the session to end"`
	Summary     string `json:"summary,omitempty" jsonschema:"what the session did"`
	Status      string `json:"status,omitempty" jsonschema:"completed (default) or abandoned"`
	Consolidate *bool  `json:"consolidate,omitempty" jsonschema:"turn the session's observations into candidate facts on its branch (default true)"`
}

type consolidatedView struct {
	Observations int        `json:"observations" jsonschema:"observations read"`
	Facts        []factView `json:"facts" jsonschema:"candidate facts written"`
	Superseded   []string   `json:"superseded" jsonschema:"ids of facts the new ones replaced"`
	By           string     `json:"by" jsonschema:"model:<name> or heuristic"`
}

type sessionEndOut struct {
	Session      sessionView       `json:"session"`
	Consolidated *consolidatedView `json:"consolidated,omitempty"`
}

type sessionListIn struct {
	AgentID string `json:"agent_id,omitempty" jsonschema:"keep this agent's sessions"`
	Branch  string `json:"branch,omitempty" jsonschema:"keep the sessions of this branch"`
	Limit   int    `json:"limit,omitempty" jsonschema:"most sessions to return, newest first (default 10)"`
}

type sessionListOut struct {
	Sessions []sessionView `json:"sessions" jsonschema:"newest first"`
}

func (m *memServer) addSessionTools(s *mcp.Server) {
	addTool(s, "memory_session_start",
		"Record the start of an agent session, so that its observations, facts and summary can be found later by session.",
		m.sessionStart)
	addTool(s, "memory_session_end",
		"End a session with a summary and status; by default its observations are consolidated into candidate facts.",
		m.sessionEnd)
	addTool(s, "memory_session_list",
		"List recent sessions, newest first, with their summaries: what was done before in this project.",
		m.sessionList)
}

func (m *memServer) sessionStart(ctx context.Context, ss *mcp.ServerSession, in sessionStartIn) (sessionView, string, error) {
	s, err := m.c.StartSession(ctx, day1.Session{ID: in.SessionID, AgentID: in.AgentID, Branch: m.branch(ss, in.Branch), TaskID: in.TaskID})
	if err != nil {
		return sessionView{}, "", err
	}
	return viewSession(s), fmt.Sprintf("session %s started on %s", s.ID, s.Branch), nil
}

func (m *memServer) sessionEnd(ctx context.Context, _ *mcp.ServerSession, in sessionEndIn) (sessionEndOut, string, error) {
	s, err := m.c.EndSession(ctx, in.SessionID, day1.SessionStatus(in.Status), in.Summary)
	if err != nil {
		return sessionEndOut{}, "", err
	}
	out := sessionEndOut{Session: viewSession(s)}
	text := fmt.Sprintf("session %s %s", s.ID, s.Status)
	if orDefault(in.Consolidate, true) {
		res, err := m.c.Consolidate(ctx, day1.ConsolidateRequest{Branch: s.Branch, SessionID: s.ID})
		if err != nil {
			return sessionEndOut{}, "", err
		}
		cv := &consolidatedView{Observations: res.Observations, Facts: []factView{}, Superseded: append([]string{}, res.Superseded...), By: res.By}
		for _, w := range res.Facts {
			cv.Facts = append(cv.Facts, viewFact(w.Fact))
		}
		out.Consolidated = cv
		text += fmt.Sprintf("; %d observations consolidated into %d candidate facts", cv.Observations, len(cv.Facts))
	}
	return out, text, nil
}

func (m *memServer) sessionList(ctx context.Context, _ *mcp.ServerSession, in sessionListIn) (sessionListOut, string, error) {
	ss, err := m.c.Sessions(ctx, day1.SessionFilter{AgentID: in.AgentID, Branch: in.Branch})
	if err != nil {
		return sessionListOut{}, "", err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = defaultSessionLimit
	}
	slices.SortStableFunc(ss, func(a, b day1.Session) int { return b.StartedAt.Compare(a.StartedAt) })
	ss = ss[:min(limit, len(ss))]
	out := sessionListOut{Sessions: make([]sessionView, len(ss))}
	for i, s := range ss {
		out.Sessions[i] = viewSession(s)
	}
	return out, fmt.Sprintf("%d sessions", len(ss)), nil
}
