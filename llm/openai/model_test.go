package openai_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/openai"
)

func userRequest(s string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: s}}}
}

func newModel(t *testing.T, cfg openai.Config) *openai.Model {
	t.Helper()
	m, err := openai.NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func floatp(f float64) *float64 { return &f }

func TestCompleteRequest(t *testing.T) {
	t.Parallel()
	conversation := []llm.Message{
		{Role: llm.RoleUser, Content: "Is the cache bounded?"},
		{Role: llm.RoleAssistant, Content: "Yes."},
		{Role: llm.RoleUser, Content: "By what?"},
	}
	tests := []struct {
		name  string
		model string
		req   llm.Request
		want  chatBody
	}{
		{
			name:  "system, conversation, temperature and max tokens",
			model: "gpt-4o-mini",
			req:   llm.Request{System: "You are terse.", Messages: conversation, Temperature: 0.25, MaxTokens: 50},
			want: chatBody{Model: "gpt-4o-mini", Temperature: floatp(0.25), MaxTokens: intp(50), Messages: []chatMessage{
				{"system", "You are terse."}, {"user", "Is the cache bounded?"}, {"assistant", "Yes."}, {"user", "By what?"},
			}},
		},
		{
			name:  "zero temperature and max tokens are left out",
			model: "gpt-4o-mini",
			req:   userRequest("hello"),
			want:  chatBody{Model: "gpt-4o-mini", Messages: []chatMessage{{"user", "hello"}}},
		},
		{
			name:  "JSON mode with a prompt that mentions JSON",
			model: "gpt-4o-mini",
			req:   llm.Request{System: "Reply in json.", Messages: conversation[:1], JSON: true},
			want: chatBody{Model: "gpt-4o-mini", ResponseFormat: &struct {
				Type string `json:"type"`
			}{"json_object"}, Messages: []chatMessage{{"system", "Reply in json."}, {"user", "Is the cache bounded?"}}},
		},
		{
			name:  "JSON mode adds the instruction OpenAI requires",
			model: "gpt-4o-mini",
			req:   llm.Request{System: "Score the fact.", Messages: conversation[:1], JSON: true},
			want: chatBody{Model: "gpt-4o-mini", ResponseFormat: &struct {
				Type string `json:"type"`
			}{"json_object"}, Messages: []chatMessage{{"system", "Score the fact.\n\nAnswer with a single JSON object."}, {"user", "Is the cache bounded?"}}},
		},
		{
			name:  "JSON mode without a system prompt",
			model: "gpt-4o-mini",
			req:   llm.Request{Messages: conversation[:1], JSON: true},
			want: chatBody{Model: "gpt-4o-mini", ResponseFormat: &struct {
				Type string `json:"type"`
			}{"json_object"}, Messages: []chatMessage{{"system", "Answer with a single JSON object."}, {"user", "Is the cache bounded?"}}},
		},
		{
			name:  "reasoning models take max_completion_tokens",
			model: "o3-mini",
			req:   llm.Request{Messages: conversation[:1], MaxTokens: 200},
			want:  chatBody{Model: "o3-mini", MaxCompletionTokens: intp(200), Messages: []chatMessage{{"user", "Is the cache bounded?"}}},
		},
		{
			name:  "a system prompt alone",
			model: "llama3.2",
			req:   llm.Request{System: "Say hi."},
			want:  chatBody{Model: "llama3.2", Messages: []chatMessage{{"system", "Say hi."}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.chatContent = "the reply"
			cfg := f.config(&waitLog{})
			cfg.ChatModel = tt.model
			m := newModel(t, cfg)
			got, err := m.Complete(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(llm.Response{Content: "the reply", PromptTokens: 11, CompletionTokens: 3}, got); diff != "" {
				t.Errorf("Response (-want +got):\n%s", diff)
			}
			calls := f.Calls()
			if len(calls) != 1 || calls[0].Path != "/v1/chat/completions" {
				t.Fatalf("requests %+v, want one chat completion", calls)
			}
			if diff := cmp.Diff(tt.want, calls[0].Chat); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
			if string(calls[0].Raw["stream"]) == "true" {
				t.Error("the request asked for a stream")
			}
		})
	}
}

func TestCompleteInvalidRequest(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	m := newModel(t, f.config(&waitLog{}))
	tests := []struct {
		req       llm.Request
		wantField string
	}{
		{llm.Request{}, "Request.Messages"},
		{llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "a"}, {Role: "tool", Content: "b"}}}, "Request.Messages[1].Role"},
		{llm.Request{Messages: []llm.Message{{Content: "no role"}}}, "Request.Messages[0].Role"},
		{llm.Request{System: "s", Temperature: -0.1}, "Request.Temperature"},
		{llm.Request{System: "s", Temperature: 2.5}, "Request.Temperature"},
		{llm.Request{System: "s", MaxTokens: -1}, "Request.MaxTokens"},
	}
	for _, tt := range tests {
		_, err := m.Complete(context.Background(), tt.req)
		var ve *llm.ValidationError
		if !errors.As(err, &ve) || ve.Field != tt.wantField || !errors.Is(err, llm.ErrInvalidArgument) {
			t.Errorf("Complete(%+v) = %v, want a *llm.ValidationError for %s", tt.req, err, tt.wantField)
		}
	}
	if n := len(f.Calls()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestCompleteUnusableReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		wantErr error
		wantMsg string
	}{
		{"no choices", `{"id":"x","object":"chat.completion","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":0,"total_tokens":1}}`,
			openai.ErrBadResponse, "no choices"},
		{"refusal", `{"id":"x","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`,
			openai.ErrRefused, `"I can't help with that."`},
		{"not JSON", `upstream connect error`, openai.ErrBadResponse, "not the expected JSON"},
	}
	for _, tt := range tests {
		f := newFakeAPI(t, reply{body: tt.body})
		m := newModel(t, f.config(&waitLog{}))
		_, err := m.Complete(context.Background(), userRequest("hi"))
		if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
			t.Errorf("%s: Complete = %v, want %v saying %s", tt.name, err, tt.wantErr, tt.wantMsg)
		}
	}
}

