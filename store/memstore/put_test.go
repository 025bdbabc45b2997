package memstore_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

// TestPutResultsShareTheCallersValues checks what Put's documentation says of its
// results: the record of a result shares the embedding and metadata of the record
// passed in, for every outcome that writes it (created, updated, superseding), and
// changing either never reaches the stored copy.
func TestPutResultsShareTheCallersValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openInMemory(t)
	put := func(r store.Record) store.PutResult {
		t.Helper()
		res, err := s.Put(ctx, store.DefaultBranch, []store.Record{r}, store.PutOptions{DedupeThreshold: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	for _, tc := range []struct {
		name    string
		in      store.Fact
		outcome store.Outcome
	}{
		{"created", store.Fact{ID: "a", Text: "the cache expires hourly", Embedding: []float32{1, 0, 0}, Metadata: map[string]string{"k": "a"}}, store.Created},
		{"updated", store.Fact{ID: "a", Text: "the cache expires daily", Embedding: []float32{0, 1, 0}, Metadata: map[string]string{"k": "b"}}, store.Updated},
		{"superseding", store.Fact{ID: "c", Text: "the cache now expires daily", Embedding: []float32{0, 1, 0.01}, Metadata: map[string]string{"k": "c"}}, store.Superseded},
	} {
		res := put(tc.in)
		if res.Outcome != tc.outcome {
			t.Fatalf("%s: outcome %s, want %s", tc.name, res.Outcome, tc.outcome)
		}
		got := res.Record.(store.Fact)
		if &got.Embedding[0] != &tc.in.Embedding[0] {
			t.Errorf("%s: the result's embedding is a copy, not the caller's", tc.name)
		}
		want := store.Clone(tc.in).(store.Fact)
		got.Embedding[0], got.Metadata["k"] = 42, "changed by the caller"
		stored, err := s.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: tc.in.ID})
		if err != nil {
			t.Fatal(err)
		}
		sf := stored.(store.Fact)
		if diff := cmp.Diff([]any{want.Embedding, want.Metadata}, []any{sf.Embedding, sf.Metadata}); diff != "" {
			t.Errorf("%s: changing the result changed the stored record (-want +got):\n%s", tc.name, diff)
		}
	}
	// A deduplicated write returns a copy of the stored record, which the caller may
	// change freely too.
	res := put(store.Fact{ID: "x", Text: "The cache now expires daily"})
	if res.Outcome != store.Deduplicated {
		t.Fatalf("outcome %s, want deduplicated", res.Outcome)
	}
	dup := res.Record.(store.Fact)
	dup.Embedding[1] = 42
	stored, err := s.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if e := stored.(store.Fact).Embedding; e[1] != 1 {
		t.Errorf("changing a deduplicated result changed the stored embedding to %v", e)
	}
}

// TestDiffSidesOwnTheirRecords: a conflict's two changes hold copies of their own of
// the base version, so changing one side's never reaches the other or the store.
func TestDiffSidesOwnTheirRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openInMemory(t)
	put := func(branch, text string) {
		t.Helper()
		f := store.Fact{ID: "f", Text: text, Embedding: []float32{1, 0}, Metadata: map[string]string{"k": "v"}}
		if _, err := s.Put(ctx, branch, []store.Record{f}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put("main", "base")
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	put("main", "changed on main")
	put("b", "changed on b")
	d, err := s.Diff(ctx, "b", "main")
	if err != nil || len(d.SourceChanges) != 1 || len(d.TargetChanges) != 1 {
		t.Fatalf("Diff = %+v, %v; want one change on each side", d, err)
	}
	src := d.SourceChanges[0].Before.(store.Fact)
	src.Embedding[0] = 9
	src.Metadata["k"] = "changed"
	tgt := d.TargetChanges[0].Before.(store.Fact)
	if tgt.Embedding[0] != 1 || tgt.Metadata["k"] != "v" {
		t.Errorf("the target side's base version changed with the source side's: %v %v", tgt.Embedding, tgt.Metadata)
	}
	// Growing one record's embedding must not write into another's.
	_ = append(src.Embedding, 7, 7)
	if after := d.SourceChanges[0].After.(store.Fact); after.Embedding[0] != 1 || after.Embedding[1] != 0 {
		t.Errorf("appending to the base version's embedding changed the source version's: %v", after.Embedding)
	}
	d2, err := s.Diff(ctx, "b", "main")
	if err != nil {
		t.Fatal(err)
	}
	if b := d2.SourceChanges[0].Before.(store.Fact); b.Embedding[0] != 1 || b.Metadata["k"] != "v" {
		t.Errorf("the store's base version changed: %v %v", b.Embedding, b.Metadata)
	}
}
