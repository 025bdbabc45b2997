package memstore

import (
	"cmp"
	"hash/maphash"
	"slices"
	"unicode/utf8"

	"github.com/day1ai/day1/internal/parallel"
	"github.com/day1ai/day1/internal/simhash"
	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// kindIndex indexes every version of one searchable kind, on every branch. Reads keep
// the postings and vectors of the versions their view sees.
type kindIndex struct {
	docs     []*version                  // every indexed version; a version's ord is its position
	expiring int                         // how many of docs are facts with an ExpiresAt: searches check expiry only when some are
	meta     []docMeta                   // what visibility reads of each of docs, kept dense
	fast     []docFast                   // the same, smaller (see docFast)
	postings map[string]*textsearch.List // by term; a pointer, so that adding a posting looks the term up once
	vecs     []*version                  // vector slots in commit order: the first version holding each, the others after it (version.sameVec)
	// masks holds, for each vector slot, the bits (branch.bit) of the branches of its
	// versions. A view whose chain has none of them sees none of the slot's versions:
	// the check reads one word instead of following every version, which matters when
	// many branches hold similar records that one view does not see.
	masks []uint64
	codes []uint64 // sign bits of each rotated embedding, words per vector back to back
	words int      // uint64 words per code
	// sketch holds the last sketchWords words of each code on their own, back to back:
	// a near-duplicate candidate is tested on them first (sketchBound), a read in an
	// array a quarter the size of codes, which the processor's cache keeps far better
	// at a million vectors.
	sketch  []uint64
	dim     int // embedding length
	rot     *vecmath.Rotation
	scratch []float32
	// texts holds the versions of facts by hash of the normalised text, for
	// exact-text dedupe: empty for the other kinds, which are not deduplicated.
	texts versionLists[uint64]
	bands *simhash.Bands // near-duplicate candidates, for codes of 4 words or more
	// holding is set while workers search the band index (Store.prematch), which then
	// does not change: the vectors indexed meanwhile, slots heldFrom on, are searched
	// by a scan of their sketches (kindIndex.heldCandidates), and join bands when Put
	// releases it (releaseBands).
	holding  bool
	heldFrom int
	recent   []*version // the versions holding terms, a ring of recentTerms
	next     int        // the ring's next slot
	// unordered is set when a version was indexed after one of a later commit: docs
	// are otherwise in commit order, which searches in the past rely on (endOf).
	unordered bool
}

// endOf returns the position in docs of the first version committed after seq. The
// caller checks that docs are in commit order.
func (ix *kindIndex) endOf(seq uint64) int32 {
	i, _ := slices.BinarySearchFunc(ix.meta, seq+1, func(m docMeta, t uint64) int { return cmp.Compare(m.seq, t) })
	return int32(i)
}

// recentTerms is how many of the versions indexed last keep the analysis of their text.
const recentTerms = 4096

// remember keeps v's analysis, and forgets that of the version indexed recentTerms
// before.
func (ix *kindIndex) remember(v *version, terms *docTerms) {
	if ix.recent == nil {
		ix.recent = make([]*version, recentTerms)
	}
	if old := ix.recent[ix.next]; old != nil {
		old.terms = nil
	}
	v.terms = terms
	ix.recent[ix.next] = v
	ix.next = (ix.next + 1) % recentTerms
}

// docMeta mirrors the fields of an indexed version that a keyword search reads to
// decide the visibility of a posting its tag does not decide, so that it reads one
// dense array instead of chasing pointers.
type docMeta struct {
	br   *branch
	seq  uint64
	next uint64 // kept equal to the version's next
}

// docFast is the tag of an indexed version, read by position without following the
// version: keyword search reads it for the postings of a shared slot (overflowSlot),
// vector search for the history bit. tag holds the id of the version's branch
// (branch.id) while the version is current there, 0 once replaced, and historyBit
// when the version is a fact that is history (superseded or invalidated).
type docFast struct {
	tag uint32
}

// historyBit marks a docFast of a fact that is history; the other bits of its tag
// are a branch id.
const historyBit = 1 << 31

// history reports whether the version is a fact that is history.
func (d docFast) history() bool { return d.tag&historyBit != 0 }

// A version's postings (textsearch.Posting) are tagged with the slot of the
// version's branch (branch.slot) while the version is current there, 0 once replaced,
// and postingHistory when the version is a fact that is history.
const postingHistory = 1 << 15

// current reports whether p's version is current on the branch of the given slot
// and id. When the slot is shared (overflowSlot), the version's docFast tag decides.
func (ix *kindIndex) current(p textsearch.Posting, slot uint16, id uint32) bool {
	s := p.Tag &^ postingHistory
	if s != slot {
		return false
	}
	return s != overflowSlot || ix.fast[p.Ord].tag&^historyBit == id
}

// longDoc returns the length of the version of ord, for postings too short to hold it.
func (ix *kindIndex) longDoc(ord int32) int { return int(ix.docs[ord].docLen) }

var textSeed = maphash.MakeSeed()

// indexed reports whether records of kind k are indexed for search: the kinds of
// store.SearchKinds.
func indexed(k store.Kind) bool {
	return k == store.KindFact || k == store.KindObservation || k == store.KindConversation || k == store.KindMessage
}

func newKindIndex(k store.Kind) *kindIndex {
	ix := &kindIndex{postings: map[string]*textsearch.List{}}
	if k == store.KindFact {
		ix.texts = newVersionLists[uint64](0)
	}
	return ix
}

// textKey hashes s folded by store.NormText. ASCII text up to maxFoldLen bytes, the
// common case, is folded into a buffer on the stack rather than by NormText, which
// allocates three strings per call; the hash is the same either way.
func textKey(s string) uint64 {
	if len(s) > maxFoldLen {
		return normKey(store.NormText(s))
	}
	var buf [maxFoldLen]byte
	n := 0
	space := false // a space is pending: written before the next non-space byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			// Unicode case folding and spaces: leave them to NormText.
			return normKey(store.NormText(s))
		case c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			space = n > 0
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		if space {
			buf[n] = ' '
			n++
			space = false
		}
		buf[n] = c
		n++
	}
	return maphash.Bytes(textSeed, buf[:n])
}

