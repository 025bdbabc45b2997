// Package agenttool describes day1's memory operations as tools an agent calls: each
// Tool has a name, a description for the model, the JSON schema of its input, and a
// function that runs it on a day1.Client. The framework adapters turn the same list
// into their own tools (contrib/adk as ADK function tools, contrib/eino as Eino
// invokable tools), so agents on every framework get one set of tools, described once.
//
// The tools: search_memory, search_memory_at (a search of the past), write_fact,
// correct_fact, create_branch, diff_branches, merge_branch, create_snapshot, hand_off
// and accept_handoff. Their
// inputs and outputs are JSON objects with snake_case fields. Bad input is an error
// that wraps day1.ErrInvalidArgument and names the field; the Client's errors are
// returned as they are.
package agenttool

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

// Tool is one memory operation an agent can call.
type Tool struct {
	// Name is the tool's name, as the model calls it.
	Name string
	// Description tells the model what the tool does and when to call it.
	Description string
	// InputSchema is the JSON schema of the tool's input, an object.
	InputSchema *jsonschema.Schema
	// Run runs the tool on c with its input as a JSON object and returns its output,
	// a value that encodes as a JSON object.
	Run func(ctx context.Context, c *day1.Client, input json.RawMessage) (any, error)
}

// Tools returns every tool, in a stable order. Each call returns a new list.
func Tools() []Tool {
	return []Tool{
		tool("search_memory", "Search the memory for facts, observations and conversation turns relevant to a query (keyword and semantic ranking fused). Returns nothing when nothing is relevant. Call it before answering from what earlier sessions or other agents learned.", searchMemory),
		tool("search_memory_at", "Search the memory as it was at a past instant or snapshot: what was known then.", searchMemoryAt),
		tool("write_fact", "Store one fact learned while working (a decision, a convention, a cause, a preference) so later sessions and other agents find it. Repeats are deduplicated and near-duplicates superseded; contradictions with what memory holds are reported.", writeFact),
		tool("correct_fact", "Correct a fact that is wrong or out of date: update its text (a new version; the old one stays in history), invalidate it, or delete it. Say why.", correctFact),
		tool("create_branch", "Create a memory branch: an isolated copy of a branch's memory to work in, merged back later.", createBranch),
		tool("diff_branches", "Show what a source branch changed compared with a target branch since they parted, and where the two conflict.", diffBranches),
		tool("merge_branch", "Merge a source branch's memory into a target branch, atomically. With the fail policy (the default) a conflict refuses the merge; skip keeps the target's side, accept takes the source's.", mergeBranch),
		tool("create_snapshot", "Name the current state of a branch's memory, so that it can be searched later as it is now.", createSnapshot),
		tool("hand_off", "Hand a task's work over to another agent: freeze what the task knows (its verified facts, objectives, blockers) with instructions in a pending handoff that the receiver accepts with accept_handoff.", handOff),
		tool("accept_handoff", "Accept a handoff offered to you: join its task on a branch of your own and get what the previous agent knew, the instructions, the objectives still open and the blockers.", acceptHandoff),
	}
}

// Find returns the tool of a name.
func Find(name string) (Tool, bool) {
	for _, t := range Tools() {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// tool makes a Tool of a typed function: the schema is inferred from In, and the
// input is decoded into In, refusing unknown fields.
func tool[In any, Out any](name, description string, run func(context.Context, *day1.Client, In) (Out, error)) Tool {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("agenttool: the schema of %s: %v", name, err)) // a bug in this package's types
	}
	return Tool{Name: name, Description: description, InputSchema: schema,
		Run: func(ctx context.Context, c *day1.Client, input json.RawMessage) (any, error) {
			var in In
			if len(bytes.TrimSpace(input)) > 0 {
				dec := json.NewDecoder(bytes.NewReader(input))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&in); err != nil {
					return nil, store.Invalid("input", "must be a JSON object of the tool's fields: "+err.Error(), nil)
				}
			}
			return run(ctx, c, in)
		}}
}

