package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/openai"
)

// exampleServer stands in for an OpenAI-compatible endpoint. It accepts the key
// "sk-example" only, embeds each input as [len(text), index, 1], and answers every
// chat completion with a JSON verdict. The first request of all is refused with 429
// when rateLimitFirst is set. It counts the embedding inputs it receives.
func exampleServer(rateLimitFirst bool) (srv *httptest.Server, inputs *atomic.Int64) {
	inputs = new(atomic.Int64)
	var requests atomic.Int64
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if requests.Add(1) == 1 && rateLimitFirst {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-example" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		switch r.URL.Path {
		case "/v1/embeddings":
			var req struct {
				Model string   `json:"model"`
				Input []string `json:"input"`
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			inputs.Add(int64(len(req.Input)))
			data := []map[string]any{}
			for i, text := range req.Input {
				data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": []float32{float32(len(text)), float32(i), 1}})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data,
				"usage": map[string]int{"prompt_tokens": 5, "total_tokens": 5}})
		case "/v1/chat/completions":
			_ = json.NewEncoder(w).Encode(map[string]any{
				"object": "chat.completion", "model": "gpt-4o-mini",
				"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
					"message": map[string]any{"role": "assistant", "content": `{"score": 0.92, "verdict": "verified"}`}}},
				"usage": map[string]int{"prompt_tokens": 42, "completion_tokens": 9, "total_tokens": 51},
			})
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	return srv, inputs
}

func ExampleEmbedder() {
	srv, _ := exampleServer(false)
	defer srv.Close()

	e, err := openai.NewEmbedder(openai.Config{
		BaseURL:    srv.URL + "/v1",
		APIKey:     "sk-example",
		Dimensions: 3, // sent as "dimensions"; every vector is checked against it
	})
	if err != nil {
		panic(err)
	}
	vs, err := e.Embed(context.Background(), []string{"login fails", "token expired"})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Name())
	fmt.Println(vs)

	_, err = e.Embed(context.Background(), []string{"fine", "   "})
	fmt.Println(errors.Is(err, llm.ErrEmptyText))
	// Output:
	// openai-text-embedding-3-small-3
	// [[11 0 1] [13 1 1]]
	// true
}

func ExampleModel() {
	srv, _ := exampleServer(false)
	defer srv.Close()

	m, err := openai.NewModel(openai.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-example"})
	if err != nil {
		panic(err)
	}
	var verdict struct {
		Score   float64 `json:"score"`
		Verdict string  `json:"verdict"`
	}
	// CompleteJSON sets Request.JSON, which asks for OpenAI's JSON mode.
	err = llm.CompleteJSON(context.Background(), m, llm.Request{
		System:   "Judge the fact. Reply with score and verdict.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "The cache evicts the least recently used entry."}},
	}, &verdict)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Name(), verdict.Score, verdict.Verdict)

	resp, err := m.Complete(context.Background(), llm.Request{System: "Say anything."})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.PromptTokens, resp.CompletionTokens)
	// Output:
	// gpt-4o-mini 0.92 verified
	// 42 9
}

func ExampleError() {
	srv, _ := exampleServer(false)
	defer srv.Close()

	m, err := openai.NewModel(openai.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-wrong"})
	if err != nil {
		panic(err)
	}
	_, err = m.Complete(context.Background(), llm.Request{System: "Say hi."})

	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Message, apiErr.Code, apiErr.Attempts)
	}
	fmt.Println(errors.Is(err, openai.ErrUnauthorized))
	// Output:
	// 401 Incorrect API key provided invalid_api_key 1
	// true
}

func ExampleConfig_retries() {
	srv, _ := exampleServer(true) // the first request gets 429 with Retry-After: 0
	defer srv.Close()

	e, err := openai.NewEmbedder(openai.Config{
		BaseURL:    srv.URL + "/v1",
		APIKey:     "sk-example",
		Dimensions: 3,
		MaxRetries: 2,
	})
	if err != nil {
		panic(err)
	}
	vs, err := e.Embed(context.Background(), []string{"retried"})
	fmt.Println(vs, err)
	// Output:
	// [[7 0 1]] <nil>
}

func Example_cache() {
	srv, inputs := exampleServer(false)
	defer srv.Close()

	e, err := openai.NewEmbedder(openai.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-example", Dimensions: 3})
	if err != nil {
		panic(err)
	}
	cached := llm.NewCachedEmbedder(e, 10_000)
	ctx := context.Background()
	if _, err := cached.Embed(ctx, []string{"alpha", "beta", "alpha"}); err != nil {
		panic(err)
	}
	if _, err := cached.Embed(ctx, []string{"beta", "gamma"}); err != nil {
		panic(err)
	}
	fmt.Println("texts sent to the endpoint:", inputs.Load())
	fmt.Printf("%+v\n", cached.Stats())
	// Output:
	// texts sent to the endpoint: 3
	// {Hits:2 Misses:3 Entries:3 Evictions:0}
}
