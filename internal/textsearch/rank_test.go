package textsearch

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// TestListPacksFrequencyAndLength checks that a posting gives back the frequency and
// the length it was added with, those too large for its 16 bits included.
func TestListPacksFrequencyAndLength(t *testing.T) {
	t.Parallel()
	var l List
	cases := []struct{ tf, docLen int }{{1, 1}, {3, 7}, {14, 4094}, {15, 4095}, {40, 9000}, {1, 0}}
	for i, c := range cases {
		l.Add(int32(2*i), uint16(i), c.tf, c.docLen)
	}
	for i, c := range cases {
		j := l.Find(int32(2 * i))
		if j != i {
			t.Fatalf("Find(%d) = %d, want %d", 2*i, j, i)
		}
		p := l.Postings[j]
		n, ok := p.DocLen()
		if ok != (c.docLen < maxPostingLen) || ok && n != c.docLen {
			t.Errorf("posting %d: DocLen() = %d, %v; want %d, %v", i, n, ok, c.docLen, c.docLen < maxPostingLen)
		}
		if got := l.TF(p); got != c.tf {
			t.Errorf("posting %d: TF = %d, want %d", i, got, c.tf)
		}
		if p.Tag != uint16(i) {
			t.Errorf("posting %d: tag %d, want %d", i, p.Tag, i)
		}
	}
	if l.Find(1) != -1 {
		t.Errorf("Find of an ord the list lacks = %d, want -1", l.Find(1))
	}
	if got, want := l.Bound(100, 2), DefaultBM25.Score(40, 0, 100, 2); got != want {
		t.Errorf("Bound = %v, want the score of the largest tf at the smallest length, %v", got, want)
	}
	// Renumbering drops the ords mapped below zero and keeps the bounds.
	remap := make([]int32, 2*len(cases))
	for o := range remap {
		remap[o] = int32(o / 2)
		if o == 8 || o == 2 {
			remap[o] = -1
		}
	}
	if !l.Renumber(remap) {
		t.Fatal("Renumber reported no postings left")
	}
	var ords []int32
	for _, p := range l.Postings {
		ords = append(ords, p.Ord)
	}
	if d := gocmp.Diff([]int32{0, 2, 3, 5}, ords); d != "" {
		t.Errorf("ords after Renumber (-want +got):\n%s", d)
	}
	if j := l.Find(3); j < 0 || l.TF(l.Postings[j]) != 15 {
		t.Errorf("the saturated tf did not follow its posting's new ord")
	}
	if got, want := l.Bound(100, 2), DefaultBM25.Score(40, 0, 100, 2); got != want {
		t.Errorf("Bound after Renumber = %v, want %v", got, want)
	}
	all := slices.Repeat([]int32{-1}, 6)
	if l.Renumber(all) {
		t.Error("Renumber of every posting away reported postings left")
	}
}

// TestScorerTopMatchesAll checks MaxScore against scoring every document: the top k of
// Top are the k best of All, ties in ascending order of ord, for random collections of
// common and rare terms, repeated terms, long documents and postings a search left out.
func TestScorerTopMatchesAll(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 2))
	for trial := range 200 {
		docs := 1 + rng.IntN(400)
		lens := make([]int, docs)
		for d := range lens {
			lens[d] = 1 + rng.IntN(60)
			if rng.IntN(50) == 0 {
				lens[d] = 5000 + rng.IntN(5000) // too long for a posting
			}
		}
		long := func(ord int32) int { return lens[ord] }
		terms := 1 + rng.IntN(5)
		lists := make([]*List, terms)
		for i := range lists {
			lists[i] = new(List)
			share := []float64{0.01, 0.1, 0.6}[rng.IntN(3)]
			for d := range docs {
				if rng.Float64() < share {
					tf := 1 + rng.IntN(3)
					if rng.IntN(30) == 0 {
						tf = 15 + rng.IntN(20)
					}
					lists[i].Add(int32(d), 0, tf, lens[d])
				}
			}
		}
		var s Scorer
		keep := func() {
			s.Reset()
			for _, l := range lists {
				for _, p := range l.Postings {
					if p.Ord%7 != 3 { // what a filter turns away
						s.Keep(p)
					}
				}
				s.Term(l, DefaultBM25.IDF(len(l.Postings), docs))
			}
		}
		avg := 20.0
		keep()
		all := s.All(avg, long)
		want := make([]struct {
			ord   int32
			score float64
		}, 0, len(all))
		for o, sc := range all {
			want = append(want, struct {
				ord   int32
				score float64
			}{o, sc})
		}
		slices.SortFunc(want, func(a, b struct {
			ord   int32
			score float64
		}) int {
			if a.score != b.score {
				return -cmp.Compare(a.score, b.score)
			}
			return cmp.Compare(a.ord, b.ord)
		})
		k := 1 + rng.IntN(20)
		keep()
		got := s.Top(avg, k, long)
		if len(got) != min(k, len(want)) {
			t.Fatalf("trial %d: Top gave %d documents, want %d", trial, len(got), min(k, len(want)))
		}
		for i, g := range got {
			w := want[i]
			if math.Abs(g.Score-w.score) > 1e-9*max(1, w.score) {
				t.Fatalf("trial %d: rank %d scores %v, want %v", trial, i, g.Score, w.score)
			}
			// Another document at this rank must tie with the one expected: the
			// two sums add the same terms in another order, so ties may fall either
			// way by rounding, and nothing else may.
			if g.Item != w.ord && math.Abs(all[g.Item]-w.score) > 1e-9*max(1, w.score) {
				t.Fatalf("trial %d: rank %d is document %d (%v), want %d (%v)", trial, i, g.Item, all[g.Item], w.ord, w.score)
			}
		}
	}
}

// TestScorerSkipsEmptyTerms checks that terms whose postings a search kept none of add
// nothing, and that a search with none ranks nothing.
func TestScorerSkipsEmptyTerms(t *testing.T) {
	t.Parallel()
	var l List
	l.Add(0, 0, 1, 3)
	var s Scorer
	s.Term(&l, 1)
	s.Term(nil, 1)
	if got := s.Top(3, 10, nil); got != nil {
		t.Errorf("Top with no postings kept = %v, want nothing", got)
	}
	if got := s.All(3, nil); len(got) != 0 {
		t.Errorf("All with no postings kept = %v, want nothing", got)
	}
	s.Keep(l.Postings[0])
	s.Term(&l, 1)
	if got := s.Top(3, 0, nil); got != nil {
		t.Errorf("Top of 0 = %v, want nothing", got)
	}
	if got := s.Top(3, 5, nil); len(got) != 1 || got[0].Item != 0 || got[0].Score != DefaultBM25.Score(1, 3, 3, 1) {
		t.Errorf("Top = %v, want document 0 at %v", got, DefaultBM25.Score(1, 3, 3, 1))
	}
}