// SearchInput is the input of search_memory.
type SearchInput struct {
	Query          string   `json:"query" jsonschema:"what to look for, in natural language or keywords"`
	Branch         string   `json:"branch,omitempty" jsonschema:"branch to search (default main)"`
	Limit          int      `json:"limit,omitempty" jsonschema:"most hits to return, 1 to 50 (default 10)"`
	Kinds          []string `json:"kinds,omitempty" jsonschema:"search these kinds only: fact, observation, conversation, message (default all)"`
	MinRelevance   *float64 `json:"min_relevance,omitempty" jsonschema:"return nothing unless a hit reaches this relevance, 0 to 1 (default 0.3; 0 returns every hit)"`
	IncludeExpired bool     `json:"include_expired,omitempty" jsonschema:"also return facts whose expiry has passed"`
}

// SearchAtInput is the input of search_memory_at.
type SearchAtInput struct {
	SearchInput
	At string `json:"at" jsonschema:"the past to search: an RFC 3339 instant such as 2026-12-01T09:00:00Z, or a snapshot's name"`
}

// Hit is one search result.
type Hit struct {
	Kind      string    `json:"kind" jsonschema:"fact, observation, conversation or message"`
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	Relevance float64   `json:"relevance" jsonschema:"how much of the query the hit matches, 0 to 1"`
	Branch    string    `json:"branch"`
	CreatedAt time.Time `json:"created_at"`
}

// SearchOutput is the output of search_memory and search_memory_at.
type SearchOutput struct {
	Hits []Hit `json:"hits"`
}

func searchMemory(ctx context.Context, c *day1.Client, in SearchInput) (SearchOutput, error) {
	return search(ctx, c, in)
}

func searchMemoryAt(ctx context.Context, c *day1.Client, in SearchAtInput) (SearchOutput, error) {
	at := day1.At{Snapshot: in.At}
	if t, err := time.Parse(time.RFC3339, in.At); err == nil {
		at = day1.At{Time: t}
	} else if strings.TrimSpace(in.At) == "" {
		return SearchOutput{}, store.Invalid("at", "must name an RFC 3339 instant or a snapshot", in.At)
	}
	return search(ctx, c.TimeTravel(at), in.SearchInput)
}

func search(ctx context.Context, r day1.Reader, in SearchInput) (SearchOutput, error) {
	if in.Limit < 0 || in.Limit > 50 {
		return SearchOutput{}, store.Invalid("limit", "must be between 1 and 50 (0 means 10)", in.Limit)
	}
	q := day1.SearchQuery{Branch: in.Branch, Text: in.Query, Limit: in.Limit, IncludeExpired: in.IncludeExpired,
		MinRelevance: day1.DefaultMinRelevance}
	if in.MinRelevance != nil {
		q.MinRelevance = *in.MinRelevance
	}
	for _, k := range in.Kinds {
		q.Kinds = append(q.Kinds, day1.Kind(k))
	}
	hits, err := r.Search(ctx, q)
	if err != nil {
		return SearchOutput{}, err
	}
	out := SearchOutput{Hits: make([]Hit, len(hits))}
	for i, h := range hits {
		out.Hits[i] = Hit{Kind: string(h.Record.RecordKind()), ID: h.Record.RecordID(), Text: store.SearchText(h.Record),
			Relevance: h.Relevance, Branch: h.Record.RecordBranch(), CreatedAt: h.Record.RecordTime()}
	}
	return out, nil
}

