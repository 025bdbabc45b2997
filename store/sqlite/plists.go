package sqlite

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"github.com/day1ai/day1/store"
)

// Posting lists. From format 4 a version's postings are not a row each: each chunk
// a Put writes makes, for every term of its rows, one row of plists that packs the
// chunk's RIDs holding the term, each with how often it occurs there, keyed by the
// largest of them. A write then inserts a row per term of the chunk rather than a
// row per term of every version, and reading a term's postings reads a few packed
// lists rather than a row per posting. The terms of each version are kept with its
// body, so that deleting a branch finds the lists its rows are in. Files made before
// keep their older postings in the postings table, which reads still consult (its
// RIDs are all below those of plists) and deletions still clean.

// termKey names a posting list.
type termKey struct {
	kind store.Kind
	term string
}

// posting is one RID of a posting list.
type posting struct {
	rid int64
	tf  int
}

// encodePostings packs postings sorted by RID: each RID as its distance from the
// last (uvarint), then its tf (uvarint).
func encodePostings(ps []posting) []byte {
	b := make([]byte, 0, 3*len(ps))
	var last int64
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(p.rid-last))
		b = binary.AppendUvarint(b, uint64(p.tf))
		last = p.rid
	}
	return b
}

var errPostings = errors.New("malformed posting list")

// decodePostings calls fn with each posting of a packed list whose RID is above
// after.
func decodePostings(b []byte, after int64, fn func(rid int64, tf int) error) error {
	var rid int64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			return errPostings
		}
		tf, m := binary.Uvarint(b[n:])
		if m <= 0 {
			return errPostings
		}
		b = b[n+m:]
		rid += int64(d)
		if rid > after {
			if err := fn(rid, int(tf)); err != nil {
				return err
			}
		}
	}
	return nil
}

// joinTerms and splitTerms keep a version's terms with its body.
func joinTerms(terms []string) []byte {
	if len(terms) == 0 {
		return []byte{}
	}
	return []byte(strings.Join(terms, "\x00"))
}

func splitTerms(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// listArgs groups a chunk's postings by term and returns the values of their plists
// rows: kind, term, last RID, packed list.
func listArgs(ps map[termKey][]posting) []any {
	keys := make([]termKey, 0, len(ps))
	for k := range ps {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b termKey) int { return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.term, b.term)) })
	args := make([]any, 0, 4*len(keys))
	for _, k := range keys {
		list := ps[k]
		args = append(args, string(k.kind), k.term, list[len(list)-1].rid, encodePostings(list))
	}
	return args
}

// keptTerms reads the terms kept with the bodies of the rows that cond selects (rows
// r joined with bodies b; those written since format 4) and returns, by posting list,
// the RIDs of those rows it holds.
func (w *writer) keptTerms(ctx context.Context, cond string, args ...any) (map[termKey][]int64, error) {
	rows, err := w.q.QueryContext(ctx, "SELECT r.rid, r.kind, b.terms FROM rows r JOIN bodies b ON b.rid = r.rid WHERE "+cond+" AND b.terms IS NOT NULL", args...)
	if err != nil {
		return nil, w.d.fail(err)
	}
	defer rows.Close()
	gone := map[termKey][]int64{}
	for rows.Next() {
		var rid int64
		var kind string
		var terms []byte
		if err := rows.Scan(&rid, &kind, &terms); err != nil {
			return nil, w.d.fail(err)
		}
		for _, t := range splitTerms(terms) {
			k := termKey{store.Kind(kind), t}
			gone[k] = append(gone[k], rid)
		}
	}
	return gone, w.d.fail(rows.Err())
}

// dropPostings removes RIDs from the posting lists of plists: each list that holds
// one is written again without it, or deleted when nothing is left.
func (w *writer) dropPostings(ctx context.Context, gone map[termKey][]int64) error {
	for k, rids := range gone {
		slices.Sort(rids)
		rows, err := w.q.QueryContext(ctx, "SELECT last, data FROM plists WHERE kind = ? AND term = ? AND last >= ? ORDER BY last",
			string(k.kind), k.term, rids[0])
		if err != nil {
			return w.d.fail(err)
		}
		type list struct {
			last int64
			data []byte
		}
		var lists []list
		for rows.Next() {
			var l list
			if err := rows.Scan(&l.last, &l.data); err != nil {
				rows.Close()
				return w.d.fail(err)
			}
			lists = append(lists, l)
			if l.last >= rids[len(rids)-1] {
				break
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return w.d.fail(err)
		}
		for _, l := range lists {
			var kept []posting
			changed := false
			err := decodePostings(l.data, 0, func(rid int64, tf int) error {
				if _, found := slices.BinarySearch(rids, rid); found {
					changed = true
				} else {
					kept = append(kept, posting{rid, tf})
				}
				return nil
			})
			if err != nil {
				return w.d.corrupt(err)
			}
			switch {
			case !changed:
			case len(kept) == 0:
				if _, err := w.q.ExecContext(ctx, "DELETE FROM plists WHERE kind = ? AND term = ? AND last = ?", string(k.kind), k.term, l.last); err != nil {
					return w.d.fail(err)
				}
			default:
				if _, err := w.q.ExecContext(ctx, "UPDATE plists SET data = ? WHERE kind = ? AND term = ? AND last = ?", encodePostings(kept), string(k.kind), k.term, l.last); err != nil {
					return w.d.fail(err)
				}
			}
		}
	}
	return nil
}
