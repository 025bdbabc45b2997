package agenttool

import (
	"context"
	"fmt"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
	"github.com/day1ai/day1/store"
)

// defaultConfidence is the confidence of a fact written without one.
const defaultConfidence = 0.8

// WriteFactIn is the input of memory_write_fact.
type WriteFactIn struct {
	FactText   string   `json:"fact_text" jsonschema:"the fact, one self-contained statement in natural language, e.g. 'The auth service signs JWTs with RS256'"`
	Category   string   `json:"category,omitempty" jsonschema:"a category such as architecture, bug_fix, preference, convention"`
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"how sure you are, 0 to 1 (default 0.8)"`
	Branch     string   `json:"branch,omitempty" jsonschema:"branch to write to (default: this session's current branch, else main)"`
	SessionID  string   `json:"session_id,omitempty" jsonschema:"the session that learned it"`
	TaskID     string   `json:"task_id,omitempty" jsonschema:"the task it belongs to"`
	AgentID    string   `json:"agent_id,omitempty" jsonschema:"the agent that wrote it"`
	ExpiresIn  string   `json:"expires_in,omitempty" jsonschema:"how long the fact holds, as a Go duration such as 72h or 30m; searches leave it out afterwards (default: it never expires)"`
	ExpiresAt  string   `json:"expires_at,omitempty" jsonschema:"when the fact stops holding, RFC 3339 (e.g. 2026-12-11T18:00:00Z); give this or expires_in"`
}

// WriteFactOut is the output of memory_write_fact.
type WriteFactOut struct {
	Outcome    string   `json:"outcome" jsonschema:"created, deduplicated (the same fact was there), updated or superseded (it replaced a near-duplicate)"`
	FactID     string   `json:"fact_id"`
	Replaced   string   `json:"replaced,omitempty" jsonschema:"the fact a superseding or deduplicated write matched"`
	Similarity float64  `json:"similarity,omitempty"`
	Fact       FactView `json:"fact"`
	EmbedError string   `json:"embed_error,omitempty" jsonschema:"why the fact was stored without an embedding (it stays keyword-searchable)"`
	// Contradicts lists the live facts the new fact contradicts.
	Contradicts []ContradictedView `json:"contradicts,omitempty" jsonschema:"live facts this one contradicts (other values or the opposite statement about the same subject): correct or invalidate the wrong one with memory_fact_correct"`
}

// ContradictedView is a live fact a new fact contradicts.
type ContradictedView struct {
	FactID string `json:"fact_id"`
	Kind   string `json:"kind" jsonschema:"value or negation"`
	Theirs string `json:"theirs,omitempty" jsonschema:"what the live fact says"`
	Mine   string `json:"mine,omitempty" jsonschema:"what the new fact says"`
}

// CorrectFactIn is the input of memory_fact_correct.
type CorrectFactIn struct {
	FactID     string            `json:"fact_id" jsonschema:"the fact to correct"`
	Action     string            `json:"action" jsonschema:"update (a new version with the fields given; the old one stays in history), invalidate (the fact is wrong: it leaves search) or delete (it should never have been stored)"`
	FactText   string            `json:"fact_text,omitempty" jsonschema:"update: the corrected text"`
	Category   string            `json:"category,omitempty" jsonschema:"update: the corrected category"`
	Confidence *float64          `json:"confidence,omitempty" jsonschema:"update: the corrected confidence, 0 to 1"`
	Metadata   map[string]string `json:"metadata,omitempty" jsonschema:"update: metadata keys to set; an empty value removes the key"`
	Reason     string            `json:"reason" jsonschema:"why the fact is corrected; kept with the correction"`
	By         string            `json:"by,omitempty" jsonschema:"who corrects it (default: the session's caller, such as the MCP client's name)"`
	Branch     string            `json:"branch,omitempty" jsonschema:"branch of the fact (default: this session's current branch, else main)"`
}

// CorrectFactOut is the output of memory_fact_correct.
type CorrectFactOut struct {
	Action string   `json:"action"`
	FactID string   `json:"fact_id"`
	Fact   FactView `json:"fact" jsonschema:"the fact as the correction left it; for a delete, its last version, which records who and why"`
}

// ExtractIn is the input of memory_extract.
type ExtractIn struct {
	Turns          []TurnIn `json:"turns,omitempty" jsonschema:"the conversation's turns, oldest first, when it is not stored; or give conversation_id"`
	ConversationID string   `json:"conversation_id,omitempty" jsonschema:"a stored conversation to read instead of turns"`
	Branch         string   `json:"branch,omitempty" jsonschema:"branch whose memory is kept up to date (default: this session's current branch, else main)"`
	SessionID      string   `json:"session_id,omitempty" jsonschema:"the session the turns belong to, recorded on new facts"`
	TaskID         string   `json:"task_id,omitempty"`
	AgentID        string   `json:"agent_id,omitempty"`
}

// TurnIn is one turn of a conversation given to memory_extract.
type TurnIn struct {
	Role    string `json:"role" jsonschema:"user, assistant, tool_call, tool_result or system"`
	Content string `json:"content"`
}

// ExtractOut is the output of memory_extract.
type ExtractOut struct {
	By          string     `json:"by" jsonschema:"model:<name> when a model read the conversation, heuristic otherwise"`
	Added       []FactView `json:"added" jsonschema:"new facts (a text memory already held comes back as that fact)"`
	Updated     []FactView `json:"updated" jsonschema:"new versions of facts memory held; the old ones stay in history"`
	Invalidated []FactView `json:"invalidated" jsonschema:"facts the conversation showed no longer hold"`
}

// WriteObservationIn is the input of memory_write_observation.
type WriteObservationIn struct {
	ObservationType string `json:"observation_type" jsonschema:"tool_use, discovery, decision, error or insight"`
	Summary         string `json:"summary" jsonschema:"what happened, in one or two sentences"`
	ToolName        string `json:"tool_name,omitempty" jsonschema:"the tool used, e.g. Bash"`
	RawInput        string `json:"raw_input,omitempty" jsonschema:"the tool's input, if useful"`
	RawOutput       string `json:"raw_output,omitempty" jsonschema:"the tool's output, if useful"`
	Branch          string `json:"branch,omitempty" jsonschema:"branch to write to (default: this session's current branch, else main)"`
	SessionID       string `json:"session_id,omitempty"`
	TaskID          string `json:"task_id,omitempty"`
	AgentID         string `json:"agent_id,omitempty"`
}

// WriteObservationOut is the output of memory_write_observation.
type WriteObservationOut struct {
	Outcome       string          `json:"outcome"`
	ObservationID string          `json:"observation_id"`
	Observation   ObservationView `json:"observation"`
}

// WriteRelationIn is the input of memory_write_relation.
type WriteRelationIn struct {
	SourceEntity string            `json:"source_entity" jsonschema:"the entity the relation starts from, e.g. AuthService"`
	TargetEntity string            `json:"target_entity" jsonschema:"the entity it points to, e.g. UserModel"`
	RelationType string            `json:"relation_type" jsonschema:"the kind of relation, e.g. depends_on, calls, owns"`
	Properties   map[string]string `json:"properties,omitempty" jsonschema:"extra string properties of the relation"`
	Branch       string            `json:"branch,omitempty" jsonschema:"branch to write to (default: this session's current branch, else main)"`
	SessionID    string            `json:"session_id,omitempty"`
}

// WriteRelationOut is the output of memory_write_relation.
type WriteRelationOut struct {
	Outcome    string       `json:"outcome"`
	RelationID string       `json:"relation_id"`
	Relation   RelationView `json:"relation"`
}

func writeTools() []Tool {
	return []Tool{
		tool("memory_write_fact",
			"Store one fact learned while working (a decision, a convention, a cause, a preference) so later sessions and other agents can find it. Repeats are deduplicated and near-duplicates superseded.",
			(*caller).writeFact),
		tool("memory_fact_correct",
			"Correct a fact that is wrong or out of date: update its text or fields (a new version; the old one stays in history), invalidate it, or delete it. Say why; who and why are kept with it.",
			(*caller).correctFact),
		tool("memory_extract",
			"Keep what a conversation taught: give its turns (or a stored conversation's id) and memory adds the facts it states, updates the facts it changes and invalidates those it proves wrong, in one atomic write. With a model configured the model decides; without one, findings and decisions of the assistant's turns are added as candidates.",
			(*caller).extract),
		tool("memory_write_observation",
			"Record something that happened: a tool use, a discovery, a decision, an error or an insight. Observations are raw material; memory_session_end consolidates them into candidate facts.",
			(*caller).writeObservation),
		tool("memory_write_relation",
			"Record a typed, directed relation between two entities (source -relation_type-> target) in the knowledge graph; read it back with memory_graph_query.",
			(*caller).writeRelation)}
}

func (m *caller) writeFact(ctx context.Context, in WriteFactIn) (WriteFactOut, string, error) {
	f := day1.Fact{
		Branch: m.branch(in.Branch), Text: in.FactText, Category: in.Category,
		Confidence: orDefault(in.Confidence, defaultConfidence),
		SessionID:  in.SessionID, TaskID: in.TaskID, AgentID: in.AgentID,
	}
	if in.ExpiresIn != "" {
		d, err := time.ParseDuration(in.ExpiresIn)
		if err != nil || d <= 0 {
			return WriteFactOut{}, "", store.Invalid("expires_in", "must be a positive Go duration such as 72h or 30m", in.ExpiresIn)
		}
		f.TTL = d
	}
	if in.ExpiresAt != "" {
		t, err := time.Parse(time.RFC3339, in.ExpiresAt)
		if err != nil {
			return WriteFactOut{}, "", store.Invalid("expires_at", "must be an RFC 3339 time such as 2026-12-11T18:00:00Z", in.ExpiresAt)
		}
		f.ExpiresAt = t
	}
	w, err := m.c.WriteFact(ctx, f)
	if err != nil {
		return WriteFactOut{}, "", err
	}
	out := WriteFactOut{
		Outcome: string(w.Outcome), FactID: w.Record.ID, Replaced: w.Replaced,
		Similarity: w.Similarity, Fact: viewFact(w.Record),
	}
	if w.EmbedErr != nil {
		out.EmbedError = w.EmbedErr.Error()
	}
	msg := fmt.Sprintf("fact %s %s on %s", out.FactID, out.Outcome, w.Record.Branch)
	for _, c := range w.Contradicts {
		out.Contradicts = append(out.Contradicts, ContradictedView{FactID: c.FactID, Kind: string(c.Kind), Theirs: c.Theirs, Mine: c.Mine})
		msg += fmt.Sprintf("; it contradicts fact %s (%q there, %q here)", c.FactID, c.Theirs, c.Mine)
	}
	return out, msg, nil
}

func (m *caller) writeObservation(ctx context.Context, in WriteObservationIn) (WriteObservationOut, string, error) {
	w, err := m.c.WriteObservation(ctx, day1.Observation{
		Branch: m.branch(in.Branch), Type: day1.ObservationType(in.ObservationType),
		Summary: in.Summary, Tool: in.ToolName, RawInput: in.RawInput, RawOutput: in.RawOutput,
		SessionID: in.SessionID, TaskID: in.TaskID, AgentID: in.AgentID,
	})
	if err != nil {
		return WriteObservationOut{}, "", err
	}
	out := WriteObservationOut{Outcome: string(w.Outcome), ObservationID: w.Record.ID, Observation: viewObservation(w.Record)}
	return out, fmt.Sprintf("observation %s %s on %s", out.ObservationID, out.Outcome, w.Record.Branch), nil
}

func (m *caller) writeRelation(ctx context.Context, in WriteRelationIn) (WriteRelationOut, string, error) {
	w, err := m.c.WriteRelation(ctx, day1.Relation{
		Branch: m.branch(in.Branch), Source: in.SourceEntity, Target: in.TargetEntity,
		Type: in.RelationType, Properties: in.Properties, SessionID: in.SessionID, Confidence: 1,
	})
	if err != nil {
		return WriteRelationOut{}, "", err
	}
	out := WriteRelationOut{Outcome: string(w.Outcome), RelationID: w.Record.ID, Relation: viewRelation(w.Record)}
	return out, fmt.Sprintf("relation %s %s on %s: %s", out.RelationID, out.Outcome, w.Record.Branch, memview.Summary(w.Record, 200)), nil
}

func (m *caller) correctFact(ctx context.Context, in CorrectFactIn) (CorrectFactOut, string, error) {
	fc := day1.FactCorrection{
		Branch: m.branch(in.Branch), ID: in.FactID, Action: day1.CorrectionAction(in.Action),
		Confidence: in.Confidence, Metadata: in.Metadata, By: in.By, Why: in.Reason,
	}
	if in.FactText != "" {
		fc.Text = &in.FactText
	}
	if in.Category != "" {
		fc.Category = &in.Category
	}
	if fc.By == "" {
		fc.By = m.name()
	}
	f, err := m.c.CorrectFact(ctx, fc)
	if err != nil {
		return CorrectFactOut{}, "", err
	}
	out := CorrectFactOut{Action: in.Action, FactID: f.ID, Fact: viewFact(f)}
	return out, fmt.Sprintf("fact %s: %s on %s (%s)", f.ID, in.Action, branchName(fc.Branch), in.Reason), nil
}

func (m *caller) extract(ctx context.Context, in ExtractIn) (ExtractOut, string, error) {
	x := day1.Extraction{Branch: m.branch(in.Branch), ConversationID: in.ConversationID,
		SessionID: in.SessionID, TaskID: in.TaskID, AgentID: in.AgentID, By: m.name()}
	for _, t := range in.Turns {
		x.Messages = append(x.Messages, day1.Message{Role: day1.Role(t.Role), Content: t.Content})
	}
	res, err := m.c.ExtractFacts(ctx, x)
	if err != nil {
		return ExtractOut{}, "", err
	}
	out := ExtractOut{By: res.By, Added: []FactView{}, Updated: []FactView{}, Invalidated: []FactView{}}
	for _, w := range res.Added {
		out.Added = append(out.Added, viewFact(w.Fact))
	}
	for _, f := range res.Updated {
		out.Updated = append(out.Updated, viewFact(f))
	}
	for _, f := range res.Invalidated {
		out.Invalidated = append(out.Invalidated, viewFact(f))
	}
	return out, fmt.Sprintf("%d facts added, %d updated, %d invalidated on %s (%s)",
		len(out.Added), len(out.Updated), len(out.Invalidated), branchName(x.Branch), res.By), nil
}
