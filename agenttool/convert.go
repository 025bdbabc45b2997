package agenttool

import (
	"strings"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

// parseTime reads an optional RFC 3339 time argument; "" is the zero time.
func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, store.Invalid(field, "must be an RFC 3339 time such as 2025-01-31T09:30:00Z", s)
	}
	return t, nil
}

// parseRef reads a record reference: "kind/ID", or a bare ID meaning a fact.
func parseRef(field, s string) (day1.Ref, error) {
	kind, id, ok := strings.Cut(s, "/")
	if !ok {
		return day1.FactRef(s), nil
	}
	switch k := day1.Kind(kind); k {
	case day1.KindFact, day1.KindObservation, day1.KindRelation, day1.KindConversation, day1.KindMessage:
		return day1.Ref{Kind: k, ID: id}, nil
	}
	return day1.Ref{}, store.Invalid(field, "must be an id or kind/id with kind fact, observation, relation, conversation or message", s)
}

// refStrings returns refs as "kind/ID" strings.
func refStrings(refs []day1.Ref) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.String()
	}
	return out
}

// orDefault returns v, or def when v is nil.
func orDefault[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

// FactView is a fact as the tools return it.
type FactView struct {
	ID           string    `json:"id"`
	Branch       string    `json:"branch"`
	Text         string    `json:"text"`
	Category     string    `json:"category,omitempty"`
	Confidence   float64   `json:"confidence"`
	Status       string    `json:"status"`
	Verification string    `json:"verification,omitempty" jsonschema:"verified, invalidated or pending once judged"`
	Score        float64   `json:"verification_score,omitempty"`
	ParentID     string    `json:"parent_id,omitempty" jsonschema:"the fact this one supersedes"`
	SessionID    string    `json:"session_id,omitempty"`
	TaskID       string    `json:"task_id,omitempty"`
	AgentID      string    `json:"agent_id,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	ExpiresAt    time.Time `json:"expires_at,omitzero" jsonschema:"when the fact stops holding, if it does"`
	// Metadata includes what a correction kept: corrected_by, correction_reason.
	Metadata map[string]string `json:"metadata,omitempty" jsonschema:"the fact's metadata, with corrected_by and correction_reason when it was corrected"`
}

func viewFact(f day1.Fact) FactView {
	return FactView{
		ID: f.ID, Branch: f.Branch, Text: f.Text, Category: f.Category, Confidence: f.Confidence,
		Status: string(f.Status), Verification: string(f.Verify.Status), Score: f.Verify.Score,
		ParentID: f.ParentID, SessionID: f.SessionID, TaskID: f.TaskID, AgentID: f.AgentID,
		CreatedAt: f.CreatedAt, ExpiresAt: f.ExpiresAt, Metadata: f.Metadata,
	}
}

func viewFacts(fs []day1.Fact) []FactView {
	out := make([]FactView, len(fs))
	for i, f := range fs {
		out[i] = viewFact(f)
	}
	return out
}

// ObservationView is an observation as the tools return it.
type ObservationView struct {
	ID        string    `json:"id"`
	Branch    string    `json:"branch"`
	Type      string    `json:"observation_type"`
	Summary   string    `json:"summary"`
	Tool      string    `json:"tool_name,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	TaskID    string    `json:"task_id,omitempty"`
	AgentID   string    `json:"agent_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

func viewObservation(o day1.Observation) ObservationView {
	return ObservationView{
		ID: o.ID, Branch: o.Branch, Type: string(o.Type), Summary: o.Summary, Tool: o.Tool,
		SessionID: o.SessionID, TaskID: o.TaskID, AgentID: o.AgentID, CreatedAt: o.CreatedAt,
	}
}

// RelationView is a relation as the tools return it.
type RelationView struct {
	ID         string            `json:"id"`
	Branch     string            `json:"branch"`
	Source     string            `json:"source_entity"`
	Target     string            `json:"target_entity"`
	Type       string            `json:"relation_type"`
	Properties map[string]string `json:"properties,omitempty"`
	ValidFrom  time.Time         `json:"valid_from"`
	CreatedAt  time.Time         `json:"created_at"`
}

func viewRelation(r day1.Relation) RelationView {
	return RelationView{
		ID: r.ID, Branch: r.Branch, Source: r.Source, Target: r.Target, Type: r.Type,
		Properties: r.Properties, ValidFrom: r.ValidFrom, CreatedAt: r.CreatedAt,
	}
}

// BranchView is a branch as the tools return it.
type BranchView struct {
	Name        string    `json:"name"`
	Parent      string    `json:"parent,omitempty"`
	Status      string    `json:"status"`
	Description string    `json:"description,omitempty"`
	ForkedAt    time.Time `json:"forked_at"`
	CreatedAt   time.Time `json:"created_at"`
	MergedInto  string    `json:"merged_into,omitempty"`
}

func viewBranch(b day1.Branch) BranchView {
	return BranchView{
		Name: b.Name, Parent: b.Parent, Status: string(b.Status), Description: b.Description,
		ForkedAt: b.ForkedAt, CreatedAt: b.CreatedAt, MergedInto: b.MergedInto,
	}
}

// SessionView is a session as the tools return it.
type SessionView struct {
	ID        string    `json:"id"`
	Branch    string    `json:"branch"`
	AgentID   string    `json:"agent_id,omitempty"`
	TaskID    string    `json:"task_id,omitempty"`
	Status    string    `json:"status"`
	Summary   string    `json:"summary,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

func viewSession(s day1.Session) SessionView {
	return SessionView{
		ID: s.ID, Branch: s.Branch, AgentID: s.AgentID, TaskID: s.TaskID, Status: string(s.Status),
		Summary: s.Summary, StartedAt: s.StartedAt, EndedAt: s.EndedAt,
	}
}

// VerdictView is a judge's verdict as the tools return it.
type VerdictView struct {
	Ref         string  `json:"ref" jsonschema:"the record judged, as kind/id"`
	Status      string  `json:"status" jsonschema:"verified, invalidated or pending"`
	Score       float64 `json:"score"`
	Explanation string  `json:"explanation,omitempty"`
	By          string  `json:"by" jsonschema:"model:<name> or heuristic"`
}

func viewVerdict(v day1.Verdict) VerdictView {
	return VerdictView{Ref: v.Ref.String(), Status: string(v.Status), Score: v.Score, Explanation: v.Explanation, By: v.By}
}

// EventView is one step of a timeline.
type EventView struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	ID      string    `json:"id"`
	Branch  string    `json:"branch,omitempty"`
	Agent   string    `json:"agent,omitempty"`
	Summary string    `json:"summary"`
}
