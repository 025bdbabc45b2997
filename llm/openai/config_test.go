package openai_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/openai"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	cfg := openai.Config{Test: openai.TestConfig{Getenv: env(map[string]string{"OPENAI_API_KEY": "sk-test"})}}
	e, err := openai.NewEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := openai.NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{e.Name(), e.Dimensions(), m.Name()}
	want := []any{"openai-text-embedding-3-small-1536", 1536, "gpt-4o-mini"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}

	for model, dims := range map[string]int{"text-embedding-3-large": 3072, "text-embedding-ada-002": 1536} {
		cfg.EmbeddingModel = model
		e, err := openai.NewEmbedder(cfg)
		if err != nil || e.Dimensions() != dims {
			t.Errorf("%s: Dimensions = %v, %v; want %d", model, e, err, dims)
		}
	}
}

func TestEnvironment(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.dims = 1536
	cfg := openai.Config{Test: openai.TestConfig{Getenv: env(map[string]string{
		"OPENAI_BASE_URL": f.URL() + "/", // a trailing slash is dropped
		"OPENAI_API_KEY":  "sk-from-env",
	})}}
	e, err := openai.NewEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	// Explicit fields win over the environment.
	cfg.APIKey = "sk-explicit"
	m, err := openai.NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Complete(context.Background(), userRequest("hi")); err != nil {
		t.Fatal(err)
	}
	// A local endpoint needs no key, and then no Authorization header is sent.
	m, err = openai.NewModel(openai.Config{BaseURL: f.URL(), Test: openai.TestConfig{Getenv: env(nil)}})
	if err != nil {
		t.Fatalf("NewModel without a key for a local endpoint: %v", err)
	}
	if _, err := m.Complete(context.Background(), userRequest("hi")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range f.Calls() {
		got = append(got, c.Path+" "+c.Auth)
	}
	want := []string{"/v1/embeddings Bearer sk-from-env", "/v1/chat/completions Bearer sk-explicit", "/v1/chat/completions "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	noEnv := openai.TestConfig{Getenv: env(nil)}
	local := "http://localhost:11434/v1"
	tests := []struct {
		name      string
		cfg       openai.Config
		wantField string // "" when valid
		modelOnly bool   // the error applies to NewEmbedder only; NewModel accepts cfg
	}{
		{"no key for OpenAI", openai.Config{Test: noEnv}, "Config.APIKey", false},
		{"no key for OpenAI, explicit URL", openai.Config{BaseURL: "https://API.openai.com/v1/", Test: noEnv}, "Config.APIKey", false},
		{"no key for a local endpoint", openai.Config{BaseURL: local, Test: noEnv}, "", false},
		{"URL without a scheme", openai.Config{BaseURL: "localhost:11434/v1", Test: noEnv}, "Config.BaseURL", false},
		{"URL with another scheme", openai.Config{BaseURL: "ftp://example.com/v1", Test: noEnv}, "Config.BaseURL", false},
		{"unparsable URL", openai.Config{BaseURL: "http://[::1", Test: noEnv}, "Config.BaseURL", false},
		{"unknown model without dimensions", openai.Config{BaseURL: local, EmbeddingModel: "nomic-embed-text", Test: noEnv}, "Config.Dimensions", true},
		{"unknown model with dimensions", openai.Config{BaseURL: local, EmbeddingModel: "nomic-embed-text", Dimensions: 768, Test: noEnv}, "", false},
		{"negative dimensions", openai.Config{BaseURL: local, Dimensions: -1, Test: noEnv}, "Config.Dimensions", true},
		{"too many dimensions", openai.Config{BaseURL: local, Dimensions: 8193, Test: noEnv}, "Config.Dimensions", true},
		{"negative batch", openai.Config{BaseURL: local, BatchSize: -1, Test: noEnv}, "Config.BatchSize", true},
		{"batch over the API limit", openai.Config{BaseURL: local, BatchSize: 2049, Test: noEnv}, "Config.BatchSize", true},
		{"largest batch", openai.Config{BaseURL: local, BatchSize: 2048, Test: noEnv}, "", false},
		{"negative retry delay", openai.Config{BaseURL: local, RetryDelay: -time.Second, Test: noEnv}, "Config.RetryDelay", false},
		{"negative max retry delay", openai.Config{BaseURL: local, MaxRetryDelay: -time.Second, Test: noEnv}, "Config.MaxRetryDelay", false},
		{"retry delay over the max", openai.Config{BaseURL: local, RetryDelay: time.Minute, MaxRetryDelay: time.Second, Test: noEnv}, "Config.RetryDelay", false},
		{"embedding model with spaces", openai.Config{BaseURL: local, EmbeddingModel: " text-embedding-3-small", Dimensions: 8, Test: noEnv}, "Config.EmbeddingModel", true},
		{"negative retries and timeout turn them off", openai.Config{BaseURL: local, MaxRetries: -1, Timeout: -1, Test: noEnv}, "", false},
	}
	for _, tt := range tests {
		_, eerr := openai.NewEmbedder(tt.cfg)
		_, merr := openai.NewModel(tt.cfg)
		if tt.modelOnly {
			if merr != nil {
				t.Errorf("%s: NewModel = %v, want success", tt.name, merr)
			}
			merr = eerr
		}
		for _, err := range []error{eerr, merr} {
			if tt.wantField == "" {
				if err != nil {
					t.Errorf("%s: %v, want success", tt.name, err)
				}
				continue
			}
			var ve *llm.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.wantField || !errors.Is(err, llm.ErrInvalidArgument) {
				t.Errorf("%s: error %v, want a *llm.ValidationError for %s", tt.name, err, tt.wantField)
			}
		}
	}
}

func TestMissingKeyMessage(t *testing.T) {
	t.Parallel()
	_, err := openai.NewEmbedder(openai.Config{Test: openai.TestConfig{Getenv: env(nil)}})
	want := "day1: invalid Config.APIKey: is required for https://api.openai.com/v1; set Config.APIKey or the OPENAI_API_KEY environment variable"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}
