package agenttool_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
)

// run calls a tool by name with input, and returns its output as a JSON object
// decoded into out.
func run(t *testing.T, c *day1.Client, name, input string, out any) error {
	t.Helper()
	tl, ok := agenttool.Find(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	res, err := tl.Run(context.Background(), c, json.RawMessage(input))
	if err != nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
	return nil
}

// must is run that fails the test on error.
func must(t *testing.T, c *day1.Client, name, input string, out any) {
	t.Helper()
	if err := run(t, c, name, input, out); err != nil {
		t.Fatalf("%s %s: %v", name, input, err)
	}
}

// TestSchemas checks that every tool has a unique name, a description and an object
// schema whose properties and required fields are those of its input.
func TestSchemas(t *testing.T) {
	seen := map[string]bool{}
	for _, tl := range agenttool.Tools() {
		if seen[tl.Name] || tl.Description == "" || tl.InputSchema == nil || tl.InputSchema.Type != "object" || len(tl.InputSchema.Properties) == 0 {
			t.Errorf("tool %q: duplicate %v, description %q, schema %+v", tl.Name, seen[tl.Name], tl.Description, tl.InputSchema)
		}
		seen[tl.Name] = true
	}
	search, _ := agenttool.Find("search_memory_at")
	for _, p := range []string{"query", "at", "limit", "include_expired"} {
		if search.InputSchema.Properties[p] == nil {
			t.Errorf("search_memory_at has no property %q", p)
		}
	}
	if !slices.Contains(search.InputSchema.Required, "query") || !slices.Contains(search.InputSchema.Required, "at") {
		t.Errorf("search_memory_at requires %v; want query and at", search.InputSchema.Required)
	}
}

// TestToolsWorkTogether writes, searches, branches, diffs, merges (refused for a
// conflict, then accepting the source), snapshots, searches the past and corrects,
// through the tools alone.
func TestToolsWorkTogether(t *testing.T) {
	ctx := context.Background()
	c, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var w agenttool.WriteFactOutput
	must(t, c, "write_fact", `{"text":"The API listens on port 8080","category":"config"}`, &w)
	if w.Outcome != "created" || w.FactID == "" {
		t.Fatalf("write_fact: %+v", w)
	}
	port := w.FactID
	var found agenttool.SearchOutput
	must(t, c, "search_memory", `{"query":"which port does the API listen on"}`, &found)
	if len(found.Hits) != 1 || found.Hits[0].ID != port || found.Hits[0].Relevance <= 0 {
		t.Fatalf("search_memory: %+v", found)
	}
	must(t, c, "search_memory", `{"query":"quantum banana smoothie"}`, &found)
	if len(found.Hits) != 0 {
		t.Errorf("a search about nothing in memory found %+v", found.Hits)
	}

	var sn agenttool.SnapshotOutput
	must(t, c, "create_snapshot", `{"name":"before"}`, &sn)
	must(t, c, "create_branch", `{"name":"agent-a"}`, nil)
	must(t, c, "correct_fact", `{"fact_id":"`+port+`","action":"update","text":"The API listens on port 9090","reason":"moved","branch":"agent-a"}`, nil)
	must(t, c, "correct_fact", `{"fact_id":"`+port+`","action":"update","text":"The API listens on port 7070","reason":"moved too"}`, nil)

	var d agenttool.DiffOutput
	must(t, c, "diff_branches", `{"source":"agent-a"}`, &d)
	if len(d.Changes) != 1 || d.Changes[0].ID != port || len(d.Conflicts) != 1 || d.Conflicts[0].Reason != "both_changed" {
		t.Fatalf("diff_branches: %+v", d)
	}
	var m agenttool.MergeOutput
	must(t, c, "merge_branch", `{"source":"agent-a"}`, &m)
	if m.Applied || len(m.Conflicts) != 1 {
		t.Fatalf("merge_branch with the fail policy: %+v; want it refused with the conflict", m)
	}
	must(t, c, "merge_branch", `{"source":"agent-a","policy":"accept"}`, &m)
	if !m.Applied || m.MergeID == "" {
		t.Fatalf("merge_branch accepting the source: %+v", m)
	}
	must(t, c, "search_memory", `{"query":"API port","kinds":["fact"]}`, &found)
	if len(found.Hits) != 1 || found.Hits[0].Text != "The API listens on port 9090" {
		t.Errorf("after the merge: %+v", found.Hits)
	}
	must(t, c, "search_memory_at", `{"query":"API port","at":"before","kinds":["fact"]}`, &found)
	if len(found.Hits) != 1 || found.Hits[0].Text != "The API listens on port 8080" {
		t.Errorf("the past at the snapshot: %+v", found.Hits)
	}
	var at agenttool.SearchOutput
	must(t, c, "search_memory_at", `{"query":"API port","at":"`+sn.CreatedAt.Format("2006-01-02T15:04:05.999999999Z07:00")+`"}`, &at)
	if len(at.Hits) != 1 || at.Hits[0].Text != "The API listens on port 8080" {
		t.Errorf("the past at the snapshot's instant: %+v", at.Hits)
	}
}

// TestHandOff hands a task's work from one agent to another through the tools: the
// receiver gets its branch, the instructions, the facts and the open objectives, and
// a second accept is refused.
func TestHandOff(t *testing.T) {
	ctx := context.Background()
	c, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateTask(ctx, day1.TaskSpec{Name: "fix-refresh", Objectives: []string{"Find the cause", "Fix it"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.JoinTask(ctx, day1.JoinRequest{Task: "fix-refresh", Agent: "ann"}); err != nil {
		t.Fatal(err)
	}
	must(t, c, "write_fact", `{"text":"The refresh handler skips the expiry check","branch":"task/fix-refresh/ann"}`, nil)
	var h agenttool.HandOffOutput
	must(t, c, "hand_off", `{"task":"fix-refresh","from_agent":"ann","to_agent":"bob","instructions":"Add the check and a test","blockers":["CI is slow"],"include_unverified":true}`, &h)
	if h.HandoffID == "" || h.Status != "pending" || h.ToAgent != "bob" {
		t.Fatalf("hand_off: %+v", h)
	}
	var a agenttool.AcceptOutput
	must(t, c, "accept_handoff", `{"handoff_id":"`+h.HandoffID+`","agent":"bob"}`, &a)
	want := agenttool.AcceptOutput{Branch: "task/fix-refresh/bob", FromAgent: "ann", Instructions: "Add the check and a test",
		Facts: []string{"The refresh handler skips the expiry check"}, PendingObjectives: []string{"Find the cause", "Fix it"},
		Blockers: a.Blockers}
	if !slices.Contains(a.Blockers, "CI is slow") || !reflect.DeepEqual(a, want) {
		t.Errorf("accept_handoff: %+v; want %+v with the blocker CI is slow", a, want)
	}
	if err := run(t, c, "accept_handoff", `{"handoff_id":"`+h.HandoffID+`","agent":"bob"}`, nil); !errors.Is(err, day1.ErrConflict) {
		t.Errorf("a second accept: %v; want ErrConflict", err)
	}
	if err := run(t, c, "hand_off", `{"task":"fix-refresh","from_agent":"ann","type":"sideways"}`, nil); !errors.Is(err, day1.ErrInvalidArgument) {
		t.Errorf("hand_off of an unknown type: %v; want ErrInvalidArgument", err)
	}
}

// TestBadInput checks that bad input is an error wrapping day1.ErrInvalidArgument and
// that the Client's own errors come back as they are.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	c, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for name, input := range map[string]string{
		"write_fact":       `{"text":"x","colour":"blue"}`,
		"search_memory":    `{"query":"x","limit":500}`,
		"search_memory_at": `{"query":"x","at":""}`,
		"correct_fact":     `[1, 2]`,
		"merge_branch":     `{"source":"main","policy":"maybe"}`,
	} {
		if err := run(t, c, name, input, nil); !errors.Is(err, day1.ErrInvalidArgument) {
			t.Errorf("%s %s: %v; want ErrInvalidArgument", name, input, err)
		}
	}
	if err := run(t, c, "write_fact", `{"text":"the freeze holds","expires_in":"soon"}`, nil); !errors.Is(err, day1.ErrInvalidArgument) {
		t.Errorf("write_fact with a bad expires_in: %v", err)
	}
	if err := run(t, c, "diff_branches", `{"source":"nowhere"}`, nil); !errors.Is(err, day1.ErrBranchNotFound) {
		t.Errorf("diff_branches of a missing branch: %v; want ErrBranchNotFound", err)
	}
}
