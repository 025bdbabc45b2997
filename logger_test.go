package day1

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/day1ai/day1/llm/llmfake"
)

// TestLoggerReportsEmbedderFailures checks that a write the embedder failed is logged
// with its branch, kind and ids and the error, never the texts, and that a Client
// without a Logger logs nothing and writes all the same.
func TestLoggerReportsEmbedderFailures(t *testing.T) {
	ctx := context.Background()
	emb := llmfake.NewEmbedder(32)
	var logged strings.Builder
	c, _ := open(t, func(cfg *Config) { cfg.Embedder, cfg.Logger = emb, slog.New(slog.NewTextHandler(&logged, nil)) })
	emb.FailNext(1, errors.New("quota exceeded"))
	ws, err := c.WriteFacts(ctx, []Fact{{ID: "a", Text: "a private note"}, {ID: "b", Text: "another private note"}})
	if err != nil || ws[0].EmbedErr == nil {
		t.Fatalf("write: %+v, %v; want it written without embeddings", ws, err)
	}
	l := logged.String()
	for _, want := range []string{"level=WARN", "embedder failed", "branch=main", "kind=fact", "ids=\"[a b]\"", "quota exceeded"} {
		if !strings.Contains(l, want) {
			t.Errorf("the log lacks %q:\n%s", want, l)
		}
	}
	if strings.Contains(l, "private") {
		t.Errorf("the log holds a record's text:\n%s", l)
	}
	silent, _ := open(t, func(cfg *Config) { cfg.Embedder = emb })
	emb.FailNext(1, errors.New("quota exceeded"))
	if _, err := silent.WriteFact(ctx, Fact{Text: "x y z"}); err != nil {
		t.Fatal(err)
	}
}
