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

// TestFuseFill: keyword hits first, in keyword order whatever the vector ranking says,
// then the hits only the vector found, in vector order; scores above 1 for the first,
// below for the others; Limit cuts the vector hits first.
func TestFuseFill(t *testing.T) {
	kw := []Ranked{{Record: Fact{ID: "a"}, Score: 3}, {Record: Fact{ID: "b"}, Score: 2}, {Record: Fact{ID: "c"}, Score: 1}}
	vec := []Ranked{{Record: Fact{ID: "v"}, Score: 0.9}, {Record: Fact{ID: "c"}, Score: 0.8}, {Record: Fact{ID: "w"}, Score: 0.5}, {Record: Fact{ID: "a"}, Score: 0.1}}
	q, err := NormalizeSearch(SearchQuery{Text: "x", Fusion: Fill}, 0)
	if err != nil {
		t.Fatal(err)
	}
	hits := Fuse(q, kw, vec)
	var got []string
	for _, h := range hits {
		got = append(got, h.Record.RecordID())
	}
	if d := cmp.Diff([]string{"a", "b", "c", "v", "w"}, got); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	for _, h := range hits {
		if kwHit := h.KeywordRank > 0; kwHit != (h.Score >= 1) || h.Score < 0 || h.Score > 2 {
			t.Errorf("%s: Score %v, KeywordRank %d; want [1, 2] for keyword hits, [0, 1) for the others", h.Record.RecordID(), h.Score, h.KeywordRank)
		}
	}
	if c := hits[2]; c.VectorRank != 2 || c.VectorScore != 0.8 || len(c.FoundBy) != 2 {
		t.Errorf("c keeps its vector rank and score: %+v", c)
	}
	q.Limit = 4
	if hits := Fuse(q, kw, vec); len(hits) != 4 || hits[3].Record.RecordID() != "v" {
		t.Errorf("Limit 4: %v", hits)
	}
	if _, err := NormalizeSearch(SearchQuery{Text: "x", Fusion: "blend"}, 0); err == nil {
		t.Error("Fusion blend was accepted; want an error")
	}
}
