package memstore

import (
	"hash/maphash"
	"slices"

	"github.com/day1ai/day1/internal/parallel"
	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// kindIndex indexes every version of one searchable kind, on every branch. Reads keep
// the postings and vectors of the versions their view sees.
type kindIndex struct {
	docs     []*version // every indexed version; a version's ord is its position
	meta     []docMeta  // what visibility and scoring read of each of docs, kept dense
	postings map[string][]posting
	vecs     []*version // versions with an embedding, in commit order
	codes    []uint64   // sign bits of each rotated embedding, words per vector back to back
	words    int        // uint64 words per code
	dim      int        // embedding length
	rot      *vecmath.Rotation
	scratch  []float32
	texts    map[uint64][]*version // by hash of the normalised text, for exact-text dedupe
	bands    *bandIndex            // near-duplicate candidates, for codes of 4 words or more
}

// docMeta mirrors the fields of an indexed version that keyword search reads for every
// posting, so that a scan walks one dense array instead of chasing pointers.
type docMeta struct {
	br     *branch
	seq    uint64
	next   uint64 // kept equal to the version's next
	docLen int32
}

// posting is one document of a term: the version's position in docs, and how often
// the term occurs in it. Postings hold no pointers, so the collector never scans them.
type posting struct {
	ord int32
	tf  int32
}

var textSeed = maphash.MakeSeed()

func newKindIndex() *kindIndex {
	return &kindIndex{postings: map[string][]posting{}, texts: map[uint64][]*version{}}
}

func textKey(s string) uint64 { return normKey(store.NormText(s)) }

// normKey hashes a text already folded by store.NormText.
func normKey(norm string) uint64 { return maphash.String(textSeed, norm) }

// hint is what a write already knows about a record it indexes, so that indexing does
// not compute it again. Every field is optional.
type hint struct {
	// from is an indexed version with the same content (the source of a merge), whose
	// text hash, norm and code are reused.
	from *version
	// terms is the analysis of a text made ahead (analyzeAll); used when the text is
	// the record's.
	terms *docTerms
	// code is the code of the record's embedding, computed by the near-duplicate check.
	code []uint64
}

// add indexes v.
func (ix *kindIndex) add(v *version, h hint) {
	text := store.SearchText(v.rec)
	terms := h.terms
	if terms == nil || terms.text != text {
		t := analyze(text)
		terms = &t
	}
	v.docLen = terms.n
	v.ord = int32(len(ix.docs))
	v.vi = -1
	ix.docs = append(ix.docs, v)
	ix.meta = append(ix.meta, docMeta{br: v.br, seq: v.seq, next: v.next, docLen: v.docLen})
	for _, tc := range terms.terms {
		ix.postings[tc.term] = append(ix.postings[tc.term], posting{ord: v.ord, tf: tc.n})
	}
	v.tkey = terms.tkey
	ix.texts[v.tkey] = append(ix.texts[v.tkey], v)
	emb := store.EmbeddingOf(v.rec)
	if len(emb) == 0 {
		return
	}
	var n float32
	from := h.from
	if from != nil && from.inv != 0 {
		n = 1 / from.inv
	} else {
		n = vecmath.Norm(emb)
	}
	if n == 0 {
		return
	}
	v.inv = 1 / n
	v.emb = emb
	if ix.rot == nil {
		ix.dim = len(emb)
		ix.rot = vecmath.NewRotation(ix.dim, rotationSeed)
		ix.words = ix.rot.Words()
		if ix.words >= minBandWords {
			ix.bands = newBandIndex(ix.words)
		}
	}
	if len(emb) != ix.dim {
		return // a store holds one dimension; validation keeps others out
	}
	v.vi = int32(len(ix.vecs))
	ix.vecs = append(ix.vecs, v)
	switch {
	case from != nil && from.vi >= 0:
		ix.codes = append(ix.codes, ix.code(int(from.vi))...)
	case len(h.code) == ix.words:
		ix.codes = append(ix.codes, h.code...)
	default:
		ix.codes = ix.appendCode(ix.codes, emb)
	}
	if ix.bands != nil {
		ix.bands.add(ix.codes[len(ix.codes)-ix.words:])
	}
}

// docTerms is the analysis of a text that indexing needs: its terms with their counts,
// its length in tokens and its hash. It is computed apart from the index so that a
// batch can analyse its texts in parallel.
type docTerms struct {
	text  string
	terms []termCount
	n     int32
	tkey  uint64
}

type termCount struct {
	term string
	n    int32
}

func analyze(text string) docTerms {
	tokens := textsearch.Tokenize(text)
	tf := textsearch.TermFreqs(tokens)
	terms := make([]termCount, 0, len(tf))
	for t, n := range tf {
		terms = append(terms, termCount{t, int32(n)})
	}
	return docTerms{text: text, terms: terms, n: int32(len(tokens)), tkey: textKey(text)}
}

// minAnalyzeAll is the smallest number of texts worth analysing in parallel.
const minAnalyzeAll = 64

// analyzeAll analyses the search texts of the records of indexed kinds, on every
// processor; records of other kinds get a zero value. It returns nil for small batches,
// which are analysed as they are indexed.
func analyzeAll(recs []store.Record) []docTerms {
	parts := parallel.Parts(len(recs), minAnalyzeAll/2)
	if parts < 2 {
		return nil
	}
	out := make([]docTerms, len(recs))
	parallel.Do(len(recs), parts, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			if k := recs[i].RecordKind(); k == store.KindFact || k == store.KindObservation {
				out[i] = analyze(store.SearchText(recs[i]))
			}
		}
	})
	return out
}

