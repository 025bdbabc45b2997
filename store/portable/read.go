package portable

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/day1ai/day1/store"
)

// Get returns one record as the view sees it.
func (s *Store) Get(ctx context.Context, v store.View, ref store.Ref) (store.Record, error) {
	if err := store.ValidateRef("ref", ref); err != nil {
		return nil, err
	}
	var out store.Record
	err := s.read(ctx, func(st *state) error {
		vw, err := st.resolveView(ctx, v)
		if err != nil {
			return err
		}
		out, err = store.ResolveAlias(ctx, ref, func(ref store.Ref) (store.Record, error) {
			r, err := vw.get(ctx, ref.Kind, ref.ID)
			if err == nil && r == nil {
				err = fmt.Errorf("%w: %s on branch %q", store.ErrNotFound, ref, vw.name())
			}
			return r, err
		})
		return err
	})
	return out, err
}

// List returns the records of one kind that the view sees and the filter matches.
func (s *Store) List(ctx context.Context, v store.View, q store.ListQuery) ([]store.Record, error) {
	if err := store.ValidateListQuery(q); err != nil {
		return nil, err
	}
	var out []store.Record
	indexed := false
	err := s.read(ctx, func(st *state) error {
		vw, err := st.resolveView(ctx, v)
		if err != nil {
			return err
		}
		if q.Filter.NotExpired {
			if err := s.ix.catchUp(ctx, st.r, st, len(vw.chain) > 1, false); err != nil {
				return err
			}
			q.Filter = q.Filter.ResolveExpiry(s.ix.holdsExpiring(), st.now)
		}
		if (q.Filter.IsZero() || store.HistoryOnly(q.Filter)) && q.Order == store.OrderUpdated && store.Updatable(q.Kind) {
			// The index orders the rows by the update times it holds, reading those
			// of the rows it has not seen yet, and pages them.
			indexed = true
			out, err = s.listByUpdate(ctx, st, vw, q)
			return err
		}
		if (q.Filter.IsZero() || store.HistoryOnly(q.Filter)) && q.Order != store.OrderUpdated {
			// The index orders the rows by creation or id and pages them; only the
			// page is read.
			indexed = true
			out, err = s.listIndexed(ctx, st, vw, q)
			return err
		}
		if group := groupOf(q); group != "" {
			// The index lists the rows of one session's facts or one conversation's
			// messages; only those are read.
			if err := s.ix.catchUp(ctx, st.r, st, len(vw.chain) > 1, false); err != nil {
				return err
			}
			s.ix.buildGroups()
			s.ix.mu.RLock()
			ps := s.ix.inGroup(vw, q.Kind, group)
			s.ix.mu.RUnlock()
			recs, err := s.ix.fetch(ctx, vw, ps)
			if err != nil {
				return err
			}
			for _, r := range recs {
				if r != nil && q.Filter.Match(r) {
					out = append(out, r)
				}
			}
			return nil
		}
		return vw.each(ctx, q.Kind, func(r store.Record) error {
			if q.Filter.Match(r) {
				out = append(out, r)
			}
			return nil
		})
	})
	if err != nil || indexed {
		return out, err
	}
	store.SortRecords(out, q.Order, q.Desc)
	return store.Page(out, q.Offset, q.Limit), nil
}

// groupOf returns the group (driver.Index.Group) a query's filter keeps to, "" for
// none: a session's facts, a conversation's messages.
func groupOf(q store.ListQuery) string {
	switch q.Kind {
	case store.KindFact:
		return q.Filter.SessionID
	case store.KindMessage:
		return q.Filter.ConversationID
	}
	return ""
}

// updateChunk is how many records listByUpdate reads at a time for their update times.
const updateChunk = 2000

