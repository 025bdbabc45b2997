package openai_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/openai"
)

func newEmbedder(t *testing.T, cfg openai.Config) *openai.Embedder {
	t.Helper()
	e, err := openai.NewEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func vecsFor(texts []string, dims int) [][]float32 {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = vecFor(s, dims)
	}
	return out
}

func intp(n int) *int { return &n }

func TestEmbedRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      func(openai.Config) openai.Config
		wantBody embeddingsBody
		wantDims int
		wantName string
	}{
		{
			name: "dimensions sent when set",
			cfg: func(c openai.Config) openai.Config {
				c.Dimensions = 8
				return c
			},
			wantBody: embeddingsBody{Model: "text-embedding-3-small", Dimensions: intp(8), EncodingFormat: "float"},
			wantDims: 8,
			wantName: "openai-text-embedding-3-small-8",
		},
		{
			name: "native dimensions not sent",
			cfg: func(c openai.Config) openai.Config {
				c.EmbeddingModel, c.Dimensions = "text-embedding-ada-002", 0
				return c
			},
			wantBody: embeddingsBody{Model: "text-embedding-ada-002", EncodingFormat: "float"},
			wantDims: 1536,
			wantName: "openai-text-embedding-ada-002-1536",
		},
		{
			name: "dimensions omitted on request",
			cfg: func(c openai.Config) openai.Config {
				c.EmbeddingModel, c.Dimensions, c.OmitDimensions = "nomic-embed-text", 4, true
				return c
			},
			wantBody: embeddingsBody{Model: "nomic-embed-text", EncodingFormat: "float"},
			wantDims: 4,
			wantName: "openai-nomic-embed-text-4",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.dims = tt.wantDims
			e := newEmbedder(t, tt.cfg(f.config(&waitLog{})))
			texts := []string{"the login fails", "cache warm-up", "  padded  "}
			got, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(vecsFor(texts, tt.wantDims), got); diff != "" {
				t.Errorf("vectors (-want +got):\n%s", diff)
			}
			calls := f.Calls()
			if len(calls) != 1 {
				t.Fatalf("%d requests, want 1", len(calls))
			}
			want := tt.wantBody
			want.Input = texts
			if diff := cmp.Diff(want, calls[0].Embed); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
			if _, sent := calls[0].Raw["dimensions"]; sent != (tt.wantBody.Dimensions != nil) {
				t.Errorf("dimensions sent = %v", sent)
			}
			if e.Name() != tt.wantName || e.Dimensions() != tt.wantDims {
				t.Errorf("Name, Dimensions = %q, %d; want %q, %d", e.Name(), e.Dimensions(), tt.wantName, tt.wantDims)
			}
		})
	}
}

func TestEmbedBatches(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	cfg := f.config(&waitLog{})
	cfg.Dimensions, cfg.BatchSize = 4, 3
	e := newEmbedder(t, cfg)
	texts := make([]string, 7)
	for i := range texts {
		texts[i] = fmt.Sprintf("text number %d", i)
	}
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	// The fake answers every batch in reverse index order.
	if diff := cmp.Diff(vecsFor(texts, 4), got); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	var inputs [][]string
	for _, c := range f.Calls() {
		inputs = append(inputs, c.Embed.Input)
	}
	if diff := cmp.Diff([][]string{texts[0:3], texts[3:6], texts[6:7]}, inputs); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
}

func TestEmbedFailsAsAWhole(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{}, reply{status: 400, body: errorBody("This model's maximum context length is 8192 tokens", "invalid_request_error", "context_length_exceeded")})
	cfg := f.config(&waitLog{})
	cfg.Dimensions, cfg.BatchSize = 4, 2
	e := newEmbedder(t, cfg)
	got, err := e.Embed(context.Background(), []string{"a", "b", "c", "d", "e"})
	if got != nil || !errors.Is(err, openai.ErrBadRequest) {
		t.Fatalf("Embed = %v, %v; want nil and ErrBadRequest", got, err)
	}
	if n := len(f.Calls()); n != 2 {
		t.Errorf("%d requests, want 2 (stop at the failed batch)", n)
	}
}