type verdict struct {
	Score  float64 `json:"score"`
	Reason string  `json:"reason"`
}

func TestCompleteJSONThroughModel(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	m := newModel(t, f.config(&waitLog{}))
	req := llm.Request{System: "Score the fact from 0 to 1.", Messages: []llm.Message{{Role: llm.RoleUser, Content: "The cache is an LRU."}}}

	f.chatContent = "```json\n{\"score\": 0.9, \"reason\": \"specific\"}\n```"
	var v verdict
	if err := llm.CompleteJSON(context.Background(), m, req, &v); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(verdict{Score: 0.9, Reason: "specific"}, v); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if rf := f.Calls()[0].Chat.ResponseFormat; rf == nil || rf.Type != "json_object" {
		t.Errorf("response_format = %+v, want json_object", rf)
	}

	f.mu.Lock()
	f.chatContent = `Sure! {"score": 0.9`
	f.mu.Unlock()
	err := llm.CompleteJSON(context.Background(), m, req, &v)
	var malformed *llm.MalformedOutputError
	if !errors.As(err, &malformed) {
		t.Fatalf("CompleteJSON on a malformed reply = %v, want *llm.MalformedOutputError", err)
	}
	if malformed.Model != "gpt-4o-mini" || malformed.Content != `Sure! {"score": 0.9` {
		t.Errorf("MalformedOutputError = %+v, want the model's name and reply", malformed)
	}
	if n := len(f.Calls()); n != 2 {
		t.Errorf("%d requests, want 2 (malformed output is not retried here)", n)
	}
}

func TestCompleteConcurrent(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	m := newModel(t, f.config(&waitLog{}))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.Complete(context.Background(), userRequest("hi")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := len(f.Calls()); n != 8 {
		t.Errorf("%d requests, want 8", n)
	}
}
