package adk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/loadmemorytool"
	"google.golang.org/genai"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/contrib/adk"
)

// scriptedModel is an ADK model.LLM that follows a script instead of a language
// model: a question (a turn ending in '?') makes it call load_memory with the
// question as the query; the tool's answer makes it reply with the first memory it
// found, or "I don't remember."; any other turn gets "Noted.". It records what the
// tool returned.
type scriptedModel struct {
	mu       sync.Mutex
	calls    int
	memories [][]string // the texts each load_memory call returned, in order
}

var _ model.LLM = (*scriptedModel)(nil)

func (m *scriptedModel) Name() string { return "scripted" }

func (m *scriptedModel) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		resp, err := m.reply(req)
		yield(resp, err)
	}
}

func (m *scriptedModel) reply(req *model.LLMRequest) (*model.LLMResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if _, ok := req.Tools["load_memory"]; !ok {
		return nil, fmt.Errorf("the request offers no load_memory tool: %v", req.Tools)
	}
	if len(req.Contents) == 0 {
		return nil, fmt.Errorf("a request without contents")
	}
	last := req.Contents[len(req.Contents)-1]
	for _, p := range last.Parts {
		if r := p.FunctionResponse; r != nil && r.Name == "load_memory" {
			texts, err := memoryTexts(r.Response)
			if err != nil {
				return nil, err
			}
			m.memories = append(m.memories, texts)
			answer := "I don't remember."
			if len(texts) > 0 {
				answer = "From memory: " + texts[0]
			}
			return &model.LLMResponse{Content: genai.NewContentFromText(answer, genai.RoleModel), TurnComplete: true}, nil
		}
	}
	var said string
	for _, p := range last.Parts {
		said += p.Text
	}
	if strings.HasSuffix(strings.TrimSpace(said), "?") {
		call := genai.NewPartFromFunctionCall("load_memory", map[string]any{"query": said})
		call.FunctionCall.ID = fmt.Sprintf("call-%d", m.calls)
		return &model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{call}}, TurnComplete: true}, nil
	}
	return &model.LLMResponse{Content: genai.NewContentFromText("Noted.", genai.RoleModel), TurnComplete: true}, nil
}

// memoryTexts reads the texts of the memories a load_memory response holds, through
// JSON as a model would see them.
func memoryTexts(resp map[string]any) ([]string, error) {
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	var r struct {
		Memories []struct {
			Content genai.Content
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	var out []string
	for _, m := range r.Memories {
		for _, p := range m.Content.Parts {
			out = append(out, p.Text)
		}
	}
	return out, nil
}

// say runs one turn of a user in a session and returns the agent's final text.
func say(t *testing.T, r *runner.Runner, userID, sessionID, text string) string {
	t.Helper()
	var final string
	for ev, err := range r.Run(context.Background(), userID, sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if ev.IsFinalResponse() && ev.Content != nil {
			for _, p := range ev.Content.Parts {
				final += p.Text
			}
		}
	}
	return final
}

// TestRunnerRemembers drives a real ADK runner and LLM agent, with the day1 session
// and memory services, through two sessions of one user: what the user said in the
// first is in memory, and the agent's load_memory call in the second finds it.
// Another user of the app finds nothing.
func TestRunnerRemembers(t *testing.T) {
	forEachStore(t, func(t *testing.T, c *day1.Client) {
		ctx := context.Background()
		sessions, err := adk.NewSessionService(c, adk.SessionServiceConfig{})
		if err != nil {
			t.Fatal(err)
		}
		mem, err := adk.NewMemoryService(c, adk.MemoryServiceConfig{})
		if err != nil {
			t.Fatal(err)
		}
		llm := &scriptedModel{}
		concierge, err := llmagent.New(llmagent.Config{
			Name:        "concierge",
			Model:       llm,
			Instruction: "Answer from memory when the user asks about themselves.",
			Tools:       []tool.Tool{loadmemorytool.New()},
		})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runner.New(runner.Config{AppName: "travel", Agent: concierge, SessionService: sessions, MemoryService: mem, AutoCreateSession: true})
		if err != nil {
			t.Fatal(err)
		}

		if got := say(t, r, "ana", "monday", "I always fly out of Porto and I prefer aisle seats."); got != "Noted." {
			t.Fatalf("first session answered %q", got)
		}
		first, err := sessions.Get(ctx, &session.GetRequest{AppName: "travel", UserID: "ana", SessionID: "monday"})
		if err != nil {
			t.Fatal(err)
		}
		if err := mem.AddSessionToMemory(ctx, first.Session); err != nil {
			t.Fatal(err)
		}
		// Adding it again adds nothing.
		if err := mem.AddSessionToMemory(ctx, first.Session); err != nil {
			t.Fatal(err)
		}
		branch, err := mem.Branch("travel", "ana")
		if err != nil {
			t.Fatal(err)
		}
		turns, err := c.Messages(ctx, branch, adk.SessionKey("travel", "ana", "monday"))
		if err != nil || len(turns) != 2 {
			t.Fatalf("memory holds %d turns of the first session (%v), want 2", len(turns), err)
		}

		got := say(t, r, "ana", "tuesday", "Which city do I fly out of?")
		if want := "From memory: I always fly out of Porto and I prefer aisle seats."; got != want {
			t.Errorf("second session answered %q, want %q", got, want)
		}
		if got := say(t, r, "bruno", "tuesday", "Which city do I fly out of?"); got != "I don't remember." {
			t.Errorf("another user's session answered %q", got)
		}
		if len(llm.memories) != 2 || len(llm.memories[1]) != 0 {
			t.Errorf("load_memory returned %q, want one answer for ana and none for bruno", llm.memories)
		}

		// The second session's log holds the whole exchange, tool call and result
		// included, as day1 messages; its question is not memory until it is added.
		log, err := c.Messages(ctx, sessions.Branch(), adk.SessionKey("travel", "ana", "tuesday"))
		if err != nil {
			t.Fatal(err)
		}
		var roles []day1.Role
		for _, m := range log {
			roles = append(roles, m.Role)
		}
		if d := cmp.Diff([]day1.Role{day1.RoleUser, day1.RoleToolCall, day1.RoleToolResult, day1.RoleAssistant}, roles); d != "" {
			t.Errorf("the second session's roles (-want +got):\n%s", d)
		}
		found, err := mem.SearchMemory(ctx, adkSearch{"travel", "ana", "Which city do I fly out of?"}.request())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range found.Memories {
			if e.CustomMetadata["adk_session"] != "monday" {
				t.Errorf("memory holds a turn of session %v before it was added: %q", e.CustomMetadata["adk_session"], e.Content.Parts[0].Text)
			}
		}
	})
}
