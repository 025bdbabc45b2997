package portable

import (
	"context"
	"strings"

	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/internal/vecmath"
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
		docs := make([][]store.Record, len(q.Kinds))
		for i, kind := range q.Kinds {
			if err := vw.each(ctx, kind, func(r store.Record) error {
				docs[i] = append(docs[i], r)
				return nil
			}); err != nil {
				return err
			}
		}
		var keyword, vector []store.Ranked
		if q.Mode != store.Vector && strings.TrimSpace(q.Text) != "" {
			for i := range q.Kinds {
				keyword = append(keyword, bm25(docs[i], q, depth)...)
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
			for i := range q.Kinds {
				vector = append(vector, nearest(docs[i], q, depth)...)
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

// bm25 scores docs, the live records of one kind the view sees, against the query's
// terms: document frequencies, count and average length are those of docs, so a read
// in the past scores as a read then did. It keeps the best k the filter accepts.
func bm25(docs []store.Record, q store.SearchQuery, k int) []store.Ranked {
	if len(docs) == 0 || k <= 0 {
		return nil
	}
	terms := textsearch.TermFreqs(textsearch.Terms(q.Text))
	tfs := make([]map[string]int, len(docs))
	lens := make([]int, len(docs))
	sum := 0
	df := map[string]int{}
	for i, r := range docs {
		toks := textsearch.Terms(store.SearchText(r))
		lens[i] = len(toks)
		sum += len(toks)
		tf := map[string]int{}
		for _, t := range toks {
			if _, ok := terms[t]; ok {
				tf[t]++
			}
		}
		for t := range tf {
			df[t]++
		}
		tfs[i] = tf
	}
	avg := float64(sum) / float64(len(docs))
	idf := map[string]float64{}
	idfs := make([]float64, 0, len(terms))
	for t := range terms {
		idf[t] = textsearch.DefaultBM25.IDF(df[t], len(docs))
		idfs = append(idfs, idf[t])
	}
	full := textsearch.Full(idfs)
	top := vecmath.NewTopK[int](k)
	for i, tf := range tfs {
		if len(tf) == 0 || !q.Filter.Match(docs[i]) {
			continue
		}
		score := 0.0
		for t, n := range tf {
			score += textsearch.DefaultBM25.Score(n, lens[i], avg, idf[t])
		}
		top.Push(score, i)
	}
	sorted := top.Sorted()
	out := make([]store.Ranked, len(sorted))
	for i, x := range sorted {
		out[i] = store.Ranked{Record: docs[x.Item], Score: x.Score, Full: full}
	}
	return out
}

// nearest ranks docs by the cosine of their embeddings with the query's vector and
// keeps the best k the filter accepts.
func nearest(docs []store.Record, q store.SearchQuery, k int) []store.Ranked {
	top := vecmath.NewTopK[int](k)
	for i, r := range docs {
		emb := store.EmbeddingOf(r)
		if len(emb) != len(q.Vector) || !q.Filter.Match(r) {
			continue
		}
		top.Push(float64(vecmath.Cosine(q.Vector, emb)), i)
	}
	sorted := top.Sorted()
	out := make([]store.Ranked, len(sorted))
	for i, x := range sorted {
		out[i] = store.Ranked{Record: docs[x.Item], Score: x.Score}
	}
	return out
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
