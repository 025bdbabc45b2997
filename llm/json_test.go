package llm

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// stubModel replies with a fixed content or error and records the last request.
type stubModel struct {
	content string
	err     error
	last    *Request
	calls   int
}

func (m *stubModel) Complete(_ context.Context, req Request) (Response, error) {
	m.calls++
	m.last = &req
	return Response{Content: m.content}, m.err
}

func (m *stubModel) Name() string { return "stub" }

type verdict struct {
	Score  float64  `json:"score"`
	Reason string   `json:"reason"`
	Tags   []string `json:"tags"`
}

func TestCompleteJSON(t *testing.T) {
	t.Parallel()
	want := verdict{Score: 0.8, Reason: "specific", Tags: []string{"auth"}}
	const obj = `{"score": 0.8, "reason": "specific", "tags": ["auth"]}`
	tests := []struct {
		name    string
		content string
		wantErr string // substring of the decoding error; empty for success
	}{
		{"plain", obj, ""},
		{"surrounding whitespace", "\n\n  " + obj + "  \n", ""},
		{"json fence", "```json\n" + obj + "\n```", ""},
		{"upper-case tag", "```JSON\n" + obj + "\n```\n", ""},
		{"bare fence", "```\n" + obj + "\n```", ""},
		{"fence with spaces", "  ```json  \n  " + obj + "  \n  ```  ", ""},
		{"one-line fence", "```" + obj + "```", ""},
		{"unclosed fence", "```json\n" + obj, ""},
		{"extra field ignored", `{"score": 0.8, "reason": "specific", "tags": ["auth"], "extra": 1}`, ""},
		{"empty", "", "empty reply"},
		{"only a fence", "```json\n```", "empty reply"},
		{"prose", "Sure! The score is 0.8.", "invalid character"},
		{"truncated", `{"score": 0.8, "reason": "spec`, "unexpected EOF"},
		{"trailing text", obj + " I hope this helps.", "after the JSON value"},
		{"two objects", obj + obj, "after the JSON value"},
		{"wrong type", `{"score": "high"}`, "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := &stubModel{content: tt.content}
			var got verdict
			err := CompleteJSON(context.Background(), m, Request{System: "judge", Messages: []Message{{Role: RoleUser, Content: "x"}}}, &got)
			if m.last == nil || !m.last.JSON {
				t.Fatalf("Complete was not called with JSON set: %+v", m.last)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CompleteJSON: %v", err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("decoded %+v, want %+v", got, want)
				}
				return
			}
			var mo *MalformedOutputError
			if !errors.As(err, &mo) {
				t.Fatalf("error %v (%T), want *MalformedOutputError", err, err)
			}
			if mo.Model != "stub" || mo.Content != tt.content {
				t.Errorf("MalformedOutputError{Model: %q, Content: %q}, want stub and the reply", mo.Model, mo.Content)
			}
			if !strings.Contains(mo.Err.Error(), tt.wantErr) {
				t.Errorf("decoding error %q, want it to mention %q", mo.Err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "day1: ") || !strings.Contains(err.Error(), `"stub"`) {
				t.Errorf("message %q should start with day1: and name the model", err)
			}
		})
	}
}

func TestCompleteJSONWrongTypeUnwraps(t *testing.T) {
	t.Parallel()
	var got verdict
	err := CompleteJSON(context.Background(), &stubModel{content: `{"score": "high"}`}, Request{}, &got)
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field != "score" {
		t.Errorf("errors.As(*json.UnmarshalTypeError) failed on %v", err)
	}
}

func TestCompleteJSONModelError(t *testing.T) {
	t.Parallel()
	boom := errors.New("rate limited")
	var got verdict
	err := CompleteJSON(context.Background(), &stubModel{err: boom}, Request{}, &got)
	if !errors.Is(err, boom) {
		t.Errorf("CompleteJSON = %v, want the model's error", err)
	}
	var mo *MalformedOutputError
	if errors.As(err, &mo) {
		t.Errorf("a model error must not be reported as malformed output")
	}
}

func TestCompleteJSONBadTarget(t *testing.T) {
	t.Parallel()
	var v verdict
	var nilPtr *verdict
	for _, out := range []any{nil, v, nilPtr} {
		m := &stubModel{content: "{}"}
		err := CompleteJSON(context.Background(), m, Request{}, out)
		if err == nil || !strings.HasPrefix(err.Error(), "day1: ") {
			t.Errorf("CompleteJSON(out=%T) = %v, want a day1: error", out, err)
		}
		if m.calls != 0 {
			t.Errorf("CompleteJSON(out=%T) called the model before checking out", out)
		}
	}
	// Any pointer works, including to a map or an interface.
	var m map[string]any
	if err := CompleteJSON(context.Background(), &stubModel{content: `{"a": 1}`}, Request{}, &m); err != nil || m["a"] != 1.0 {
		t.Errorf("decode into map: %v, %v", m, err)
	}
}

func TestCompleteJSONDoesNotModifyCallerRequest(t *testing.T) {
	t.Parallel()
	req := Request{System: "s"}
	var v verdict
	_ = CompleteJSON(context.Background(), &stubModel{content: "{}"}, req, &v)
	if req.JSON {
		t.Error("caller's request was modified")
	}
}

func TestMalformedOutputErrorShortensContent(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 400) // 800 bytes
	var v verdict
	err := CompleteJSON(context.Background(), &stubModel{content: long}, Request{}, &v)
	var mo *MalformedOutputError
	if !errors.As(err, &mo) {
		t.Fatalf("want *MalformedOutputError, got %v", err)
	}
	if len(mo.Content) > 500 || len(mo.Content) < 498 || !strings.HasPrefix(long, mo.Content) {
		t.Errorf("Content has %d bytes, want the first 500 at most, cut at a character boundary", len(mo.Content))
	}
	if errors.Unwrap(mo) != mo.Err {
		t.Error("Unwrap does not return Err")
	}
}

func TestStripFence(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"{}", "{}"},
		{" \n{}\n ", "{}"},
		{"```json\n{}\n```", "{}"},
		{"```\n[1,2]\n```", "[1,2]"},
		{"```{\"a\":1}\n```", "{\"a\":1}"},
		{"```json-ld\n{}\n```", "{}"},
		{"```", ""},
		{"text ```json\n{}\n```", "text ```json\n{}\n```"},
	}
	for _, tt := range tests {
		if got := stripFence(tt.in); got != tt.want {
			t.Errorf("stripFence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