// maxFoldLen is the longest text textKey folds on the stack.
const maxFoldLen = 1024

// normKey hashes a text already folded by store.NormText.
func normKey(norm string) uint64 { return maphash.String(textSeed, norm) }

// hint is what a write already knows about a record it indexes, so that indexing does
// not compute it again. Every field is optional.
type hint struct {
	// from is a stored version with the same embedding as the record (the source of a
	// merge, the fact a new one supersedes), whose packed embedding, norm and code are
	// reused.
	from *version
	// terms is the analysis of a text made ahead (prepareAll); used when the text is
	// the record's.
	terms *docTerms
	// packed is the record's embedding packed ahead (prepareAll), used when it is
	// still the record's.
	packed aheadPack
	// code is the code of the record's embedding, computed by the near-duplicate check.
	code []uint64
}

// isHistory reports whether v is a fact whose status is one of store.HistoryStatuses.
func isHistory(v *version) bool {
	f, ok := v.rec.(*factRec)
	return ok && slices.Contains(store.HistoryStatuses, f.status)
}

// add indexes v. emb is v's embedding unpacked, when it has one of its own (nil when
// it shares h.from's).
func (ix *kindIndex) add(v *version, h hint, emb []float32) {
	text := v.searchText()
	terms := h.terms
	if terms == nil || terms.text != text {
		t := analyze(text)
		terms = &t
	}
	ix.remember(v, terms)
	v.docLen = terms.n
	v.ord = int32(len(ix.docs))
	v.vi = -1
	if n := len(ix.meta); n > 0 && ix.meta[n-1].seq > v.seq {
		ix.unordered = true
	}
	ix.docs = append(ix.docs, v)
	ix.meta = append(ix.meta, docMeta{br: v.br, seq: v.seq, next: v.next})
	var f docFast
	var tag uint16
	if v.next == never {
		f.tag, tag = v.br.id, v.br.slot
	}
	if isHistory(v) {
		f.tag |= historyBit
		tag |= postingHistory
	}
	if fr, ok := v.rec.(*factRec); ok && !fr.expires().IsZero() {
		ix.expiring++
	}
	ix.fast = append(ix.fast, f)
	// Find the lists not found yet (by prepareAll, or when the text was indexed
	// before), and keep them for the copies merges make.
	if terms.lists == nil {
		terms.lists = make([]*textsearch.List, len(terms.terms))
	}
	for i, tc := range terms.terms {
		if terms.lists[i] != nil {
			continue
		}
		l := ix.postings[tc.term]
		if l == nil {
			l = new(textsearch.List)
			ix.postings[tc.term] = l
		}
		terms.lists[i] = l
	}
	for i, tc := range terms.terms {
		terms.lists[i].Add(v.ord, tag, int(tc.n), int(v.docLen))
	}
	if ix.texts.first != nil {
		ix.texts.add(terms.tkey, v)
	}
	if len(v.emb) == 0 {
		return
	}
	from := h.from
	if from != nil && from.vi >= 0 && len(from.emb) > 0 && &v.emb[0] == &from.emb[0] {
		// The same embedding as from's, shared: the same vector slot, code and band
		// links. A view sees at most one of the versions of a slot, which are all of
		// one record.
		// The slot keeps its first version, which workers searching a held band
		// index read (dupIndex.vecs); v follows it.
		v.inv, v.vi = from.inv, from.vi
		first := ix.vecs[v.vi]
		v.sameVec, first.sameVec = first.sameVec, v
		ix.masks[v.vi] |= v.br.bit
		return
	}
	if len(emb) == 0 {
		emb = v.emb.unpack()
	}
	n := vecmath.Norm(emb)
	if n == 0 {
		return
	}
	v.inv = 1 / n
	if ix.rot == nil || len(ix.vecs) == 0 && len(emb) != ix.dim {
		// The index takes the dimension of the first vector it holds: a batch that
		// readied it (prematch) may have written none.
		ix.init(len(emb))
	}
	if len(emb) != ix.dim {
		return // a store holds one dimension; validation keeps others out
	}
	v.vi = int32(len(ix.vecs))
	ix.vecs = append(ix.vecs, v)
	ix.masks = append(ix.masks, v.br.bit)
	switch {
	case len(h.code) == ix.words:
		ix.codes = append(ix.codes, h.code...)
	default:
		ix.codes = ix.appendCode(ix.codes, emb)
	}
	sk := sketchOf(ix.codes[len(ix.codes)-ix.words:])
	ix.sketch = append(ix.sketch, sk[:]...)
	if ix.bands != nil && !ix.holding {
		ix.bands.Add(ix.codes)
	}
}

