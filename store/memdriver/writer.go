package memdriver

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// writer buffers one commit over the committed state, which its reads see through
// the buffer.
type writer struct {
	reader
	pending driver.Commit
	dirty   bool
	// rows are the new rows, by RID from first; latest is the newest of each record.
	first  int64
	rows   []*row
	latest map[rowKey]*row
	added  map[kindKey][]string // records with a new row and no committed one
	posts  map[termKey][]posting
	// ends are the committed rows this commit ends; dropped the rows it deletes.
	ends      map[int64]bool
	dropped   map[int64]bool
	deletedBr map[int64]bool
	branches  map[int64]driver.BranchRow
	lastBr    int64
	items     map[string]map[string][]byte // nil: deleted
}

var _ driver.Writer = (*writer)(nil)

func newWriter(d *Driver, head driver.Commit) *writer {
	return &writer{
		reader:    reader{d: d, head: head},
		pending:   driver.Commit{Seq: head.Seq + 1, At: driver.After(head.At, time.Now())},
		first:     d.nextRID(),
		latest:    map[rowKey]*row{},
		added:     map[kindKey][]string{},
		posts:     map[termKey][]posting{},
		ends:      map[int64]bool{},
		dropped:   map[int64]bool{},
		deletedBr: map[int64]bool{},
		branches:  map[int64]driver.BranchRow{},
		lastBr:    d.lastBr,
		items:     map[string]map[string][]byte{},
	}
}

// Pending implements driver.Writer.
func (w *writer) Pending() driver.Commit { return w.pending }

// SetInstant implements driver.Writer.
func (w *writer) SetInstant(t time.Time) driver.Commit {
	w.pending.At = driver.After(w.head.At, t)
	return w.pending
}

// Head of a writer is the pending commit once something is written, so that its
// reads see its own writes.
func (w *writer) Head() driver.Commit {
	if w.dirty {
		return w.pending
	}
	return w.head
}

// CommitAt implements driver.Reader: the pending commit counts once written.
func (w *writer) CommitAt(ctx context.Context, t time.Time) (driver.Commit, error) {
	if w.dirty && !w.pending.At.After(t) {
		return w.pending, ctx.Err()
	}
	return w.reader.CommitAt(ctx, t)
}

// CommitOf implements driver.Reader: the pending commit counts once written.
func (w *writer) CommitOf(ctx context.Context, seq int64) (driver.Commit, error) {
	if w.dirty && seq == w.pending.Seq {
		return w.pending, ctx.Err()
	}
	return w.reader.CommitOf(ctx, seq)
}

// gone reports whether a committed row is deleted by this commit.
func (w *writer) gone(r *row) bool { return w.dropped[r.RID] || w.deletedBr[r.Branch] }

// view returns a row as this commit leaves it: ended, when it ends it.
func (w *writer) view(r *row) driver.Row {
	out := r.Row
	if w.ends[r.RID] {
		out.Until = w.pending.Seq
	}
	return out
}

// rowAt returns the row, new or committed, of RID rid that this commit keeps.
func (w *writer) rowAt(rid int64) (*row, bool) {
	var r *row
	if rid >= w.first {
		if i := rid - w.first; i < int64(len(w.rows)) {
			r = w.rows[i]
		}
	} else {
		r = w.d.row(rid)
	}
	if r == nil || w.gone(r) {
		return nil, false
	}
	return r, true
}

// live is Driver.live through the buffer.
func (w *writer) live(k rowKey, at int64) (driver.Row, bool, bool) {
	if w.deletedBr[k.branch] {
		return driver.Row{}, false, false
	}
	if at >= w.pending.Seq {
		if r := w.latest[k]; r != nil && !w.dropped[r.RID] {
			return r.Row, true, true
		}
	}
	vs := w.d.versions[k]
	for i := len(vs) - 1; i >= 0; i-- {
		r := w.d.row(vs[i])
		if r == nil || w.dropped[r.RID] || r.Seq > at {
			continue
		}
		v := w.view(r)
		return v, true, v.Until > at
	}
	return driver.Row{}, false, false
}

