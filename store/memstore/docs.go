package memstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/day1ai/day1/store"
)

// docKey names a document.
type docKey struct{ collection, id string }

// WriteDocs applies document writes atomically.
func (s *Store) WriteDocs(ctx context.Context, ws []store.DocWrite) ([]store.Doc, error) {
	if err := store.ValidateDocWrites(ws); err != nil {
		return nil, err
	}
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	for _, w := range ws {
		if err := store.CheckDocCond(w, s.docs[docKey{w.Doc.Collection, w.Doc.ID}]); err != nil {
			return nil, err
		}
	}
	now := s.commitNow()
	out := make([]store.Doc, len(ws))
	ops := make([]op, len(ws))
	for i, w := range ws {
		have := s.docs[docKey{w.Doc.Collection, w.Doc.ID}]
		if w.Cond == store.DocDelete {
			out[i] = store.CloneDoc(*have)
			ops[i] = op{Type: opDocDelete, Name: w.Doc.Collection, ID: w.Doc.ID}
			continue
		}
		d := store.NextDoc(w, have, now)
		out[i] = d
		ops[i] = op{Type: opDoc, Doc: &d}
	}
	if err := s.commit(now, ops...); err != nil {
		return nil, err
	}
	for i, w := range ws {
		if w.Cond == store.DocDelete {
			delete(s.docs, docKey{w.Doc.Collection, w.Doc.ID})
			continue
		}
		d := store.CloneDoc(out[i])
		s.docs[docKey{d.Collection, d.ID}] = &d
	}
	return out, nil
}

// GetDoc returns one document.
func (s *Store) GetDoc(ctx context.Context, collection, id string) (store.Doc, error) {
	if err := store.ValidateCollection("collection", collection); err != nil {
		return store.Doc{}, err
	}
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return store.Doc{}, err
	}
	d := s.docs[docKey{collection, id}]
	if d == nil {
		return store.Doc{}, fmt.Errorf("%w: document %s/%s", store.ErrNotFound, collection, id)
	}
	return store.CloneDoc(*d), nil
}

// ListDocs returns the matching documents of a collection. It scans the collection.
func (s *Store) ListDocs(ctx context.Context, q store.DocQuery) ([]store.Doc, error) {
	if err := store.ValidateDocQuery(q); err != nil {
		return nil, err
	}
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var out []store.Doc
	for k, d := range s.docs {
		if k.collection == q.Collection && store.MatchDoc(q, d) {
			out = append(out, store.CloneDoc(*d))
		}
	}
	store.SortDocs(out, q.Desc)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

func (s *Store) replayDoc(o op) error {
	switch o.Type {
	case opDoc:
		if o.Doc == nil {
			return errors.New("document op without a document")
		}
		d := *o.Doc
		s.docs[docKey{d.Collection, d.ID}] = &d
	case opDocDelete:
		delete(s.docs, docKey{o.Name, o.ID})
	}
	return nil
}
