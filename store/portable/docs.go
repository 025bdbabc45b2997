package portable

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// WriteDocs applies document writes as one atomic batch.
func (s *Store) WriteDocs(ctx context.Context, ws []store.DocWrite) ([]store.Doc, error) {
	if err := store.ValidateDocWrites(ws); err != nil {
		return nil, err
	}
	var out []store.Doc
	err := s.update(ctx, func(st *state, w driver.Writer) error {
		// The batch sees its own writes: a later write of the same document checks
		// its precondition against the earlier one.
		have := map[[2]string]*store.Doc{}
		get := func(c, id string) (*store.Doc, error) {
			if d, ok := have[[2]string{c, id}]; ok {
				return d, nil
			}
			return getDoc(ctx, w, c, id)
		}
		now := s.stamp(w)
		out = make([]store.Doc, len(ws))
		for i, wr := range ws {
			c, id := wr.Doc.Collection, wr.Doc.ID
			cur, err := get(c, id)
			if err != nil {
				return err
			}
			if err := store.CheckDocCond(wr, cur); err != nil {
				return err
			}
			if wr.Cond == store.DocDelete {
				out[i] = store.CloneDoc(*cur)
				have[[2]string{c, id}] = nil
				if err := w.DeleteItem(ctx, docPrefix+c, id); err != nil {
					return err
				}
				continue
			}
			d := store.NextDoc(wr, cur, now)
			out[i] = d
			cp := store.CloneDoc(d)
			have[[2]string{c, id}] = &cp
			data, err := json.Marshal(d)
			if err != nil {
				return err
			}
			if err := w.PutItem(ctx, docPrefix+c, id, data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func getDoc(ctx context.Context, r driver.Reader, collection, id string) (*store.Doc, error) {
	data, ok, err := r.Item(ctx, docPrefix+collection, id)
	if err != nil || !ok {
		return nil, err
	}
	var d store.Doc
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("%w: document %s/%s: %v", store.ErrCorrupt, collection, id, err)
	}
	return &d, nil
}

// GetDoc returns one document.
func (s *Store) GetDoc(ctx context.Context, collection, id string) (store.Doc, error) {
	if err := store.ValidateCollection("collection", collection); err != nil {
		return store.Doc{}, err
	}
	var out store.Doc
	err := s.read(ctx, func(st *state) error {
		d, err := getDoc(ctx, st.r, collection, id)
		if err != nil {
			return err
		}
		if d == nil {
			return fmt.Errorf("%w: document %s/%s", store.ErrNotFound, collection, id)
		}
		out = *d
		return nil
	})
	return out, err
}

// ListDocs returns the matching documents of a collection. It reads the collection.
func (s *Store) ListDocs(ctx context.Context, q store.DocQuery) ([]store.Doc, error) {
	if err := store.ValidateDocQuery(q); err != nil {
		return nil, err
	}
	var out []store.Doc
	err := s.read(ctx, func(st *state) error {
		return st.r.Items(ctx, docPrefix+q.Collection, "", func(id string, data []byte) error {
			var d store.Doc
			if err := json.Unmarshal(data, &d); err != nil {
				return fmt.Errorf("%w: document %s/%s: %v", store.ErrCorrupt, q.Collection, id, err)
			}
			if store.MatchDoc(q, &d) {
				out = append(out, d)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	store.SortDocs(out, q.Desc)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}
