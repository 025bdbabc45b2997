package textsearch

import (
	"math"
	"slices"
)

// BM25 holds the two free parameters of Okapi BM25.
//
// K1 controls term-frequency saturation: the larger it is, the longer repeated
// occurrences keep adding to the score (0 ignores frequency altogether). B controls
// length normalisation: 1 scales term frequency fully by document length relative to the
// average, 0 ignores length.
type BM25 struct {
	K1 float64
	B  float64
}

// DefaultBM25 holds the parameters day1 scores with: Lucene's K1 of 1.2, and a B of 0.5
// where Lucene uses 0.75. Memories hold short texts of uneven length (a greeting, a
// paragraph of explanation); full length normalisation lets a short greeting that
// repeats a name outrank the long turn that answers. On the LoCoMo conversational
// benchmark B 0.5 raised recall@10 by about one point over 0.75 (0.3 gave the same).
var DefaultBM25 = BM25{K1: 1.2, B: 0.5}

// IDF returns the inverse document frequency of a term that occurs in df of n documents,
// in the Lucene form
//
//	idf = ln(1 + (n - df + 0.5) / (df + 0.5))
//
// which, unlike the classic Robertson–Spärck Jones form, is never negative: a term found
// in every document still scores a little. df is clamped to [0, n] and a negative n is
// taken as 0, so inconsistent statistics cannot produce a negative or NaN weight.
func (BM25) IDF(df, n int) float64 {
	n = max(n, 0)
	df = min(max(df, 0), n)
	return math.Log1p((float64(n-df) + 0.5) / (float64(df) + 0.5))
}

// Score returns the BM25 contribution of one term to one document:
//
//	score = idf · tf·(k1 + 1) / (tf + k1·(1 - b + b·docLen/avgDocLen))
//
// tf is the term's frequency in the document, docLen the document's length in tokens,
// avgDocLen the mean document length and idf the weight from IDF. A tf of zero or less
// scores 0. When avgDocLen is not positive (an empty collection) length normalisation is
// skipped, as if docLen were average.
func (p BM25) Score(tf int, docLen int, avgDocLen float64, idf float64) float64 {
	if tf <= 0 {
		return 0
	}
	rel := 1.0
	if avgDocLen > 0 {
		rel = float64(max(docLen, 0)) / avgDocLen
	}
	f := float64(tf)
	return idf * f * (p.K1 + 1) / (f + p.K1*(1-p.B+p.B*rel))
}

// TermFreqs counts how often each token occurs. It returns an empty, non-nil map for no
// tokens.
func TermFreqs(tokens []string) map[string]int {
	m := make(map[string]int, len(tokens))
	for _, t := range tokens {
		m[t]++
	}
	return m
}

// Full returns the BM25 score of a document of average length that holds each term
// of a query once: the sum of the terms' IDFs, added in ascending order, so that it is
// the same to the last bit whatever order the terms were met in.
func Full(idfs []float64) float64 {
	slices.Sort(idfs)
	sum := 0.0
	for _, x := range idfs {
		sum += x
	}
	return sum
}