// rotationSeed fixes the rotation, so codes are the same in every process.
const rotationSeed = 0x6461793120

// appendCode appends the code of v: the sign bits of v rotated.
func (ix *kindIndex) appendCode(dst []uint64, v []float32) []uint64 {
	if cap(ix.scratch) < ix.rot.Bits() {
		ix.scratch = make([]float32, ix.rot.Bits())
	}
	return ix.rot.AppendCode(dst, v, ix.scratch)
}

// code returns the sign bits of the i-th vector.
func (ix *kindIndex) code(i int) []uint64 { return ix.codes[i*ix.words : (i+1)*ix.words] }

// purge drops the versions of a deleted branch.
func (ix *kindIndex) purge(b *branch) {
	// remap[o] is the new position of the document at position o, -1 if dropped.
	remap := make([]int32, len(ix.docs))
	docs, meta := ix.docs[:0], ix.meta[:0]
	for o, v := range ix.docs {
		remap[o] = -1
		if v.br != b {
			v.ord = int32(len(docs))
			remap[o] = v.ord
			docs = append(docs, v)
			meta = append(meta, ix.meta[o])
		}
	}
	clear(ix.docs[len(docs):])
	clear(ix.meta[len(meta):])
	ix.docs, ix.meta = docs, meta
	for t, ps := range ix.postings {
		ps = slices.DeleteFunc(ps, func(p posting) bool { return remap[p.ord] < 0 })
		for i := range ps {
			ps[i].ord = remap[ps[i].ord]
		}
		if len(ps) == 0 {
			delete(ix.postings, t)
		} else {
			ix.postings[t] = ps
		}
	}
	for k, vs := range ix.texts {
		vs = slices.DeleteFunc(vs, func(v *version) bool { return v.br == b })
		if len(vs) == 0 {
			delete(ix.texts, k)
		} else {
			ix.texts[k] = vs
		}
	}
	vecs := ix.vecs[:0]
	codes := ix.codes[:0]
	for i, v := range ix.vecs {
		if v.br == b {
			continue
		}
		v.vi = int32(len(vecs))
		vecs = append(vecs, v)
		codes = append(codes, ix.code(i)...)
	}
	clear(ix.vecs[len(vecs):])
	ix.vecs, ix.codes = vecs, codes
	if ix.bands != nil {
		ix.bands = newBandIndex(ix.words)
		for i := range ix.vecs {
			ix.bands.add(ix.code(i))
		}
	}
}

// Near-duplicate candidates come from locality-sensitive hashing of the sign-bit codes:
// each 16-bit slice of a code (a band) is a bucket key, and two vectors are candidates
// when they share a bucket in any band. Two vectors at angle θ agree on a bit with
// probability 1-θ/π, so at cosine 0.92 a band matches with probability 0.87^16 ≈ 0.11
// and one of 32 bands with probability ≈ 0.97 (0.998 at cosine 0.95), while unrelated
// vectors share a band about 32 times in 65536. Codes are taken after a random rotation
// (vecmath.Rotation), which makes their bits independent of how sparse embeddings are. Buckets are linked lists threaded
// through flat arrays: a few bytes per vector and band, no maps.
const (
	bandBits     = 16
	maxBands     = 32
	minBandWords = 4 // below 256 dimensions, candidates are found by a full scan
)

type bandIndex struct {
	bands int
	heads [][]int32 // [band][bucket]: 1 + index of the newest vector in the bucket, 0 if none
	// next[vector*bands+band] is 1 + the index of the previous vector in the vector's
	// bucket of that band. A vector's links sit together, so adding one touches a
	// cache line or two rather than one per band.
	next []int32
	n    int32 // vectors added
}

func newBandIndex(words int) *bandIndex {
	n := min(words*64/bandBits, maxBands)
	bi := &bandIndex{bands: n, heads: make([][]int32, n)}
	for b := range n {
		bi.heads[b] = make([]int32, 1<<bandBits)
	}
	return bi
}

func bandKey(code []uint64, b int) uint16 {
	return uint16(code[b/4] >> (uint(b%4) * bandBits))
}

func (bi *bandIndex) add(code []uint64) {
	bi.n++
	for b := range bi.bands {
		k := bandKey(code, b)
		bi.next = append(bi.next, bi.heads[b][k])
		bi.heads[b][k] = bi.n
	}
}

// candidates calls fn with the index, from or more, of every vector sharing a band
// with code, possibly more than once. Buckets list the newest vectors first, so a walk
// ends at the first index below from.
func (bi *bandIndex) candidates(code []uint64, from int, fn func(i int)) {
	for b := range bi.bands {
		for j := bi.heads[b][bandKey(code, b)]; int(j) > from; j = bi.next[int(j-1)*bi.bands+b] {
			fn(int(j - 1))
		}
	}
}
