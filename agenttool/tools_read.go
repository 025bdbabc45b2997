package agenttool

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
	"github.com/day1ai/day1/store"
)

// defaultSearchLimit is the most hits a search returns when it names no limit.
const defaultSearchLimit = 10

// TimeRange bounds the creation time of the records a read returns.
type TimeRange struct {
	After  string `json:"after,omitempty" jsonschema:"keep records created at or after this RFC 3339 time"`
	Before string `json:"before,omitempty" jsonschema:"keep records created before this RFC 3339 time"`
}

// SearchIn is the input of memory_search.
type SearchIn struct {
	Query          string     `json:"query" jsonschema:"what to look for, in natural language or keywords"`
	SearchType     string     `json:"search_type,omitempty" jsonschema:"hybrid (default: keyword and semantic ranking fused), vector (semantic only) or keyword (BM25 only)"`
	Branch         string     `json:"branch,omitempty" jsonschema:"branch to search (default: this session's current branch, else main)"`
	Category       string     `json:"category,omitempty" jsonschema:"keep facts of this category only"`
	AgentID        string     `json:"agent_id,omitempty" jsonschema:"keep the records of this agent only"`
	Limit          int        `json:"limit,omitempty" jsonschema:"most hits to return (default 10)"`
	TimeRange      *TimeRange `json:"time_range,omitempty" jsonschema:"keep records created in this time range"`
	Kinds          []string   `json:"kinds,omitempty" jsonschema:"search these kinds only: fact, observation, conversation (titles), message (default: all four)"`
	Role           string     `json:"role,omitempty" jsonschema:"keep the messages of this speaker only: user, assistant, tool_call, tool_result, system"`
	Conversation   string     `json:"conversation_id,omitempty" jsonschema:"keep the messages of this conversation only"`
	SessionID      string     `json:"session_id,omitempty" jsonschema:"keep the records of this session only"`
	Window         int        `json:"window,omitempty" jsonschema:"return each message hit with this many messages before and after it in its conversation, 0 to 20 (default 0)"`
	MinRelevance   *float64   `json:"min_relevance,omitempty" jsonschema:"return nothing unless a hit reaches this relevance, 0 to 1, and leave out the hits below half of it (default 0.3; 0 returns every hit)"`
	IncludeExpired bool       `json:"include_expired,omitempty" jsonschema:"also return facts whose expiry has passed (default false)"`
}

// HitView is a hit as the tools return it.
type HitView struct {
	Kind  string  `json:"kind" jsonschema:"fact, observation, conversation or message"`
	ID    string  `json:"id"`
	Score float64 `json:"score"`
	// Relevance is always present, 0 included.
	Relevance float64   `json:"relevance" jsonschema:"how much of the query the hit matches, 0 to 1, the same on every store and search type"`
	FoundBy   []string  `json:"found_by" jsonschema:"the retrievers that found it: keyword, vector"`
	Text      string    `json:"text" jsonschema:"the fact's text, the observation's summary, the conversation's title or the message's content"`
	Category  string    `json:"category,omitempty"`
	Status    string    `json:"status,omitempty" jsonschema:"a fact's status"`
	Type      string    `json:"observation_type,omitempty"`
	Branch    string    `json:"branch"`
	Created   time.Time `json:"created_at"`
	// A message hit's place in its conversation.
	Conversation string        `json:"conversation_id,omitempty"`
	Title        string        `json:"conversation_title,omitempty"`
	Seq          int           `json:"seq,omitempty"`
	Role         string        `json:"role,omitempty"`
	Before       []MessageLine `json:"before,omitempty" jsonschema:"the messages just before a message hit, with a window"`
	After        []MessageLine `json:"after,omitempty" jsonschema:"the messages just after a message hit, with a window"`
}

