package store_test

import (
	"context"
	"testing"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/memstore"
)

// plain hides every optional interface of the store it holds, LeanDiffer among them.
type plain struct{ store.Store }

// TestDiffLeanLeavesEmbeddingsOut checks store.DiffLean on a store with DiffLean and on
// one without: the same changes, and no record with an embedding.
func TestDiffLeanLeavesEmbeddingsOut(t *testing.T) {
	ctx := context.Background()
	ms, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	put := func(branch string, recs ...store.Record) {
		t.Helper()
		if _, err := ms.Put(ctx, branch, recs, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put(store.DefaultBranch, store.Fact{ID: "f", Text: "the cache holds sessions", Embedding: []float32{1, 0}})
	if _, err := ms.CreateBranch(ctx, store.BranchSpec{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	put("b",
		store.Fact{ID: "f", Text: "the cache holds sessions and tokens", Embedding: []float32{1, 1}},
		store.Observation{ID: "o", Type: "decision", Summary: "patch it", Embedding: []float32{0, 1}},
		store.Message{ID: "m", ConversationID: "c", Role: "user", Content: "why?", Embedding: []float32{1, 0}})
	whole, err := ms.Diff(ctx, "b", store.DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}
	if len(store.EmbeddingOf(whole.SourceChanges[0].After)) == 0 {
		t.Fatal("the store's own Diff gave no embedding: the test checks nothing")
	}
	for name, s := range map[string]store.Store{"lean differ": ms, "plain": plain{ms}} {
		d, err := store.DiffLean(ctx, s, "b", store.DefaultBranch)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(d.SourceChanges) != len(whole.SourceChanges) {
			t.Errorf("%s: %d source changes, want %d", name, len(d.SourceChanges), len(whole.SourceChanges))
		}
		for _, ch := range d.SourceChanges {
			if store.EmbeddingOf(ch.Before) != nil || store.EmbeddingOf(ch.After) != nil {
				t.Errorf("%s: %s %s carries an embedding", name, ch.Ref.Kind, ch.Ref.ID)
			}
		}
	}
	if len(store.EmbeddingOf(whole.SourceChanges[0].After)) == 0 {
		t.Error("DiffLean took the embeddings out of another diff's records")
	}
}
