package day1

import (
	"context"
	"errors"
	"testing"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/memstore"
)

// renamed is an embedder with another's vectors under another name.
type renamed struct {
	llm.Embedder
	name string
}

func (r renamed) Name() string { return r.name }

func openPath(t *testing.T, path string, emb llm.Embedder) (*Client, error) {
	t.Helper()
	c, err := Open(context.Background(), Config{Backend: memstore.Options{Path: path, Sync: memstore.SyncNever}, Embedder: emb})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func TestEmbedderRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	c, err := openPath(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Capabilities().Embedder; got != "local-stem-384" {
		t.Fatalf("a new store's default embedder is %q", got)
	}
	if _, err := c.WriteFact(ctx, Fact{Text: "The staging cluster has three nodes"}); err != nil {
		t.Fatal(err)
	}
	c.Close()

	// Same dimensions, another embedder: refused, with both names.
	_, err = openPath(t, dir, llm.NewLocalEmbedder(0))
	var me *EmbedderMismatchError
	if !errors.As(err, &me) || !errors.Is(err, ErrEmbedderMismatch) || !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("opening with the hashing embedder: %v; want an *EmbedderMismatchError", err)
	}
	if me.Stored != "local-stem-384" || me.Configured != "local-hash-384" || me.StoredDims != 384 {
		t.Errorf("mismatch %+v", me)
	}
	_, err = openPath(t, dir, renamed{llm.NewStemEmbedder(0), "my-model"})
	if !errors.Is(err, ErrEmbedderMismatch) {
		t.Fatalf("opening with a custom embedder: %v", err)
	}
	// The failed opens released the store: the recorded embedder opens it.
	c, err = openPath(t, dir, llm.NewStemEmbedder(0))
	if err != nil {
		t.Fatal(err)
	}
	hits, err := c.Search(ctx, SearchQuery{Text: "nodes in the staging cluster", Mode: Vector})
	if err != nil || len(hits) != 1 {
		t.Fatalf("vector search: %v, %v", hits, err)
	}
}

func TestEmbedderOldDefaultKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// A store written with the hashing embedder, which records it.
	dir := t.TempDir()
	c, err := openPath(t, dir, llm.NewLocalEmbedder(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, Fact{Text: "Logs are kept for 14 days"}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, err = openPath(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Capabilities().Embedder; got != "local-hash-384" {
		t.Errorf("the default on a store of the hashing embedder is %q; want local-hash-384", got)
	}
	c.Close()

	// A store written before embedders were recorded: facts and no record.
	dir = t.TempDir()
	c, err = openPath(t, dir, llm.NewLocalEmbedder(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, Fact{Text: "Logs are kept for 14 days"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Store().WriteDocs(ctx, []store.DocWrite{{Doc: store.Doc{Collection: EmbedderCollection, ID: embedderDocID}, Cond: store.DocDelete}}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, err = openPath(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Capabilities().Embedder; got != "local-hash-384" {
		t.Errorf("the default on an unrecorded store with facts is %q; want local-hash-384", got)
	}
	hits, err := c.Search(ctx, SearchQuery{Text: "how long are logs kept", Mode: Vector})
	if err != nil || len(hits) != 1 {
		t.Fatalf("vector search: %v, %v", hits, err)
	}
	c.Close()
	// It is recorded now: the new embedder is refused.
	if _, err := openPath(t, dir, llm.NewStemEmbedder(0)); !errors.Is(err, ErrEmbedderMismatch) {
		t.Errorf("opening with the stem embedder: %v; want ErrEmbedderMismatch", err)
	}

	// An unrecorded store without facts takes the new default.
	dir = t.TempDir()
	c, err = openPath(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Capabilities().Embedder; got != "local-stem-384" {
		t.Errorf("the default on an empty store is %q", got)
	}
}

func TestEmbedderInjectedStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil) // an in-memory store: nothing recorded
	if _, err := c.Store().GetDoc(ctx, EmbedderCollection, embedderDocID); !errors.Is(err, ErrNotFound) {
		t.Errorf("in-memory store: record %v", err)
	}
	st := c.Store()
	// The same store injected into another Client gets a record, and a third Client
	// with another embedder is refused.
	c2, err := Open(ctx, Config{Store: st, Embedder: llm.NewLocalEmbedder(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := Open(ctx, Config{Store: st, Embedder: renamed{llm.NewLocalEmbedder(0), "other"}}); !errors.Is(err, ErrEmbedderMismatch) {
		t.Errorf("injected store, other embedder: %v", err)
	}
	// NoEmbeddings writes no vectors and needs no check.
	c3, err := Open(ctx, Config{Store: st, NoEmbeddings: true})
	if err != nil {
		t.Fatal(err)
	}
	c3.Close()
}
