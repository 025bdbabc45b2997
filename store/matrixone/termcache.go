package matrixone

import (
	"cmp"
	"context"
	"database/sql"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/store"
)

// Keyword search in memory. The store keeps, per searched table, the search terms of
// every row version the table holds up to a revision (termIndex): the postings of each
// term with its frequency, and each version's vid, id, length and the revisions it is
// visible between. A keyword search ranks every version visible at the revision it
// reads, holding a query term, by BM25 in Go, with the exact collection statistics of
// that revision, and fetches the best by primary key, checking the whole filter in Go,
// until it has enough: one short query instead of a full-text match that returns the
// tokens of every row holding a common word. The index is read whole once, then only
// the versions written or closed since the revision it holds (every process's writes:
// the rows carry their revisions), so a search after a write reads what that write
// changed, and a search of the past reads nothing.
//
// A search whose filter rejects the best maxTermFetches chunks of candidates takes the
// full-text or scan path instead. The paths give the same hits and scores
// (TestKeywordPaths).

// maxTermTables bounds the term indexes kept in memory.
const maxTermTables = 16

// maxTermFetches is how many chunks of the best candidates a search fetches, and
// checks against its filter, before it leaves the ranking to the server.
const maxTermFetches = 4

// termIndex is the search terms of the row versions of one table written up to
// revision rev. For a facts table it also holds each version's session and creation
// time, which give the facts of a search their session context without a query.
type termIndex struct {
	mu   sync.Mutex
	rev  int64
	at   map[int64]int32 // vid -> entry
	ents []termEntry
	post map[string]*textsearch.List // by term; a posting's Ord is its entry's place in ents
	// sessions names the sessions of the entries (termEntry.session is an index into
	// it, plus one), sessionOf numbers them, and bySession lists each one's entries.
	sessions  []string
	sessionOf map[string]int32
	bySession map[int32][]int32
	// statsCut, n and sumLen are the statistics of the versions visible at statsCut,
	// kept for the next search at the same revision; statsCut -1 when none.
	statsCut  int64
	n, sumLen int64
}

// termEntry is one row version.
type termEntry struct {
	vid, rev, next int64
	id             string
	created        int64 // facts: CreatedAt in Unix microseconds, 0 when unset
	session        int32 // facts: the session's number in termIndex.sessions plus one, 0 for none
	docLen         int32
	deleted        bool
}

// visible reports whether the version is visible at revision cut, as the SQL
// predicate visible(cut) says.
func (e *termEntry) visible(cut int64) bool { return e.rev <= cut && e.next > cut && !e.deleted }

// termRow is one row version termRows reads.
type termRow struct {
	termEntry
	tokens    string
	sessionID string
}

func newTermIndex() *termIndex {
	return &termIndex{rev: -1, at: map[int64]int32{}, post: map[string]*textsearch.List{}, statsCut: -1,
		sessionOf: map[string]int32{}, bySession: map[int32][]int32{}}
}

// apply records a row version: a new one with its terms, or the new closing revision
// of one it holds.
func (ix *termIndex) apply(r termRow) {
	if i, ok := ix.at[r.vid]; ok {
		ix.ents[i].next = r.next
		return
	}
	i := int32(len(ix.ents))
	ix.at[r.vid] = i
	if r.sessionID != "" {
		n, ok := ix.sessionOf[r.sessionID]
		if !ok {
			ix.sessions = append(ix.sessions, r.sessionID)
			n = int32(len(ix.sessions))
			ix.sessionOf[r.sessionID] = n
		}
		r.session = n
		ix.bySession[n] = append(ix.bySession[n], i)
	}
	ix.ents = append(ix.ents, r.termEntry)
	if r.deleted {
		return
	}
	tf := map[string]int32{}
	for _, t := range strings.Fields(r.tokens) {
		tf[termOfColumn(t)]++
	}
	for t, c := range tf {
		l := ix.post[t]
		if l == nil {
			l = new(textsearch.List)
			ix.post[t] = l
		}
		l.Add(i, 0, int(c), int(r.docLen))
	}
}

