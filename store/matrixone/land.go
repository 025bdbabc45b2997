package matrixone

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/day1ai/day1/store"
)

var _ store.Lander = (*Store)(nil)

// landChunk is how many versions of a kind a landing reads and copies at a time.
const landChunk = 500

// Land implements store.Lander: it lands source on target, the branch it was forked
// from, when target has not changed since the fork, in one transaction. The versions
// the source wrote since its fork and still holds are copied into the target's tables
// by the server (INSERT ... SELECT), a chunk at a time, with the landing's revision and
// the source's vids: a copy is the same version, so it shares the source's embedding
// row (DeleteBranch then leaves the embeddings its parent holds). The target's
// versions they replace are closed; a tombstone of a record the target does not hold
// is not copied. Only the ids of a chunk and the merge record pass through the
// process, so a landing's memory does not follow the size of the branch.
func (s *Store) Land(ctx context.Context, source, target string, rec store.MergeRecord) (store.MergeRecord, error) {
	if err := store.ValidateBranchName("source", source); err != nil {
		return store.MergeRecord{}, err
	}
	if err := store.ValidateBranchName("target", target); err != nil {
		return store.MergeRecord{}, err
	}
	if err := s.usable(ctx); err != nil {
		return store.MergeRecord{}, err
	}
	in := rec
	err := s.write(ctx, "Land", writeSpec{branches: []string{source, target}, late: true}, func(w *writeTx) error {
		sb, err := w.lockedBranch(ctx, source)
		if err != nil {
			return err
		}
		tb, err := writableBranch(ctx, w, target)
		if err != nil {
			return err
		}
		if sb.info.Parent != target || source == target {
			return fmt.Errorf("%w: %q is not a branch of %q; merge it instead", store.ErrStale, source, target)
		}
		if int64(tb.info.Head) > sb.forkRev {
			return fmt.Errorf("%w: %q changed since %q was forked from it; merge instead", store.ErrStale, target, source)
		}
		rev, err := w.bump(ctx)
		if err != nil {
			return err
		}
		sourceRev := w.rev // the source is locked: what it holds was committed by then
		var merged []store.MergeItem
		for _, k := range store.AllKinds {
			items, err := s.landKind(ctx, w, k, sb, tb, rev)
			if err != nil {
				return err
			}
			merged = append(merged, items...)
		}
		if _, err := w.ExecContext(ctx, "UPDATE day1_branches SET head = ? WHERE name = ?", rev, target); err != nil {
			return err
		}
		rec = store.Landed(in, source, target, merged, w.now)
		body, err := json.Marshal(rec)
		if err != nil {
			return store.Invalid("rec", err.Error(), nil)
		}
		_, err = w.ExecContext(ctx, "INSERT INTO day1_merges (rev, id, source, target, created_at, body, source_rev) VALUES (?, ?, ?, ?, ?, ?, ?)",
			rev, rec.ID, rec.Source, rec.Target, micro(rec.CreatedAt), string(body), sourceRev)
		return err
	})
	if err != nil {
		return store.MergeRecord{}, err
	}
	return rec, nil
}

// landKind copies into the target's table of kind k the versions of the source's
// that the source wrote since its fork and still holds, a chunk at a time in vid
// order, closing the target's current versions of the same ids, and returns what it
// merged.
func (s *Store) landKind(ctx context.Context, w *writeTx, k store.Kind, sb, tb branchRow, rev int64) ([]store.MergeItem, error) {
	src, dst := table(k, sb.suffix), table(k, tb.suffix)
	cols := specs[k].allCols()
	sel := make([]string, len(cols))
	copy(sel, cols)
	sel[2], sel[3] = "?", "?" // rev, next_rev
	insert := "INSERT INTO " + dst + " (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(sel, ", ") + " FROM " + src + " WHERE vid IN ("
	var merged []store.MergeItem
	// A version written since the fork has a revision above it, so a vid of at least
	// (forkRev+1)<<vidShift: the reads start there, in the table's key order, rather
	// than at the inherited versions.
	after := (sb.forkRev+1)<<vidShift - 1
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunk, err := landRows(ctx, w, "SELECT vid, id, deleted FROM "+src+" WHERE rev > ? AND next_rev = ? AND vid > ? ORDER BY vid LIMIT ?",
			sb.forkRev, int64(never), after, landChunk)
		if err != nil || len(chunk) == 0 {
			return merged, err
		}
		after = chunk[len(chunk)-1].vid
		ids := make([]any, len(chunk))
		for i, r := range chunk {
			ids[i] = r.id
		}
		cur, err := landRows(ctx, w, "SELECT vid, id, deleted FROM "+dst+" WHERE next_rev = ? AND id IN ("+placeholders(len(ids))+")",
			append([]any{int64(never)}, ids...)...)
		if err != nil {
			return nil, err
		}
		held := make(map[string]landRow, len(cur))
		for _, r := range cur {
			held[r.id] = r
		}
		var copies, closes []any
		for _, r := range chunk {
			c, ok := held[r.id]
			if r.deleted && (!ok || c.deleted) {
				continue // deleted on both sides, or never on the target
			}
			if ok {
				closes = append(closes, c.vid)
			}
			copies = append(copies, r.vid)
			action := store.ActionAdopt
			if r.deleted {
				action = store.ActionDelete
			}
			merged = append(merged, store.MergeItem{Ref: store.Ref{Kind: k, ID: r.id}, Action: action})
		}
		if len(closes) > 0 {
			res, err := w.ExecContext(ctx, "UPDATE "+dst+" SET next_rev = ? WHERE next_rev = ? AND vid IN ("+placeholders(len(closes))+")",
				append([]any{rev, int64(never)}, closes...)...)
			if err != nil {
				return nil, err
			}
			if n, err := res.RowsAffected(); err == nil && n != int64(len(closes)) {
				return nil, fmt.Errorf("day1: matrixone: closed %d of %d current versions in %s", n, len(closes), dst)
			}
		}
		if len(copies) > 0 {
			if _, err := w.ExecContext(ctx, insert+placeholders(len(copies))+")", append([]any{rev, int64(never)}, copies...)...); err != nil {
				return nil, err
			}
			if w.added == nil {
				w.added = map[string]map[store.Kind]int{}
			}
			if w.added[tb.suffix] == nil {
				w.added[tb.suffix] = map[store.Kind]int{}
			}
			w.added[tb.suffix][k] += len(copies)
		}
	}
}

// landRow is what a landing reads of a version: its key, id and whether it is a
// tombstone.
type landRow struct {
	vid     int64
	id      string
	deleted bool
}

func landRows(ctx context.Context, q queryer, query string, args ...any) ([]landRow, error) {
	rs, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []landRow
	for rs.Next() {
		var r landRow
		if err := rs.Scan(&r.vid, &r.id, &r.deleted); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}
