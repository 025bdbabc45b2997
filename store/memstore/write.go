package memstore

import (
	"context"
	"fmt"
	"maps"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/day1ai/day1/internal/parallel"
	"github.com/day1ai/day1/internal/simhash"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// Put writes a batch of records atomically. The store keeps copies of the records; the
// record of a result for a record written (created, updated, superseding) shares the
// embedding and the metadata map of the record passed in, rather than holding copies
// of them.
func (s *Store) Put(ctx context.Context, branchName string, recs []store.Record, opts store.PutOptions) ([]store.PutResult, error) {
	if err := store.ValidatePutBatch(recs, opts); err != nil {
		return nil, err
	}
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	b, err := s.writable(branchName)
	if err != nil {
		return nil, err
	}
	dims := s.dims
	if dims == 0 {
		// The first embedding fixes the length of the others.
		for _, r := range recs {
			if emb := store.EmbeddingOf(r); len(emb) > 0 {
				dims = len(emb)
				break
			}
		}
	}
	if err := validateAll(recs, dims); err != nil {
		return nil, err
	}
	seen := make(map[key]bool, len(recs))
	for i, r := range recs {
		k := key{r.RecordKind(), r.RecordID()}
		if seen[k] {
			return nil, store.Invalid("records", fmt.Sprintf("record %d repeats %s; a batch may hold each record once", i, store.RefOf(r)), nil)
		}
		seen[k] = true
	}
	now := s.commitNow()
	stamp := opts.Now
	if stamp.IsZero() {
		stamp = now
	}
	s.batch = s.seq + 1
	defer func() { s.batch = 0 }()
	head := s.chainOf(b, never)
	results := make([]store.PutResult, len(recs))
	var ops []op
	// changed: something is written; sized: an embedding is, which fixes s.dims.
	changed, sized := false, false
	pre := s.prematch(head, recs, opts, dims)
	// On every return the workers stop and the band index takes the batch's vectors;
	// on the way that commits, before the indexes are tidied (below).
	defer pre.finish()
	prep := prepareAll(recs, s.index)
	for i, r := range recs {
		in := r
		// The record's current version, looked up once for adopt, decide and
		// addVersion: a lookup in a large map is a cache miss or two. A generated
		// fact id is held by no record yet, neither a fact nor an alias
		// (PutOptions.GeneratedIDs): nothing to look up.
		k := key{r.RecordKind(), r.RecordID()}
		fresh := k.kind == store.KindFact && opts.GeneratedIDs[k.id]
		var prev *version
		if !fresh {
			prev = head.resolve(k)
		}
		at := store.BatchTime(stamp, i, len(recs))
		r = s.adopt(r, prev == nil, branchName, at)
		m := pre.get(i)
		var dt *docTerms
		var pa aheadPack
		if prep != nil {
			dt = &prep.terms[i]
			pa = aheadPack{prep.embs[i], store.EmbeddingOf(in)}
		}
		var cur *version
		if prev != nil && prev.rec != nil {
			cur = prev
		}
		res, writes, code, old := s.decide(head, r, in, cur, opts.DedupeThreshold, at, m, dt)
		if cur == nil && k.kind == store.KindFact {
			ak := key{store.KindAlias, k.id}
			var alias *store.Alias
			if !fresh {
				if av := head.resolve(ak); av != nil && av.rec != nil {
					a := av.rec.(store.Alias)
					alias = &a
				}
			}
			aw, del := store.AliasAfterPut(&res, k.id, alias, opts.GeneratedIDs, at, branchName)
			if aw != nil || del {
				var w store.Record
				if aw != nil {
					w = *aw
				}
				s.addVersion(b, ak, w, hint{})
				if s.log != nil {
					if aw != nil {
						ops = append(ops, putOp(w))
					} else {
						ops = append(ops, op{Type: opDelete, Kind: store.KindAlias, ID: k.id})
					}
				}
				changed = true
			}
		}
		h := hint{code: code, terms: dt, packed: pa}
		for _, w := range writes {
			if wk := (key{w.RecordKind(), w.RecordID()}); wk == k {
				s.addVersionAfter(b, k, w, h, prev)
			} else {
				// The superseded fact: neither the text nor the code are its, and its
				// embedding is the stored one's it copies.
				s.addVersion(b, wk, w, hint{from: old})
			}
			if s.log != nil {
				ops = append(ops, putOp(w))
			}
			changed = true
			sized = sized || len(store.EmbeddingOf(w)) > 0
		}
		results[i] = res
	}
	if !changed {
		return results, nil
	}
	if sized && dims != s.dims {
		s.dims = dims
	}
	pre.finish()
	if err := s.logCommit(now, withBranch(ops, branchName)); err != nil {
		return nil, err
	}
	s.tidyIndexes()
	return results, nil
}

// validateAll validates every record for a store of dims-dimension embeddings (0:
// any), on every processor for a large batch, and returns the error of the first
// invalid one.
func validateAll(recs []store.Record, dims int) error {
	const chunk = 64
	errs := make([]error, (len(recs)+chunk-1)/chunk)
	parallel.Each(len(recs), chunk, parallel.Parts(len(recs), chunk), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			if err := store.ValidateRecord(recs[i], dims); err != nil {
				errs[lo/chunk] = store.AtIndex(err, "records", i)
				return
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// tidyIndexes does after a write the upkeep of the indexes that grows with their size,
// so that merges, whose latency counts more than a write's, rarely meet it: it folds
// the band indexes that are due (see simhash.Bands.FoldDue) and makes room ahead in the
// index arrays, whose growth copies them. Callers hold s.mu for writing.
func (s *Store) tidyIndexes() {
	for _, ix := range s.index {
		ix.fold(1)
		ix.reserve(indexHeadroom)
	}
}

// indexHeadroom is the number of versions the index arrays have room for after a write.
const indexHeadroom = 4096

// mergeFoldSlack is how far overdue a fold must be for a merge to do it (see
// simhash.Bands.FoldDue): a fold costs a pass over every indexed vector.
const mergeFoldSlack = 4

// decide says what writing r does: nothing, a new version, or a new fact superseding a
// near-duplicate. It reads the branch head, which includes earlier records of the batch.
// code, when not nil, is the code of r's embedding the near-duplicate check computed.
// terms, when not nil, is the analysis of r's search text made ahead (prepareAll). in is
// the caller's record that r copies, cur the current version of its key on the branch
// (nil for none). When r supersedes a stored fact, old is that fact's version.
func (s *Store) decide(head view, r, in store.Record, cur *version, threshold float64, now time.Time, pre *match, terms *docTerms) (res store.PutResult, writes []store.Record, code []uint64, old *version) {
	if cur != nil {
		stored := cur.plain()
		if cur.holds(store.StampLike(r, stored)) {
			return store.PutResult{Record: cur.record(), Outcome: store.Deduplicated}, nil, nil, nil
		}
		r = store.KeepCreated(store.WithDefaults(r, now), stored, r.RecordTime().IsZero())
		return store.PutResult{Record: store.AsWritten(r, in), Outcome: store.Updated}, []store.Record{r}, nil, nil
	}
	r = store.WithDefaults(r, now)
	f, ok := r.(store.Fact)
	if !ok || !f.Status.Live() {
		return store.PutResult{Record: store.AsWritten(r, in), Outcome: store.Created}, []store.Record{r}, nil, nil
	}
	var tkey uint64
	if terms != nil && terms.text == f.Text {
		tkey = terms.tkey
	} else {
		tkey = textKey(f.Text)
	}
	dup, sim, sameText, code := s.nearDuplicate(head, f, tkey, threshold, pre)
	if dup == nil {
		return store.PutResult{Record: store.AsWritten(r, in), Outcome: store.Created}, []store.Record{r}, code, nil
	}
	was := dup.record().(store.Fact)
	if sameText {
		return store.PutResult{Record: was, Outcome: store.Deduplicated, Replaced: was.ID, Similarity: sim}, nil, nil, nil
	}
	was, f = store.Supersede(was, f)
	return store.PutResult{Record: store.AsWritten(f, in), Outcome: store.Superseded, Replaced: was.ID, Similarity: sim},
		[]store.Record{was, f}, code, dup
}

// nearDuplicate finds the live fact on the branch most like f: one with the same text
// (after folding case and spaces), else the one whose embedding is most similar with a
// cosine of at least threshold. Same-text candidates come from a hash of the text;
// embedding candidates from the band index (a full scan for small dimensions), so the
// check does not grow with the amount of memory. It returns nil when there is none.
//
// tkey is textKey(f.Text). pre, when not nil, holds the code of f's embedding and its
// candidates among the vectors of the band index, found ahead by a worker (prematch).
// The vectors Put has indexed while the band index is held, those of its own batch,
// are searched by a scan of their sketches (kindIndex.heldCandidates). sameText
// reports a match by text. It also returns the code of f's embedding when it computed
// one, for indexing f.
func (s *Store) nearDuplicate(head view, f store.Fact, tkey uint64, threshold float64, pre *match) (dup *version, sim float64, sameText bool, code []uint64) {
	ix := s.index[store.KindFact]
	// f.Text folded, computed for the first candidate with the same hash.
	var norm string
	normed := false
	for v := range ix.texts.all(tkey) {
		if !head.visible(v) {
			continue
		}
		cand := v.rec.(*factRec)
		if !cand.status.Live() || v.expired(f.CreatedAt) {
			continue
		}
		if !normed {
			norm, normed = store.NormText(f.Text), true
		}
		if store.NormText(cand.text) == norm {
			return v, 1, true, nil
		}
	}
	if threshold <= 0 || len(f.Embedding) == 0 || len(ix.vecs) == 0 || len(f.Embedding) != ix.dim {
		return nil, 0, false, nil
	}
	q := ix.query(f.Embedding, threshold)
	var cands, batch []int32
	scan := false // no band index: every vector is scanned
	switch {
	case pre != nil:
		q.code, cands = pre.code, pre.cands
	case ix.bands != nil:
		q.code = ix.appendCode(nil, f.Embedding)
		s.dup.found = ix.dupView().candidates(s.dup.found[:0], q, &s.dup)
		cands = s.dup.found
	default:
		scan = true
	}
	if ix.holding && q.code != nil {
		// The vectors indexed since the band index was held: this batch's.
		s.dup.batch = ix.heldCandidates(s.dup.batch[:0], q)
		batch = s.dup.batch
	}
	q.at = f.CreatedAt
	best, bestSim := ix.bestMatch(head, q, scan, batch, cands)
	return best, bestSim, false, q.code
}

// match is what a worker found ahead for one new fact of a batch (prematch): the code
// of its embedding, and the vector slots of the band index that pass the code tests
// and whose cosine with it reaches the threshold, each once. Which of them the
// fact's branch sees is left to the serial pass.
type match struct {
	code  []uint64
	cands []int32
}

// dupQuery is an embedding looked up among indexed facts.
type dupQuery struct {
	emb        []float32
	inv        float32
	code       []uint64 // nil: scan every vector
	threshold  float64
	maxHamming int
	maxSketch  int       // the bound of the sketch test (sketchBound)
	maxTag     int       // the bound of the band index's tag test (simhash.TagBound), for its TagBits as the query is made
	at         time.Time // facts expired at this instant match nothing (zero: none checked)
}

func (ix *kindIndex) query(emb []float32, threshold float64) dupQuery {
	return ix.bounds(threshold).of(emb)
}

// of returns q for the embedding emb.
func (q dupQuery) of(emb []float32) dupQuery {
	q.emb, q.inv = emb, 1/vecmath.Norm(emb)
	return q
}

// similarity returns the cosine of q's embedding with v's, the one figure every
// near-duplicate test compares with the threshold.
func (q *dupQuery) similarity(v *version) float64 {
	return float64(v.emb.dot(q.emb) * q.inv * v.inv)
}

// bounds returns a query without an embedding that holds the threshold and the bounds
// of the code tests, which are all that a search for candidates reads.
func (ix *kindIndex) bounds(threshold float64) dupQuery {
	q := dupQuery{threshold: threshold, maxHamming: simhash.HammingBound(threshold, ix.words*64), maxSketch: sketchBound(threshold)}
	if ix.bands != nil {
		q.maxTag = simhash.TagBound(threshold, ix.bands.TagBits())
	}
	return q
}

// dupScratch is the working memory of one near-duplicate search at a time.
type dupScratch struct {
	cands []int32
	found []int32 // candidates of the band index
	batch []int32 // candidates among the vectors indexed during a hold
	sink  uint64
}

// touch reads a word of the code of every candidate, so that the code test then finds
// them in the cache. The reads do not depend on each other and the loop is short, so
// the processor overlaps their cache misses; among the instructions of the test's own
// loop it overlaps few of them. The words are summed into sink so that the reads stay.
func (sc *dupScratch) touch(codes []uint64, words int) {
	var x uint64
	for _, i := range sc.cands {
		o := int(i) * words
		x += codes[o] + codes[o+words-1]
	}
	sc.sink += x
}

// dupIndex is what the search for a fact's near-duplicate candidates reads of the
// facts' index, as of one moment: a band index and the codes and sketches of its
// vectors. While Put holds the band index (kindIndex.holdBands) nothing changes what
// it reads, so workers search with it while Put appends vectors to the index.
type dupIndex struct {
	codes, sketch []uint64
	words         int
	bands         *simhash.Bands
	// vecs holds the first version of each slot, whose embedding is the slot's: a
	// slot keeps its first version (kindIndex.add).
	vecs []*version
}

func (ix *kindIndex) dupView() dupIndex {
	return dupIndex{codes: ix.codes, sketch: ix.sketch, words: ix.words, bands: ix.bands, vecs: ix.vecs}
}

// near keeps, in place and in order, the slots of cands whose vector's similarity
// with q is at least q.threshold: every slot bestMatch could choose. q.emb must be
// set.
func (d dupIndex) near(cands []int32, q dupQuery) []int32 {
	n := 0
	for _, i := range cands {
		v := d.vecs[i]
		if q.similarity(v) >= q.threshold {
			cands[n] = i
			n++
		}
	}
	return cands[:n]
}

// heldCandidates appends to dst the slots of the vectors indexed while the band index
// is held, those of the batch being written, that pass the sketch and code tests for
// q, whose code must be set. A batch's sketches are a few thousand bytes back to back,
// a scan in the processor's cache that costs less than a band index of their own
// would to fill and to search; it also finds the pairs no band would.
func (ix *kindIndex) heldCandidates(dst []int32, q dupQuery) []int32 {
	qs := sketchOf(q.code)
	sk := ix.sketch[ix.heldFrom*sketchWords:]
	for j := 0; j+sketchWords <= len(sk); j += sketchWords {
		if sketchDistance(sk, j, &qs) > q.maxSketch {
			continue
		}
		i := ix.heldFrom + j/sketchWords
		if vecmath.Hamming(q.code, ix.code(i)) <= q.maxHamming {
			dst = append(dst, int32(i))
		}
	}
	return dst
}

// candidates appends to dst, once each, the slots of the vectors of d's band index
// that share a band with q's code and pass the sketch and code tests. q.code must be
// set.
func (d dupIndex) candidates(dst []int32, q dupQuery, sc *dupScratch) []int32 {
	var touched int32
	sc.cands, touched = d.bands.AppendCandidates(sc.cands[:0], d.codes, q.code, 0, q.maxTag)
	sc.sink += uint64(touched)
	var sum uint64
	sc.cands, sum = sketchFilter(sc.cands, d.sketch, sketchOf(q.code), q.maxSketch)
	sc.sink += sum
	sc.touch(d.codes, d.words)
	start := len(dst)
	for _, i := range sc.cands {
		// A vector near q shares several bands with it, so it comes once per band.
		if vecmath.Hamming(q.code, d.codes[int(i)*d.words:][:d.words]) <= q.maxHamming && !slices.Contains(dst[start:], i) {
			dst = append(dst, i)
		}
	}
	return dst
}

// bestMatch returns the visible, live fact most similar to q, at or above its
// threshold, or nil, among the vector slots of lists, which passed the code tests, in
// order, or among every slot when scan is set.
func (ix *kindIndex) bestMatch(head view, q dupQuery, scan bool, lists ...[]int32) (*version, float64) {
	var best *version
	var bestSim float64
	check := func(i int) {
		// The branches first: they sit in a flat array, while the versions are a
		// pointer away. Visibility before the cosine: the same text written on many
		// branches leaves many equal codes, most of them on branches this one does
		// not see.
		if ix.masks[i]&head.mask == 0 {
			return
		}
		v := ix.seen(head, i)
		if v == nil || v == best || !v.live() || v.expired(q.at) {
			return
		}
		sim := q.similarity(v)
		if sim < q.threshold || sim <= bestSim {
			return
		}
		best, bestSim = v, sim
	}
	if scan {
		for i := range ix.vecs {
			check(i)
		}
	}
	for _, l := range lists {
		for _, i := range l {
			check(int(i))
		}
	}
	return best, bestSim
}

// minPrematch is the smallest number of new facts worth searching for near-duplicates
// ahead of a batch.
const minPrematch = 64

// aheadChunk is how many new facts a worker of prematch searches at a time: Put's
// serial pass waits for a chunk at most.
const aheadChunk = 16

// ahead is the search for the candidates of a batch's new facts, run by workers while
// Put's serial pass goes through the batch. Chunks of the search are claimed in order,
// by a worker or by the serial pass when it reaches a chunk no worker has claimed yet,
// so that it never waits for a chunk no one is searching.
type ahead struct {
	ix   *kindIndex // the facts' index, whose band index is held
	pos  []int32    // pos[i]: the place of record i among the searched, -1 for none
	m    []match
	done []chan struct{} // closed when the chunk's matches are in m
	wg   sync.WaitGroup
	next atomic.Int32 // the first chunk not claimed yet

	// What a search needs: the index as it was held, the records, their places
	// among the searched, and a query holding the threshold.
	d    dupIndex
	rot  *vecmath.Rotation
	recs []store.Record
	todo []int
	q0   dupQuery
	own  searcher // the serial pass's
}

// searcher is the working memory of one goroutine searching chunks of an ahead.
type searcher struct {
	scratch []float32
	sc      dupScratch
	found   []int32 // the candidates of every fact this searcher searched
}

// search finds the matches of chunk c, which the caller has claimed, and closes its
// done channel.
func (a *ahead) search(c int, w *searcher) {
	if w.scratch == nil {
		w.scratch = make([]float32, a.rot.Bits())
	}
	for p := c * aheadChunk; p < min(len(a.todo), (c+1)*aheadChunk); p++ {
		emb := a.recs[a.todo[p]].(store.Fact).Embedding
		q := a.q0.of(emb)
		q.code = a.rot.AppendCode(nil, emb, w.scratch)
		start := len(w.found)
		w.found = a.d.candidates(w.found, q, &w.sc)
		w.found = w.found[:start+len(a.d.near(w.found[start:], q))]
		a.m[p] = match{code: q.code, cands: w.found[start:len(w.found):len(w.found)]}
	}
	close(a.done[c])
}

// get returns the match of record i, searching its chunk when no worker has claimed
// it and waiting for it otherwise, or nil when it has none. The serial pass calls it
// for records in order, so the chunks before i's are claimed.
func (a *ahead) get(i int) *match {
	if a == nil || a.pos[i] < 0 {
		return nil
	}
	p := a.pos[i]
	c := int(p) / aheadChunk
	if a.next.CompareAndSwap(int32(c), int32(c+1)) {
		a.search(c, &a.own)
	}
	<-a.done[c]
	return &a.m[p]
}

// finish waits for every worker to stop, then releases the band index
// (kindIndex.releaseBands). It may be called again, and on nil.
func (a *ahead) finish() {
	if a == nil {
		return
	}
	a.wg.Wait()
	a.ix.releaseBands()
}

// prematch starts workers that find, for every new, live fact of a batch with an
// embedding, the code of its embedding and its candidates among the vectors of the
// band index: the tests of its bands, sketch and code, a search whose reads miss the
// cache, then the exact cosine of those that pass, which reads each slot's first
// version (dupIndex.near) but not which branches see it. Put's serial pass, meanwhile,
// takes their results
// in order (ahead.get) and decides on them, so the search of later facts overlaps the
// writing of earlier ones; it searches a chunk itself when it gets there first. There
// is a worker per processor, and the serial pass shares a processor with them: each
// worker yields its processor after a chunk. The band index is held (kindIndex.holdBands) until Put calls
// ahead.finish. It returns nil for small batches, and on one processor. dims is the
// store's embedding length once the batch is written.
func (s *Store) prematch(head view, recs []store.Record, opts store.PutOptions, dims int) *ahead {
	ix := s.index[store.KindFact]
	threshold := opts.DedupeThreshold
	if threshold <= 0 || len(recs) < minPrematch || runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	if ix.rot == nil && dims > 0 {
		// The first facts with embeddings: their codes are worth computing here, in
		// parallel, although there is nothing to match yet.
		ix.init(dims)
	}
	if ix.bands == nil {
		return nil
	}
	a := &ahead{ix: ix, pos: make([]int32, len(recs)), recs: recs}
	for i, r := range recs {
		a.pos[i] = -1
		f, ok := r.(store.Fact)
		// A generated id is new without a look-up (PutOptions.GeneratedIDs).
		if ok && len(f.Embedding) == ix.dim && (f.Status == "" || f.Status.Live()) &&
			(opts.GeneratedIDs[f.ID] || !head.has(key{store.KindFact, f.ID})) {
			a.pos[i] = int32(len(a.todo))
			a.todo = append(a.todo, i)
		}
	}
	if len(a.todo) < minPrematch/2 {
		return nil
	}
	ix.holdBands()
	a.d, a.rot = ix.dupView(), ix.rot
	a.q0 = ix.bounds(threshold) // each fact's code is set by the search
	a.m = make([]match, len(a.todo))
	chunks := (len(a.todo) + aheadChunk - 1) / aheadChunk
	a.done = make([]chan struct{}, chunks)
	for c := range a.done {
		a.done[c] = make(chan struct{})
	}
	workers := min(runtime.GOMAXPROCS(0), chunks)
	a.wg.Add(workers)
	for range workers {
		go func() {
			defer a.wg.Done()
			var w searcher
			for {
				c := int(a.next.Add(1)) - 1
				if c >= chunks {
					return
				}
				a.search(c, &w)
				// The serial pass, woken by the chunk it waited for, would otherwise
				// wait for a processor until the workers are done or preempted, and
				// then finish the batch alone.
				runtime.Gosched()
			}
		}()
	}
	return a
}

// sketchWords is how many code words a sketch holds: the last ones of the code.
const sketchWords = 2

// sketchOf returns the sketch of code: its last sketchWords words, after zeros for a
// shorter code (whose vectors have no band index, and no use for it).
func sketchOf(code []uint64) [sketchWords]uint64 {
	var sk [sketchWords]uint64
	copy(sk[max(0, sketchWords-len(code)):], code[max(0, len(code)-sketchWords):])
	return sk
}

// sketchDistance is the Hamming distance between qs and the sketch at sketch[o:].
func sketchDistance(sketch []uint64, o int, qs *[sketchWords]uint64) int {
	return bits.OnesCount64(sketch[o]^qs[0]) + bits.OnesCount64(sketch[o+1]^qs[1])
}

// sketchBound is the largest Hamming distance between the sketches (the last
// sketchWords code words) of two vectors whose cosine is at least threshold that the
// sketch test lets through: simhash.HammingBound on the sketch's 128 bits, and one more. A
// pair at the threshold then fails it with a probability under 1e-5, and the two tests
// together with one under 1e-4 (TestSketchBoundKeepsNearPairs). On the bench's corpus
// at a million facts it turns away all but about one in twenty of the candidates the
// bands find, each a read of a whole code that would miss the processor's cache.
func sketchBound(threshold float64) int { return simhash.HammingBound(threshold, sketchWords*64) + 1 }

// sketchFilter keeps, in place and in order, the candidates whose sketch, in sketch
// (sketchWords words per vector), differs from qs in at most bound bits. The sketches
// are reads that miss the cache, so it first reads a word of each in a loop of
// independent loads, whose misses the processor overlaps, and returns their sum for
// the caller to keep, so that the reads stay; the test that follows finds them in the
// cache. The test has no branch: a mispredicted one would make the processor wait for
// each sketch in turn. A sketch's 16 bytes sit on one cache line in a large array,
// which starts on a page.
func sketchFilter(cands []int32, sketch []uint64, qs [sketchWords]uint64, bound int) ([]int32, uint64) {
	var touched uint64
	for _, i := range cands {
		touched += sketch[int(i)*sketchWords]
	}
	n := 0
	for _, i := range cands {
		d := sketchDistance(sketch, int(i)*sketchWords, &qs)
		cands[n] = i
		n += int(uint(d-bound-1) >> (bits.UintSize - 1)) // 1 when d <= bound
	}
	return cands[:n], touched
}

// Delete writes deletion markers for records on a branch.
func (s *Store) Delete(ctx context.Context, branchName string, refs []store.Ref) error {
	if err := store.ValidateDeletes(refs); err != nil {
		return err
	}
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	b, err := s.writable(branchName)
	if err != nil {
		return err
	}
	head := s.chainOf(b, never)
	seen := map[key]bool{}
	keys := make([]key, len(refs))
	for i, r := range refs {
		k := key{r.Kind, r.ID}
		if k.kind == store.KindFact && !head.has(k) && head.has(key{store.KindAlias, k.id}) {
			// The caller's id of a deduplicated fact: the alias goes, the fact stays.
			k.kind = store.KindAlias
		}
		if !head.has(k) || seen[k] {
			return fmt.Errorf("%w: %s on branch %q", store.ErrNotFound, r, branchName)
		}
		seen[k] = true
		keys[i] = k
	}
	ops := make([]op, 0, len(refs))
	for _, k := range keys {
		s.applyDelete(b, k)
		ops = append(ops, op{Type: opDelete, Kind: k.kind, ID: k.id})
	}
	return s.logCommit(s.commitNow(), withBranch(ops, branchName))
}

func (s *Store) writable(name string) (*branch, error) {
	b, err := s.branch(name)
	if err != nil {
		return nil, err
	}
	if b.info.Status == store.BranchArchived {
		return nil, fmt.Errorf("%w: %q", store.ErrBranchArchived, name)
	}
	return b, nil
}

func (s *Store) applyDelete(b *branch, k key) {
	s.addVersion(b, k, nil, hint{})
}

// addVersion adds r (nil: a deletion) as the newest version of k on b, and returns
// it. The version keeps r without its embedding, and the embedding packed: a copy in
// the store's arena, or h.from's, which the caller knows to be equal, when h.from is
// set.
func (s *Store) addVersion(b *branch, k key, r store.Record, h hint) *version {
	return s.addVersionAfter(b, k, r, h, resolveHead(b, k))
}

// addVersionAfter is addVersion for a caller that knows prev, the version of k that b
// sees at its head (nil for none).
func (s *Store) addVersionAfter(b *branch, k key, r store.Record, h hint, prev *version) *version {
	emb := store.EmbeddingOf(r)
	var p packed
	switch {
	case h.from != nil && len(h.from.emb) > 0:
		p, emb = h.from.emb, nil
	case len(emb) > 0:
		h.from = nil
		if q := h.packed.packedAhead(emb); q != nil {
			p = s.arena.copyOf(q)
		} else {
			p = s.arena.pack(emb)
		}
	default:
		h.from = nil
	}
	if _, fact := r.(store.Fact); !fact && p != nil {
		r = store.WithEmbedding(r, nil) // a kept fact leaves its embedding out itself
	}
	s.seq++
	v := &version{key: k, seq: s.seq, br: b, rec: keep(r), emb: p, next: never, ord: -1, vi: -1}
	if last := b.own.newest(k); last != nil {
		last.next = v.seq
		if last.ord >= 0 {
			ix := s.index[k.kind]
			ix.meta[last.ord].next = v.seq
			ix.replaced(last)
		}
	}
	if m, ok := r.(store.Message); ok && (prev == nil || prev.rec == nil || prev.rec.(store.Message).ConversationID != m.ConversationID) {
		b.addToConv(m)
	}
	if f, ok := r.(store.Fact); ok && f.SessionID != "" && (prev == nil || prev.rec == nil || prev.rec.(*factRec).session() != f.SessionID) {
		b.addToSession(f)
	}
	b.own.add(k, v)
	b.log = append(b.log, v)
	b.info.Head = v.seq
	ix := s.index[k.kind]
	if ix == nil {
		return v
	}
	dn, dLen := 0, 0
	if prev != nil && prev.rec != nil {
		dn, dLen = -1, -int(prev.docLen)
	}
	if r != nil {
		ix.add(v, h, emb)
		dn++
		dLen += int(v.docLen)
	}
	if dn != 0 || dLen != 0 {
		b.addStat(k.kind, v.seq, s.batch, dn, dLen)
	}
	return v
}

// resolveHead returns the version of k that branch b sees at its head, or nil: what
// view.resolve returns for b's chain, without building the chain.
func resolveHead(b *branch, k key) *version {
	cut := uint64(never)
	for ; b != nil; b = b.parent {
		if v := b.versionAt(k, cut); v != nil {
			return v
		}
		cut = min(cut, b.forkSeq)
	}
	return nil
}

func withBranch(ops []op, name string) []op {
	for i := range ops {
		ops[i].Name = name
	}
	return ops
}

// copyFor copies r for storing on branch in one step, like adopt but without its
// defaults. Its embedding is not copied: the store packs it (addVersion).
func copyFor(r store.Record, branch string) store.Record {
	switch v := r.(type) {
	case store.Fact:
		v.Metadata = maps.Clone(v.Metadata)
		v.Branch = branch
		return v
	case store.Observation:
		v.Metadata = maps.Clone(v.Metadata)
		v.Branch = branch
		return v
	}
	return store.WithBranch(store.Clone(r), branch)
}

// adopt copies r for storing on branch, but for its embedding, which the store packs
// (addVersion), and fills the defaults of a new record. A fact or an observation, the
// common case, is copied in one step: every record value made on the way would be a
// short-lived object among the store's long-lived ones, of the same size, and they
// fragment the heap.
// fresh says the branch has no version of r.
func (s *Store) adopt(r store.Record, fresh bool, branch string, now time.Time) store.Record {
	// decide fills the defaults too; filled here, it finds nothing left to copy for.
	switch v := r.(type) {
	case store.Fact:
		v.Metadata = maps.Clone(v.Metadata)
		v.Branch = branch
		if fresh {
			factDefaults(&v, now)
		}
		return v
	case store.Observation:
		v.Metadata = maps.Clone(v.Metadata)
		v.Branch = branch
		if fresh && v.CreatedAt.IsZero() {
			v.CreatedAt = now.UTC()
		}
		return v
	}
	out := store.WithBranch(store.Clone(r), branch)
	if fresh {
		return store.WithDefaults(out, now)
	}
	return out
}

// factDefaults fills the zero fields of f as store.WithDefaults does, in place
// (TestFactDefaultsMatchWithDefaults).
func factDefaults(f *store.Fact, now time.Time) {
	if f.CreatedAt.IsZero() {
		f.CreatedAt = now.UTC()
	}
	if f.UpdatedAt.IsZero() {
		f.UpdatedAt = f.CreatedAt
	}
	if f.Status == "" {
		f.Status = store.FactActive
	}
	if f.Confidence == 0 {
		f.Confidence = 1
	}
}
