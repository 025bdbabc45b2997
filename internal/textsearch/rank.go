package textsearch

import (
	"cmp"
	"math"
	"slices"

	"github.com/day1ai/day1/internal/vecmath"
)

// Scorer ranks documents by BM25 from the postings a search keeps of each query term:
// those of the documents the search sees and its filter accepts. A search adds them
// term after term (Keep, then Term), then asks for the best documents (Top) or the
// score of every one (All). A Scorer may be reused after Reset; it is not safe for
// concurrent use.
type Scorer struct {
	terms []scoredTerm
	kept  []Posting // the postings kept, term after term
	from  int       // where the current term's postings start in kept
	upTo  []float64
}

// scoredTerm is one query term of a ranking: its list, its weight, the bound of what
// it adds to a document's score, and its postings kept (kept[at:end]), at the first
// not yet passed.
type scoredTerm struct {
	list       *List
	idf, bound float64
	at, end    int
}

// Reset empties s for another search.
func (s *Scorer) Reset() {
	s.terms, s.kept, s.from = s.terms[:0], s.kept[:0], 0
}

// Keep adds a posting of the current term, from its list, in the list's order.
func (s *Scorer) Keep(p Posting) { s.kept = append(s.kept, p) }

// Term ends the current term, whose list is l and weight idf: its postings are those
// kept since the last call. A term with none adds nothing to any score.
func (s *Scorer) Term(l *List, idf float64) {
	if len(s.kept) > s.from {
		s.terms = append(s.terms, scoredTerm{list: l, idf: idf, at: s.from, end: len(s.kept)})
	}
	s.from = len(s.kept)
}

// docLen returns the length of p's document, asking long for those too long for a
// posting.
func docLen(p Posting, long func(ord int32) int) int {
	if n, ok := p.DocLen(); ok {
		return n
	}
	return long(p.Ord)
}

// Top returns the k documents of the highest scores, best first, equal scores in
// ascending order of ord: the same as scoring every document, in a collection of
// average document length avg. long returns the length of a document too long for a
// posting (Posting.DocLen).
//
// It scores documents in ascending order of ord, with MaxScore: terms whose scores,
// added together at their bounds, cannot lift a document into the top k only add to
// documents that the other terms found, and a document whose score cannot reach the
// top k stops being scored.
func (s *Scorer) Top(avg float64, k int, long func(ord int32) int) []vecmath.Scored[int32] {
	ms, ps := s.terms, s.kept
	if len(ms) == 0 || k <= 0 {
		return nil
	}
	for i := range ms {
		ms[i].bound = ms[i].list.Bound(avg, ms[i].idf)
	}
	top := vecmath.NewTopK[int32](k)
	// Terms in ascending order of bound; upTo[i] bounds what terms 0 to i add together.
	// A document found only by terms below pivot cannot score above the top's minimum.
	slices.SortFunc(ms, func(a, b scoredTerm) int { return cmp.Compare(a.bound, b.bound) })
	upTo := s.upTo[:0]
	sum := 0.0
	for _, t := range ms {
		sum += t.bound
		upTo = append(upTo, sum*(1+boundSlack))
	}
	s.upTo = upTo
	pivot, floor := 0, math.Inf(-1)
	for {
		doc := int32(math.MaxInt32)
		for i := pivot; i < len(ms); i++ {
			if t := &ms[i]; t.at < t.end && ps[t.at].Ord < doc {
				doc = ps[t.at].Ord
			}
		}
		if doc == math.MaxInt32 {
			break
		}
		n := -1
		score := 0.0
		for i := pivot; i < len(ms); i++ {
			if t := &ms[i]; t.at < t.end && ps[t.at].Ord == doc {
				p := ps[t.at]
				if n < 0 {
					n = docLen(p, long)
				}
				score += DefaultBM25.Score(t.list.TF(p), n, avg, t.idf)
				t.at++
			}
		}
		for i := pivot - 1; i >= 0 && score+upTo[i] > floor; i-- {
			t := &ms[i]
			t.at = t.seek(ps, doc)
			if t.at < t.end && ps[t.at].Ord == doc {
				score += DefaultBM25.Score(t.list.TF(ps[t.at]), n, avg, t.idf)
				t.at++
			}
		}
		if score <= floor {
			continue
		}
		top.Push(score, doc)
		if floor = top.Min(); floor > math.Inf(-1) {
			for pivot < len(ms) && upTo[pivot] <= floor {
				pivot++
			}
		}
	}
	return top.Sorted()
}

// boundSlack widens the sums of term bounds against rounding: the scores of a
// document's terms are added in another order than their bounds.
const boundSlack = 1e-9

// seek returns the position of the first of the term's postings from at on whose ord
// is doc or more: by doubling steps, then halving.
func (t *scoredTerm) seek(ps []Posting, doc int32) int {
	if t.at >= t.end || ps[t.at].Ord >= doc {
		return t.at
	}
	// ps[lo] is below doc; the first posting at or above it is after lo, by hi.
	lo, step := t.at, 1
	for lo+step < t.end && ps[lo+step].Ord < doc {
		lo += step
		step *= 2
	}
	hi := min(lo+step, t.end)
	i, _ := slices.BinarySearchFunc(ps[lo+1:hi], doc, func(p Posting, d int32) int { return cmp.Compare(p.Ord, d) })
	return lo + 1 + i
}

// All returns the score of every document a kept posting names, by ord, in a
// collection of average document length avg: each the sum of its terms' scores in
// the order the terms were given, so that a search that gives them in a fixed order
// gets the same sums to the last bit whichever path computes them. long is as for Top.
func (s *Scorer) All(avg float64, long func(ord int32) int) map[int32]float64 {
	out := map[int32]float64{}
	for _, t := range s.terms {
		for _, p := range s.kept[t.at:t.end] {
			out[p.Ord] += DefaultBM25.Score(t.list.TF(p), docLen(p, long), avg, t.idf)
		}
	}
	return out
}
