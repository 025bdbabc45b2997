package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/localmem"
	"github.com/day1ai/day1/internal/memview"
)

// remote is a durable memory that a running day1 MCP server holds, read through the
// server's tools over streamable HTTP. The reading commands use it when the store is
// locked and the server left its endpoint file in the folder; the tools return
// summaries, so a few columns (each retriever's rank, a diff's base instant) stay
// empty.
type remote struct {
	cs *mcp.ClientSession
	ep localmem.Endpoint
}

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

// dialRemote connects to the server an endpoint file names.
func dialRemote(ctx context.Context, ep localmem.Endpoint) (*remote, error) {
	t := &mcp.StreamableClientTransport{
		Endpoint:             ep.URL,
		HTTPClient:           &http.Client{Transport: bearer{token: ep.Token, next: http.DefaultTransport}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "day1", Version: "0.1.0"}, nil)
	cs, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	return &remote{cs: cs, ep: ep}, nil
}

func (r *remote) Close() error { return r.cs.Close() }

// call calls a tool and decodes its structured result into out. A tool error is an
// error that keeps the class of the server's message where it can tell it.
func (r *remote) call(ctx context.Context, tool string, args map[string]any, out any) error {
	for k, v := range args {
		switch v := v.(type) {
		case string:
			if v == "" {
				delete(args, k)
			}
		case int:
			if v == 0 {
				delete(args, k)
			}
		case []string:
			if len(v) == 0 {
				delete(args, k)
			}
		}
	}
	res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		var b strings.Builder
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				b.WriteString(t.Text)
			}
		}
		return remoteError(strings.TrimSpace(b.String()))
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// remoteError turns a tool's error text back into an error of the library's class,
// so that the exit code is the one a local read gives.
func remoteError(msg string) error {
	for _, e := range []error{day1.ErrNotFound, day1.ErrInvalidArgument, day1.ErrNotSupported} {
		if strings.Contains(msg, strings.TrimPrefix(e.Error(), "day1: ")) {
			return fmt.Errorf("%w (from the MCP server: %s)", e, msg)
		}
	}
	return fmt.Errorf("the MCP server: %s", msg)
}

func (r *remote) branches(ctx context.Context, f day1.BranchFilter) ([]day1.Branch, error) {
	var out struct {
		Branches []day1.Branch `json:"branches"`
	}
	if err := r.call(ctx, "memory_branch_list", map[string]any{"status": string(f.Status)}, &out); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out.Branches, func(b day1.Branch) bool {
		return !strings.HasPrefix(b.Name, f.Prefix) || (f.Parent != "" && b.Parent != f.Parent)
	}), nil
}

func (r *remote) timeline(ctx context.Context, q day1.TimelineQuery) ([]memview.Event, error) {
	var out struct {
		Events []memview.Event `json:"events"`
	}
	kinds := make([]string, len(q.Kinds))
	for i, k := range q.Kinds {
		kinds[i] = string(k)
	}
	err := r.call(ctx, "memory_timeline", map[string]any{
		"branch": or(q.Branch, day1.DefaultBranch), "session_id": q.SessionID, "agent_id": q.AgentID, "task_id": q.TaskID,
		"kinds": kinds, "limit": q.Limit}, &out)
	return out.Events, err
}

// remoteRecord is a record as the server sends it: its fields as JSON values.
type remoteRecord struct {
	Kind      day1.Kind      `json:"kind"`
	ID        string         `json:"id"`
	Branch    string         `json:"branch,omitempty"`
	Agent     string         `json:"agent,omitempty"`
	Summary   string         `json:"summary"`
	CreatedAt time.Time      `json:"created_at"`
	Record    map[string]any `json:"record,omitempty"`
}

func (r *remote) record(ctx context.Context, branch string, ref day1.Ref) (remoteRecord, error) {
	var out remoteRecord
	err := r.call(ctx, "memory_record_get", map[string]any{"ref": ref.String(), "branch": or(branch, day1.DefaultBranch)}, &out)
	return out, err
}

