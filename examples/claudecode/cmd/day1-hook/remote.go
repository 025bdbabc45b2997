package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/day1ai/day1/internal/localmem"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// remote is the memory held by a running day1 MCP server, reached through its tools
// over streamable HTTP.
type remote struct {
	cs     *mcp.ClientSession
	branch string
}

var _ memory = (*remote)(nil)

// bearer adds the endpoint's token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// dialServer connects to the server an endpoint file names.
func dialServer(ctx context.Context, ep localmem.Endpoint, branch string) (*remote, error) {
	t := &mcp.StreamableClientTransport{
		Endpoint:   ep.URL,
		HTTPClient: &http.Client{Transport: bearer{token: ep.Token, next: http.DefaultTransport}},
		// A hook makes a few calls and leaves: no server-initiated stream, no
		// reconnecting to a server that is gone.
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "day1-hook", Version: "0.1.0"}, nil)
	cs, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	return &remote{cs: cs, branch: branch}, nil
}

// call calls a tool and returns its structured result as JSON: the structured
// content when the server sends one, else the text content when it is JSON, else
// null. A tool error is an error.
func (r *remote) call(ctx context.Context, tool string, args map[string]any) (json.RawMessage, error) {
	for k, v := range args {
		if s, ok := v.(string); ok && s == "" {
			delete(args, k) // optional arguments left empty are not sent
		}
	}
	res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	text := contentText(res)
	if res.IsError {
		return nil, fmt.Errorf("%s: %s", tool, strings.TrimSpace(text))
	}
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	if json.Valid([]byte(text)) {
		return json.RawMessage(text), nil
	}
	return json.RawMessage("null"), nil
}

func contentText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func (r *remote) StartSession(ctx context.Context, s sessionStart) error {
	_, err := r.call(ctx, "memory_session_start", map[string]any{
		"session_id": s.ID, "agent_id": s.AgentID, "branch": r.branch})
	return err
}

func (r *remote) EndSession(ctx context.Context, s sessionEnd) (int, error) {
	args := func() map[string]any {
		return map[string]any{"session_id": s.ID, "summary": s.Summary, "status": s.Status, "consolidate": true}
	}
	out, err := r.call(ctx, "memory_session_end", args())
	if err != nil {
		// The plugin may have been enabled in the middle of the session: start it
		// and try once more.
		if serr := r.StartSession(ctx, sessionStart{ID: s.ID, AgentID: agentID}); serr != nil {
			return 0, errors.Join(err, serr)
		}
		if out, err = r.call(ctx, "memory_session_end", args()); err != nil {
			return 0, err
		}
	}
	return consolidatedCount(out), nil
}

func (r *remote) RecentSessions(ctx context.Context, limit int) ([]sessionInfo, error) {
	out, err := r.call(ctx, "memory_session_list", map[string]any{"branch": r.branch, "limit": limit})
	if err != nil {
		return nil, err
	}
	return parseSessions(out), nil
}

func (r *remote) Facts(ctx context.Context, query string, limit int) ([]hit, error) {
	if strings.TrimSpace(query) == "" {
		query = "project"
	}
	// Hybrid: the vector side ranks every fact, so a query that names no fact still
	// brings the closest ones. Observations share the ranking and are dropped here,
	// so ask for more hits than facts wanted.
	out, err := r.call(ctx, "memory_search", map[string]any{
		"query": query, "search_type": "hybrid", "branch": r.branch, "limit": 3 * limit})
	if err != nil {
		return nil, err
	}
	hits := parseHits(out)
	return hits[:min(limit, len(hits))], nil
}

func (r *remote) Branches(ctx context.Context) ([]branchInfo, error) {
	out, err := r.call(ctx, "memory_branch_list", map[string]any{"status": "active"})
	if err != nil {
		return nil, err
	}
	return parseBranches(out), nil
}

func (r *remote) WriteObservation(ctx context.Context, o observation) (string, error) {
	out, err := r.call(ctx, "memory_write_observation", map[string]any{
		"observation_type": o.Type, "summary": o.Summary, "tool_name": o.Tool,
		"raw_input": o.RawInput, "raw_output": o.RawOutput, "branch": r.branch, "session_id": o.SessionID})
	if err != nil {
		return "", err
	}
	return parseWritten(out).ID, nil
}

func (r *remote) WriteFact(ctx context.Context, f fact) (written, error) {
	args := map[string]any{"fact_text": f.Text, "category": f.Category, "branch": r.branch, "session_id": f.SessionID}
	if f.Confidence > 0 {
		args["confidence"] = f.Confidence
	}
	out, err := r.call(ctx, "memory_write_fact", args)
	if err != nil {
		return written{}, err
	}
	return parseWritten(out), nil
}

func (r *remote) WriteRelation(ctx context.Context, rel relation) (string, error) {
	out, err := r.call(ctx, "memory_write_relation", map[string]any{
		"source_entity": rel.Source, "target_entity": rel.Target, "relation_type": rel.Type,
		"branch": r.branch, "session_id": rel.SessionID})
	if err != nil {
		return "", err
	}
	return parseWritten(out).ID, nil
}

func (r *remote) Close() error { return r.cs.Close() }
