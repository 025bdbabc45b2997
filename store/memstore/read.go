package memstore

import (
	"context"
	"fmt"
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
	s.mu.RLock()
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
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	vw, err := s.resolveView(v)
	if err != nil {
		return nil, err
	}
	// The filter reads the versions; only the records it keeps are built.
	var out []store.Record
	for _, ver := range vw.each(q.Kind) {
		if ver.matches(q.Filter) {
			out = append(out, ver.plain())
		}
	}
	store.SortRecords(out, q.Order, q.Desc)
	if q.Offset >= len(out) {
		return nil, nil
	}
	out = out[q.Offset:]
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
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
	s.mu.RLock()
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
}

// keyword scores BM25 over the documents the view sees. Document frequencies, the
// document count and the average length are those of the view, so a read in the past
// scores as a read then did. Scores accumulate in a dense array indexed by each
// version's position in the index, and only the top k are ordered.
func (s *Store) keyword(vw view, ix *kindIndex, kind store.Kind, q store.SearchQuery, k int) []ranked {
	var n, sumLen int
	for _, l := range vw.chain {
		st := l.br.statAt(kind, l.cut)
		n += st.n
		sumLen += st.sumLen
	}
	if n <= 0 {
		return nil
	}
	avg := float64(sumLen) / float64(n)
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	acc := sc.grow(len(ix.docs))
	filtered := !q.Filter.IsZero()
	history := historyOnly(q.Filter)
	// At the head of a branch without ancestors a version is visible when it is
	// current on that branch, which docFast says alone. In its past, a version still
	// current is visible when it was indexed by the cut (ord below pastEnd, docs being
	// in commit order), one on another branch never is, and only the versions replaced
	// since need their metadata read.
	var headID, pastID uint32
	var pastEnd int32
	if len(vw.chain) == 1 {
		switch l := vw.chain[0]; {
		case l.cut == s.seq:
			headID = l.br.id
		case !ix.unordered:
			pastID, pastEnd = l.br.id, ix.endOf(l.cut)
		}
	}
	hits := sc.hits[:0]
	for term := range textsearch.TermFreqs(textsearch.Terms(q.Text)) {
		hits = hits[:0]
		df := 0
		var ps []posting
		if list := ix.postings[term]; list != nil {
			ps = *list
		}
		for _, p := range ps {
			f := ix.fast[p.ord]
			switch tag := f.tag &^ historyBit; {
			case headID != 0:
				if tag != headID {
					continue
				}
			case pastID != 0 && tag == pastID:
				if p.ord >= pastEnd {
					continue
				}
			case pastID != 0 && tag != 0:
				continue // current on another branch
			case !vw.visibleDoc(ix, p.ord, &ix.meta[p.ord]):
				continue
			}
			df++
			st := &sc.state[p.ord]
			if *st == unknown {
				*st = rejected
				switch {
				case history:
					if !f.history() {
						*st = accepted
					}
				case !filtered || ix.docs[p.ord].matches(q.Filter):
					*st = accepted
				}
			}
			if *st == accepted {
				hits = append(hits, hit{ord: p.ord, tf: p.tf, docLen: f.docLen})
			}
		}
		idf := textsearch.DefaultBM25.IDF(df, n)
		for _, h := range hits {
			if acc[h.ord] == 0 {
				sc.touched = append(sc.touched, h.ord)
			}
			acc[h.ord] += textsearch.DefaultBM25.Score(int(h.tf), int(h.docLen), avg, idf)
		}
	}
	sc.hits = hits
	top := vecmath.NewTopK[*version](k)
	for _, o := range sc.touched {
		// A score that cannot enter spares the read of its version.
		if a := acc[o]; a > top.Min() {
			top.Push(a, ix.docs[o])
		}
	}
	return fromTop(top)
}

// hit is one posting a keyword search scores.
type hit struct{ ord, tf, docLen int32 }

const (
	unknown uint8 = iota
	accepted
	rejected
)

// scratch is per-query working memory for keyword scoring, reused across queries.
type scratch struct {
	acc     []float64
	state   []uint8
	touched []int32
	hits    []hit // one term's postings to score
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// grow returns a zeroed accumulator of n entries, with the state array to match.
func (sc *scratch) grow(n int) []float64 {
	for _, o := range sc.touched {
		if int(o) < len(sc.acc) {
			sc.acc[o] = 0
		}
	}
	sc.touched = sc.touched[:0]
	if cap(sc.acc) < n {
		sc.acc = make([]float64, n)
		sc.state = make([]uint8, n)
	}
	sc.acc = sc.acc[:n]
	sc.state = sc.state[:n]
	clear(sc.state)
	return sc.acc
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
	history := historyOnly(q.Filter)
	score := func(i int) bool {
		v := ix.seen(vw, i)
		if v == nil {
			return false
		}
		if history && v.ord >= 0 {
			if ix.fast[v.ord].history() {
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
		out[i] = ranked{s.Item, s.Score}
	}
	return out
}

// records pairs each ranked version's record with its score, for store.Fuse.
func records(rs []ranked) []store.Ranked {
	out := make([]store.Ranked, len(rs))
	for i, r := range rs {
		out[i] = store.Ranked{Record: r.v.plain(), Score: r.score}
	}
	return out
}