// holdBands keeps the band index as it is until releaseBands: the vectors indexed
// meanwhile join it then.
func (ix *kindIndex) holdBands() {
	ix.holding, ix.heldFrom = true, ix.bands.Len()
}

// releaseBands adds to the band index the vectors indexed while it was held, in order,
// and ends the hold. The workers searching it must have stopped.
func (ix *kindIndex) releaseBands() {
	if !ix.holding {
		return
	}
	ix.holding = false
	ix.bands.AddUpTo(ix.codes, len(ix.vecs))
}

// replaced records that v, an indexed version, is no longer current on its branch:
// its tag keeps only the history bit, in docFast and in each of its postings.
func (ix *kindIndex) replaced(v *version) {
	ix.fast[v.ord].tag &= historyBit
	terms := v.terms
	if terms == nil || terms.lists == nil {
		t := analyze(v.searchText())
		terms = &t
	}
	for i, tc := range terms.terms {
		var l *textsearch.List
		if terms.lists != nil {
			l = terms.lists[i] // an indexed version's are all found (add)
		}
		if l == nil {
			if l = ix.postings[tc.term]; l == nil {
				continue
			}
		}
		if j := l.Find(v.ord); j >= 0 {
			l.Postings[j].Tag &= postingHistory
		}
	}
}

// init readies the vector index for embeddings of dim coordinates, the first time one
// is indexed or searched for near-duplicates.
func (ix *kindIndex) init(dim int) {
	ix.dim = dim
	ix.rot = vecmath.NewRotation(ix.dim, rotationSeed)
	ix.words = ix.rot.Words()
	if ix.words >= simhash.MinBandWords {
		ix.bands = simhash.NewBands(ix.words)
	}
}