// WriteFactInput is the input of write_fact.
type WriteFactInput struct {
	Text       string   `json:"text" jsonschema:"the fact, one self-contained statement, such as 'The auth service signs JWTs with RS256'"`
	Category   string   `json:"category,omitempty" jsonschema:"a category such as architecture, bug_fix, preference, convention"`
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"how sure you are, 0 to 1 (default 0.8)"`
	Branch     string   `json:"branch,omitempty" jsonschema:"branch to write to (default main)"`
	ExpiresIn  string   `json:"expires_in,omitempty" jsonschema:"how long the fact holds, such as 72h; searches leave it out afterwards (default: it never expires)"`
}

// WriteFactOutput is the output of write_fact.
type WriteFactOutput struct {
	Outcome     string   `json:"outcome" jsonschema:"created, deduplicated, updated or superseded"`
	FactID      string   `json:"fact_id"`
	Replaced    string   `json:"replaced,omitempty" jsonschema:"the fact a superseding or deduplicated write matched"`
	Contradicts []string `json:"contradicts,omitempty" jsonschema:"ids of live facts this one contradicts: correct the wrong one with correct_fact"`
}

func writeFact(ctx context.Context, c *day1.Client, in WriteFactInput) (WriteFactOutput, error) {
	f := day1.Fact{Text: in.Text, Category: in.Category, Branch: in.Branch, Confidence: 0.8}
	if in.Confidence != nil {
		f.Confidence = *in.Confidence
	}
	if in.ExpiresIn != "" {
		d, err := time.ParseDuration(in.ExpiresIn)
		if err != nil || d <= 0 {
			return WriteFactOutput{}, store.Invalid("expires_in", "must be a positive duration such as 72h or 30m", in.ExpiresIn)
		}
		f.TTL = d
	}
	w, err := c.WriteFact(ctx, f)
	if err != nil {
		return WriteFactOutput{}, err
	}
	out := WriteFactOutput{Outcome: string(w.Outcome), FactID: w.Record.ID, Replaced: w.Replaced}
	for _, x := range w.Contradicts {
		out.Contradicts = append(out.Contradicts, x.FactID)
	}
	return out, nil
}

// CorrectFactInput is the input of correct_fact.
type CorrectFactInput struct {
	FactID string `json:"fact_id" jsonschema:"the fact to correct"`
	Action string `json:"action" jsonschema:"update (a new version with the new text), invalidate (the fact is wrong) or delete"`
	Text   string `json:"text,omitempty" jsonschema:"update: the corrected text"`
	Reason string `json:"reason" jsonschema:"why the fact is corrected"`
	By     string `json:"by,omitempty" jsonschema:"who corrects it (default agent)"`
	Branch string `json:"branch,omitempty" jsonschema:"branch of the fact (default main)"`
}

// FactOutput is a fact as a tool returns it.
type FactOutput struct {
	FactID string `json:"fact_id"`
	Text   string `json:"text"`
	Status string `json:"status"`
	Branch string `json:"branch"`
}

func correctFact(ctx context.Context, c *day1.Client, in CorrectFactInput) (FactOutput, error) {
	fc := day1.FactCorrection{Branch: in.Branch, ID: in.FactID, Action: day1.CorrectionAction(in.Action), Why: in.Reason, By: in.By}
	if fc.By == "" {
		fc.By = "agent"
	}
	if in.Text != "" {
		fc.Text = &in.Text
	}
	f, err := c.CorrectFact(ctx, fc)
	if err != nil {
		return FactOutput{}, err
	}
	return FactOutput{FactID: f.ID, Text: f.Text, Status: string(f.Status), Branch: f.Branch}, nil
}

// CreateBranchInput is the input of create_branch.
type CreateBranchInput struct {
	Name string `json:"name" jsonschema:"the new branch's name, such as task/fix-auth/agent-a"`
	From string `json:"from,omitempty" jsonschema:"the branch it starts from (default main)"`
}

// BranchOutput is a branch as a tool returns it.
type BranchOutput struct {
	Name   string `json:"name"`
	Parent string `json:"parent"`
}

func createBranch(ctx context.Context, c *day1.Client, in CreateBranchInput) (BranchOutput, error) {
	b, err := c.Branch(ctx, in.Name, day1.BranchOptions{From: in.From})
	if err != nil {
		return BranchOutput{}, err
	}
	return BranchOutput{Name: b.Name, Parent: b.Parent}, nil
}

// DiffInput is the input of diff_branches.
type DiffInput struct {
	Source string `json:"source" jsonschema:"the branch whose changes are shown"`
	Target string `json:"target,omitempty" jsonschema:"the branch compared with (default main)"`
}

// ChangeOutput is one change of a diff.
type ChangeOutput struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Op   string `json:"op" jsonschema:"added, modified or deleted"`
	Text string `json:"text,omitempty"`
}

// ConflictOutput is one conflict of a diff or a merge.
type ConflictOutput struct {
	ID     string `json:"id"`
	Reason string `json:"reason" jsonschema:"both_changed, both_superseded, contradictory or duplicate"`
	Source string `json:"source_text,omitempty"`
	Target string `json:"target_text,omitempty"`
}

// DiffOutput is the output of diff_branches.
type DiffOutput struct {
	Changes   []ChangeOutput   `json:"changes" jsonschema:"what the source changed"`
	Conflicts []ConflictOutput `json:"conflicts" jsonschema:"where the two sides conflict"`
}

func diffBranches(ctx context.Context, c *day1.Client, in DiffInput) (DiffOutput, error) {
	d, err := c.Diff(ctx, in.Source, cmp.Or(in.Target, day1.DefaultBranch))
	if err != nil {
		return DiffOutput{}, err
	}
	out := DiffOutput{Changes: []ChangeOutput{}, Conflicts: conflicts(d.Conflicts)}
	for _, ch := range d.SourceChanges {
		co := ChangeOutput{Kind: string(ch.Ref.Kind), ID: ch.Ref.ID, Op: string(ch.Op)}
		if ch.After != nil {
			co.Text = store.SearchText(ch.After)
		}
		out.Changes = append(out.Changes, co)
	}
	return out, nil
}

func conflicts(cs []store.Conflict) []ConflictOutput {
	out := []ConflictOutput{}
	for _, c := range cs {
		co := ConflictOutput{ID: c.Ref.ID, Reason: string(c.Reason)}
		if c.Source.After != nil {
			co.Source = store.SearchText(c.Source.After)
		}
		if c.Target.After != nil {
			co.Target = store.SearchText(c.Target.After)
		}
		out = append(out, co)
	}
	return out
}

// MergeInput is the input of merge_branch.
type MergeInput struct {
	Source string `json:"source" jsonschema:"the branch merged"`
	Target string `json:"target,omitempty" jsonschema:"the branch merged into (default main)"`
	Policy string `json:"policy,omitempty" jsonschema:"what to do about conflicts: fail (the default: refuse the merge), skip (keep the target's side) or accept (take the source's)"`
}

// MergeOutput is the output of merge_branch.
type MergeOutput struct {
	MergeID   string           `json:"merge_id"`
	Merged    int              `json:"merged" jsonschema:"records the merge wrote or deleted on the target"`
	Conflicts []ConflictOutput `json:"conflicts" jsonschema:"the conflicts met; with the fail policy, those that refused the merge"`
	Applied   bool             `json:"applied"`
}

func mergeBranch(ctx context.Context, c *day1.Client, in MergeInput) (MergeOutput, error) {
	res, err := c.Merge(ctx, day1.MergeRequest{Source: in.Source, Target: cmp.Or(in.Target, day1.DefaultBranch),
		Policy: day1.ConflictPolicy(in.Policy), MergedBy: "agent"})
	var mc *day1.MergeConflictError
	if errors.As(err, &mc) {
		return MergeOutput{Conflicts: conflicts(mc.Conflicts)}, nil
	}
	if err != nil {
		return MergeOutput{}, err
	}
	out := MergeOutput{MergeID: res.Record.ID, Merged: len(res.Record.Merged), Applied: res.Applied, Conflicts: []ConflictOutput{}}
	if res.Diff != nil {
		out.Conflicts = conflicts(res.Diff.Conflicts)
	}
	return out, nil
}

// SnapshotInput is the input of create_snapshot.
type SnapshotInput struct {
	Name        string `json:"name" jsonschema:"the snapshot's name, such as before-refactor"`
	Branch      string `json:"branch,omitempty" jsonschema:"the branch (default main)"`
	Description string `json:"description,omitempty" jsonschema:"what the snapshot marks"`
}

// SnapshotOutput is the output of create_snapshot.
type SnapshotOutput struct {
	Name      string    `json:"name"`
	Branch    string    `json:"branch"`
	CreatedAt time.Time `json:"created_at"`
}

func createSnapshot(ctx context.Context, c *day1.Client, in SnapshotInput) (SnapshotOutput, error) {
	sn, err := c.Snapshot(ctx, in.Branch, in.Name, day1.SnapshotOptions{Description: in.Description})
	if err != nil {
		return SnapshotOutput{}, err
	}
	return SnapshotOutput{Name: sn.Name, Branch: sn.Branch, CreatedAt: sn.CreatedAt}, nil
}

// HandOffInput is the input of hand_off.
type HandOffInput struct {
	Task         string   `json:"task" jsonschema:"the task whose work is handed over"`
	FromAgent    string   `json:"from_agent" jsonschema:"the agent handing over, a member of the task"`
	ToAgent      string   `json:"to_agent,omitempty" jsonschema:"the agent to receive it (default any agent may accept)"`
	Instructions string   `json:"instructions,omitempty" jsonschema:"what the receiver should do next"`
	Blockers     []string `json:"blockers,omitempty" jsonschema:"known obstacles"`
	Type         string   `json:"type,omitempty" jsonschema:"full (the default: everything the task knows), partial, escalation, review or session_handoff"`
	// IncludeUnverified hands over facts no judge has verified too.
	IncludeUnverified bool `json:"include_unverified,omitempty" jsonschema:"also hand over facts that were not verified (default only verified ones)"`
}

// HandOffOutput is the output of hand_off.
type HandOffOutput struct {
	HandoffID string `json:"handoff_id" jsonschema:"what the receiver passes to accept_handoff"`
	Status    string `json:"status"`
	ToAgent   string `json:"to_agent,omitempty"`
}

func handOff(ctx context.Context, c *day1.Client, in HandOffInput) (HandOffOutput, error) {
	h, err := c.Handoff(ctx, day1.HandoffRequest{Task: in.Task, FromAgent: in.FromAgent, ToAgent: in.ToAgent,
		Instructions: in.Instructions, Blockers: in.Blockers, Type: day1.HandoffType(in.Type),
		IncludeUnverified: in.IncludeUnverified})
	if err != nil {
		return HandOffOutput{}, err
	}
	return HandOffOutput{HandoffID: h.ID, Status: string(h.Status), ToAgent: h.ToAgent}, nil
}

// AcceptInput is the input of accept_handoff.
type AcceptInput struct {
	HandoffID string `json:"handoff_id" jsonschema:"the handoff, from hand_off"`
	Agent     string `json:"agent" jsonschema:"you, the receiving agent"`
}

// AcceptOutput is the output of accept_handoff: where to work and what the task
// knows.
type AcceptOutput struct {
	Branch            string   `json:"branch" jsonschema:"your branch of the task's memory, where to write what you learn"`
	FromAgent         string   `json:"from_agent,omitempty"`
	Instructions      string   `json:"instructions,omitempty"`
	Facts             []string `json:"facts" jsonschema:"what the task knows"`
	PendingObjectives []string `json:"pending_objectives" jsonschema:"the task's objectives not done yet"`
	Blockers          []string `json:"blockers"`
}

func acceptHandoff(ctx context.Context, c *day1.Client, in AcceptInput) (AcceptOutput, error) {
	a, err := c.AcceptHandoff(ctx, day1.AcceptRequest{Handoff: in.HandoffID, Agent: in.Agent})
	if err != nil {
		return AcceptOutput{}, err
	}
	p := a.Packet
	out := AcceptOutput{Branch: a.Branch, FromAgent: p.FromAgent, Instructions: p.Instructions,
		Facts: []string{}, PendingObjectives: []string{}, Blockers: append([]string{}, p.Blockers...)}
	for _, f := range p.Facts {
		out.Facts = append(out.Facts, f.Text)
	}
	for _, o := range p.PendingObjectives {
		out.PendingObjectives = append(out.PendingObjectives, o.Description)
	}
	return out, nil
}