// listByUpdate lists, in update order (store.OrderUpdated), the facts or
// conversations of a query whose filter the index decides, by the update times the
// index holds. The rows a driver kept without one (a file written before drivers
// kept them) are read once, a chunk at a time, and their times kept
// (index.updated), so a process pays for each such row once.
func (s *Store) listByUpdate(ctx context.Context, st *state, v view, q store.ListQuery) ([]store.Record, error) {
	ix := &s.ix
	if err := ix.catchUp(ctx, st.r, st, len(v.chain) > 1, false); err != nil {
		return nil, err
	}
	ix.mu.RLock()
	ps := ix.visibleRows(v, q)
	var unseen []int32
	for _, p := range ps {
		if _, ok := ix.updated[p]; !ok && !ix.rows.at(p).updKnown() {
			unseen = append(unseen, p)
		}
	}
	ix.mu.RUnlock()
	for lo := 0; lo < len(unseen); lo += updateChunk {
		chunk := unseen[lo:min(lo+updateChunk, len(unseen))]
		recs, err := ix.read(ctx, v, chunk, readOpts{borrow: true})
		if err != nil {
			return nil, err
		}
		ix.mu.Lock()
		if ix.updated == nil {
			ix.updated = map[int32]int64{}
		}
		for i, r := range recs {
			if r != nil {
				ix.updated[chunk[i]] = store.UpdateTime(r).UnixNano()
			}
		}
		ix.mu.Unlock()
	}
	return ix.page(ctx, v, q, ps, func(a, b int32) int {
		if c := cmp.Compare(ix.updateOf(a), ix.updateOf(b)); c != 0 {
			return c
		}
		return strings.Compare(ix.names.idView(a), ix.names.idView(b))
	})
}

// updateOf returns the update time of row p: updated[p], else its time. Callers hold
// ix.mu.
func (ix *index) updateOf(p int32) int64 {
	if t, ok := ix.updated[p]; ok {
		return t
	}
	return ix.rows.at(p).time
}

// listIndexed lists the records of a query whose filter the index decides (none, or
// history left out): it orders the rows the view sees as store.SortRecords orders
// records, from the times, groups, orders and ids it holds, and reads the page asked
// for alone.
func (s *Store) listIndexed(ctx context.Context, st *state, v view, q store.ListQuery) ([]store.Record, error) {
	ix := &s.ix
	if err := ix.catchUp(ctx, st.r, st, len(v.chain) > 1, false); err != nil {
		return nil, err
	}
	ix.mu.RLock()
	ps := ix.visibleRows(v, q)
	ix.mu.RUnlock()
	msgs := q.Kind == store.KindMessage
	return ix.page(ctx, v, q, ps, func(a, b int32) int {
		x, y := ix.rows.at(a), ix.rows.at(b)
		byID := func() int { return strings.Compare(ix.names.idView(a), ix.names.idView(b)) }
		switch {
		case q.Order == store.OrderID:
			return byID()
		case q.Order == store.OrderSeq && msgs:
			if c := strings.Compare(ix.names.grpView(a), ix.names.grpView(b)); c != 0 {
				return c
			}
			if c := cmp.Compare(x.ord, y.ord); c != 0 {
				return c
			}
			return byID()
		}
		if c := cmp.Compare(x.time, y.time); c != 0 {
			return c
		}
		if msgs {
			if c := cmp.Compare(x.ord, y.ord); c != 0 {
				return c
			}
		}
		return byID()
	})
}

// visibleRows returns the positions of the rows of q's kind that v sees and q's
// filter keeps (none, or history left out). Callers hold ix.mu for reading.
func (ix *index) visibleRows(v view, q store.ListQuery) []int32 {
	history := store.HistoryOnly(q.Filter)
	var ps []int32
	for p := range int32(ix.rows.len()) {
		m := ix.rows.at(p)
		if m.kind() == q.Kind && !m.del() && !(history && (m.hist() || ix.expired(p, q.Filter.LiveAt))) && ix.visible(v, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// page orders the rows ps by order (reversed with q.Desc), which reads the index's
// rows under its read lock, and reads the records of the page q asks for.
func (ix *index) page(ctx context.Context, v view, q store.ListQuery, ps []int32, order func(a, b int32) int) ([]store.Record, error) {
	ix.mu.RLock()
	slices.SortStableFunc(ps, func(a, b int32) int {
		if q.Desc {
			return order(b, a)
		}
		return order(a, b)
	})
	ix.mu.RUnlock()
	if ps = store.Page(ps, q.Offset, q.Limit); len(ps) == 0 {
		return nil, nil
	}
	recs, err := ix.fetch(ctx, v, ps)
	if err != nil {
		return nil, err
	}
	out := recs[:0]
	for _, r := range recs {
		if r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}