func TestEmbedEmptyInput(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	e := newEmbedder(t, f.config(&waitLog{}))
	tests := []struct {
		texts   []string
		wantIdx string
	}{
		{[]string{"fine", ""}, "texts[1]"},
		{[]string{" \t\n", "fine"}, "texts[0]"},
	}
	for _, tt := range tests {
		got, err := e.Embed(context.Background(), tt.texts)
		if got != nil || !errors.Is(err, llm.ErrEmptyText) || !strings.Contains(err.Error(), tt.wantIdx) {
			t.Errorf("Embed(%q) = %v, %v; want ErrEmptyText naming %s", tt.texts, got, err, tt.wantIdx)
		}
	}
	got, err := e.Embed(context.Background(), nil)
	if err != nil || len(got) != 0 {
		t.Errorf("Embed(nil) = %v, %v; want no vectors", got, err)
	}
	if n := len(f.Calls()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestEmbedBadResponses(t *testing.T) {
	t.Parallel()
	item := func(idx int, vec string) string {
		return fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":%s}`, idx, vec)
	}
	list := func(items ...string) string {
		return `{"object":"list","model":"text-embedding-3-small","usage":{"prompt_tokens":2,"total_tokens":2},"data":[` + strings.Join(items, ",") + `]}`
	}
	v2 := "[0.1,0.2]"
	tests := []struct {
		name  string
		reply reply
		want  string
	}{
		{"wrong dimensions", reply{body: list(item(0, v2), item(1, "[0.1,0.2,0.3]"))}, "the vector of texts[1] has 3 components, want 2"},
		{"too few", reply{body: list(item(0, v2))}, "1 embeddings for 2 inputs"},
		{"too many", reply{body: list(item(0, v2), item(1, v2), item(2, v2))}, "3 embeddings for 2 inputs"},
		{"index repeated", reply{body: list(item(1, v2), item(1, v2))}, "index 1 appears twice"},
		{"index out of range", reply{body: list(item(0, v2), item(2, v2))}, "index 2 is out of range"},
		{"negative index", reply{body: list(item(-1, v2), item(0, v2))}, "index -1 is out of range"},
		{"not JSON", reply{body: "<html>gateway</html>"}, "not the expected JSON"},
		{"wrong JSON type", reply{body: `{"data": "none"}`}, "not the expected JSON"},
		{"empty body", reply{empty: true}, "the body is empty"},
	}
	for _, tt := range tests {
		f := newFakeAPI(t, tt.reply)
		cfg := f.config(&waitLog{})
		cfg.Dimensions = 2
		e := newEmbedder(t, cfg)
		got, err := e.Embed(context.Background(), []string{"first", "second"})
		if got != nil || !errors.Is(err, openai.ErrBadResponse) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Embed = %v, %v; want nil and ErrBadResponse saying %q", tt.name, got, err, tt.want)
		}
		if n := len(f.Calls()); n != 1 {
			t.Errorf("%s: %d requests, want 1 (a bad response is not retried)", tt.name, n)
		}
	}
}

func TestEmbedWrongDimensionsFromTheModel(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.dims = 768 // the model ignores what it was asked for
	cfg := f.config(&waitLog{})
	cfg.EmbeddingModel, cfg.Dimensions, cfg.OmitDimensions = "nomic-embed-text", 384, true
	e := newEmbedder(t, cfg)
	_, err := e.Embed(context.Background(), []string{"hello"})
	want := `day1: openai: unusable response: embeddings with model "nomic-embed-text": the vector of texts[0] has 768 components, want 384; set Config.Dimensions to the model's vector length`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}

func TestEmbedConcurrent(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	cfg := f.config(&waitLog{})
	cfg.Dimensions = 4
	e := newEmbedder(t, cfg)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts := []string{fmt.Sprint("worker ", w), "shared text"}
			got, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Error(err)
				return
			}
			if diff := cmp.Diff(vecsFor(texts, 4), got); diff != "" {
				t.Errorf("worker %d (-want +got):\n%s", w, diff)
			}
		}()
	}
	wg.Wait()
}

func TestCachedOpenAIEmbedder(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	cfg := f.config(&waitLog{})
	cfg.Dimensions, cfg.BatchSize = 4, 2
	c := llm.NewCachedEmbedder(newEmbedder(t, cfg), 100)
	ctx := context.Background()
	steps := [][]string{
		{"alpha", "beta", "alpha", "gamma"},
		{"gamma", "delta", "beta"},
		{"alpha", "delta"},
	}
	for _, texts := range steps {
		got, err := c.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(vecsFor(texts, 4), got); diff != "" {
			t.Errorf("Embed(%q) (-want +got):\n%s", texts, diff)
		}
	}
	var inputs [][]string
	for _, call := range f.Calls() {
		inputs = append(inputs, call.Embed.Input)
	}
	want := [][]string{{"alpha", "beta"}, {"gamma"}, {"delta"}}
	if diff := cmp.Diff(want, inputs); diff != "" {
		t.Errorf("inputs sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(llm.CacheStats{Hits: 5, Misses: 4, Entries: 4}, c.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	if c.Name() != "openai-text-embedding-3-small-4" {
		t.Errorf("Name = %q", c.Name())
	}
}