type remoteHit struct {
	Kind     day1.Kind        `json:"kind"`
	ID       string           `json:"id"`
	Score    float64          `json:"score"`
	FoundBy  []day1.Retriever `json:"found_by"`
	Text     string           `json:"text"`
	Branch   string           `json:"branch"`
	Created  time.Time        `json:"created_at"`
	Category string           `json:"category"`
	Title    string           `json:"conversation_title"`
	Before   []remoteMessage  `json:"before"`
	After    []remoteMessage  `json:"after"`
}

// remoteMessage is a neighbouring message of a message hit, as memory_search gives it.
type remoteMessage struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (m remoteMessage) view(branch string) *memview.Record {
	return &memview.Record{Kind: day1.KindMessage, ID: m.ID, Branch: branch, Summary: m.Role + ": " + m.Content}
}

// search runs q on the server; at, when set, reads memory as it was then.
func (r *remote) search(ctx context.Context, q day1.SearchQuery, at day1.At) ([]memview.Hit, error) {
	var out struct {
		Hits []remoteHit `json:"hits"`
	}
	args := map[string]any{"query": q.Text, "branch": or(q.Branch, day1.DefaultBranch), "limit": q.Limit}
	tool := "memory_search"
	switch {
	case at.Snapshot != "" || !at.Time.IsZero():
		if q.Mode != "" || q.Filter.AgentID != "" || q.Filter.Category != "" || q.Filter.Role != "" ||
			q.Filter.ConversationID != "" || q.Window != 0 {
			return nil, fmt.Errorf("%w: through the MCP server, search --at takes no --mode, --agent, --category, --role, --conversation or --window", day1.ErrNotSupported)
		}
		tool, args["snapshot"] = "memory_time_travel", at.Snapshot
		if !at.Time.IsZero() {
			args["timestamp"] = at.Time.UTC().Format(time.RFC3339Nano)
		}
	default:
		args["search_type"], args["category"], args["agent_id"] = string(q.Mode), q.Filter.Category, q.Filter.AgentID
		args["role"], args["conversation_id"], args["window"] = string(q.Filter.Role), q.Filter.ConversationID, q.Window
		if len(q.Kinds) > 0 {
			kinds := make([]string, len(q.Kinds))
			for i, k := range q.Kinds {
				kinds[i] = string(k)
			}
			args["kinds"] = kinds
		}
	}
	if err := r.call(ctx, tool, args, &out); err != nil {
		return nil, err
	}
	hits := make([]memview.Hit, 0, len(out.Hits))
	for _, h := range out.Hits {
		if len(q.Kinds) > 0 && !slices.Contains(q.Kinds, h.Kind) {
			continue
		}
		rec := &memview.Record{Kind: h.Kind, ID: h.ID, Branch: h.Branch, Summary: h.Text, CreatedAt: h.Created}
		hit := memview.Hit{Record: rec, Score: h.Score, FoundBy: h.FoundBy, ConversationTitle: h.Title}
		for _, m := range h.Before {
			hit.Before = append(hit.Before, m.view(h.Branch))
		}
		for _, m := range h.After {
			hit.After = append(hit.After, m.view(h.Branch))
		}
		hits = append(hits, hit)
	}
	return hits, nil
}