// seen returns the version of vector slot i that the view sees, or nil.
func (ix *kindIndex) seen(vw view, i int) *version {
	if ix.masks[i]&vw.mask == 0 {
		return nil
	}
	for v := ix.vecs[i]; v != nil; v = v.sameVec {
		if vw.visible(v) {
			return v
		}
	}
	return nil
}

// docTerms is the analysis of a text that indexing needs: its terms with their counts,
// its length in tokens and its hash. It is computed apart from the index so that a
// batch can analyse its texts in parallel.
type docTerms struct {
	text  string
	terms []termCount
	n     int32
	tkey  uint64
	// The postings list of each term, found when the text is first indexed, so that
	// indexing it again (a merge's copy) looks no term up. Only valid while the
	// analysis is kept (kindIndex.remember).
	lists []*textsearch.List
}

type termCount struct {
	term string
	n    int32
}

func analyze(text string) docTerms {
	d := docTerms{text: text, tkey: textKey(text)}
	// A text of a few sentences has a few dozen distinct terms: a linear search of
	// those counted so far beats a map, which only longer texts get.
	var counts map[string]int
	textsearch.ScanTerms(text, func(tok string) {
		d.n++
		if counts != nil {
			if i, ok := counts[tok]; ok {
				d.terms[i].n++
				return
			}
			counts[tok] = len(d.terms)
			d.terms = append(d.terms, termCount{tok, 1})
			return
		}
		for i := range d.terms {
			if d.terms[i].term == tok {
				d.terms[i].n++
				return
			}
		}
		if d.terms == nil {
			d.terms = make([]termCount, 0, min(len(text)/6+1, maxLinearTerms))
		}
		d.terms = append(d.terms, termCount{tok, 1})
		if len(d.terms) == maxLinearTerms {
			counts = make(map[string]int, 2*maxLinearTerms)
			for i, t := range d.terms {
				counts[t.term] = i
			}
		}
	})
	return d
}

// maxLinearTerms is the number of distinct terms up to which analyze counts terms
// without a map.
const maxLinearTerms = 48

// minPrepareAll is the smallest number of records worth preparing in parallel.
const minPrepareAll = 64

// prepared is what Put prepares of a batch's records, on every processor, before it
// takes them in turn.
type prepared struct {
	// terms[i] is the analysis of record i's search text, for a record of an indexed
	// kind. A version keeps its terms a while (version.terms): they are a slice of
	// their own, so that the packed embeddings are not kept with them.
	terms []docTerms
	// embs[i] is record i's embedding packed outside the arena: a version's packed
	// embedding copies it when its embedding is still record i's (aheadPack).
	embs []packed
}

// prepareAll analyses the search texts of the records of indexed kinds, finds the
// postings lists of their terms that index holds already, and packs their embeddings,
// on every processor. Nothing may change index meanwhile. It returns nil for small
// batches, whose records are analysed and packed as they are written.
func prepareAll(recs []store.Record, index map[store.Kind]*kindIndex) *prepared {
	workers := parallel.Parts(len(recs), minPrepareAll/2)
	if workers < 2 {
		return nil
	}
	p := &prepared{terms: make([]docTerms, len(recs)), embs: make([]packed, len(recs))}
	parallel.Each(len(recs), minPrepareAll/2, workers, func(_, lo, hi int) {
		// The form of each embedding, then one buffer for the chunk's, which the
		// writes copy and drop.
		forms := make([]struct {
			n    int
			half bool
		}, hi-lo)
		total := 0
		for i := lo; i < hi; i++ {
			if k := recs[i].RecordKind(); indexed(k) {
				dt := &p.terms[i]
				*dt = analyze(store.SearchText(recs[i]))
				if ix := index[k]; ix != nil {
					dt.lists = make([]*textsearch.List, len(dt.terms))
					for j, tc := range dt.terms {
						dt.lists[j] = ix.postings[tc.term]
					}
				}
			}
			if e := store.EmbeddingOf(recs[i]); len(e) > 0 {
				f := &forms[i-lo]
				f.n, f.half = packedLen(e)
				total += f.n
			}
		}
		buf := make([]float32, total)
		for i := lo; i < hi; i++ {
			f := forms[i-lo]
			if f.n == 0 {
				continue
			}
			q := packed(buf[:f.n:f.n])
			buf = buf[f.n:]
			packInto(q, store.EmbeddingOf(recs[i]), f.half)
			p.embs[i] = q
		}
	})
	return p
}

