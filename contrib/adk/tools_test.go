package adk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"testing"

	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
	"github.com/day1ai/day1/contrib/adk"
)

// toolModel is an ADK model.LLM that follows a script with day1's memory tools: a
// turn "remember: X" makes it call memory_write_fact with X, "work on: B" makes it
// create branch B and switch to it, a question (ending in '?') makes
// it call memory_search with it, and a tool's answer makes it reply with what the
// tool returned: "stored <outcome>", or the first hit's text, or "nothing found".
type toolModel struct{}

// Name names the scripted model.
func (toolModel) Name() string { return "tool-script" }

// GenerateContent answers with the script's one reply.
func (m toolModel) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(m.reply(req))
	}
}

func (toolModel) reply(req *model.LLMRequest) (*model.LLMResponse, error) {
	for _, name := range []string{"memory_write_fact", "memory_search"} {
		if _, ok := req.Tools[name]; !ok {
			return nil, fmt.Errorf("the request offers no %s tool", name)
		}
	}
	last := req.Contents[len(req.Contents)-1]
	text := func(s string) (*model.LLMResponse, error) {
		return &model.LLMResponse{Content: genai.NewContentFromText(s, genai.RoleModel), TurnComplete: true}, nil
	}
	call := func(name string, args map[string]any) (*model.LLMResponse, error) {
		p := genai.NewPartFromFunctionCall(name, args)
		p.FunctionCall.ID = "call-" + name
		return &model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{p}}, TurnComplete: true}, nil
	}
	for _, p := range last.Parts {
		r := p.FunctionResponse
		if r == nil {
			continue
		}
		b, _ := json.Marshal(r.Response)
		switch r.Name {
		case "memory_write_fact":
			var w agenttool.WriteFactOut
			if err := json.Unmarshal(b, &w); err != nil {
				return nil, err
			}
			if w.Fact.Branch != "main" {
				return text("stored " + w.Outcome + " on " + w.Fact.Branch)
			}
			return text("stored " + w.Outcome)
		case "memory_branch_create":
			var br agenttool.BranchView
			if err := json.Unmarshal(b, &br); err != nil {
				return nil, err
			}
			return call("memory_branch_switch", map[string]any{"branch_name": br.Name})
		case "memory_branch_switch":
			var sw agenttool.BranchSwitchOut
			if err := json.Unmarshal(b, &sw); err != nil {
				return nil, err
			}
			return text("on " + sw.Current)
		case "memory_search":
			var s agenttool.SearchOut
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, err
			}
			if len(s.Hits) == 0 {
				return text("nothing found")
			}
			return text(s.Hits[0].Text)
		}
		return nil, fmt.Errorf("an answer of %s: %s", r.Name, b)
	}
	var said string
	for _, p := range last.Parts {
		said += p.Text
	}
	if fact, ok := strings.CutPrefix(said, "remember: "); ok {
		return call("memory_write_fact", map[string]any{"fact_text": fact})
	}
	if branch, ok := strings.CutPrefix(said, "work on: "); ok {
		return call("memory_branch_create", map[string]any{"branch_name": branch})
	}
	if strings.HasSuffix(said, "?") {
		return call("memory_search", map[string]any{"query": said})
	}
	return text("ok")
}

// TestMemoryToolsInARunner gives an ADK LLM agent day1's memory tools and drives it
// with a real runner: the model stores a fact with memory_write_fact in one session and finds
// it with memory_search in another, on every store.
func TestMemoryToolsInARunner(t *testing.T) {
	forEachStore(t, func(t *testing.T, c *day1.Client) {
		tools, err := adk.MemoryTools(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != len(agenttool.Tools()) {
			t.Fatalf("%d tools; want %d", len(tools), len(agenttool.Tools()))
		}
		a, err := llmagent.New(llmagent.Config{Name: "keeper", Model: toolModel{}, Tools: tools,
			Instruction: "Keep what the user tells you to remember; answer questions from memory."})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runner.New(runner.Config{AppName: "notes", Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := say(t, r, "ana", "s1", "remember: The staging database restarts every Sunday at 03:00"); got != "stored created" {
			t.Fatalf("the first session answered %q", got)
		}
		if got := say(t, r, "ana", "s2", "When does the staging database restart?"); got != "The staging database restarts every Sunday at 03:00" {
			t.Errorf("the second session answered %q", got)
		}
		if got := say(t, r, "ana", "s3", "What colour is the office cat?"); got != "nothing found" {
			t.Errorf("a question memory knows nothing about got %q", got)
		}
		// A session that switches branch keeps writing there; another session does not.
		if got := say(t, r, "ana", "s4", "work on: notes/ana"); got != "on notes/ana" {
			t.Fatalf("the switch answered %q", got)
		}
		if got := say(t, r, "ana", "s4", "remember: The ana branch holds drafts"); got != "stored created on notes/ana" {
			t.Errorf("a write after the switch answered %q", got)
		}
		if got := say(t, r, "ana", "s5", "remember: Drafts go to the wiki"); got != "stored created" {
			t.Errorf("a write in another session answered %q; want it on main", got)
		}
	})
}