func (r *remote) diff(ctx context.Context, source, target string) (memview.Diff, error) {
	type change struct {
		Ref     string  `json:"ref"`
		Op      day1.Op `json:"op"`
		Summary string  `json:"summary"`
	}
	var out struct {
		Source        string   `json:"source_branch"`
		Target        string   `json:"target_branch"`
		Base          string   `json:"merge_base"`
		SourceChanges []change `json:"source_changes"`
		TargetChanges []change `json:"target_changes"`
		Conflicts     []struct {
			Ref    string              `json:"ref"`
			Reason day1.ConflictReason `json:"reason"`
			Source string              `json:"source"`
			Target string              `json:"target"`
		} `json:"conflicts"`
	}
	if err := r.call(ctx, "memory_branch_diff", map[string]any{"source_branch": source, "target_branch": target}, &out); err != nil {
		return memview.Diff{}, err
	}
	view := func(c change) memview.Change {
		kind, id, _ := strings.Cut(c.Ref, "/")
		rec := &memview.Record{Kind: day1.Kind(kind), ID: id, Summary: c.Summary}
		if c.Op == day1.OpDeleted {
			return memview.Change{Ref: c.Ref, Op: c.Op, Before: rec}
		}
		return memview.Change{Ref: c.Ref, Op: c.Op, After: rec}
	}
	d := memview.Diff{Source: out.Source, Target: out.Target, Base: out.Base}
	for _, c := range out.SourceChanges {
		d.SourceChanges = append(d.SourceChanges, view(c))
	}
	for _, c := range out.TargetChanges {
		d.TargetChanges = append(d.TargetChanges, view(c))
	}
	for _, c := range out.Conflicts {
		d.Conflicts = append(d.Conflicts, memview.Conflict{Ref: c.Ref, Reason: c.Reason,
			Source: view(change{Ref: c.Ref, Summary: c.Source}), Target: view(change{Ref: c.Ref, Summary: c.Target})})
	}
	return d, nil
}

// tasks lists the tasks f keeps, or returns the one named name.
func (r *remote) tasks(ctx context.Context, f day1.TaskFilter, name string) ([]day1.Task, error) {
	var out struct {
		Tasks []struct {
			day1.Task
			TaskID  string `json:"task_id"`
			Parent  string `json:"parent_branch"`
			Members []struct {
				day1.TaskMember
				Agent string `json:"agent_id"`
			} `json:"members"`
		} `json:"tasks"`
	}
	if err := r.call(ctx, "memory_task_list", map[string]any{"task_id": name, "status": string(f.Status), "agent_id": f.Agent}, &out); err != nil {
		return nil, err
	}
	ts := make([]day1.Task, len(out.Tasks))
	for i, t := range out.Tasks {
		ts[i] = t.Task
		ts[i].Name, ts[i].Parent, ts[i].Members = t.TaskID, t.Parent, nil
		for _, m := range t.Members {
			m.TaskMember.Agent = m.Agent
			ts[i].Members = append(ts[i].Members, m.TaskMember)
		}
	}
	return ts, nil
}

// handoffs lists the handoffs f keeps; the server's list carries no packets, and
// filters by task and status only, so an agent filter is applied here.
func (r *remote) handoffs(ctx context.Context, f day1.HandoffFilter) ([]day1.HandoffRecord, error) {
	var out struct {
		Handoffs []struct {
			ID           string             `json:"handoff_id"`
			Task         string             `json:"task_id"`
			Type         day1.HandoffType   `json:"handoff_type"`
			Status       day1.HandoffStatus `json:"status"`
			FromAgent    string             `json:"from_agent_id"`
			ToAgent      string             `json:"to_agent_id"`
			Instructions string             `json:"instructions"`
			CreatedAt    time.Time          `json:"created_at"`
		} `json:"handoffs"`
	}
	if err := r.call(ctx, "memory_handoff_list", map[string]any{"task_id": f.Task, "status": string(f.Status)}, &out); err != nil {
		return nil, err
	}
	var hs []day1.HandoffRecord
	for _, h := range out.Handoffs {
		if f.Agent != "" && h.FromAgent != f.Agent && h.ToAgent != f.Agent {
			continue
		}
		hs = append(hs, day1.HandoffRecord{ID: h.ID, Task: h.Task, Type: h.Type, Status: h.Status, FromAgent: h.FromAgent,
			ToAgent: h.ToAgent, Instructions: h.Instructions, CreatedAt: h.CreatedAt})
	}
	return hs, nil
}
