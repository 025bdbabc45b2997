package matrixone

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/store"
)

// Keyword search in memory. The store keeps, per searched table, the search terms of
// every row visible at the branch's head (termIndex): the postings of each term with
// its frequency, and each row's length and vid. A keyword search at the head ranks
// every row holding a query term by BM25 in Go, with the exact collection statistics,
// and fetches the best by primary key, checking the whole filter in Go, until it has
// enough: one short query instead of a full-text match that returns the tokens of
// every row holding a common word. The index is read whole once, then only the rows
// written since the revision it holds (like the code index of the facts' vectors), so
// a search after a write reads the rows that write made.
//
// A search of the past, one on a table whose index already moved past the revision
// read (a search that raced a newer write), or one whose filter rejects the best
// maxTermFetches chunks of candidates takes the full-text or scan path instead. Both
// paths give the same hits and scores (TestTermCache).

// maxTermTables bounds the term indexes kept in memory.
const maxTermTables = 16

// maxTermFetches is how many chunks of the best candidates a search fetches, and
// checks against its filter, before it leaves the ranking to the server.
const maxTermFetches = 4

// termIndex is the search terms of the rows of one table visible at revision rev.
type termIndex struct {
	mu  sync.Mutex
	rev int64
	// slot maps an id to its slot; ids, vids and lens are by slot, ids[i] "" for a
	// free slot. gen[i] counts the times slot i was freed: a posting is live when its
	// generation is the slot's.
	slot   map[string]int32
	ids    []string
	vids   []int64
	lens   []int32
	gen    []uint32
	nterms []int32 // distinct terms, the slot's postings
	free   []int32
	post   map[string][]termPosting
	// n and sumLen are the live rows and their total length; dead counts postings of
	// freed slots, which a rebuild drops.
	n, sumLen  int64
	live, dead int
}

type termPosting struct {
	slot int32
	gen  uint32
	tf   int32
}

// termRow is one row catchUpTerms applies to a term index.
type termRow struct {
	id     string
	vid    int64
	tokens string
	docLen int32
	live   bool
}

func newTermIndex() *termIndex {
	return &termIndex{rev: -1, slot: map[string]int32{}, post: map[string][]termPosting{}}
}

func (ix *termIndex) remove(id string) {
	i, ok := ix.slot[id]
	if !ok {
		return
	}
	delete(ix.slot, id)
	ix.n--
	ix.sumLen -= int64(ix.lens[i])
	ix.live -= int(ix.nterms[i])
	ix.dead += int(ix.nterms[i])
	ix.ids[i] = ""
	ix.gen[i]++
	ix.free = append(ix.free, i)
}

func (ix *termIndex) set(r termRow) {
	ix.remove(r.id)
	var i int32
	if n := len(ix.free); n > 0 {
		i, ix.free = ix.free[n-1], ix.free[:n-1]
	} else {
		i = int32(len(ix.ids))
		ix.ids, ix.vids, ix.lens = append(ix.ids, ""), append(ix.vids, 0), append(ix.lens, 0)
		ix.gen, ix.nterms = append(ix.gen, 0), append(ix.nterms, 0)
	}
	ix.slot[r.id] = i
	ix.ids[i], ix.vids[i], ix.lens[i] = r.id, r.vid, r.docLen
	ix.n++
	ix.sumLen += int64(r.docLen)
	tf := map[string]int32{}
	for _, t := range strings.Fields(r.tokens) {
		tf[t]++
	}
	for t, c := range tf {
		ix.post[t] = append(ix.post[t], termPosting{i, ix.gen[i], c})
	}
	ix.nterms[i] = int32(len(tf))
	ix.live += len(tf)
}

// termCache keeps the term indexes of the most recently searched maxTermTables tables.
type termCache struct {
	mu   sync.Mutex
	tabs map[string]*termIndex
	used []string // least recently used first
}

func (c *termCache) get(name string) *termIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tabs == nil {
		c.tabs = map[string]*termIndex{}
	}
	ix := c.tabs[name]
	if ix == nil {
		ix = newTermIndex()
		c.tabs[name] = ix
	}
	used := c.used[:0]
	for _, n := range c.used {
		if n != name {
			used = append(used, n)
		}
	}
	used = append(used, name)
	for len(used) > maxTermTables {
		delete(c.tabs, used[0])
		used = used[1:]
	}
	c.used = used
	return ix
}

