package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/examples/internal/localmem"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A stand-in for the day1 MCP server: the contract tools the hooks call, on a
// day1.Client, served over streamable HTTP with a bearer token. It is deliberately
// small; its output shapes are one plausible reading of the contract, which the
// hook parses defensively.

type (
	sessionStartIn struct {
		SessionID string `json:"session_id"`
		AgentID   string `json:"agent_id,omitempty"`
		Branch    string `json:"branch,omitempty"`
		TaskID    string `json:"task_id,omitempty"`
	}
	sessionEndIn struct {
		SessionID   string `json:"session_id"`
		Summary     string `json:"summary,omitempty"`
		Status      string `json:"status,omitempty"`
		Consolidate *bool  `json:"consolidate,omitempty"`
	}
	sessionListIn struct {
		AgentID string `json:"agent_id,omitempty"`
		Branch  string `json:"branch,omitempty"`
		Limit   int    `json:"limit,omitempty"`
	}
	observationIn struct {
		ObservationType string `json:"observation_type"`
		Summary         string `json:"summary"`
		ToolName        string `json:"tool_name,omitempty"`
		RawInput        string `json:"raw_input,omitempty"`
		RawOutput       string `json:"raw_output,omitempty"`
		Branch          string `json:"branch,omitempty"`
		SessionID       string `json:"session_id,omitempty"`
	}
	factIn struct {
		FactText   string  `json:"fact_text"`
		Category   string  `json:"category,omitempty"`
		Confidence float64 `json:"confidence,omitempty"`
		Branch     string  `json:"branch,omitempty"`
		SessionID  string  `json:"session_id,omitempty"`
	}
	relationIn struct {
		SourceEntity string            `json:"source_entity"`
		TargetEntity string            `json:"target_entity"`
		RelationType string            `json:"relation_type"`
		Properties   map[string]string `json:"properties,omitempty"`
		Branch       string            `json:"branch,omitempty"`
		SessionID    string            `json:"session_id,omitempty"`
	}
	searchIn struct {
		Query      string `json:"query"`
		SearchType string `json:"search_type,omitempty"`
		Branch     string `json:"branch,omitempty"`
		Category   string `json:"category,omitempty"`
		Limit      int    `json:"limit,omitempty"`
	}
	branchListIn struct {
		Status string `json:"status,omitempty"`
	}

	sessionOut struct {
		SessionID    string    `json:"session_id"`
		Status       string    `json:"status"`
		Summary      string    `json:"summary,omitempty"`
		StartedAt    time.Time `json:"started_at"`
		Consolidated int       `json:"consolidated,omitempty"`
	}
	sessionsOut struct {
		Sessions []sessionOut `json:"sessions"`
	}
	writtenOut struct {
		ID      string `json:"id"`
		Outcome string `json:"outcome"`
	}
	hitOut struct {
		ID       string  `json:"id"`
		Kind     string  `json:"kind"`
		Text     string  `json:"text"`
		Category string  `json:"category,omitempty"`
		Score    float64 `json:"score"`
	}
	hitsOut struct {
		Hits []hitOut `json:"hits"`
	}
	branchOut struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		Status      string `json:"status"`
	}
	branchesOut struct {
		Branches []branchOut `json:"branches"`
	}
)

