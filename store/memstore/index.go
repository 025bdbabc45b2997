package memstore

import (
	"cmp"
	"hash/maphash"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"unicode/utf8"

	"github.com/day1ai/day1/internal/parallel"
	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// kindIndex indexes every version of one searchable kind, on every branch. Reads keep
// the postings and vectors of the versions their view sees.
type kindIndex struct {
	docs     []*version           // every indexed version; a version's ord is its position
	meta     []docMeta            // what visibility reads of each of docs, kept dense
	fast     []docFast            // the same, smaller (see docFast)
	postings map[string]*termList // by term; a pointer, so that adding a posting looks the term up once
	vecs     []*version           // vector slots in commit order: the first version holding each, the others after it (version.sameVec)
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
	bands *bandIndex // near-duplicate candidates, for codes of 4 words or more
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

// posting is one document of a term: the version's position in docs, a short form of
// its docFast tag, and how often the term occurs in it with the document's length. A
// search decides most postings' visibility and scores them reading them alone, in
// order, rather than reading each version's entries at random. Postings hold no
// pointers, so the collector never scans them.
type posting struct {
	ord int32
	// tag holds the slot of the version's branch (branch.slot) while the version is
	// current there, 0 once replaced, and postingHistory when the version is a fact
	// that is history.
	tag uint16
	// tfLen holds the term's frequency in its top tfBits bits and the document's
	// length in the others, each saturated at its field's largest value: see
	// termList.tf and kindIndex.docLen.
	tfLen uint16
}

const (
	postingHistory = 1 << 15
	tfBits         = 4
	lenBits        = 16 - tfBits
	maxPostingTF   = 1<<tfBits - 1
	maxPostingLen  = 1<<lenBits - 1
)

func newPosting(ord int32, tag uint16, tf, docLen int32) posting {
	return posting{ord: ord, tag: tag, tfLen: uint16(min(tf, maxPostingTF))<<lenBits | uint16(min(docLen, maxPostingLen))}
}

// current reports whether p's version is current on the branch of the given slot
// and id. When the slot is shared (overflowSlot), the version's docFast tag decides.
func (ix *kindIndex) current(p posting, slot uint16, id uint32) bool {
	s := p.tag &^ postingHistory
	if s != slot {
		return false
	}
	return s != overflowSlot || ix.fast[p.ord].tag&^historyBit == id
}

// termList is a term's postings, in the order of their ords, with the largest tf and
// the smallest document length among them (those of versions since dropped
// included): together they bound the score the term can add to a document.
type termList struct {
	ps    []posting
	maxTF int32
	minDL int32
	big   map[int32]int32 // tf by ord, for the postings whose tf is saturated
}

// tf returns how often the term occurs in p's document.
func (l *termList) tf(p posting) int {
	if tf := p.tfLen >> lenBits; tf < maxPostingTF {
		return int(tf)
	}
	return int(l.big[p.ord])
}

// docLen returns the length in tokens of p's document.
func (ix *kindIndex) docLen(p posting) int {
	if n := p.tfLen & maxPostingLen; n < maxPostingLen {
		return int(n)
	}
	return int(ix.docs[p.ord].docLen)
}

// find returns the position of the posting of ord in the list, or -1.
func (l *termList) find(ord int32) int {
	i, ok := slices.BinarySearchFunc(l.ps, ord, func(p posting, o int32) int { return cmp.Compare(p.ord, o) })
	if !ok {
		return -1
	}
	return i
}

var textSeed = maphash.MakeSeed()

// indexed reports whether records of kind k are indexed for search: the kinds of
// store.SearchKinds.
func indexed(k store.Kind) bool {
	return k == store.KindFact || k == store.KindObservation || k == store.KindConversation || k == store.KindMessage
}

func newKindIndex(k store.Kind) *kindIndex {
	ix := &kindIndex{postings: map[string]*termList{}}
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

// historyOnly reports whether a filter drops exactly the facts that are history and
// nothing else, as a search's default filter does: docMeta.history then decides it.
func historyOnly(f store.Filter) bool {
	if len(f.ExcludeStatuses) == 0 {
		return false
	}
	for _, st := range f.ExcludeStatuses {
		if !slices.Contains(store.HistoryStatuses, st) {
			return false
		}
	}
	for _, st := range store.HistoryStatuses {
		if !slices.Contains(f.ExcludeStatuses, st) {
			return false
		}
	}
	f.ExcludeStatuses = nil
	return f.IsZero()
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
	ix.fast = append(ix.fast, f)
	// Find the lists not found yet (by prepareAll, or when the text was indexed
	// before), and keep them for the copies merges make.
	if terms.lists == nil {
		terms.lists = make([]*termList, len(terms.terms))
	}
	for i, tc := range terms.terms {
		if terms.lists[i] != nil {
			continue
		}
		l := ix.postings[tc.term]
		if l == nil {
			l = &termList{minDL: v.docLen}
			ix.postings[tc.term] = l
		}
		terms.lists[i] = l
	}
	for i, tc := range terms.terms {
		l := terms.lists[i]
		p := newPosting(v.ord, tag, tc.n, v.docLen)
		if tc.n >= maxPostingTF {
			if l.big == nil {
				l.big = map[int32]int32{}
			}
			l.big[v.ord] = tc.n
		}
		l.ps = append(l.ps, p)
		l.maxTF = max(l.maxTF, tc.n)
		l.minDL = min(l.minDL, v.docLen)
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
		ix.bands.add(ix.codes)
	}
}

// holdBands keeps the band index as it is until releaseBands: the vectors indexed
// meanwhile join it then.
func (ix *kindIndex) holdBands() {
	ix.holding, ix.heldFrom = true, ix.bands.n
}

// releaseBands adds to the band index the vectors indexed while it was held, in order,
// and ends the hold. The workers searching it must have stopped.
func (ix *kindIndex) releaseBands() {
	if !ix.holding {
		return
	}
	ix.holding = false
	ix.bands.addUpTo(ix.codes, len(ix.vecs))
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
		var l *termList
		if terms.lists != nil {
			l = terms.lists[i] // an indexed version's are all found (add)
		}
		if l == nil {
			if l = ix.postings[tc.term]; l == nil {
				continue
			}
		}
		if j := l.find(v.ord); j >= 0 {
			l.ps[j].tag &= postingHistory
		}
	}
}

// init readies the vector index for embeddings of dim coordinates, the first time one
// is indexed or searched for near-duplicates.
func (ix *kindIndex) init(dim int) {
	ix.dim = dim
	ix.rot = vecmath.NewRotation(ix.dim, rotationSeed)
	ix.words = ix.rot.Words()
	if ix.words >= minBandWords {
		ix.bands = newBandIndex(ix.words)
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
	lists []*termList
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
					dt.lists = make([]*termList, len(dt.terms))
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
	if ix.bands != nil && ix.bands.foldDue(slack) {
		ix.bands.fold(ix.codes)
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
	if bi := ix.bands; bi != nil && cap(bi.next)-len(bi.next) < n*bi.bands {
		bi.next = slices.Grow(bi.next, n*bi.bands)
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
		ps := slices.DeleteFunc(list.ps, func(p posting) bool { return remap[p.ord] < 0 })
		for i := range ps {
			ps[i].ord = remap[ps[i].ord]
		}
		if len(ps) == 0 {
			delete(ix.postings, t)
			continue
		}
		list.ps = ps
		if list.big != nil {
			big := make(map[int32]int32, len(list.big))
			for o, tf := range list.big {
				if remap[o] >= 0 {
					big[remap[o]] = tf
				}
			}
			list.big = big
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
		ix.bands = newBandIndex(ix.words)
		ix.bands.addAll(ix.codes)
	}
}

// Near-duplicate candidates come from locality-sensitive hashing of the sign-bit codes:
// each 16-bit slice of a code (a band) is a bucket key, and two vectors are candidates
// when they share a bucket in any band. Two vectors at angle θ agree on a bit with
// probability 1-θ/π, so at cosine 0.92 a band matches with probability 0.87^16 ≈ 0.11
// and one of 32 bands with probability ≈ 0.97 (0.998 at cosine 0.95), while unrelated
// vectors share a band about 32 times in 65536. Codes are taken after a random rotation
// (vecmath.Rotation), which makes their bits independent of how sparse embeddings are.
// A bucket keeps beside each vector its tag, 16 more bits of its code, in the bits of
// its entry that the vector's index leaves (all 16 up to 65,536 vectors, 12 at a
// million), so a look-up lets through only those whose tag is close to the query's
// (tagBound): at a million vectors, about one in five of the 500 that share a band by
// chance, at a cost of 0.1 points of recall at 0.92.
//
// A bucket is read once per band for every new fact, so its layout decides the cost of
// a write. Most vectors sit in sorted buckets: per band, one array of vector indexes
// ordered by bucket, and a directory of where each bucket starts, so a bucket is one
// contiguous read. Vectors added since the buckets were last sorted are in linked
// buckets threaded through flat arrays, which take an addition in constant time; when
// they grow to a fraction of the sorted ones, they are merged into them in one linear
// pass per band (fold). No maps: a few bytes per vector and band.
const (
	bandBits     = 16
	bandKeys     = 1 << bandBits
	maxBands     = 32
	minBandWords = 4 // below 256 dimensions, candidates are found by a full scan
	// A fold is due when the linked vectors number minFold and 1/foldShare of the
	// sorted ones: the sorted buckets are rewritten after every growth by half, so the
	// cost of folds per vector added stays constant. Writes fold (Store.tidyIndexes), so
	// that a merge, whose latency counts more than its throughput, rarely has to.
	minFold   = 16384
	foldShare = 2
	// maxLinked is the most linked vectors there can be: links are 16 bits. Past it,
	// adding a vector folds first.
	maxLinked = 1<<16 - 1
	// The directory of a band locates the buckets of a group of 1<<dirShift keys by an
	// offset, and each bucket within its group by a 16-bit offset from the group's, half
	// the memory of an offset per bucket. A group holding 1<<16 vectors or more (some
	// million vectors per store) makes the directory fall back to one offset per bucket.
	dirShift = 4
)

type bandIndex struct {
	bands int
	words int // uint64 words per code
	// Vectors [0, sorted) are in sorted buckets: those of bucket k of band b are
	// ents[b][dirs[b].start(k):dirs[b].start(k+1)], newest first. An entry holds a
	// vector's index in its low idBitsFor(sorted) bits and, above them, the first
	// tagBits() bits of its tag in the band: the bits an index leaves, so that tags
	// cost no memory. Nil until the first fold.
	dirs   []bucketDir
	ents   [][]uint32
	sorted int
	// Vectors [sorted, n) are in linked buckets, known by their position among the
	// linked ones, v-sorted: heads[b][k] is 1 + the position of the newest of bucket k of
	// band b, 0 if none; the low 16 bits of next[(v-sorted)*bands+b] are 1 + the
	// position of the vector before v in its bucket, 0 at the last linked one, and the
	// high 16 bits v's tag in band b. A vector's links sit together, so adding one
	// touches a cache line rather than one per band.
	heads [][]uint16
	next  []uint32
	// hshift is how far keys are shifted right to index heads: 0, or smallHeadsShift
	// while at most smallHeadsMax vectors were ever linked, when heads of 1<<16
	// entries per band would be mostly empty memory to fault in. Then a linked bucket
	// holds the vectors of several keys, told apart by their codes.
	hshift uint
	n      int // vectors added
}

// bucketDir says where each bucket of one band starts in the band's sorted ids.
type bucketDir struct {
	// base[g] is where the buckets of keys g<<shift and after start; rel[k] is where
	// bucket k starts, from base[k>>shift]. shift is dirShift, or 0 with rel all zeros.
	base  []int32
	rel   []uint16
	shift uint
}

// start returns where bucket k (0 to bandKeys, bandKeys being the end) starts.
func (d *bucketDir) start(k int) int {
	return int(d.base[k>>d.shift]) + int(d.rel[k])
}

// set makes d describe buckets that start at starts[k], for k from 0 to bandKeys-1,
// the last ending at total.
func (d *bucketDir) set(starts []uint32, total uint32) {
	d.shift = dirShift
	for g := 0; g < bandKeys; g += 1 << dirShift {
		end := total
		if next := g + 1<<dirShift; next < bandKeys {
			end = starts[next]
		}
		if end-starts[g] > 1<<16-1 {
			d.shift = 0
			break
		}
	}
	groups := bandKeys>>d.shift + 1
	if cap(d.base) < groups {
		d.base = make([]int32, groups)
	}
	d.base = d.base[:groups]
	if d.rel == nil {
		d.rel = make([]uint16, bandKeys+1)
	}
	mask := 1<<d.shift - 1
	for k, st := range starts[:bandKeys] {
		if k&mask == 0 {
			d.base[k>>d.shift] = int32(st)
			d.rel[k] = 0
		} else {
			d.rel[k] = uint16(st - uint32(d.base[k>>d.shift]))
		}
	}
	d.base[bandKeys>>d.shift] = int32(total)
	d.rel[bandKeys] = 0
}

func newBandIndex(words int) *bandIndex {
	n := min(words*64/bandBits, maxBands)
	bi := &bandIndex{bands: n, words: words, hshift: smallHeadsShift}
	bi.makeHeads()
	return bi
}

// smallHeadsShift is hshift for the first smallHeadsMax linked vectors: 4096 linked
// buckets per band.
const (
	smallHeadsShift = 4
	smallHeadsMax   = 4096
)

// makeHeads gives every band empty heads for the current hshift.
func (bi *bandIndex) makeHeads() {
	bi.heads = make([][]uint16, bi.bands)
	for b := range bi.heads {
		bi.heads[b] = make([]uint16, bandKeys>>bi.hshift)
	}
}

func bandKey(code []uint64, b int) uint16 {
	return uint16(code[b/4] >> (uint(b%4) * bandBits))
}

// tag returns the tag of code in band b: the key of the band half the bands away, 16
// bits of the code that band b's key does not hold. A bucket keeps each vector's tag
// beside its index, so that a look-up turns away most of a bucket's vectors, which
// share a band with the query by chance, without reading their codes: see tagBound.
func (bi *bandIndex) tag(code []uint64, b int) uint16 {
	return bandKey(code, (b+bi.bands/2)%bi.bands)
}

// minIDBits is the fewest bits an entry of a sorted bucket gives a vector's index.
const minIDBits = 16

// idBitsFor is how many bits the entries of sorted buckets holding sorted vectors give
// an index: enough for the last, and minIDBits at the least.
func idBitsFor(sorted int) uint { return max(minIDBits, uint(bits.Len(uint(max(sorted, 1)-1)))) }

// tagBitsFor is how many bits of a tag an entry holds beside idBits of index.
func tagBitsFor(idBits uint) uint { return min(bandBits, 32-idBits) }

// tagBits is how many bits of a tag a look-up compares: as many as the entries of the
// sorted buckets hold beside an index, 16 up to 65,536 vectors, 12 at a million.
func (bi *bandIndex) tagBits() uint { return tagBitsFor(idBitsFor(bi.sorted)) }

// tagBound is the largest Hamming distance between the first n bits of the tags of
// two vectors whose cosine is at least threshold that a look-up lets through: the
// smallest for which a pair at the threshold passes in a band with a probability of
// at least 0.98, by the binomial law of the n bits. At the default threshold of 0.92
// it is 5 of 16 bits and 4 of 12: a pair there passes with a probability of 0.989, so
// the bands find it with one of 0.976 rather than 0.977, while of the vectors that
// share a band by chance, whose tags differ in each bit with a probability of one
// half, one in ten passes (one in five with 12 bits).
func tagBound(threshold float64, n uint) int {
	p := math.Acos(max(-1, min(1, threshold))) / math.Pi
	nb := int(n)
	cdf, term := 0.0, math.Pow(1-p, float64(nb)) // P(0 bits differ)
	for t := 0; t < nb; t++ {
		cdf += term
		if cdf >= 0.98 {
			return t
		}
		term *= float64(nb-t) / float64(t+1) * p / (1 - p)
	}
	return nb
}

// add adds the vector whose code ends codes, the codes of every vector added so far
// back to back, to the linked buckets.
func (bi *bandIndex) add(codes []uint64) {
	switch linked := bi.n - bi.sorted; {
	case linked == maxLinked:
		bi.fold(codes[:len(codes)-bi.words])
	case linked == smallHeadsMax && bi.hshift != 0:
		bi.growHeads(codes[:len(codes)-bi.words])
	}
	bi.next = slices.Grow(bi.next, bi.bands)[:len(bi.next)+bi.bands]
	bi.link(codes[len(codes)-bi.words:], bi.n, bi.next[len(bi.next)-bi.bands:], 0, bi.bands)
	bi.n++
}

// link puts vector v, whose code is code, at the head of its linked buckets in bands
// [lo, hi), writing its links there to links, the bands' entries of next for v.
func (bi *bandIndex) link(code []uint64, v int, links []uint32, lo, hi int) {
	pos := uint16(v - bi.sorted + 1)
	for b := lo; b < hi; b++ {
		k := bandKey(code, b) >> bi.hshift
		links[b] = uint32(bi.heads[b][k]) | uint32(bi.tag(code, b))<<16
		bi.heads[b][k] = pos
	}
}

// minSharedAdd is the fewest vectors addUpTo shares between processors.
const minSharedAdd = 64

// addUpTo adds to the linked buckets the vectors from bi.n up to n, whose codes are in
// codes, as add would one at a time. Runs of them that no fold or growth of the heads
// interrupts are added band by band on every processor: the bands' buckets are apart,
// and the links of a vector in half the bands fill a cache line of their own.
func (bi *bandIndex) addUpTo(codes []uint64, n int) {
	parts := min(runtime.GOMAXPROCS(0), 2)
	for bi.n < n {
		linked := bi.n - bi.sorted
		room := maxLinked - linked
		if bi.hshift != 0 {
			room = min(room, smallHeadsMax-linked)
		}
		run := min(n-bi.n, room)
		if parts < 2 || run < minSharedAdd {
			bi.add(codes[:(bi.n+1)*bi.words])
			continue
		}
		first, base, nb := bi.n, len(bi.next), bi.bands
		bi.next = slices.Grow(bi.next, run*nb)[:base+run*nb]
		parallel.Do(nb, parts, func(_, lo, hi int) {
			for i := range run {
				v := first + i
				bi.link(codes[v*bi.words:][:bi.words], v, bi.next[base+i*nb:][:nb], lo, hi)
			}
		})
		bi.n += run
	}
}

// growHeads gives the linked buckets one key each: full heads, and every linked
// vector linked again in its new bucket, oldest first. codes holds the codes of
// every vector, back to back.
func (bi *bandIndex) growHeads(codes []uint64) {
	linked := bi.n - bi.sorted
	bi.hshift = 0
	bi.makeHeads()
	bi.next, bi.n = bi.next[:0], bi.sorted
	for i := range linked {
		bi.add(codes[:(bi.sorted+i+1)*bi.words])
	}
}

// foldDue reports whether the linked vectors are worth folding: slack times minFold of
// them at least, and slack/foldShare of the sorted ones.
func (bi *bandIndex) foldDue(slack int) bool {
	linked := bi.n - bi.sorted
	return linked >= slack*minFold && linked >= slack*bi.sorted/foldShare
}

// addAll adds the vectors whose codes are codes, back to back, to an empty index.
func (bi *bandIndex) addAll(codes []uint64) {
	n := len(codes) / bi.words
	if n < minFold {
		for i := range n {
			bi.add(codes[:(i+1)*bi.words])
		}
		return
	}
	bi.n = n
	bi.fold(codes)
}

// foldRun is how many linked vectors a processor takes at a time when fold reads their
// keys and tags: runs of whole cache lines of both arrays in every band.
const foldRun = 4096

// fold moves every linked vector into the sorted buckets. Per band, the sorted
// vectors of each bucket move right by the number of linked vectors of the buckets
// before it and of its own, walking the buckets from the last so that nothing is
// overwritten before it is moved; the linked vectors then fill the gap at the front of
// their bucket, newest first. codes holds the codes of every vector, back to back.
func (bi *bandIndex) fold(codes []uint64) {
	if bi.dirs == nil {
		bi.dirs = make([]bucketDir, bi.bands)
		bi.ents = make([][]uint32, bi.bands)
		empty := make([]uint32, bandKeys)
		for b := range bi.dirs {
			bi.dirs[b].set(empty, 0) // every bucket empty
		}
	}
	linked := bi.n - bi.sorted
	// The keys and tags of the linked vectors, band by band: each band's passes then
	// read four bytes per vector rather than a code's cache line.
	// Runs of vectors are split on every processor.
	workers := parallel.Parts(bi.bands, 1)
	if bi.n < 8192 {
		workers = 1 // too little work to share
	}
	keys := make([]uint16, bi.bands*linked)
	tags := make([]uint16, bi.bands*linked)
	parallel.Each(linked, foldRun, workers, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			code := codes[(bi.sorted+i)*bi.words:][:bi.words]
			for b := range bi.bands {
				keys[b*linked+i] = bandKey(code, b)
				tags[b*linked+i] = bi.tag(code, b)
			}
		}
	})
	// Indexes past those the entries hold take bits from the tags of every entry.
	idBits := idBitsFor(bi.n)
	// Bands are folded independently, on every processor, a band at a time.
	scratch := make([][2][]uint32, workers) // each worker's count and fill
	parallel.Each(bi.bands, 1, workers, func(w, b, _ int) {
		sc := &scratch[w]
		if sc[0] == nil {
			sc[0], sc[1] = make([]uint32, bandKeys), make([]uint32, bandKeys)
		}
		bi.foldBand(b, keys[b*linked:(b+1)*linked], tags[b*linked:(b+1)*linked], idBits, sc[0], sc[1])
	})
	if bi.hshift != 0 {
		bi.hshift = 0
		bi.makeHeads()
	}
	bi.sorted = bi.n
	bi.next = bi.next[:0]
}

// foldBand folds the linked vectors of band b, whose keys are col and tags tcol, into
// entries of idBits bits of index, using count and fill, bandKeys entries each, as
// scratch.
func (bi *bandIndex) foldBand(b int, col, tcol []uint16, idBits uint, count, fill []uint32) {
	sorted, n := uint32(bi.sorted), uint32(bi.n)
	dir := &bi.dirs[b]
	base, rel, shift := dir.base, dir.rel, dir.shift
	clear(count)
	for _, k := range col {
		count[k]++
	}
	// fill[k]: where bucket k starts after the fold, the place of its newest linked
	// vector.
	var before uint32 // linked vectors in the buckets before k
	for k, c := range count {
		fill[k] = uint32(base[k>>shift]) + uint32(rel[k]) + before
		before += c
	}
	ents := slices.Grow(bi.ents[b], bi.n-len(bi.ents[b]))[:bi.n]
	oldIDBits := idBitsFor(bi.sorted)
	oldBits, newBits := tagBitsFor(oldIDBits), tagBitsFor(idBits)
	if idBits != oldIDBits {
		// Fewer tag bits: each entry keeps the first newBits of those it had.
		mask := uint32(1)<<oldIDBits - 1
		for i, e := range ents[:sorted] {
			ents[i] = e&mask | e>>oldIDBits>>(oldBits-newBits)<<idBits
		}
	}
	// Each bucket's sorted vectors move right by the linked vectors of the buckets up
	// to its own, from the last bucket to the first so that nothing is overwritten
	// before it moves. Buckets between two that gained linked vectors move by the
	// same amount: one copy for all of them.
	runEnd, runShift := sorted, n-sorted // the run of old positions [lo, runEnd)
	lo := sorted
	for k := bandKeys - 1; k >= 0; k-- {
		start := uint32(base[k>>shift]) + uint32(rel[k])
		if d := fill[k] - start + count[k]; d != runShift {
			moveRight(ents, lo, runEnd, runShift)
			runEnd, runShift = lo, d
		}
		lo = start
	}
	moveRight(ents, lo, runEnd, runShift)
	dir.set(fill, n)
	for i := len(col) - 1; i >= 0; i-- {
		k := col[i]
		ents[fill[k]] = uint32(bi.sorted+i) | uint32(tcol[i]>>(bandBits-newBits))<<idBits
		fill[k]++
	}
	bi.ents[b] = ents
	if bi.hshift == 0 {
		clear(bi.heads[b])
	}
}

// moveRight moves ents[lo:hi] to start at lo+by, by ≥ 0.
func moveRight(ents []uint32, lo, hi, by uint32) {
	if hi-lo > 16 {
		copy(ents[lo+by:hi+by], ents[lo:hi])
		return
	}
	for i := hi; i > lo; i-- { // short runs, the common case: no call
		ents[i-1+by] = ents[i-1]
	}
}

// appendCandidates appends to dst the index, from or more, of every vector sharing a
// band with code whose tag in that band differs from code's in at most maxTag of its
// first tagBits() bits (tagBound; tagBits() or more lets every one through), possibly
// more than once: newest first within a band, so a walk ends at the first index below
// from. codes holds the codes of every vector, back to back.
//
// Each band's lookups are cache misses, so they are made for every band before any
// bucket is read, and the first link of each linked bucket and the first entry of each
// sorted bucket are read (touched) before any is walked or copied: the processor then
// overlaps the misses instead of taking them one after the other. The linked buckets
// are walked a step of every band at a time for the same reason. The sum of the
// entries touched is returned for the caller to keep, so that the reads are not
// optimised away.
func (bi *bandIndex) appendCandidates(dst []int32, codes, code []uint64, from, maxTag int) ([]int32, int32) {
	var keys, heads, qtags [maxBands]uint16
	var lo, hi [maxBands]int32
	nb := bi.bands
	sorted := from < bi.sorted
	idBits := idBitsFor(bi.sorted)
	drop := bandBits - tagBitsFor(idBits) // the tag bits not compared
	for b := range nb {
		k := bandKey(code, b)
		keys[b] = k
		qtags[b] = bi.tag(code, b) >> drop
		heads[b] = bi.heads[b][k>>bi.hshift]
		if sorted {
			d := &bi.dirs[b]
			lo[b], hi[b] = int32(d.start(int(k))), int32(d.start(int(k)+1))
		}
	}
	var touched int32
	for b := range nb {
		if j := int(heads[b]); j > 0 {
			touched += int32(bi.next[(j-1)*nb+b])
		}
		if sorted && lo[b] < hi[b] {
			touched += int32(bi.ents[b][lo[b]])
		}
	}
	if sorted {
		mask := uint32(1)<<idBits - 1
		for b := range nb {
			ents := bi.ents[b][lo[b]:hi[b]]
			dst = slices.Grow(dst, len(ents))
			n, out, qt := len(dst), dst[:cap(dst)], uint32(qtags[b])
			for _, e := range ents {
				v := int32(e & mask)
				if int(v) < from {
					break
				}
				// No branch on the tag test, whose outcome is a coin toss to the
				// processor: v is written, and kept when it passes.
				out[n] = v
				n += 1 - int(uint(maxTag-bits.OnesCount32(e>>idBits^qt))>>(bits.UintSize-1))
			}
			dst = out[:n]
		}
	}
	for live := true; live; {
		live = false
		for b := range nb {
			j := int(heads[b])
			if j == 0 {
				continue
			}
			v := bi.sorted + j - 1
			if v < from {
				heads[b] = 0
				continue
			}
			e := bi.next[(j-1)*nb+b]
			heads[b], live = uint16(e), true
			if bits.OnesCount16(uint16(e>>16)>>drop^qtags[b]) > maxTag {
				continue
			}
			if bi.hshift != 0 && bandKey(codes[v*bi.words:], b) != keys[b] {
				continue // another key of the same linked bucket
			}
			dst = append(dst, int32(v))
		}
	}
	return dst, touched
}