// termCache keeps the term indexes of the most recently searched maxTermTables tables.
type termCache struct {
	mu  sync.Mutex
	lru tableLRU[*termIndex]
}

func (c *termCache) get(name string) *termIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.use(name, maxTermTables, nil, newTermIndex)
}

// termsAt returns the term index of a table holding every version up to revision cut
// at least, a committed revision. The caller must unlock the index's mutex when done.
func (s *Store) termsAt(ctx context.Context, kind store.Kind, suffix string, cut int64) (*termIndex, error) {
	ix := s.termCache.get(tableName(kind, suffix))
	for {
		ix.mu.Lock()
		from := ix.rev
		if from >= cut {
			return ix, nil
		}
		ix.mu.Unlock()
		// Read without the mutex, so that no search waits on the index while another
		// waits on the server; when another caller moved it meanwhile, read again.
		rows, err := s.termRows(ctx, kind, suffix, from, cut)
		if err != nil {
			return nil, err
		}
		ix.mu.Lock()
		if ix.rev == from {
			for _, r := range rows {
				ix.apply(r)
			}
			ix.rev, ix.statsCut = cut, -1
		}
		ix.mu.Unlock()
	}
}

// termRows reads the row versions of a table written or closed after revision from, up
// to rev.
// Of facts it also reads the session and creation time.
func (s *Store) termRows(ctx context.Context, kind store.Kind, suffix string, from, rev int64) ([]termRow, error) {
	cols := "vid, id, rev, next_rev, deleted, COALESCE(tokens, ''), doc_len"
	facts := kind == store.KindFact
	if facts {
		cols += ", session_id, created_at"
	}
	rs, err := s.db.QueryContext(ctx, "SELECT "+cols+" FROM "+table(kind, suffix)+
		" WHERE rev > ? AND rev <= ? OR next_rev > ? AND next_rev <= ?", from, rev, from, rev)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []termRow
	for rs.Next() {
		var r termRow
		dest := []any{&r.vid, &r.id, &r.rev, &r.next, &r.deleted, &r.tokens, &r.docLen}
		var at sql.NullTime
		if facts {
			dest = append(dest, &r.sessionID, &at)
		}
		if err := rs.Scan(dest...); err != nil {
			return nil, err
		}
		if at.Valid {
			r.created = at.Time.UnixMicro()
		}
		out = append(out, r)
	}
	// In the order the rows were written (vid), which the facts' context steps
	// through (looseRuns).
	slices.SortFunc(out, func(a, b termRow) int { return cmp.Compare(a.vid, b.vid) })
	return out, rs.Err()
}

// sessionEntries returns where the facts visible at cut in the given sessions fall,
// with the vid of each: all of them, or MaxContextFacts+1 when there are more. The
// caller holds ix.mu.
func (ix *termIndex) sessionEntries(sessions []string, cut int64) ([]store.SessionEntry, map[string]int64) {
	var out []store.SessionEntry
	vids := map[string]int64{}
	for _, name := range sessions {
		for _, i := range ix.bySession[ix.sessionOf[name]] {
			e := &ix.ents[i]
			if !e.visible(cut) {
				continue
			}
			if len(out) > store.MaxContextFacts {
				return out, vids
			}
			var at time.Time
			if e.created != 0 {
				at = time.UnixMicro(e.created)
			}
			out = append(out, store.SessionEntry{ID: e.id, SessionID: name, CreatedAt: at})
			vids[e.id] = e.vid
		}
	}
	return out, vids
}

