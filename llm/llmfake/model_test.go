package llmfake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/day1ai/day1/llm"
)

func user(s string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: s}}}
}

func TestModelRules(t *testing.T) {
	t.Parallel()
	m := NewModel().
		On(`(?i)score this fact`, `{"score": 0.9}`).
		On(`fact`, "second rule").
		OnFunc(`^echo: (.*)$`, func(req llm.Request) (string, error) {
			return strings.TrimPrefix(req.Messages[0].Content, "echo: "), nil
		}).
		On(`judge`, "system matched")

	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"first matching rule wins", user("Score this FACT please"), `{"score": 0.9}`},
		{"later rule when the first does not match", user("a fact"), "second rule"},
		{"function rule", user("echo: hello"), "hello"},
		{"pattern sees the system prompt", llm.Request{System: "you are a judge", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, "system matched"},
		{"pattern sees later messages", llm.Request{Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "hi"}, {Role: llm.RoleAssistant, Content: "hello"}, {Role: llm.RoleUser, Content: "one more fact"},
		}}, "second rule"},
	}
	for _, tt := range tests {
		got, err := m.Complete(context.Background(), tt.req)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got.Content != tt.want {
			t.Errorf("%s: Content = %q, want %q", tt.name, got.Content, tt.want)
		}
	}
	if m.CallCount() != len(tests) {
		t.Errorf("CallCount = %d, want %d", m.CallCount(), len(tests))
	}
}

func TestModelDefaultAndNoRule(t *testing.T) {
	t.Parallel()
	m := NewModel().On(`^known$`, "yes")
	_, err := m.Complete(context.Background(), llm.Request{System: "Classify the following text", Messages: []llm.Message{{Content: strings.Repeat("long ", 100)}}})
	if !errors.Is(err, ErrNoRule) {
		t.Fatalf("Complete without a match = %v, want ErrNoRule", err)
	}
	if !strings.Contains(err.Error(), `"Classify the following text\nlong long`) || !strings.HasPrefix(err.Error(), "day1: ") {
		t.Errorf("error %q should start with day1: and quote the start of the prompt", err)
	}
	if len(err.Error()) > 300 {
		t.Errorf("error quotes too much of the prompt: %d bytes", len(err.Error()))
	}
	m.Default("fallback")
	got, err := m.Complete(context.Background(), user("anything"))
	if err != nil || got.Content != "fallback" {
		t.Errorf("Complete with a default = %q, %v; want fallback", got.Content, err)
	}
	got, _ = m.Complete(context.Background(), user("known"))
	if got.Content != "yes" {
		t.Errorf("a rule must win over the default, got %q", got.Content)
	}
	m.Default("")
	if got, err := m.Complete(context.Background(), user("x")); err != nil || got.Content != "" {
		t.Errorf("an empty default is a reply: %q, %v", got.Content, err)
	}
}

func TestModelZeroValue(t *testing.T) {
	t.Parallel()
	var m Model
	if _, err := m.Complete(context.Background(), user("x")); !errors.Is(err, ErrNoRule) {
		t.Errorf("zero Model = %v, want ErrNoRule", err)
	}
	m.On("x", "ok")
	if got, err := m.Complete(context.Background(), user("x")); err != nil || got.Content != "ok" {
		t.Errorf("zero Model with a rule = %q, %v", got.Content, err)
	}
	if m.Name() != "llmfake" {
		t.Errorf("Name = %q", m.Name())
	}
}

func TestModelFailNext(t *testing.T) {
	t.Parallel()
	boom := errors.New("rate limited")
	tests := []struct {
		name    string
		n       int
		err     error
		wantErr []error // per call; nil means success
	}{
		{"two failures then success", 2, boom, []error{boom, boom, nil, nil}},
		{"nil error means ErrInjected", 1, nil, []error{ErrInjected, nil}},
		{"zero cancels", 0, boom, []error{nil}},
		{"negative cancels", -3, boom, []error{nil}},
	}
	for _, tt := range tests {
		m := NewModel().Default("ok").FailNext(tt.n, tt.err)
		for i, want := range tt.wantErr {
			_, err := m.Complete(context.Background(), user("x"))
			if !errors.Is(err, want) || (want == nil) != (err == nil) {
				t.Errorf("%s: call %d: err %v, want %v", tt.name, i, err, want)
			}
		}
		if m.CallCount() != len(tt.wantErr) {
			t.Errorf("%s: failed calls must be recorded too: CallCount %d, want %d", tt.name, m.CallCount(), len(tt.wantErr))
		}
	}
	// A later FailNext replaces an earlier one.
	m := NewModel().Default("ok").FailNext(5, boom).FailNext(0, nil)
	if _, err := m.Complete(context.Background(), user("x")); err != nil {
		t.Errorf("FailNext(0) should cancel: %v", err)
	}
}

