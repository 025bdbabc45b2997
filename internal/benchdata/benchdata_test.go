package benchdata

import (
	"slices"
	"strings"
	"testing"

	"github.com/day1ai/day1/internal/textsearch"
)

func TestFactsDeterministicDistinctAndPrefixStable(t *testing.T) {
	t.Parallel()
	a := Facts(5000, 7)
	b := Facts(5000, 7)
	if !slices.Equal(a, b) {
		t.Fatal("Facts(5000, 7) differs between two calls")
	}
	if len(a) != 5000 {
		t.Fatalf("len = %d, want 5000", len(a))
	}
	seen := map[string]bool{}
	for i, f := range a {
		if seen[f] {
			t.Fatalf("fact %d repeats %q", i, f)
		}
		seen[f] = true
	}
	if small := Facts(300, 7); !slices.Equal(small, a[:300]) {
		t.Error("Facts(300, 7) is not a prefix of Facts(5000, 7)")
	}
	if other := Facts(300, 8); slices.Equal(other, a[:300]) {
		t.Error("Facts with seeds 7 and 8 are equal")
	}
	if Facts(0, 1) != nil || Facts(-3, 1) != nil {
		t.Error("Facts(n <= 0) is not empty")
	}
}

func TestFactsVocabulary(t *testing.T) {
	t.Parallel()
	words := map[string]bool{}
	for _, f := range Facts(20000, 1) {
		for _, w := range textsearch.Tokenize(f) {
			words[w] = true
		}
	}
	if len(words) < 2000 {
		t.Errorf("20000 facts hold %d distinct words, want at least 2000", len(words))
	}
	t.Logf("20000 facts, %d distinct words", len(words))
}

func TestQueries(t *testing.T) {
	t.Parallel()
	facts := Facts(2000, 3)
	qs := Queries(facts, 300, 4)
	if len(qs) != 300 {
		t.Fatalf("len = %d, want 300", len(qs))
	}
	if !slices.Equal(qs, Queries(facts, 300, 4)) {
		t.Fatal("Queries differs between two calls")
	}
	for _, q := range qs {
		if q.Fact < 0 || q.Fact >= len(facts) {
			t.Fatalf("query %q names fact %d of %d", q.Text, q.Fact, len(facts))
		}
		if strings.TrimSpace(q.Text) == "" {
			t.Fatalf("empty query for fact %d", q.Fact)
		}
		if q.Text == facts[q.Fact] {
			t.Errorf("query quotes its fact verbatim: %q", q.Text)
		}
		// A paraphrase shares words with its fact.
		fw := map[string]bool{}
		for _, w := range textsearch.Tokenize(facts[q.Fact]) {
			fw[w] = true
		}
		shared := 0
		for _, w := range textsearch.Tokenize(q.Text) {
			if fw[w] {
				shared++
			}
		}
		if shared == 0 {
			t.Errorf("query %q shares no word with its fact %q", q.Text, facts[q.Fact])
		}
	}
	if Queries(nil, 5, 1) != nil || Queries(facts, 0, 1) != nil {
		t.Error("Queries with no facts or n <= 0 is not empty")
	}
}
