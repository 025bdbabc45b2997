package store

import (
	"cmp"
	"slices"
)

// SearchDepth is how many candidates each retriever of a search ranks: q.Limit, or
// for a Hybrid search or one with a Window more, so that fusion and window scoring
// have candidates beyond the last hit to rank. q must be normalised.
func SearchDepth(q SearchQuery) int {
	if q.Mode == Hybrid || q.Window > 0 {
		return max(q.Limit*3, 50)
	}
	return q.Limit
}

// scoreWindows adds to each message hit WindowWeight times the fused score of the best
// other message candidate of its conversation whose Seq is within q.Window of its own
// (see SearchQuery.Window). Every hit gains from the scores before any gain, so the
// order of hits does not matter.
func scoreWindows(q SearchQuery, hits map[Ref]*Hit, order []Ref) {
	type cand struct {
		seq   int
		id    string
		score float64
		h     *Hit
	}
	byConv := map[string][]cand{}
	for _, ref := range order {
		h := hits[ref]
		if m, ok := h.Record.(Message); ok {
			byConv[m.ConversationID] = append(byConv[m.ConversationID], cand{m.Seq, m.ID, h.Score, h})
		}
	}
	for _, cs := range byConv {
		if len(cs) < 2 {
			continue
		}
		slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.id, b.id)) })
		for i, c := range cs {
			best := 0.0
			for j := i - 1; j >= 0 && c.seq-cs[j].seq <= q.Window; j-- {
				best = max(best, cs[j].score)
			}
			for j := i + 1; j < len(cs) && cs[j].seq-c.seq <= q.Window; j++ {
				best = max(best, cs[j].score)
			}
			c.h.WindowScore = q.WindowWeight * best
			c.h.Score += c.h.WindowScore
		}
	}
}

// WindowRange is the Seq range of the messages around a message hit that a search
// with a window of w returns beside it: [m.Seq-w, m.Seq+w].
func WindowRange(m Message, w int) (lo, hi int) { return m.Seq - w, m.Seq + w }

// SetWindow fills h.Before and h.After, for a message hit, from msgs: messages of the
// hit's conversation as the search saw them, in any order, among them those with Seq
// in WindowRange (others, and the hit's own message, are left out). Up to w messages
// are kept on each side, the nearest, in Seq order (then id), without their
// embeddings. It does nothing for a hit of another kind.
func SetWindow(h *Hit, msgs []Message, w int) {
	m, ok := h.Record.(Message)
	if !ok {
		return
	}
	lo, hi := WindowRange(m, w)
	var near []Message
	for _, n := range msgs {
		if n.ConversationID == m.ConversationID && n.ID != m.ID && n.Seq >= lo && n.Seq <= hi {
			n.Embedding = nil
			near = append(near, Clone(n).(Message))
		}
	}
	slices.SortFunc(near, func(a, b Message) int { return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID)) })
	split, _ := slices.BinarySearchFunc(near, m, func(a, b Message) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID))
	})
	before, after := near[:split], near[split:]
	if len(before) > w {
		before = before[len(before)-w:]
	}
	if len(after) > w {
		after = after[:w]
	}
	h.Before, h.After = slices.Clip(before), slices.Clip(after)
}
