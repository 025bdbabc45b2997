package storetest

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// RunRecall checks that a store's vector search finds what an exact scan finds: at
// each of sizes (in facts of the benchmark corpus, at most MaxBenchSize), recall@10
// averaged over 50 paraphrase queries must be at least 0.9. A store that ranks
// vector candidates approximately (codes, an index) passes it to show that its
// approximation loses little. newStore returns an empty store as BenchHarness.New
// does; RunRecall closes it.
func RunRecall(t *testing.T, newStore func(testing.TB) store.Store, sizes []int) {
	const k, nq, want = 10, 50, 0.9
	for _, n := range sizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			if n < 100 || n > MaxBenchSize {
				t.Fatalf("storetest: RunRecall at %d facts: sizes are from 100 to %d", n, MaxBenchSize)
			}
			_, vecs := Corpus(t, n)
			s := newStore(t)
			defer s.Close()
			load(t, s, n)
			qs := queries(t, n)[:nq]
			ctx := context.Background()
			var sum float64
			for _, q := range qs {
				hits, err := s.Search(ctx, store.View{}, store.SearchQuery{
					Mode: store.Vector, Vector: q.vec, Limit: k, Kinds: []store.Kind{store.KindFact}})
				if err != nil {
					t.Fatal(err)
				}
				exact := exactTop(vecs, q.vec, k)
				got := 0
				for _, h := range hits {
					if exact[h.Record.RecordID()] {
						got++
					}
				}
				sum += float64(got) / float64(k)
			}
			recall := sum / float64(len(qs))
			t.Logf("recall@%d at %d facts over %d queries: %.3f", k, n, len(qs), recall)
			if recall < want {
				t.Errorf("recall@%d = %.3f at %d facts, want at least %.2f", k, recall, n, want)
			}
		})
	}
}

// exactTop returns the ids of the k vectors with the highest cosine similarity to q,
// by a full scan.
func exactTop(vecs [][]float32, q []float32, k int) map[string]bool {
	type scored struct {
		i int
		s float32
	}
	all := make([]scored, len(vecs))
	for i, v := range vecs {
		all[i] = scored{i, vecmath.Cosine(q, v)}
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].s != all[b].s {
			return all[a].s > all[b].s
		}
		return all[a].i < all[b].i
	})
	out := make(map[string]bool, k)
	for _, x := range all[:k] {
		out[benchFactID(x.i)] = true
	}
	return out
}
