package matrixone

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/day1ai/day1/store"
)

const docCols = "collection, id, version, data, doc_keys, created_at, updated_at"

// WriteDocs applies document writes in one transaction under the store's commit lock,
// so preconditions are checked against the latest committed versions.
func (s *Store) WriteDocs(ctx context.Context, ws []store.DocWrite) ([]store.Doc, error) {
	if err := store.ValidateDocWrites(ws); err != nil {
		return nil, err
	}
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	out := make([]store.Doc, len(ws))
	err := s.write(ctx, "WriteDocs", writeSpec{}, func(w *writeTx) error {
		for i, dw := range ws {
			have, err := getDoc(ctx, w, dw.Doc.Collection, dw.Doc.ID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if err := store.CheckDocCond(dw, have); err != nil {
				return err
			}
			if dw.Cond == store.DocDelete {
				out[i] = *have
				if _, err := w.ExecContext(ctx, "DELETE FROM day1_docs WHERE collection = ? AND id = ?", dw.Doc.Collection, dw.Doc.ID); err != nil {
					return err
				}
				if err := deleteDocKeys(ctx, w, *have); err != nil {
					return err
				}
				continue
			}
			d := store.NextDoc(dw, have, w.now)
			keys, err := json.Marshal(d.Keys)
			if err != nil {
				return store.Invalid(fmt.Sprintf("DocWrite[%d].Doc.Keys", i), err.Error(), nil)
			}
			if have == nil {
				_, err = w.ExecContext(ctx, "INSERT INTO day1_docs ("+docCols+") VALUES (?, ?, ?, ?, ?, ?, ?)",
					d.Collection, d.ID, d.Version, string(d.Data), string(keys), d.CreatedAt, d.UpdatedAt)
			} else {
				_, err = w.ExecContext(ctx, "UPDATE day1_docs SET version = ?, data = ?, doc_keys = ?, updated_at = ? WHERE collection = ? AND id = ?",
					d.Version, string(d.Data), string(keys), d.UpdatedAt, d.Collection, d.ID)
				if err == nil {
					err = deleteDocKeys(ctx, w, *have)
				}
			}
			if err != nil {
				return err
			}
			if err := insertDocKeys(ctx, w, d); err != nil {
				return err
			}
			out[i] = d
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// insertDocKeys writes a document's keys in one statement.
func insertDocKeys(ctx context.Context, q queryer, d store.Doc) error {
	if len(d.Keys) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("INSERT INTO day1_doc_keys (collection, k, v, id) VALUES ")
	args := make([]any, 0, 4*len(d.Keys))
	for k, v := range d.Keys {
		if len(args) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?)")
		args = append(args, d.Collection, k, v, d.ID)
	}
	_, err := q.ExecContext(ctx, b.String(), args...)
	return err
}

func deleteDocKeys(ctx context.Context, q queryer, d store.Doc) error {
	_, err := q.ExecContext(ctx, "DELETE FROM day1_doc_keys WHERE collection = ? AND id = ?", d.Collection, d.ID)
	return err
}

// getDoc reads one document; a missing one is store.ErrNotFound.
func getDoc(ctx context.Context, q queryer, collection, id string) (*store.Doc, error) {
	d, err := scanDoc(q.QueryRowContext(ctx, "SELECT "+docCols+" FROM day1_docs WHERE collection = ? AND id = ?", collection, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: document %s/%s", store.ErrNotFound, collection, id)
	}
	if err != nil {
		return nil, err
	}
	return &d, nil
}

func scanDoc(sc scanner) (store.Doc, error) {
	var d store.Doc
	var data, keys string
	if err := sc.Scan(&d.Collection, &d.ID, &d.Version, &data, &keys, &d.CreatedAt, &d.UpdatedAt); err != nil {
		return d, err
	}
	d.Data = json.RawMessage(data)
	if err := json.Unmarshal([]byte(keys), &d.Keys); err != nil {
		return d, fmt.Errorf("day1: matrixone: decoding the keys of document %s/%s: %w", d.Collection, d.ID, err)
	}
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, nil
}

// GetDoc returns one document or store.ErrNotFound.
func (s *Store) GetDoc(ctx context.Context, collection, id string) (store.Doc, error) {
	if err := store.ValidateCollection("collection", collection); err != nil {
		return store.Doc{}, err
	}
	if err := s.usable(ctx); err != nil {
		return store.Doc{}, err
	}
	return retryIdempotent(ctx, s, "GetDoc", func() (store.Doc, error) {
		d, err := getDoc(ctx, s.db, collection, id)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return store.Doc{}, err
			}
			return store.Doc{}, wrap(ctx, "GetDoc", err)
		}
		return *d, nil
	})
}

// ListDocs returns the matching documents of a collection; Where and IDPrefix are
// filtered in SQL through day1_doc_keys.
func (s *Store) ListDocs(ctx context.Context, q store.DocQuery) ([]store.Doc, error) {
	if err := store.ValidateDocQuery(q); err != nil {
		return nil, err
	}
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("SELECT " + docCols + " FROM day1_docs WHERE collection = ?")
	args := []any{q.Collection}
	if q.IDPrefix != "" {
		// INSTR rather than LIKE: ids may hold the LIKE wildcard _.
		b.WriteString(" AND INSTR(id, ?) = 1")
		args = append(args, q.IDPrefix)
	}
	for k, v := range q.Where {
		b.WriteString(" AND id IN (SELECT id FROM day1_doc_keys WHERE collection = ? AND k = ? AND v = ?)")
		args = append(args, q.Collection, k, v)
	}
	if q.Desc {
		b.WriteString(" ORDER BY created_at DESC, id DESC")
	} else {
		b.WriteString(" ORDER BY created_at, id")
	}
	if q.Limit > 0 {
		fmt.Fprintf(&b, " LIMIT %d", q.Limit)
	}
	return retryIdempotent(ctx, s, "ListDocs", func() ([]store.Doc, error) {
		rows, err := s.db.QueryContext(ctx, b.String(), args...)
		if err != nil {
			return nil, wrap(ctx, "ListDocs", err)
		}
		defer rows.Close()
		var out []store.Doc
		for rows.Next() {
			d, err := scanDoc(rows)
			if err != nil {
				return nil, wrap(ctx, "ListDocs", err)
			}
			out = append(out, d)
		}
		if err := rows.Err(); err != nil {
			return nil, wrap(ctx, "ListDocs", err)
		}
		return out, nil
	})
}
