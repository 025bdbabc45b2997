package memstore

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// Get returns one record as the view sees it. A fact Ref whose id is an alias returns
// the canonical fact, with its own ID (store.ResolveAlias).
func (s *Store) Get(ctx context.Context, v store.View, ref store.Ref) (store.Record, error) {
	if err := store.ValidateRef("ref", ref); err != nil {
		return nil, err
	}
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	vw, err := s.resolveView(v)
	if err != nil {
		return nil, err
	}
	return store.ResolveAlias(ctx, ref, func(ref store.Ref) (store.Record, error) {
		r := vw.get(key{ref.Kind, ref.ID})
		if r == nil {
			return nil, fmt.Errorf("%w: %s on branch %q", store.ErrNotFound, ref, vw.chain[0].br.info.Name)
		}
		return vw.out(r), nil
	})
}

// List returns the records of one kind that the view sees and the filter matches.
func (s *Store) List(ctx context.Context, v store.View, q store.ListQuery) ([]store.Record, error) {
	if err := store.ValidateListQuery(q); err != nil {
		return nil, err
	}
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	vw, err := s.resolveView(v)
	if err != nil {
		return nil, err
	}
	q.Filter = q.Filter.ResolveExpiry(s.holdsExpiring(), s.now)
	// The filter reads the versions; only the records it keeps are built.
	var out []store.Record
	for _, ver := range vw.each(q.Kind) {
		if ver.matches(q.Filter) {
			out = append(out, ver.plain())
		}
	}
	store.SortRecords(out, q.Order, q.Desc)
	out = store.Page(out, q.Offset, q.Limit)
	for i, r := range out {
		out[i] = vw.out(r)
	}
	return out, nil
}

// each returns the version of every live record of a kind the view sees, in no
// particular order.
func (v view) each(kind store.Kind) []*version {
	seen := map[string]bool{}
	var out []*version
	for _, l := range v.chain {
		for k := range l.br.own.first {
			if k.kind != kind || seen[k.id] {
				continue
			}
			seen[k.id] = true
			if ver := v.resolve(k); ver != nil && ver.rec != nil {
				out = append(out, ver)
			}
		}
	}
	return out
}

