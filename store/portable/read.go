package portable

import (
	"context"
	"fmt"

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
	err := s.read(ctx, func(st *state) error {
		vw, err := st.resolveView(ctx, v)
		if err != nil {
			return err
		}
		return vw.each(ctx, q.Kind, func(r store.Record) error {
			if q.Filter.Match(r) {
				out = append(out, r)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	store.SortRecords(out, q.Order, q.Desc)
	if q.Offset >= len(out) {
		return nil, nil
	}
	out = out[q.Offset:]
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}
