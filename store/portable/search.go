package portable

import (
	"context"
	"iter"
	"strings"
	"time"

	"github.com/day1ai/day1/store"
)

// Search ranks facts, observations, conversations and messages by BM25, cosine
// similarity or both. It reads every live record of the kinds searched.
func (s *Store) Search(ctx context.Context, v store.View, q store.SearchQuery) ([]store.Hit, error) {
	var hits []store.Hit
	err := s.read(ctx, func(st *state) error {
		dims, err := s.dims(ctx, st)
		if err != nil {
			return err
		}
		if q, err = store.NormalizeSearch(q, dims); err != nil {
			return err
		}
		vw, err := st.resolveView(ctx, v)
		if err != nil {
			return err
		}
		depth := store.SearchDepth(q)
		if err := s.ix.catchUp(ctx, st.r, st, len(vw.chain) > 1, false); err != nil {
			return err
		}
		q.Filter = q.Filter.ResolveExpiry(s.ix.holdsExpiring(), st.now)
		var keyword, vector []store.Ranked
		at := map[string]int32{} // the positions of the facts of the keyword ranking
		if q.Mode != store.Vector && strings.TrimSpace(q.Text) != "" {
			for _, kind := range q.Kinds {
				rs, ps, err := s.keyword(ctx, vw, kind, q, depth)
				if err != nil {
					return err
				}
				if kind == store.KindFact {
					for i, r := range rs {
						at[r.Record.RecordID()] = ps[i]
					}
				}
				keyword = append(keyword, rs...)
			}
		}
		// facts reads the facts of the given ids that at places.
		facts := func(at map[string]int32) func(ids []string) ([]store.Fact, error) {
			return func(ids []string) ([]store.Fact, error) {
				ps := make([]int32, 0, len(ids))
				for _, id := range ids {
					if p, ok := at[id]; ok {
						ps = append(ps, p)
					}
				}
				recs, err := s.ix.fetch(ctx, vw, ps)
				out := make([]store.Fact, 0, len(recs))
				for _, r := range recs {
					if f, ok := r.(store.Fact); ok {
						out = append(out, f)
					}
				}
				return out, err
			}
		}
		if ranges := store.NeighbourRanges(q, keyword); len(ranges) > 0 {
			msgs, err := vw.messages(ctx, &s.ix, ranges)
			if err != nil {
				return err
			}
			keyword = store.AddNeighbours(q, keyword, msgs)
		}
		if sessions := store.ContextSessions(q, keyword); len(sessions) > 0 {
			entries, at := vw.sessionEntries(&s.ix, sessions)
			if keyword, err = store.AddSessionNeighbours(q, keyword, entries, facts(at)); err != nil {
				return err
			}
		}
		if seeds := store.LooseSeeds(q, keyword); len(seeds) > 0 {
			runs := vw.looseRuns(&s.ix, q, seeds, at)
			if keyword, err = store.AddLooseNeighbours(q, keyword, runs, facts(at)); err != nil {
				return err
			}
		}
		// With Fill fusion the vector ranking is asked for only when it can change
		// the hits.
		after := q.Fusion == store.Fill && q.Mode == store.Hybrid
		if q.Mode != store.Keyword && len(q.Vector) > 0 && (!after || store.NeedVector(q, len(keyword))) {
			for _, kind := range q.Kinds {
				rs, err := s.vector(ctx, vw, kind, q, depth)
				if err != nil {
					return err
				}
				vector = append(vector, rs...)
			}
		}
		hits = store.Fuse(q, keyword, vector)
		for i := range hits {
			h := &hits[i]
			m, ok := h.Record.(store.Message)
			if !ok {
				continue
			}
			c, err := vw.get(ctx, store.KindConversation, m.ConversationID)
			if err != nil {
				return err
			}
			if c, ok := c.(store.Conversation); ok {
				h.ConversationTitle = c.Title
			}
			if q.Window > 0 {
				lo, hi := store.WindowRange(m, q.Window)
				near, err := vw.messages(ctx, &s.ix, []store.SeqRange{{ConversationID: m.ConversationID, Lo: lo, Hi: hi}})
				if err != nil {
					return err
				}
				store.SetWindow(h, near, q.Window)
			}
		}
		return nil
	})
	return hits, err
}