func newStandInServer(c *day1.Client) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "day1-standin", Version: "0"}, nil)
	tool := func(name string) *mcp.Tool { return &mcp.Tool{Name: name} }
	type req = *mcp.CallToolRequest

	mcp.AddTool(s, tool("memory_session_start"), func(ctx context.Context, _ req, in sessionStartIn) (*mcp.CallToolResult, sessionOut, error) {
		ss, err := c.StartSession(ctx, day1.Session{ID: in.SessionID, AgentID: in.AgentID, Branch: in.Branch, TaskID: in.TaskID})
		return nil, sessionOut{SessionID: ss.ID, Status: string(ss.Status), StartedAt: ss.StartedAt}, err
	})
	mcp.AddTool(s, tool("memory_session_end"), func(ctx context.Context, _ req, in sessionEndIn) (*mcp.CallToolResult, sessionOut, error) {
		ss, err := c.EndSession(ctx, in.SessionID, day1.SessionStatus(in.Status), in.Summary)
		if err != nil {
			return nil, sessionOut{}, err
		}
		out := sessionOut{SessionID: ss.ID, Status: string(ss.Status), Summary: ss.Summary, StartedAt: ss.StartedAt}
		if in.Consolidate == nil || *in.Consolidate {
			res, err := c.Consolidate(ctx, day1.ConsolidateRequest{Branch: ss.Branch, SessionID: ss.ID})
			if err != nil {
				return nil, sessionOut{}, err
			}
			out.Consolidated = len(res.Facts)
		}
		return nil, out, nil
	})
	mcp.AddTool(s, tool("memory_session_list"), func(ctx context.Context, _ req, in sessionListIn) (*mcp.CallToolResult, sessionsOut, error) {
		ss, err := c.Sessions(ctx, day1.SessionFilter{AgentID: in.AgentID, Branch: in.Branch})
		slices.Reverse(ss)
		if in.Limit > 0 && len(ss) > in.Limit {
			ss = ss[:in.Limit]
		}
		out := sessionsOut{Sessions: []sessionOut{}}
		for _, s := range ss {
			out.Sessions = append(out.Sessions, sessionOut{SessionID: s.ID, Status: string(s.Status), Summary: s.Summary, StartedAt: s.StartedAt})
		}
		return nil, out, err
	})
	mcp.AddTool(s, tool("memory_write_observation"), func(ctx context.Context, _ req, in observationIn) (*mcp.CallToolResult, writtenOut, error) {
		w, err := c.WriteObservation(ctx, day1.Observation{Branch: in.Branch, SessionID: in.SessionID,
			Type: day1.ObservationType(in.ObservationType), Tool: in.ToolName, Summary: in.Summary,
			RawInput: in.RawInput, RawOutput: in.RawOutput})
		return nil, writtenOut{ID: w.Record.ID, Outcome: string(w.Outcome)}, err
	})
	mcp.AddTool(s, tool("memory_write_fact"), func(ctx context.Context, _ req, in factIn) (*mcp.CallToolResult, writtenOut, error) {
		w, err := c.WriteFact(ctx, day1.Fact{Branch: in.Branch, SessionID: in.SessionID, Text: in.FactText,
			Category: in.Category, Confidence: in.Confidence})
		return nil, writtenOut{ID: w.Record.ID, Outcome: string(w.Outcome)}, err
	})
	mcp.AddTool(s, tool("memory_write_relation"), func(ctx context.Context, _ req, in relationIn) (*mcp.CallToolResult, writtenOut, error) {
		w, err := c.WriteRelation(ctx, day1.Relation{Branch: in.Branch, SessionID: in.SessionID, Source: in.SourceEntity,
			Target: in.TargetEntity, Type: in.RelationType, Properties: in.Properties})
		return nil, writtenOut{ID: w.Record.ID, Outcome: string(w.Outcome)}, err
	})
	mcp.AddTool(s, tool("memory_search"), func(ctx context.Context, _ req, in searchIn) (*mcp.CallToolResult, hitsOut, error) {
		hits, err := c.Search(ctx, day1.SearchQuery{Branch: in.Branch, Text: in.Query, Mode: day1.SearchMode(in.SearchType),
			Filter: day1.Filter{Category: in.Category}, Limit: in.Limit})
		out := hitsOut{Hits: []hitOut{}}
		for _, h := range hits {
			ho := hitOut{Score: h.Score}
			if f, ok := h.Fact(); ok {
				ho.ID, ho.Kind, ho.Text, ho.Category = f.ID, "fact", f.Text, f.Category
			} else if o, ok := h.Observation(); ok {
				ho.ID, ho.Kind, ho.Text = o.ID, "observation", o.Summary
			}
			out.Hits = append(out.Hits, ho)
		}
		return nil, out, err
	})
	mcp.AddTool(s, tool("memory_branch_list"), func(ctx context.Context, _ req, in branchListIn) (*mcp.CallToolResult, branchesOut, error) {
		bs, err := c.Branches(ctx, day1.BranchFilter{Status: day1.BranchStatus(in.Status)})
		out := branchesOut{Branches: []branchOut{}}
		for _, b := range bs {
			out.Branches = append(out.Branches, branchOut{Name: b.Name, Description: b.Description, Status: string(b.Status)})
		}
		return nil, out, err
	})
	return s
}

// standIn serves the stand-in on a loopback port and writes its endpoint file into
// dir; both go away when the test ends. It returns the number of requests the
// server turned away for a missing or wrong token.
func standIn(t testing.TB, c *day1.Client, dir string) (refused func() int) {
	t.Helper()
	token, err := localmem.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	s := newStandInServer(c)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	n := make(chan int, 1)
	n <- 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			n <- <-n + 1
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	remove, err := localmem.WriteEndpoint(dir, localmem.Endpoint{URL: srv.URL, Token: token, PID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	return func() int { v := <-n; n <- v; return v }
}