// Branches implements driver.Reader.
func (w *writer) Branches(ctx context.Context) ([]driver.BranchRow, error) {
	base, err := w.reader.Branches(ctx)
	if err != nil {
		return nil, err
	}
	out := base[:0]
	for _, b := range base {
		if !w.deletedBr[b.ID] {
			if nb, ok := w.branches[b.ID]; ok {
				b = nb
			}
			out = append(out, b)
		}
	}
	for id, b := range w.branches {
		if _, ok := w.d.branches[id]; !ok {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b driver.BranchRow) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// Row implements driver.Reader.
func (w *writer) Row(ctx context.Context, kind store.Kind, id string, branch, at int64) (driver.Row, bool, error) {
	if err := ctx.Err(); err != nil {
		return driver.Row{}, false, err
	}
	r, found, ok := w.live(rowKey{branch, kind, id}, at)
	if !found {
		return driver.Row{}, false, nil
	}
	return r, ok, nil
}

// Rows implements driver.Reader.
func (w *writer) Rows(ctx context.Context, kind store.Kind, branch, at int64, fn func(driver.Row) error) error {
	kk := kindKey{branch, kind}
	added := slices.Sorted(slices.Values(w.added[kk]))
	for i, id := range mergeSorted(w.d.ids[kk], added) {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if r, _, ok := w.live(rowKey{branch, kind, id}, at); ok {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// Postings implements driver.Reader.
func (w *writer) Postings(ctx context.Context, kind store.Kind, term string, after int64, fn func(rid int64, tf int) error) error {
	deletes := len(w.dropped) > 0 || len(w.deletedBr) > 0
	err := w.reader.Postings(ctx, kind, term, after, func(rid int64, tf int) error {
		if deletes {
			if _, ok := w.rowAt(rid); !ok {
				return nil
			}
		}
		return fn(rid, tf)
	})
	if err != nil {
		return err
	}
	for _, p := range w.posts[termKey{kind, term}] {
		if p.rid <= after {
			continue
		}
		if _, ok := w.rowAt(p.rid); ok {
			if err := fn(p.rid, p.tf); err != nil {
				return err
			}
		}
	}
	return nil
}

// Fetch implements driver.Reader.
func (w *writer) Fetch(ctx context.Context, rids []int64, fn func(driver.Row) error) error {
	for _, rid := range rids {
		if r, ok := w.rowAt(rid); ok {
			if err := fn(w.view(r)); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// Item implements driver.Reader.
func (w *writer) Item(ctx context.Context, coll, id string) ([]byte, bool, error) {
	if data, ok := w.items[coll][id]; ok {
		if data == nil {
			return nil, false, ctx.Err()
		}
		return slices.Clone(data), true, ctx.Err()
	}
	return w.reader.Item(ctx, coll, id)
}

// Items implements driver.Reader.
func (w *writer) Items(ctx context.Context, coll, after string, fn func(id string, data []byte) error) error {
	over := w.items[coll]
	if len(over) == 0 {
		return w.reader.Items(ctx, coll, after, fn)
	}
	var keys []string
	if c := w.d.items[coll]; c != nil {
		keys = c.keys
	}
	var add []string
	for id := range over {
		if c := w.d.items[coll]; c == nil {
			add = append(add, id)
		} else if _, had := c.data[id]; !had {
			add = append(add, id)
		}
	}
	slices.Sort(add)
	for _, id := range mergeSorted(keys, add) {
		if id <= after {
			continue
		}
		data, ok := over[id]
		if !ok {
			data = w.d.items[coll].data[id]
		}
		if data == nil {
			continue
		}
		if err := fn(id, data); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Put implements driver.Writer.
func (w *writer) Put(ctx context.Context, rows ...driver.Row) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// A row given twice in one call keeps only its last version: the earlier one
	// would end at once, and no read could see it.
	last := make(map[rowKey]int, len(rows))
	for i, r := range rows {
		last[rowKey{r.Branch, r.Kind, r.ID}] = i
	}
	seq := w.pending.Seq
	for i, in := range rows {
		k := rowKey{in.Branch, in.Kind, in.ID}
		if last[k] != i {
			continue
		}
		if p := w.latest[k]; p != nil {
			p.Until = seq
		} else if vs := w.d.versions[k]; len(vs) > 0 {
			if r := w.d.row(vs[len(vs)-1]); r != nil && r.Until == driver.Never {
				w.ends[r.RID] = true
			}
		} else {
			kk := kindKey{in.Branch, in.Kind}
			w.added[kk] = append(w.added[kk], in.ID)
		}
		r := &row{Row: in, terms: slices.Clone(in.Index.Terms)}
		r.RID = w.first + int64(len(w.rows))
		r.Seq, r.Until = seq, driver.Never
		r.Data, r.Vector = slices.Clone(in.Data), slices.Clone(in.Vector)
		r.Index.Counts, r.Index.Code = slices.Clone(in.Index.Counts), slices.Clone(in.Index.Code)
		r.Index.Terms = r.terms
		w.rows = append(w.rows, r)
		w.latest[k] = r
		for j, t := range r.terms {
			tk := termKey{r.Kind, t}
			w.posts[tk] = append(w.posts[tk], posting{r.RID, r.Index.Counts[j]})
		}
	}
	w.dirty = true
	return nil
}

// Drop implements driver.Writer.
func (w *writer) Drop(ctx context.Context, rows ...driver.Row) error {
	for _, r := range rows {
		w.dropped[r.RID] = true
	}
	w.dirty = true
	return ctx.Err()
}

// PutBranch implements driver.Writer.
func (w *writer) PutBranch(ctx context.Context, b driver.BranchRow) (int64, error) {
	if b.ID == 0 {
		w.lastBr++
		b.ID = w.lastBr
	} else if w.deletedBr[b.ID] {
		return b.ID, ctx.Err() // as an update of a row no longer there
	}
	b.Data = slices.Clone(b.Data)
	w.branches[b.ID] = b
	w.dirty = true
	return b.ID, ctx.Err()
}

// DeleteBranch implements driver.Writer.
func (w *writer) DeleteBranch(ctx context.Context, id int64) error {
	delete(w.branches, id)
	w.deletedBr[id] = true
	w.dirty = true
	return ctx.Err()
}

// PutItem implements driver.Writer.
func (w *writer) PutItem(ctx context.Context, coll, id string, data []byte) error {
	m := w.items[coll]
	if m == nil {
		m = map[string][]byte{}
		w.items[coll] = m
	}
	m[id] = append([]byte{}, data...) // never nil: nil marks a deletion
	w.dirty = true
	return ctx.Err()
}

// DeleteItem implements driver.Writer.
func (w *writer) DeleteItem(ctx context.Context, coll, id string) error {
	m := w.items[coll]
	if m == nil {
		m = map[string][]byte{}
		w.items[coll] = m
	}
	m[id] = nil
	w.dirty = true
	return ctx.Err()
}