// MessageLine is a neighbouring message of a message hit.
type MessageLine struct {
	ID      string `json:"id"`
	Seq     int    `json:"seq"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

// SearchOut is the output of memory_search.
type SearchOut struct {
	Branch string    `json:"branch"`
	Hits   []HitView `json:"hits"`
}

// GraphIn is the input of memory_graph_query.
type GraphIn struct {
	Entity       string `json:"entity" jsonschema:"the entity to start from, as written in relations, e.g. AuthService"`
	RelationType string `json:"relation_type,omitempty" jsonschema:"follow relations of this type only"`
	Depth        int    `json:"depth,omitempty" jsonschema:"how many relations away to walk, 1 to 5 (default 1)"`
	Branch       string `json:"branch,omitempty" jsonschema:"branch to read (default: this session's current branch, else main)"`
}

// GraphNode is an entity a graph query reached, and how many relations away.
type GraphNode struct {
	Entity string `json:"entity"`
	Depth  int    `json:"depth"`
}

// GraphOut is the output of memory_graph_query.
type GraphOut struct {
	Root      string         `json:"root"`
	Nodes     []GraphNode    `json:"nodes"`
	Edges     []RelationView `json:"edges"`
	Truncated bool           `json:"truncated,omitempty"`
}

// TimelineIn is the input of memory_timeline.
type TimelineIn struct {
	SessionID      string   `json:"session_id,omitempty" jsonschema:"keep the records of this session"`
	Branch         string   `json:"branch,omitempty" jsonschema:"branch to read (default: this session's current branch, else main)"`
	After          string   `json:"after,omitempty" jsonschema:"keep records created at or after this RFC 3339 time"`
	Before         string   `json:"before,omitempty" jsonschema:"keep records created before this RFC 3339 time"`
	Limit          int      `json:"limit,omitempty" jsonschema:"most events to return: the earliest, or with newest the latest (default 1000)"`
	Newest         bool     `json:"newest,omitempty" jsonschema:"list the latest events first, as git log does (default false: earliest first)"`
	ByUpdate       bool     `json:"by_update,omitempty" jsonschema:"place each record at the time its current version was written, so a corrected fact shows as a new event; after and before then bound that time (default false: at its creation)"`
	AgentID        string   `json:"agent_id,omitempty" jsonschema:"keep the records of this agent"`
	TaskID         string   `json:"task_id,omitempty" jsonschema:"keep the records of this task"`
	Kinds          []string `json:"kinds,omitempty" jsonschema:"keep records of these kinds: fact, observation, relation, conversation, message"`
	IncludeExpired bool     `json:"include_expired,omitempty" jsonschema:"also list facts whose expiry has passed (default false)"`
}

// TimelineOut is the output of memory_timeline.
type TimelineOut struct {
	Branch string      `json:"branch"`
	Events []EventView `json:"events"`
}

func readTools() []Tool {
	return []Tool{
		tool("memory_search",
			"Search memory (facts, observations, conversation titles and messages) for what is relevant to a question before working on it. Hybrid search fuses keyword and semantic ranking. With a window, each message hit comes with the turns around it.",
			(*caller).search),
		tool("memory_graph_query",
			"Walk the knowledge graph around an entity: the relations that touch it and, with depth, their neighbours.",
			(*caller).graph),
		tool("memory_record_get",
			"Read one record in full (a fact, observation, relation, conversation or message) by kind/id on a branch.",
			(*caller).recordGet),
		tool("memory_timeline",
			"List what was recorded on a branch in time order (facts, observations, relations, conversations, messages), e.g. everything a session did.",
			(*caller).timeline)}
}

func (m *caller) search(ctx context.Context, in SearchIn) (SearchOut, string, error) {
	q, err := m.searchQuery(in)
	if err != nil {
		return SearchOut{}, "", err
	}
	hits, err := m.c.Search(ctx, q)
	if err != nil {
		return SearchOut{}, "", err
	}
	out := SearchOut{Branch: branchName(q.Branch), Hits: viewHits(hits)}
	if len(hits) == 0 && q.MinRelevance > 0 {
		return out, fmt.Sprintf("nothing relevant on %s (no hit reached relevance %.2f; min_relevance 0 returns every hit)", out.Branch, q.MinRelevance), nil
	}
	return out, fmt.Sprintf("%d hits on %s", len(out.Hits), out.Branch), nil
}

// searchQuery turns search arguments into a query.
func (m *caller) searchQuery(in SearchIn) (day1.SearchQuery, error) {
	q := day1.SearchQuery{
		Branch: m.branch(in.Branch), Text: in.Query, Mode: day1.SearchMode(in.SearchType),
		Limit: in.Limit, Window: in.Window, IncludeExpired: in.IncludeExpired,
		Filter: day1.Filter{Category: in.Category, AgentID: in.AgentID, Role: day1.Role(in.Role),
			ConversationID: in.Conversation, SessionID: in.SessionID},
	}
	if q.Limit == 0 {
		q.Limit = defaultSearchLimit
	}
	q.MinRelevance = day1.DefaultMinRelevance
	if in.MinRelevance != nil {
		q.MinRelevance = *in.MinRelevance
	}
	for _, k := range in.Kinds {
		kind := day1.Kind(k)
		if !slices.Contains(store.SearchKinds, kind) {
			return q, store.Invalid("kinds", "must be fact, observation, conversation or message", k)
		}
		q.Kinds = append(q.Kinds, kind)
	}
	if in.TimeRange != nil {
		var err error
		if q.Filter.Since, err = parseTime("time_range.after", in.TimeRange.After); err != nil {
			return q, err
		}
		if q.Filter.Until, err = parseTime("time_range.before", in.TimeRange.Before); err != nil {
			return q, err
		}
	}
	return q, nil
}

func viewHits(hits []day1.Hit) []HitView {
	out := make([]HitView, 0, len(hits))
	for _, h := range hits {
		v := HitView{Kind: string(h.Record.RecordKind()), ID: h.Record.RecordID(), Score: h.Score, Relevance: h.Relevance,
			Branch: h.Record.RecordBranch(), Created: h.Record.RecordTime(), FoundBy: []string{}}
		for _, r := range h.FoundBy {
			v.FoundBy = append(v.FoundBy, string(r))
		}
		switch r := h.Record.(type) {
		case day1.Fact:
			v.Text, v.Category, v.Status = r.Text, r.Category, string(r.Status)
		case day1.Observation:
			v.Text, v.Type = r.Summary, string(r.Type)
		case day1.Conversation:
			v.Text = r.Title
		case day1.Message:
			v.Text, v.Conversation, v.Title, v.Seq, v.Role = r.Content, r.ConversationID, h.ConversationTitle, r.Seq, string(r.Role)
			v.Before, v.After = messageLines(h.Before), messageLines(h.After)
		}
		out = append(out, v)
	}
	return out
}

func messageLines(ms []day1.Message) []MessageLine {
	var out []MessageLine
	for _, m := range ms {
		out = append(out, MessageLine{ID: m.ID, Seq: m.Seq, Role: string(m.Role), Content: m.Content})
	}
	return out
}

// branchName returns b, or the default branch for "".
func branchName(b string) string {
	if b == "" {
		return day1.DefaultBranch
	}
	return b
}

func (m *caller) graph(ctx context.Context, in GraphIn) (GraphOut, string, error) {
	q := day1.GraphQuery{Branch: m.branch(in.Branch), Entity: in.Entity, Depth: in.Depth}
	if in.RelationType != "" {
		q.Types = []string{in.RelationType}
	}
	g, err := m.c.Graph(ctx, q)
	if err != nil {
		return GraphOut{}, "", err
	}
	out := GraphOut{Root: g.Root, Truncated: g.Truncated, Nodes: []GraphNode{}, Edges: []RelationView{}}
	for _, n := range g.Nodes {
		out.Nodes = append(out.Nodes, GraphNode{Entity: n.Entity, Depth: n.Depth})
	}
	for _, e := range g.Edges {
		out.Edges = append(out.Edges, viewRelation(e))
	}
	return out, fmt.Sprintf("%d entities and %d relations around %s", len(out.Nodes), len(out.Edges), g.Root), nil
}

func (m *caller) timeline(ctx context.Context, in TimelineIn) (TimelineOut, string, error) {
	q := day1.TimelineQuery{Branch: m.branch(in.Branch), SessionID: in.SessionID, Limit: in.Limit, AgentID: in.AgentID, TaskID: in.TaskID,
		Newest: in.Newest, ByUpdate: in.ByUpdate, IncludeExpired: in.IncludeExpired}
	for _, k := range in.Kinds {
		switch kind := day1.Kind(k); kind {
		case day1.KindFact, day1.KindObservation, day1.KindRelation, day1.KindConversation, day1.KindMessage:
			q.Kinds = append(q.Kinds, kind)
		default:
			return TimelineOut{}, "", store.Invalid("kinds", "must be fact, observation, relation, conversation or message", k)
		}
	}
	var err error
	if q.Since, err = parseTime("after", in.After); err != nil {
		return TimelineOut{}, "", err
	}
	if q.Until, err = parseTime("before", in.Before); err != nil {
		return TimelineOut{}, "", err
	}
	evs, err := m.c.Timeline(ctx, q)
	if err != nil {
		return TimelineOut{}, "", err
	}
	out := TimelineOut{Branch: branchName(q.Branch), Events: viewEvents(evs)}
	return out, fmt.Sprintf("%d events on %s", len(out.Events), out.Branch), nil
}

func viewEvents(evs []day1.Event) []EventView {
	out := make([]EventView, len(evs))
	for i, e := range evs {
		out[i] = EventView{At: e.At, Kind: string(e.Ref.Kind), ID: e.Ref.ID, Branch: e.Record.RecordBranch(), Agent: memview.Agent(e.Record), Summary: e.Summary}
	}
	return out
}

// RecordGetIn is the input of memory_record_get.
type RecordGetIn struct {
	Ref    string `json:"ref" jsonschema:"the record as kind/id, e.g. fact/f-jwt; a bare id means a fact"`
	Branch string `json:"branch,omitempty" jsonschema:"branch to read (default: this session's current branch, else main)"`
}

// RecordOut is the output of memory_record_get.
type RecordOut struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	Branch    string         `json:"branch,omitempty"`
	Agent     string         `json:"agent,omitempty"`
	Summary   string         `json:"summary"`
	CreatedAt time.Time      `json:"created_at"`
	Record    map[string]any `json:"record" jsonschema:"the record's fields, without its embedding"`
}

func (m *caller) recordGet(ctx context.Context, in RecordGetIn) (RecordOut, string, error) {
	ref, err := parseRef("ref", in.Ref)
	if err != nil {
		return RecordOut{}, "", err
	}
	branch := m.branch(in.Branch)
	var rec day1.Record
	switch ref.Kind {
	case day1.KindFact:
		rec, err = m.c.GetFact(ctx, branch, ref.ID)
	case day1.KindObservation:
		rec, err = m.c.GetObservation(ctx, branch, ref.ID)
	case day1.KindRelation:
		rec, err = m.c.GetRelation(ctx, branch, ref.ID)
	case day1.KindConversation:
		rec, err = m.c.GetConversation(ctx, branch, ref.ID)
	default:
		rec, err = m.c.GetMessage(ctx, branch, ref.ID)
	}
	if err != nil {
		return RecordOut{}, "", err
	}
	v := memview.View(rec)
	out := RecordOut{Kind: string(v.Kind), ID: v.ID, Branch: v.Branch, Agent: v.Agent, Summary: v.Summary, CreatedAt: v.CreatedAt}
	data, err := json.Marshal(v.Record)
	if err != nil {
		return RecordOut{}, "", err
	}
	if err := json.Unmarshal(data, &out.Record); err != nil {
		return RecordOut{}, "", err
	}
	return out, v.Summary, nil
}
