package day1_test

import (
	"context"
	"errors"
	"testing"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/testkit"
	"github.com/day1ai/day1/llm"
)

// A MatrixOne database records its embedder like the embedded store: reopened with
// another embedder of the same dimensions it is refused, and the default keeps the
// hashing embedder of a database written with it.
func TestEmbedderRecordedOnMatrixOne(t *testing.T) {
	dsn := testkit.MatrixOneDatabase(t, "day1_embedder")
	ctx := context.Background()

	c, err := day1.Open(ctx, day1.Config{DSN: dsn, Embedder: llm.NewLocalEmbedder(0)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{Text: "Logs are kept for 14 days"}); err != nil {
		t.Fatal(err)
	}
	c.Close()

	if _, err := day1.Open(ctx, day1.Config{DSN: dsn, Embedder: llm.NewStemEmbedder(0)}); !errors.Is(err, day1.ErrEmbedderMismatch) {
		t.Fatalf("opening with the stem embedder: %v; want ErrEmbedderMismatch", err)
	}
	c, err = day1.Open(ctx, day1.Config{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.Capabilities().Embedder; got != "local-hash-384" {
		t.Errorf("the default embedder on a database of the hashing embedder is %q", got)
	}
	hits, err := c.Search(ctx, day1.SearchQuery{Text: "how long are logs kept", Mode: day1.Vector})
	if err != nil || len(hits) != 1 {
		t.Fatalf("vector search: %v, %v", hits, err)
	}
}