// aheadPack is an embedding packed ahead (prepareAll), and the embedding it packed.
type aheadPack struct {
	emb packed
	of  []float32
}

// packedAhead returns the embedding packed ahead when emb is still the one it packed, or
// nil.
func (a aheadPack) packedAhead(emb []float32) packed {
	if len(emb) == 0 || len(emb) != len(a.of) || &emb[0] != &a.of[0] {
		return nil
	}
	return a.emb
}

// fold folds the linked vectors of the band index when foldDue(slack) says so.
func (ix *kindIndex) fold(slack int) {
	if ix.bands != nil && ix.bands.FoldDue(slack) {
		ix.bands.Fold(ix.codes)
	}
}

// reserve makes room for n more versions in the index arrays, growing those with less.
func (ix *kindIndex) reserve(n int) {
	if cap(ix.docs)-len(ix.docs) < n {
		ix.docs = slices.Grow(ix.docs, n)
	}
	if cap(ix.meta)-len(ix.meta) < n {
		ix.meta = slices.Grow(ix.meta, n)
	}
	if cap(ix.fast)-len(ix.fast) < n {
		ix.fast = slices.Grow(ix.fast, n)
	}
	if ix.rot == nil {
		return // no vectors yet
	}
	if cap(ix.vecs)-len(ix.vecs) < n {
		ix.vecs = slices.Grow(ix.vecs, n)
	}
	if cap(ix.masks)-len(ix.masks) < n {
		ix.masks = slices.Grow(ix.masks, n)
	}
	if cap(ix.codes)-len(ix.codes) < n*ix.words {
		ix.codes = slices.Grow(ix.codes, n*ix.words)
	}
	if cap(ix.sketch)-len(ix.sketch) < n*sketchWords {
		ix.sketch = slices.Grow(ix.sketch, n*sketchWords)
	}
	if ix.bands != nil {
		ix.bands.Reserve(n)
	}
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
	docs, meta, fast := ix.docs[:0], ix.meta[:0], ix.fast[:0]
	for o, v := range ix.docs {
		remap[o] = -1
		if v.br != b {
			v.ord = int32(len(docs))
			remap[o] = v.ord
			docs = append(docs, v)
			meta = append(meta, ix.meta[o])
			fast = append(fast, ix.fast[o])
		}
	}
	clear(ix.docs[len(docs):])
	clear(ix.meta[len(meta):])
	ix.docs, ix.meta, ix.fast = docs, meta, fast
	for t, list := range ix.postings {
		if !list.Renumber(remap) {
			delete(ix.postings, t)
		}
	}
	// The analyses kept hold lists that may go from the maps below: forget them all.
	for i, v := range ix.recent {
		if v != nil {
			v.terms, ix.recent[i] = nil, nil
		}
	}
	ix.texts.deleteFunc(func(v *version) bool { return v.br == b })
	vecs := ix.vecs[:0]
	codes := ix.codes[:0]
	sketch := ix.sketch[:0]
	masks := ix.masks[:0]
	for i, head := range ix.vecs {
		// The slot's versions, without b's.
		var first, last *version
		for v := head; v != nil; v = v.sameVec {
			if v.br == b {
				continue
			}
			if last == nil {
				first = v
			} else {
				last.sameVec = v
			}
			last = v
		}
		if first == nil {
			continue
		}
		last.sameVec = nil
		var mask uint64
		for v := first; v != nil; v = v.sameVec {
			v.vi = int32(len(vecs))
			mask |= v.br.bit
		}
		vecs = append(vecs, first)
		codes = append(codes, ix.code(i)...)
		sketch = append(sketch, ix.sketch[i*sketchWords:(i+1)*sketchWords]...)
		masks = append(masks, mask)
	}
	clear(ix.vecs[len(vecs):])
	ix.vecs, ix.codes, ix.sketch, ix.masks = vecs, codes, sketch, masks
	if ix.bands != nil {
		ix.bands = simhash.NewBands(ix.words)
		ix.bands.AddAll(ix.codes)
	}
}
