package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFuseVectorWeight(t *testing.T) {
	facts := func(ids ...string) []Ranked {
		out := make([]Ranked, len(ids))
		for i, id := range ids {
			out[i] = Ranked{Record: Fact{ID: id}, Score: float64(len(ids) - i)}
		}
		return out
	}
	ids := func(hs []Hit) []string {
		out := make([]string, len(hs))
		for i, h := range hs {
			out[i] = h.Record.RecordID()
		}
		return out
	}
	tests := []struct {
		name   string
		weight float64
		want   []string
	}{
		// Equal weights: "c", second by vector and third by keyword, beats "b", and
		// "v", found by the vector only, beats "b" too.
		{"equal", 1, []string{"a", "c", "v", "b"}},
		// A lexical embedder's weight: the vector still breaks the near-tie of "b"
		// and "c", but the hit only it found comes after every keyword hit.
		{"lexical", 0.1, []string{"a", "c", "b", "v"}},
	}
	for _, tt := range tests {
		q, err := NormalizeSearch(SearchQuery{Text: "x", VectorWeight: tt.weight}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := ids(Fuse(q, facts("a", "b", "c"), facts("v", "c", "a")))
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s: order (-want +got):\n%s", tt.name, d)
		}
	}
	if _, err := NormalizeSearch(SearchQuery{Text: "x", VectorWeight: 1.5}, 0); err == nil {
		t.Error("VectorWeight 1.5 was accepted; want an error")
	}
}