func TestModelFuncError(t *testing.T) {
	t.Parallel()
	boom := errors.New("scripted failure")
	m := NewModel().OnFunc(".", func(llm.Request) (string, error) { return "", boom })
	if _, err := m.Complete(context.Background(), user("x")); !errors.Is(err, boom) {
		t.Errorf("Complete = %v, want the function's error", err)
	}
}

func TestModelFuncMayCallModel(t *testing.T) {
	t.Parallel()
	m := NewModel()
	m.OnFunc(".", func(llm.Request) (string, error) {
		return fmt.Sprint(m.CallCount()), nil // would deadlock if the lock were held
	})
	got, err := m.Complete(context.Background(), user("x"))
	if err != nil || got.Content != "1" {
		t.Errorf("Complete = %q, %v; want 1", got.Content, err)
	}
}

func TestModelContext(t *testing.T) {
	t.Parallel()
	m := NewModel().Default("ok")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Complete(ctx, user("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Complete with a cancelled context = %v, want context.Canceled", err)
	}
	if m.CallCount() != 0 {
		t.Errorf("a call with a done context was recorded")
	}
}

func TestModelCallsAreCopies(t *testing.T) {
	t.Parallel()
	m := NewModel().Default("ok")
	req := llm.Request{System: "sys", JSON: true, Temperature: 0.2, MaxTokens: 50, Messages: []llm.Message{{Role: llm.RoleUser, Content: "original"}}}
	if _, err := m.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	req.Messages[0].Content = "changed by caller"
	calls := m.Calls()
	if len(calls) != 1 || calls[0].Messages[0].Content != "original" || calls[0].System != "sys" ||
		!calls[0].JSON || calls[0].Temperature != 0.2 || calls[0].MaxTokens != 50 {
		t.Fatalf("recorded call = %+v, want the request as sent", calls)
	}
	calls[0].Messages[0].Content = "changed by reader"
	if m.Calls()[0].Messages[0].Content != "original" {
		t.Error("Calls returned the recorded slice instead of a copy")
	}
}

func TestModelTokenCounts(t *testing.T) {
	t.Parallel()
	m := NewModel().Default("three word reply")
	got, err := m.Complete(context.Background(), llm.Request{System: "be brief", Messages: []llm.Message{{Content: "how are you"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got.PromptTokens != 5 || got.CompletionTokens != 3 {
		t.Errorf("tokens = %d/%d, want 5/3", got.PromptTokens, got.CompletionTokens)
	}
}

func TestModelBadPatternPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("On with an invalid pattern did not panic")
		}
	}()
	NewModel().On("(", "x")
}

func TestPrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		req  llm.Request
		want string
	}{
		{llm.Request{}, ""},
		{llm.Request{System: "s"}, "s"},
		{user("u"), "u"},
		{llm.Request{System: "s", Messages: []llm.Message{{Content: "a"}, {Content: "b"}}}, "s\na\nb"},
	}
	for _, tt := range tests {
		if got := Prompt(tt.req); got != tt.want {
			t.Errorf("Prompt(%+v) = %q, want %q", tt.req, got, tt.want)
		}
	}
}

func TestModelConcurrent(t *testing.T) {
	t.Parallel()
	m := NewModel().On(`^even`, "E").Default("O")
	var wg sync.WaitGroup
	const workers, per = 8, 100
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				prompt, want := "odd", "O"
				if (w+i)%2 == 0 {
					prompt, want = "even", "E"
				}
				got, err := m.Complete(context.Background(), user(prompt))
				if err != nil || got.Content != want {
					t.Errorf("Complete(%q) = %q, %v", prompt, got.Content, err)
					return
				}
				if i%10 == 0 {
					_ = m.Calls()
					m.FailNext(0, nil)
				}
			}
		}()
	}
	wg.Wait()
	if m.CallCount() != workers*per {
		t.Errorf("CallCount = %d, want %d", m.CallCount(), workers*per)
	}
}

func TestShorten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 3, "abc…"},
		{"añb", 2, "a…"},
	}
	for _, tt := range tests {
		if got := shorten(tt.s, tt.n); got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