// drop forgets a table's index, so that the next search reads it whole again: when
// freed postings outnumber live ones.
func (c *termCache) drop(name string, ix *termIndex) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tabs[name] == ix {
		delete(c.tabs, name)
	}
}

// termsAt returns the term index of a table brought up to revision cut, a committed
// revision; false when the index is already past it. The caller must hold the index's
// mutex while it uses it.
func (s *Store) termsAt(ctx context.Context, kind store.Kind, suffix string, cut int64) (*termIndex, bool, error) {
	name := tableName(kind, suffix)
	ix := s.termCache.get(name)
	for {
		ix.mu.Lock()
		from := ix.rev
		ix.mu.Unlock()
		if from >= cut {
			break
		}
		// Read without the mutex, so that no search waits on the index while another
		// waits on the server; when another caller moved it meanwhile, read again.
		rows, err := s.termRows(ctx, kind, suffix, from, cut)
		if err != nil {
			return nil, false, err
		}
		ix.mu.Lock()
		if ix.rev == from {
			for _, r := range rows {
				if r.live {
					ix.set(r)
				} else {
					ix.remove(r.id)
				}
			}
			ix.rev = cut
			stale := ix.dead > ix.live/2+1024
			ix.mu.Unlock()
			if stale {
				s.termCache.drop(name, ix)
			}
			break
		}
		ix.mu.Unlock()
	}
	ix.mu.Lock()
	if ix.rev != cut {
		ix.mu.Unlock()
		return nil, false, nil
	}
	return ix, true, nil
}

// termRows reads the rows of a table current at rev and written after from.
func (s *Store) termRows(ctx context.Context, kind store.Kind, suffix string, from, rev int64) ([]termRow, error) {
	rs, err := s.db.QueryContext(ctx, "SELECT id, vid, deleted, COALESCE(tokens, ''), doc_len FROM "+table(kind, suffix)+
		" WHERE rev > ? AND rev <= ? AND next_rev > ?", from, rev, rev)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []termRow
	for rs.Next() {
		var r termRow
		var deleted bool
		if err := rs.Scan(&r.id, &r.vid, &deleted, &r.tokens, &r.docLen); err != nil {
			return nil, err
		}
		r.live = !deleted
		out = append(out, r)
	}
	return out, rs.Err()
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
	ix, ok, err := s.termsAt(ctx, kind, p.tab.suffix, p.cut)
	if err != nil || !ok {
		return nil, false, err
	}
	cands := ix.rank(terms)
	ix.mu.Unlock()
	s.termQueries.Add(1)
	out, complete, err := s.fetchBest(ctx, p, kind, q, cands, k, maxTermFetches)
	if err != nil || !complete {
		return nil, false, err
	}
	return out, true, nil
}

// rank scores every live row holding one of the terms, best first, ties by id. The
// caller holds ix.mu.
func (ix *termIndex) rank(terms map[string]int) []termCand {
	if ix.n == 0 {
		return nil
	}
	avg := float64(ix.sumLen) / float64(ix.n)
	// Terms in order, so that every score is the same sum as the other paths'.
	list := make([]string, 0, len(terms))
	for t := range terms {
		list = append(list, t)
	}
	slices.Sort(list)
	acc := map[int32]float64{}
	for _, t := range list {
		ps := ix.post[t]
		df := 0
		for _, p := range ps {
			if ix.gen[p.slot] == p.gen {
				df++
			}
		}
		if df == 0 {
			continue
		}
		idf := textsearch.DefaultBM25.IDF(df, int(ix.n))
		for _, p := range ps {
			if ix.gen[p.slot] == p.gen {
				acc[p.slot] += textsearch.DefaultBM25.Score(int(p.tf), int(ix.lens[p.slot]), avg, idf)
			}
		}
	}
	out := make([]termCand, 0, len(acc))
	for i, sc := range acc {
		out = append(out, termCand{ix.vids[i], ix.ids[i], sc})
	}
	slices.SortFunc(out, func(a, b termCand) int {
		if a.score != b.score {
			return -cmp.Compare(a.score, b.score)
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}
