package agenttool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
)

func open(t *testing.T) *day1.Client {
	t.Helper()
	c, err := day1.Open(context.Background(), day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// run calls a tool by name with input for s, checks its output against the tool's
// output schema, and decodes the output into out.
func run(t *testing.T, s *agenttool.Session, name, input string, out any) error {
	t.Helper()
	tl, ok := agenttool.Find(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	res, err := tl.Run(context.Background(), s, json.RawMessage(input))
	if err != nil {
		return err
	}
	if res.Text == "" {
		t.Errorf("%s answered no text", name)
	}
	b, err := json.Marshal(res.Output)
	if err != nil {
		t.Fatal(err)
	}
	valid(t, tl.OutputSchema, b, name)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
	return nil
}

// must is run that fails the test on error.
func must(t *testing.T, s *agenttool.Session, name, input string, out any) {
	t.Helper()
	if err := run(t, s, name, input, out); err != nil {
		t.Fatalf("%s %s: %v", name, input, err)
	}
}

// valid fails the test unless the JSON b is valid under schema.
func valid(t *testing.T, schema *jsonschema.Schema, b []byte, what string) {
	t.Helper()
	rs, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: the schema does not resolve: %v", what, err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("%s: the output does not match its schema: %v\n%s", what, err, b)
	}
}

// Every tool has a unique memory_ name, a description and object schemas, and Find
// finds it; each call of Tools returns a list of its own.
func TestToolsAreDescribed(t *testing.T) {
	seen := map[string]bool{}
	tools := agenttool.Tools()
	for _, tl := range tools {
		if seen[tl.Name] || !strings.HasPrefix(tl.Name, "memory_") || tl.Description == "" || tl.Run == nil {
			t.Errorf("tool %q: duplicate %v, description %q", tl.Name, seen[tl.Name], tl.Description)
		}
		seen[tl.Name] = true
		for what, s := range map[string]*jsonschema.Schema{"input": tl.InputSchema, "output": tl.OutputSchema} {
			if s == nil || s.Type != "object" {
				t.Errorf("%s: the %s schema is %+v; want an object", tl.Name, what, s)
			}
		}
		if got, ok := agenttool.Find(tl.Name); !ok || got.Name != tl.Name {
			t.Errorf("Find(%q) = %q, %v", tl.Name, got.Name, ok)
		}
	}
	if len(tools) < 30 {
		t.Errorf("%d tools", len(tools))
	}
	tools[0].Name = "changed"
	if agenttool.Tools()[0].Name == "changed" {
		t.Error("Tools returned a list another call shares")
	}
	if _, ok := agenttool.Find("search_memory"); ok {
		t.Error("Find found a tool of a name no tool has")
	}
}

// A session carries its current branch from one call to the next, and another
// session of the same memory has its own; the caller's name is recorded where a call
// names nobody.
func TestSessions(t *testing.T) {
	c := open(t)
	a := agenttool.NewSession(c, "agent-a")
	b := agenttool.NewSession(c, "")
	if b.Caller() != "agent" || a.Client() != c {
		t.Errorf("NewSession: caller %q, client %p; want agent, %p", b.Caller(), a.Client(), c)
	}
	must(t, a, "memory_branch_create", `{"branch_name":"task/a"}`, nil)
	var sw agenttool.BranchSwitchOut
	must(t, a, "memory_branch_switch", `{"branch_name":"task/a"}`, &sw)
	if sw.Current != "task/a" || sw.Previous != "main" || a.Branch() != "task/a" {
		t.Errorf("switch = %+v, session branch %q", sw, a.Branch())
	}
	var wa, wb agenttool.WriteFactOut
	must(t, a, "memory_write_fact", `{"fact_text":"Agent A works on the token cache"}`, &wa)
	must(t, b, "memory_write_fact", `{"fact_text":"Agent B works on the rate limiter"}`, &wb)
	if wa.Fact.Branch != "task/a" || wb.Fact.Branch != "main" {
		t.Errorf("writes landed on %s and %s; want task/a and main", wa.Fact.Branch, wb.Fact.Branch)
	}
	var fixed agenttool.CorrectFactOut
	must(t, a, "memory_fact_correct", `{"fact_id":"`+wa.FactID+`","action":"update","fact_text":"Agent A works on the session cache","reason":"misread the ticket"}`, &fixed)
	if fixed.Fact.Text != "Agent A works on the session cache" || fixed.Fact.Metadata["corrected_by"] != "agent-a" {
		t.Errorf("correction = %+v; want the new text, corrected by agent-a", fixed.Fact)
	}
	var found agenttool.SearchOut
	must(t, b, "memory_search", `{"query":"session cache","branch":"task/a"}`, &found)
	if len(found.Hits) == 0 || found.Hits[0].ID != wa.FactID {
		t.Errorf("search of task/a = %+v; want %s", found.Hits, wa.FactID)
	}
	var merged agenttool.BranchMergeOut
	must(t, a, "memory_branch_merge", `{"source_branch":"task/a"}`, &merged)
	ms, err := c.Merges(context.Background(), day1.MergeFilter{Target: day1.DefaultBranch})
	if err != nil || len(ms) != 1 || ms[0].ID != merged.MergeID || ms[0].MergedBy != "agent-a" {
		t.Errorf("merges into main: %+v, %v; want %s, merged by agent-a", ms, err, merged.MergeID)
	}
}

// Bad input is an invalid argument naming what is wrong; a tool without a session
// says so.
func TestBadInput(t *testing.T) {
	s := agenttool.NewSession(open(t), "test")
	for _, c := range []struct{ tool, input, field string }{
		{"memory_search", `{"query":"x","bogus":1}`, "input"},
		{"memory_search", `{"query":`, "input"},
		{"memory_write_fact", `{"fact_text":"x","expires_in":"soon"}`, "expires_in"},
		{"memory_search", `{"query":"x","limit":-1}`, "SearchQuery.Limit"},
	} {
		err := run(t, s, c.tool, c.input, nil)
		var ve *day1.ValidationError
		if !errors.Is(err, day1.ErrInvalidArgument) || !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s %s: %v; want an invalid %s", c.tool, c.input, err, c.field)
		}
	}
	tl, _ := agenttool.Find("memory_search")
	if _, err := tl.Run(context.Background(), nil, json.RawMessage(`{"query":"x"}`)); !errors.Is(err, day1.ErrInvalidArgument) {
		t.Errorf("a call with no session: %v; want ErrInvalidArgument", err)
	}
}
