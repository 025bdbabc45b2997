package memstore

import (
	"slices"

	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// kindIndex indexes every version of one searchable kind, on every branch. Reads keep
// the postings and vectors of the versions their view sees.
type kindIndex struct {
	postings map[string][]posting
	vecs     []*version // versions with an embedding, in commit order
	codes    []uint64   // sign bits of each embedding, words per vector back to back
	words    int        // uint64 words per code
}

type posting struct {
	v  *version
	tf int32
}

func newKindIndex() *kindIndex {
	return &kindIndex{postings: map[string][]posting{}}
}

func (ix *kindIndex) add(v *version) {
	tokens := textsearch.Tokenize(store.SearchText(v.rec))
	v.docLen = len(tokens)
	for t, n := range textsearch.TermFreqs(tokens) {
		ix.postings[t] = append(ix.postings[t], posting{v: v, tf: int32(n)})
	}
	emb := store.EmbeddingOf(v.rec)
	if len(emb) == 0 {
		return
	}
	n := vecmath.Norm(emb)
	if n == 0 {
		return
	}
	v.inv = 1 / n
	w := (len(emb) + 63) / 64
	if ix.words == 0 {
		ix.words = w
	}
	if w != ix.words {
		return // a store holds one dimension; validation keeps others out
	}
	ix.vecs = append(ix.vecs, v)
	ix.codes = vecmath.AppendSignBits(ix.codes, emb)
}

// purge drops the versions of a deleted branch.
func (ix *kindIndex) purge(b *branch) {
	for t, ps := range ix.postings {
		ps = slices.DeleteFunc(ps, func(p posting) bool { return p.v.br == b })
		if len(ps) == 0 {
			delete(ix.postings, t)
		} else {
			ix.postings[t] = ps
		}
	}
	vecs := ix.vecs[:0]
	codes := ix.codes[:0]
	for i, v := range ix.vecs {
		if v.br == b {
			continue
		}
		vecs = append(vecs, v)
		codes = append(codes, ix.codes[i*ix.words:(i+1)*ix.words]...)
	}
	clear(ix.vecs[len(vecs):])
	ix.vecs, ix.codes = vecs, codes
}

func sortByPostings(terms []string, ix *kindIndex) {
	slices.SortFunc(terms, func(a, b string) int {
		if d := len(ix.postings[a]) - len(ix.postings[b]); d != 0 {
			return d
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	})
}
