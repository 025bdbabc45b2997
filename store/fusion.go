package store

import (
	"math"
	"slices"
	"strings"
)

// Ranked is a record with one retriever's score.
type Ranked struct {
	Record Record
	Score  float64
	// Place is, for a fact of a keyword ranking, its place among the facts of its
	// session in creation order, from 1 (see AddSessionNeighbours); 0 when unknown,
	// and then the fact lends and gains no score.
	Place int
	// Full is, in a keyword ranking, the score of a record of this one's kind that
	// holds every term of the query once and is of average length: the sum of the
	// terms' IDFs over the records searched, a term found in none counting as the
	// rarest. Its keyword relevance reaches 1 there (see Hit.Relevance). 0 when
	// unknown: the records of the same kind in the ranking give theirs.
	Full float64
}

// SortRanked orders rs best first: by score, then by kind (in the order of Kinds) and
// id, so equal scores always come out in the same order on every store.
func SortRanked(rs []Ranked) {
	slices.SortFunc(rs, func(a, b Ranked) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		if c := slices.Index(Kinds, a.Record.RecordKind()) - slices.Index(Kinds, b.Record.RecordKind()); c != 0 {
			return c
		}
		return strings.Compare(a.Record.RecordID(), b.Record.RecordID())
	})
}

// Fuse turns the rankings of the keyword and vector retrievers into the hits of a
// search: the final score per q.Mode and q.Fusion (see RRF, Weighted and Fill), with
// the messages' context in the keyword scores (see SearchQuery.WindowWeight), each
// hit's Relevance, MinScore and MinRelevance applied, best first, at most q.Limit.
// The vector retriever's records with a cosine of 0 or less are not found. q must be normalised (NormalizeSearch). Every
// store calls it, so hybrid ranking is the same on all of them.
func Fuse(q SearchQuery, keyword, vector []Ranked) []Hit {
	gains := map[Ref]float64{}
	keyword = addContext(q, keyword, gains)
	SortRanked(keyword)
	SortRanked(vector)
	hits := map[Ref]*Hit{}
	var order []Ref
	get := func(r Record) *Hit {
		ref := RefOf(r)
		h, ok := hits[ref]
		if !ok {
			h = &Hit{Record: r}
			hits[ref] = h
			order = append(order, ref)
		}
		return h
	}
	full := map[Kind]float64{}
	for _, r := range keyword {
		k := r.Record.RecordKind()
		full[k] = max(full[k], r.Full)
	}
	for i, r := range keyword {
		h := get(r.Record)
		h.WindowScore = gains[RefOf(r.Record)]
		h.KeywordScore, h.KeywordRank = r.Score-h.WindowScore, i+1
		h.FoundBy = append(h.FoundBy, RetrieverKeyword)
	}
	// A record at a right angle to the query, or facing away, is not like it: the
	// vector retriever does not find it, whatever else it ranks.
	unlike := func(r Ranked) bool { return !(r.Score > 0) }
	if slices.ContainsFunc(vector, unlike) {
		vector = slices.DeleteFunc(slices.Clone(vector), unlike)
	}
	for i, r := range vector {
		h := get(r.Record)
		h.VectorScore, h.VectorRank = r.Score, i+1
		h.FoundBy = append(h.FoundBy, RetrieverVector)
	}
	kwMin, kwMax := bounds(keyword)
	vecMin, vecMax := bounds(vector)
	for _, ref := range order {
		h := hits[ref]
		switch {
		case q.Mode == Keyword:
			h.Score = h.KeywordScore + h.WindowScore
		case q.Mode == Vector:
			h.Score = h.VectorScore
		case q.Fusion == Fill:
			if h.KeywordRank > 0 {
				h.Score = 1 + unit(h.KeywordScore+h.WindowScore, kwMin, kwMax)
			} else {
				h.Score = 0.999 * unit(h.VectorScore, vecMin, vecMax)
			}
		case q.Fusion == Weighted:
			if h.VectorRank > 0 {
				h.Score += q.Alpha * unit(h.VectorScore, vecMin, vecMax)
			}
			if h.KeywordRank > 0 {
				h.Score += (1 - q.Alpha) * unit(h.KeywordScore+h.WindowScore, kwMin, kwMax)
			}
		default:
			if h.KeywordRank > 0 {
				h.Score += 1 / (q.RRFK + float64(h.KeywordRank))
			}
			if h.VectorRank > 0 {
				h.Score += q.VectorWeight / (q.RRFK + float64(h.VectorRank))
			}
		}
	}
	best := 0.0
	for _, ref := range order {
		h := hits[ref]
		h.Relevance = relevance(q, h, full[ref.Kind])
		if q.MinScore == 0 || h.Score >= q.MinScore {
			best = max(best, h.Relevance)
		}
	}
	if q.MinRelevance > 0 && best < q.MinRelevance {
		return nil // nothing relevant
	}
	out := make([]Ranked, 0, len(order))
	for _, ref := range order {
		h := hits[ref]
		if (q.MinScore == 0 || h.Score >= q.MinScore) && h.Relevance >= q.MinRelevance/2 {
			out = append(out, Ranked{Record: h.Record, Score: h.Score})
		}
	}
	SortRanked(out)
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	res := make([]Hit, len(out))
	for i, r := range out {
		res[i] = *hits[RefOf(r.Record)]
	}
	return res
}

// relevance returns the relevance of a hit (see Hit.Relevance), where full is the
// keyword score of a full match of its kind.
func relevance(q SearchQuery, h *Hit, full float64) float64 {
	kw, vec := 0.0, 0.0
	if h.KeywordRank > 0 && full > 0 {
		kw = min(1, max(0, (h.KeywordScore+h.WindowScore)/full))
	}
	if h.VectorRank > 0 {
		vec = min(1, max(0, h.VectorScore))
	}
	switch q.Mode {
	case Keyword:
		return kw
	case Vector:
		return vec
	}
	return max(kw, vec)
}

// NeedVector reports whether a search's vector retriever can change its hits, given
// how many hits its keyword retriever found (with the neighbours of NeighbourRanges):
// always, except in a Hybrid search with Fill fusion whose keyword hits fill its
// Limit. q must be normalised. Stores that run the retrievers one after the other
// skip the vector retriever when it cannot.
func NeedVector(q SearchQuery, keywordHits int) bool {
	return q.Mode != Keyword && !(q.Mode == Hybrid && q.Fusion == Fill && keywordHits >= q.Limit)
}

func bounds(rs []Ranked) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		lo, hi = min(lo, r.Score), max(hi, r.Score)
	}
	return lo, hi
}

// unit min-max normalises x into [0, 1]; a list of equal scores maps to 1.
func unit(x, lo, hi float64) float64 {
	if hi <= lo {
		return 1
	}
	return (x - lo) / (hi - lo)
}
