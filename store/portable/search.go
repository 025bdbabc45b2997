package portable

import (
	"context"
	"strings"

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
		var keyword, vector []store.Ranked
		if q.Mode != store.Vector && strings.TrimSpace(q.Text) != "" {
			for _, kind := range q.Kinds {
				rs, err := s.keyword(ctx, vw, kind, q, depth)
				if err != nil {
					return err
				}
				keyword = append(keyword, rs...)
			}
		}
		if ranges := store.NeighbourRanges(q, keyword); len(ranges) > 0 {
			msgs, err := vw.messages(ctx, ranges)
			if err != nil {
				return err
			}
			keyword = store.AddNeighbours(q, keyword, msgs)
		}
		if sessions := store.ContextSessions(q, keyword); len(sessions) > 0 {
			entries, err := vw.sessionEntries(ctx, sessions)
			if err != nil {
				return err
			}
			keyword, err = store.AddSessionNeighbours(q, keyword, entries, func(ids []string) ([]store.Fact, error) {
				return vw.facts(ctx, ids)
			})
			if err != nil {
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
				near, err := vw.messages(ctx, []store.SeqRange{{ConversationID: m.ConversationID, Lo: lo, Hi: hi}})
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

// messages returns the messages the view sees in the given ranges.
func (v view) messages(ctx context.Context, ranges []store.SeqRange) ([]store.Message, error) {
	byConv := map[string][]store.SeqRange{}
	for _, r := range ranges {
		byConv[r.ConversationID] = append(byConv[r.ConversationID], r)
	}
	var out []store.Message
	err := v.each(ctx, store.KindMessage, func(r store.Record) error {
		m := r.(store.Message)
		for _, rg := range byConv[m.ConversationID] {
			if m.Seq >= rg.Lo && m.Seq <= rg.Hi {
				out = append(out, m)
				break
			}
		}
		return nil
	})
	return out, err
}

// sessionEntries returns where each fact the view sees in the given sessions falls,
// or nil when there are more than store.MaxContextFacts of them.
func (v view) sessionEntries(ctx context.Context, sessions []string) ([]store.SessionEntry, error) {
	want := map[string]bool{}
	for _, s := range sessions {
		want[s] = true
	}
	var out []store.SessionEntry
	err := v.each(ctx, store.KindFact, func(r store.Record) error {
		f := r.(store.Fact)
		if want[f.SessionID] {
			out = append(out, store.SessionEntry{ID: f.ID, SessionID: f.SessionID, CreatedAt: f.CreatedAt})
		}
		return nil
	})
	if len(out) > store.MaxContextFacts {
		return nil, err
	}
	return out, err
}

// facts returns the facts of the given ids that the view sees.
func (v view) facts(ctx context.Context, ids []string) ([]store.Fact, error) {
	out := make([]store.Fact, 0, len(ids))
	for _, id := range ids {
		r, err := v.get(ctx, store.KindFact, id)
		if err != nil {
			return nil, err
		}
		if f, ok := r.(store.Fact); ok {
			out = append(out, f)
		}
	}
	return out, nil
}