// Search ranks facts, observations, conversations and messages by BM25, cosine
// similarity or both.
func (s *Store) Search(ctx context.Context, v store.View, q store.SearchQuery) ([]store.Hit, error) {
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	q, err := store.NormalizeSearch(q, s.dims)
	if err != nil {
		return nil, err
	}
	vw, err := s.resolveView(v)
	if err != nil {
		return nil, err
	}
	q.Filter = q.Filter.ResolveExpiry(s.holdsExpiring(), s.now)
	depth := store.SearchDepth(q)
	// The two retrievers of a hybrid search run at once, both only read; with Fill
	// fusion the vector retriever runs after the keyword one, and only when it can
	// change the hits.
	var kw, vec []ranked
	var wg sync.WaitGroup
	runVector := func() {
		for _, kind := range q.Kinds {
			vec = append(vec, vectorSearch(ctx, vw, s.index[kind], q, depth)...)
		}
	}
	after := q.Fusion == store.Fill && q.Mode == store.Hybrid
	if q.Mode != store.Keyword && len(q.Vector) > 0 && !after {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runVector()
		}()
	}
	if q.Mode != store.Vector && strings.TrimSpace(q.Text) != "" {
		for _, kind := range q.Kinds {
			kw = append(kw, s.keyword(vw, s.index[kind], kind, q, depth)...)
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	keyword := records(kw)
	if ranges := store.NeighbourRanges(q, keyword); len(ranges) > 0 {
		keyword = store.AddNeighbours(q, keyword, vw.neighbours(ranges))
	}
	if sessions := store.ContextSessions(q, keyword); len(sessions) > 0 {
		if keyword, err = store.AddSessionNeighbours(q, keyword, vw.sessionEntries(sessions), vw.facts); err != nil {
			return nil, err
		}
	}
	if seeds := store.LooseSeeds(q, keyword); len(seeds) > 0 {
		if keyword, err = store.AddLooseNeighbours(q, keyword, vw.looseRuns(q, kw, seeds), vw.facts); err != nil {
			return nil, err
		}
	}
	if after && len(q.Vector) > 0 && store.NeedVector(q, len(keyword)) {
		runVector()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	hits := store.Fuse(q, keyword, records(vec))
	for i := range hits {
		h := &hits[i]
		h.Record = vw.out(h.Record)
		m, ok := h.Record.(store.Message)
		if !ok {
			continue
		}
		if c, ok := vw.get(key{store.KindConversation, m.ConversationID}).(store.Conversation); ok {
			h.ConversationTitle = c.Title
		}
		if q.Window > 0 {
			store.SetWindow(h, vw.around(m, q.Window), q.Window)
		}
	}
	return hits, nil
}

// around returns the messages the view sees in m's conversation whose Seq is within w
// of m's, m among them, in no particular order, on the view's branch. SetWindow copies
// those it keeps.
func (v view) around(m store.Message, w int) []store.Message {
	lo, hi := store.WindowRange(m, w)
	near := v.neighbours([]store.SeqRange{{ConversationID: m.ConversationID, Lo: lo, Hi: hi}})
	for i, n := range near {
		n.Branch = v.name()
		near[i] = n
	}
	return near
}

// sessionEntries returns where each fact the view sees in the given sessions falls,
// or nil when there are more than store.MaxContextFacts of them: the facts the
// chain's branches list under each session (branch.sessions).
func (v view) sessionEntries(sessions []string) []store.SessionEntry {
	n := 0
	for _, sess := range sessions {
		for _, l := range v.chain {
			n += len(l.br.sessions[sess])
		}
	}
	if n > 2*store.MaxContextFacts {
		return nil
	}
	out := make([]store.SessionEntry, 0, n)
	seen := make(map[string]bool, n)
	for _, sess := range sessions {
		for _, l := range v.chain {
			for _, id := range l.br.sessions[sess] {
				if seen[id] {
					continue
				}
				seen[id] = true
				if ver := v.resolve(key{store.KindFact, id}); ver != nil {
					if r, ok := ver.rec.(*factRec); ok && r.session() == sess {
						out = append(out, store.SessionEntry{ID: id, SessionID: sess, CreatedAt: r.created})
					}
				}
			}
		}
	}
	if len(out) > store.MaxContextFacts {
		return nil
	}
	return out
}

// looseRuns returns the store.LooseRun of each seed: the facts with no session the
// view sees among the versions written just before and after the seed's, in the
// order of the view's history: each ancestor's log up to the fork, then its child's.
func (v view) looseRuns(q store.SearchQuery, kw []ranked, seeds []store.Fact) [][]store.SessionEntry {
	at := make(map[string]*version, len(seeds))
	for _, r := range kw {
		if r.v.key.kind == store.KindFact {
			at[r.v.key.id] = r.v
		}
	}
	entry := func(w *version) (store.SessionEntry, bool) {
		r, ok := w.rec.(*factRec)
		if !ok || r.session() != "" || v.resolve(w.key) != w {
			return store.SessionEntry{}, false
		}
		return store.SessionEntry{ID: w.key.id, CreatedAt: r.created}, true
	}
	bySeq := func(w *version, seq uint64) int { return cmpU64(w.seq, seq) }
	var runs [][]store.SessionEntry
	for _, f := range seeds {
		sv := at[f.ID]
		if sv == nil {
			continue
		}
		li := slices.IndexFunc(v.chain, func(l link) bool { return l.br == sv.br })
		if li < 0 {
			continue
		}
		i, ok := slices.BinarySearchFunc(sv.br.log, sv.seq, bySeq)
		if !ok || sv.br.log[i] != sv {
			continue
		}
		seed, ok := entry(sv)
		if !ok {
			continue
		}
		// step yields the entries LooseScan versions at most from the seed's, d
		// apart: past the end of a link's log (or its cut), the child's log goes
		// on; before its start, the parent's, from the fork.
		step := func(d int) iter.Seq[store.SessionEntry] {
			return func(yield func(store.SessionEntry) bool) {
				li, i := li, i
				for range store.LooseScan {
					i += d
					for {
						l := v.chain[li]
						if i >= 0 && i < len(l.br.log) && l.br.log[i].seq <= l.cut {
							break
						}
						if d > 0 {
							if li == 0 {
								return
							}
							li, i = li-1, 0
						} else {
							if li == len(v.chain)-1 {
								return
							}
							li++
							l := v.chain[li]
							i = sort.Search(len(l.br.log), func(j int) bool { return l.br.log[j].seq > l.cut }) - 1
						}
					}
					if e, ok := entry(v.chain[li].br.log[i]); ok && !yield(e) {
						return
					}
				}
			}
		}
		runs = append(runs, store.LooseRun(q, seed, step(-1), step(1)))
	}
	return runs
}

// facts returns the facts of the given ids that the view sees, as stored.
func (v view) facts(ids []string) ([]store.Fact, error) {
	out := make([]store.Fact, 0, len(ids))
	for _, id := range ids {
		if f, ok := v.get(key{store.KindFact, id}).(store.Fact); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// neighbours returns the messages the view sees in the given ranges, as stored (not
// copied: Search copies the hits it returns). It reads the messages the chain's
// branches list under each conversation (branch.convs), not every message, and each
// conversation once however many ranges fall in it.
func (v view) neighbours(ranges []store.SeqRange) []store.Message {
	byConv := map[string][]store.SeqRange{}
	for _, r := range ranges {
		byConv[r.ConversationID] = append(byConv[r.ConversationID], r)
	}
	var out []store.Message
	seen := map[string]bool{}
	for conv, rs := range byConv {
		for _, l := range v.chain {
			for _, id := range l.br.convs[conv] {
				if seen[id] {
					continue
				}
				seen[id] = true
				n, ok := v.get(key{store.KindMessage, id}).(store.Message)
				if !ok || n.ConversationID != conv {
					continue
				}
				for _, r := range rs {
					if n.Seq >= r.Lo && n.Seq <= r.Hi {
						out = append(out, n)
						break
					}
				}
			}
		}
	}
	return out
}

type ranked struct {
	v     *version
	score float64
	full  float64 // store.Ranked.Full
}

// keyword scores BM25 over the documents the view sees. Document frequencies, the
// document count and the average length are those of the view, so a read in the past
// scores as a read then did.
//
// It reads each query term's postings once, in order, to count the documents the view
// sees and keep those the filter accepts. It then scores documents in the order of
// their positions in the index, with MaxScore: terms whose scores, added together at
// their bounds, cannot lift a document into the top k only add to documents that the
// other terms found, and a document whose score cannot reach the top k stops being
// scored. The result is that of scoring every document.
func (s *Store) keyword(vw view, ix *kindIndex, kind store.Kind, q store.SearchQuery, k int) []ranked {
	var n, sumLen int
	for _, l := range vw.chain {
		st := l.br.statAt(kind, l.cut)
		n += st.n
		sumLen += st.sumLen
	}
	if n <= 0 || k <= 0 {
		return nil
	}
	avg := float64(sumLen) / float64(n)
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	filtered := !q.Filter.IsZero()
	history := store.HistoryOnly(q.Filter)
	if filtered && !history {
		sc.grow(len(ix.docs))
	}
	// At the head of a branch without ancestors a version is visible when it is
	// current on that branch, which its posting says alone. In its past, a version
	// still current is visible when it was indexed by the cut (ord below pastEnd, docs
	// being in commit order), one on another branch never is, and only the versions
	// replaced since need their metadata read.
	var head, past *branch
	var pastEnd int32
	if len(vw.chain) == 1 {
		switch l := vw.chain[0]; {
		case l.cut == s.seq:
			head = l.br
		case !ix.unordered:
			past, pastEnd = l.br, ix.endOf(l.cut)
		}
	}
	rk := &sc.scorer
	rk.Reset()
	var idfs []float64 // of the query's terms, for store.Ranked.Full
	absent := textsearch.AbsentWeights(q.Text)
	for term := range textsearch.TermFreqs(textsearch.Terms(q.Text)) {
		list := ix.postings[term]
		if list == nil {
			idfs = append(idfs, absent.Of(term, 0, textsearch.DefaultBM25.IDF(0, n)))
			continue
		}
		df := 0
		for _, p := range list.Postings {
			switch {
			case head != nil:
				if !ix.current(p, head.slot, head.id) {
					continue
				}
			case past != nil && p.Ord >= pastEnd:
				continue // written after the cut
			case past != nil && p.Tag&^postingHistory != 0:
				if !ix.current(p, past.slot, past.id) {
					continue // current on another branch
				}
			case !vw.visibleDoc(ix, p.Ord, &ix.meta[p.Ord]):
				continue
			}
			df++
			switch {
			case history:
				if p.Tag&postingHistory != 0 || ix.expiring > 0 && ix.docs[p.Ord].expired(q.Filter.LiveAt) {
					continue
				}
			case filtered:
				st := &sc.state[p.Ord]
				if *st == unknown {
					*st = rejected
					if ix.docs[p.Ord].matches(q.Filter) {
						*st = accepted
					}
				}
				if *st != accepted {
					continue
				}
			}
			rk.Keep(p)
		}
		idf := textsearch.DefaultBM25.IDF(df, n)
		idfs = append(idfs, absent.Of(term, df, idf))
		rk.Term(list, idf)
	}
	best := rk.Top(avg, k, ix.longDoc)
	if len(best) == 0 {
		return nil
	}
	full := textsearch.Full(idfs)
	out := make([]ranked, len(best))
	for i, b := range best {
		out[i] = ranked{v: ix.docs[b.Item], score: b.Score, full: full}
	}
	return out
}

const (
	unknown uint8 = iota
	accepted
	rejected
)

// scratch is per-query working memory for keyword scoring, reused across queries.
type scratch struct {
	state  []uint8 // by ord: whether the filter accepts the document, once read
	scorer textsearch.Scorer
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// grow readies a cleared state array of n entries.
func (sc *scratch) grow(n int) {
	if cap(sc.state) < n {
		sc.state = make([]uint8, n)
	}
	sc.state = sc.state[:n]
	clear(sc.state)
}

// exactVectorLimit is the number of indexed vectors up to which a vector search compares
// the query with every one of them.
const exactVectorLimit = 4096

// vectorSearch ranks by cosine similarity. Small indexes are scanned exactly. Larger
// ones are scanned by Hamming distance between sign-bit codes first (a few popcounts per
// vector), and the exact cosine is computed for the nearest codes, in order, until
// enough candidates the view sees and the filter accepts have been scored. A selective
// filter therefore widens the scan by itself, down to an exact scan in the worst case.
func vectorSearch(ctx context.Context, vw view, ix *kindIndex, q store.SearchQuery, k int) []ranked {
	if len(ix.vecs) == 0 || len(q.Vector) != ix.dim {
		return nil
	}
	qinv := 1 / vecmath.Norm(q.Vector)
	top := vecmath.NewTopK[*version](k)
	filtered := !q.Filter.IsZero()
	history := store.HistoryOnly(q.Filter)
	score := func(i int) bool {
		v := ix.seen(vw, i)
		if v == nil {
			return false
		}
		if history && v.ord >= 0 {
			if ix.fast[v.ord].history() || ix.expiring > 0 && v.expired(q.Filter.LiveAt) {
				return false
			}
		} else if filtered && !v.matches(q.Filter) {
			return false
		}
		top.Push(float64(v.emb.dot(q.Vector)*qinv*v.inv), v)
		return true
	}
	if len(ix.vecs) <= exactVectorLimit {
		for i := range ix.vecs {
			score(i)
		}
		return fromTop(top)
	}
	qc := ix.rot.AppendCode(nil, q.Vector, nil)
	w := ix.words
	vs := vecScratchPool.Get().(*vecScratch)
	defer vecScratchPool.Put(vs)
	dist, order, counts := vs.grow(len(ix.vecs), w*64+2)
	for i := range ix.vecs {
		d := vecmath.Hamming(qc, ix.codes[i*w:(i+1)*w])
		dist[i] = uint16(d)
		counts[d]++
	}
	// Candidates are scored nearest code first, and ties in index order, until want of
	// them pass. Rather than ordering every vector, each round orders only those in the
	// next band of distances that holds enough candidates for what is still missing.
	want := max(k*16, 400)
	got := 0
	for lo := 0; lo < len(counts) && got < want; {
		hi, n := lo, counts[lo]
		for hi+1 < len(counts) && int(n) < 2*(want-got) {
			hi++
			n += counts[hi]
		}
		if n == 0 {
			lo = hi + 1
			continue
		}
		// A counting sort of the band [lo, hi] into order[:n].
		start := vs.starts[:hi-lo+2]
		start[0] = 0
		for d := lo; d <= hi; d++ {
			start[d-lo+1] = start[d-lo] + counts[d]
		}
		for i, d := range dist {
			if int(d) >= lo && int(d) <= hi {
				order[start[int(d)-lo]] = int32(i)
				start[int(d)-lo]++
			}
		}
		for i, idx := range order[:n] {
			if i%4096 == 4095 && ctx.Err() != nil {
				return nil
			}
			if score(int(idx)) {
				got++
				if got >= want {
					break
				}
			}
		}
		lo = hi + 1
	}
	return fromTop(top)
}

// vecScratch is per-query working memory for the Hamming ordering, reused across queries.
type vecScratch struct {
	dist   []uint16
	order  []int32
	counts []int32 // vectors per code distance
	starts []int32 // next slot per distance while ordering a band
}

var vecScratchPool = sync.Pool{New: func() any { return new(vecScratch) }}

func (vs *vecScratch) grow(n, buckets int) ([]uint16, []int32, []int32) {
	if cap(vs.dist) < n {
		vs.dist, vs.order = make([]uint16, n), make([]int32, n)
	}
	if cap(vs.counts) < buckets {
		vs.counts, vs.starts = make([]int32, buckets), make([]int32, buckets+1)
	}
	vs.counts = vs.counts[:buckets]
	clear(vs.counts)
	return vs.dist[:n], vs.order[:n], vs.counts
}

func fromTop(top *vecmath.TopK[*version]) []ranked {
	sorted := top.Sorted()
	out := make([]ranked, len(sorted))
	for i, s := range sorted {
		out[i] = ranked{v: s.Item, score: s.Score}
	}
	return out
}

// records pairs each ranked version's record with its score, for store.Fuse.
func records(rs []ranked) []store.Ranked {
	out := make([]store.Ranked, len(rs))
	for i, r := range rs {
		out[i] = store.Ranked{Record: r.v.plain(), Score: r.score, Full: r.full}
	}
	return out
}

// holdsExpiring reports whether the store may hold a fact with an expiry: whether it
// indexed one. Callers hold s.mu.
func (s *Store) holdsExpiring() bool {
	ix := s.index[store.KindFact]
	return ix != nil && ix.expiring > 0
}