// otherBranchRows bounds the rows looseRuns steps over on each side of a seed, of
// every branch.
const otherBranchRows = 16 * store.LooseScan

// looseRuns returns the store.LooseRun of each seed, at holding its position: the
// facts with no session on the rows written just before and after it that the view
// sees. It adds their positions to at.
func (v view) looseRuns(ix *index, q store.SearchQuery, seeds []store.Fact, at map[string]int32) [][]store.SessionEntry {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	fact := kindCode(store.KindFact)
	// Rows of other branches are stepped over without counting, up to
	// otherBranchRows of them.
	ours := make(map[int64]bool, len(v.chain))
	for _, l := range v.chain {
		ours[l.br.id] = true
	}
	entry := func(p int32) (store.SessionEntry, bool) {
		m := ix.rows.at(p)
		if m.kc != fact || m.del() || ix.names.grpView(p) != "" || !ix.visible(v, p) {
			return store.SessionEntry{}, false
		}
		id := ix.names.id(p)
		at[id] = p
		return store.SessionEntry{ID: id, CreatedAt: time.Unix(0, m.ord).UTC()}, true
	}
	n := int32(ix.rows.len())
	var runs [][]store.SessionEntry
	for _, f := range seeds {
		p, ok := at[f.ID]
		if !ok || p >= n {
			continue
		}
		seed, ok := entry(p)
		if !ok {
			continue
		}
		step := func(d int32) iter.Seq[store.SessionEntry] {
			return func(yield func(store.SessionEntry) bool) {
				for k, seen := d, 0; seen < store.LooseScan && k*d <= otherBranchRows && p+k >= 0 && p+k < n; k += d {
					if !ours[ix.rows.at(p+k).br] {
						continue
					}
					seen++
					if e, ok := entry(p + k); ok && !yield(e) {
						return
					}
				}
			}
		}
		runs = append(runs, store.LooseRun(q, seed, step(-1), step(1)))
	}
	return runs
}

// messages returns the messages the view sees in the given ranges: those the index
// lists under each range's conversation with a sequence number in the range.
func (v view) messages(ctx context.Context, ix *index, ranges []store.SeqRange) ([]store.Message, error) {
	var ps []int32
	seen := map[int32]bool{}
	ix.buildGroups()
	ix.mu.RLock()
	for _, rg := range ranges {
		for _, p := range ix.inGroup(v, store.KindMessage, rg.ConversationID) {
			if o := ix.rows.at(p).ord; o >= int64(rg.Lo) && o <= int64(rg.Hi) && !seen[p] {
				seen[p] = true
				ps = append(ps, p)
			}
		}
	}
	ix.mu.RUnlock()
	recs, err := ix.fetch(ctx, v, ps)
	if err != nil {
		return nil, err
	}
	out := make([]store.Message, 0, len(recs))
	for _, r := range recs {
		if m, ok := r.(store.Message); ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// sessionEntries returns where each fact the view sees in the given sessions falls,
// from the index alone, or nil when there are more than store.MaxContextFacts of
// them; and the position of each of those facts' rows.
func (v view) sessionEntries(ix *index, sessions []string) ([]store.SessionEntry, map[string]int32) {
	ix.buildGroups()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []store.SessionEntry
	at := map[string]int32{}
	for _, s := range sessions {
		for _, p := range ix.inGroup(v, store.KindFact, s) {
			id := ix.names.id(p)
			out = append(out, store.SessionEntry{ID: id, SessionID: s, CreatedAt: time.Unix(0, ix.rows.at(p).ord).UTC()})
			at[id] = p
			if len(out) > store.MaxContextFacts {
				return nil, nil
			}
		}
	}
	return out, at
}