// looseRuns returns the store.LooseRun of each seed, vids holding the seed's vid: the
// facts with no session visible at cut among the entries next to its own, in the
// order of their vids (the order the rows were written), LooseScan at most on each
// side. It adds the vids of the facts of the runs to vids. The caller
// holds ix.mu.
func (ix *termIndex) looseRuns(q store.SearchQuery, seeds []store.Fact, vids map[string]int64, cut int64) [][]store.SessionEntry {
	entry := func(i int) (store.SessionEntry, bool) {
		e := &ix.ents[i]
		if e.session != 0 || !e.visible(cut) {
			return store.SessionEntry{}, false
		}
		vids[e.id] = e.vid
		var at time.Time
		if e.created != 0 {
			at = time.UnixMicro(e.created).UTC()
		}
		return store.SessionEntry{ID: e.id, CreatedAt: at}, true
	}
	var runs [][]store.SessionEntry
	for _, f := range seeds {
		vid, ok := vids[f.ID]
		if !ok {
			continue
		}
		at, ok := ix.at[vid]
		if !ok {
			continue
		}
		i := int(at)
		seed, ok := entry(i)
		if !ok {
			continue
		}
		step := func(d int) iter.Seq[store.SessionEntry] {
			return func(yield func(store.SessionEntry) bool) {
				for k := 1; k <= store.LooseScan && i+d*k >= 0 && i+d*k < len(ix.ents); k++ {
					if e, ok := entry(i + d*k); ok && !yield(e) {
						return
					}
				}
			}
		}
		runs = append(runs, store.LooseRun(q, seed, step(-1), step(1)))
	}
	return runs
}

// termCand is a row a keyword search ranked.
type termCand struct {
	vid   int64
	id    string
	score float64
}

// termSearch ranks the rows of a kind that p sees by BM25 through the term index;
// false when the path does not apply (see above).
func (s *Store) termSearch(ctx context.Context, p pos, kind store.Kind, q store.SearchQuery, terms map[string]int, k int) ([]ranked, bool, error) {
	if s.opts.KeywordCache == IndexOff || s.wordsAsWritten {
		return nil, false, nil
	}
	ix, err := s.termsAt(ctx, kind, p.tab.suffix, p.cut)
	if err != nil {
		return nil, false, err
	}
	cands, full := ix.rank(terms, textsearch.AbsentWeights(q.Text), p.cut)
	ix.mu.Unlock()
	s.termQueries.Add(1)
	out, complete, err := s.fetchBest(ctx, p, kind, q, cands, k, maxTermFetches)
	if err != nil || !complete {
		return nil, false, err
	}
	withFull(out, full)
	return out, true, nil
}

// rank scores every version visible at cut holding one of the terms, best first, ties
// by id, and returns the score of a full match (store.Ranked.Full). The caller holds
// ix.mu.
func (ix *termIndex) rank(terms map[string]int, absent textsearch.Weights, cut int64) ([]termCand, float64) {
	if ix.statsCut != cut {
		ix.n, ix.sumLen = 0, 0
		for i := range ix.ents {
			if e := &ix.ents[i]; e.visible(cut) {
				ix.n++
				ix.sumLen += int64(e.docLen)
			}
		}
		ix.statsCut = cut
	}
	if ix.n == 0 {
		return nil, 0
	}
	avg := float64(ix.sumLen) / float64(ix.n)
	// Terms in order, so that every score is the same sum as the other paths'.
	list := make([]string, 0, len(terms))
	for t := range terms {
		list = append(list, t)
	}
	slices.Sort(list)
	var rk textsearch.Scorer
	idfs := make([]float64, 0, len(list))
	for _, t := range list {
		l := ix.post[t]
		df := 0
		if l != nil {
			for _, p := range l.Postings {
				if ix.ents[p.Ord].visible(cut) {
					df++
					rk.Keep(p)
				}
			}
		}
		idf := textsearch.DefaultBM25.IDF(df, int(ix.n))
		idfs = append(idfs, absent.Of(t, df, idf))
		rk.Term(l, idf)
	}
	acc := rk.All(avg, func(ord int32) int { return int(ix.ents[ord].docLen) })
	out := make([]termCand, 0, len(acc))
	for i, sc := range acc {
		e := &ix.ents[i]
		out = append(out, termCand{e.vid, e.id, sc})
	}
	slices.SortFunc(out, func(a, b termCand) int {
		if a.score != b.score {
			return -cmp.Compare(a.score, b.score)
		}
		return strings.Compare(a.id, b.id)
	})
	return out, textsearch.Full(idfs)
}
