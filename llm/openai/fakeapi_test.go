package openai_test

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/llm/openai"
)

// fakeAPI is an OpenAI-compatible server for tests. It decodes every request to
// /v1/embeddings and /v1/chat/completions and records it, then answers with the next
// scripted reply, or by default with success: embeddings of vecFor in reverse index
// order, and a chat completion of chatContent.
type fakeAPI struct {
	srv *httptest.Server

	mu          sync.Mutex
	calls       []apiCall
	script      []reply
	dims        int           // vector length of default embeddings when the request has no dimensions
	chatContent string        // content of default chat replies
	blocked     chan struct{} // receives when a blocking reply starts to wait
}

// apiCall is one request the fake received.
type apiCall struct {
	Path  string
	Auth  string // the Authorization header
	Raw   map[string]json.RawMessage
	Embed embeddingsBody
	Chat  chatBody
}

type embeddingsBody struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     *int     `json:"dimensions"`
	EncodingFormat string   `json:"encoding_format"`
}

type chatBody struct {
	Model          string        `json:"model"`
	Messages       []chatMessage `json:"messages"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	Temperature         *float64 `json:"temperature"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// reply is one scripted answer. A zero status means 200. An empty body with status
// 200 means the default success body, unless empty is set. block makes the handler
// wait until the request is cancelled.
type reply struct {
	status int
	header map[string]string
	body   string
	empty  bool
	block  bool
}

// errorBody is an OpenAI error object.
func errorBody(message, typ, code string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": typ, "code": code, "param": nil}})
	return string(b)
}

func newFakeAPI(t *testing.T, script ...reply) *fakeAPI {
	t.Helper()
	f := &fakeAPI{script: script, dims: 4, chatContent: `{"ok": true}`, blocked: make(chan struct{}, 16)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the base URL to put in Config.BaseURL.
func (f *fakeAPI) URL() string { return f.srv.URL + "/v1" }

// config returns a Config for the fake with 4 dimensions, fast retries and a
// recorded, instant wait between attempts.
func (f *fakeAPI) config(waits *waitLog) openai.Config {
	return openai.Config{
		BaseURL:       f.URL(),
		Dimensions:    4,
		RetryDelay:    time.Millisecond,
		MaxRetryDelay: time.Minute,
		Test: openai.TestConfig{
			Getenv: func(string) string { return "" },
			After:  waits.after,
		},
	}
}

func (f *fakeAPI) Calls() []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	call := apiCall{Path: r.URL.Path, Auth: r.Header.Get("Authorization")}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "want a JSON POST", http.StatusMethodNotAllowed)
		return
	}
	if err := json.Unmarshal(body, &call.Raw); err != nil {
		http.Error(w, errorBody("body is not JSON: "+err.Error(), "invalid_request_error", ""), http.StatusBadRequest)
		return
	}
	switch r.URL.Path {
	case "/v1/embeddings":
		err = json.Unmarshal(body, &call.Embed)
	case "/v1/chat/completions":
		err = json.Unmarshal(body, &call.Chat)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, errorBody("Unknown request URL: POST "+r.URL.Path, "invalid_request_error", "unknown_url"))
		return
	}
	if err != nil {
		http.Error(w, errorBody(err.Error(), "invalid_request_error", ""), http.StatusBadRequest)
		return
	}

	f.mu.Lock()
	f.calls = append(f.calls, call)
	var next reply
	if len(f.script) > 0 {
		next, f.script = f.script[0], f.script[1:]
	}
	dims, content := f.dims, f.chatContent
	f.mu.Unlock()

	if next.block {
		f.blocked <- struct{}{}
		<-r.Context().Done()
		return
	}
	for k, v := range next.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	status := next.status
	if status == 0 {
		status = http.StatusOK
	}
	out := next.body
	if out == "" && status == http.StatusOK && !next.empty {
		if call.Path == "/v1/embeddings" {
			if call.Embed.Dimensions != nil {
				dims = *call.Embed.Dimensions
			}
			out = embeddingsReply(call.Embed.Model, call.Embed.Input, dims)
		} else {
			out = chatReply(call.Chat.Model, content)
		}
	}
	w.WriteHeader(status)
	io.WriteString(w, out)
}

// vecFor is the vector the fake gives text: deterministic and different per text.
func vecFor(text string, dims int) []float32 {
	h := fnv.New32a()
	h.Write([]byte(text))
	base := float32(h.Sum32()%1000) / 1000
	v := make([]float32, dims)
	for i := range v {
		v[i] = base + float32(i)
	}
	return v
}

// embeddingsReply is an embeddings response in OpenAI's shape, with the data in
// reverse order so that clients must use the index.
func embeddingsReply(model string, input []string, dims int) string {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, 0, len(input))
	for i := len(input) - 1; i >= 0; i-- {
		data = append(data, item{Object: "embedding", Index: i, Embedding: vecFor(input[i], dims)})
	}
	b, _ := json.Marshal(map[string]any{
		"object": "list",
		"data":   data,
		"model":  model,
		"usage":  map[string]int{"prompt_tokens": 2 * len(input), "total_tokens": 2 * len(input)},
	})
	return string(b)
}

// chatReply is a chat completion response in OpenAI's shape.
func chatReply(model, content string) string {
	b, _ := json.Marshal(map[string]any{
		"id":      "chatcmpl-test",
		"object":  "chat.completion",
		"created": 1700000000,
		"model":   model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content, "refusal": nil},
			"logprobs":      nil,
			"finish_reason": "stop",
		}},
		"usage": map[string]int{"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
	})
	return string(b)
}

// waitLog records the waits between attempts and ends each at once.
type waitLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (l *waitLog) after(d time.Duration) <-chan time.Time {
	l.mu.Lock()
	l.waits = append(l.waits, d)
	l.mu.Unlock()
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

func (l *waitLog) Waits() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.waits)
}
