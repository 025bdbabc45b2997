// Package memdriver is a driver (package store/driver) that keeps everything in the
// process's memory: the portable store (package store/portable) over it is a memory
// with every rule of the store contract and nothing on disk, for tests and for
// programs whose memory lives as long as they do.
//
// Reads run side by side and never wait for a write to be made, only for one to be
// applied: an Update buffers what it writes, and its reads see the buffer over the
// committed state; when its function returns nil the buffer is applied at once, with
// reads held off for that moment only. Updates run one at a time, waiting for their
// turn within their context.
package memdriver

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// Driver is a driver.Driver in memory. The zero value is not usable: call New.
type Driver struct {
	// turn is held by the running Update: one at a time.
	turn chan struct{}
	// mu guards what follows: reads hold it shared, the apply of a commit alone.
	mu       sync.RWMutex
	closed   bool
	commits  []driver.Commit // commits[i].Seq == i+1
	rows     []*row          // by RID-1; nil once dropped
	versions map[rowKey][]int64
	ids      map[kindKey][]string // the IDs of a branch's rows of a kind, sorted
	postings map[termKey][]posting
	ended    []end // by until
	branches map[int64]driver.BranchRow
	lastBr   int64 // the largest branch ID given
	items    map[string]*collection
}

var (
	_ driver.Driver  = (*Driver)(nil)
	_ store.Durabler = (*Driver)(nil)
)

type row struct {
	driver.Row
	terms []string // Index.Terms, for the postings a deletion removes
}

type rowKey struct {
	branch int64
	kind   store.Kind
	id     string
}

type kindKey struct {
	branch int64
	kind   store.Kind
}

type termKey struct {
	kind store.Kind
	term string
}

type posting struct {
	rid int64
	tf  int
}

type end struct{ until, rid int64 }

type collection struct {
	data map[string][]byte
	keys []string // sorted
}

// New returns an empty driver.
func New() *Driver {
	return &Driver{
		turn:     make(chan struct{}, 1),
		versions: map[rowKey][]int64{},
		ids:      map[kindKey][]string{},
		postings: map[termKey][]posting{},
		branches: map[int64]driver.BranchRow{},
		items:    map[string]*collection{},
	}
}

// Durable reports that nothing the driver holds survives the process.
func (d *Driver) Durable() bool { return false }

// Close releases what the driver holds; later reads and writes fail with
// store.ErrClosed.
func (d *Driver) Close() error {
	d.turn <- struct{}{} // after the running Update, which reads without d.mu
	defer func() { <-d.turn }()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return store.ErrClosed
	}
	d.closed = true
	d.rows, d.versions, d.ids, d.postings, d.ended, d.branches, d.items = nil, nil, nil, nil, nil, nil, nil
	return nil
}

// Read calls fn with a reader of the latest commit; no commit is applied while fn
// runs.
func (d *Driver) Read(ctx context.Context, fn func(driver.Reader) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return store.ErrClosed
	}
	return fn(&reader{d: d, head: d.head()})
}

// Update calls fn with a writer once the Updates before it are done, and applies what
// fn wrote when it returns nil.
func (d *Driver) Update(ctx context.Context, fn func(driver.Writer) error) error {
	select {
	case d.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-d.turn }()
	if err := ctx.Err(); err != nil {
		return err
	}
	// The committed state changes only in the apply below, which this Update makes:
	// its reads of it need no lock, but for the closed flag.
	d.mu.RLock()
	closed, head := d.closed, d.head()
	d.mu.RUnlock()
	if closed {
		return store.ErrClosed
	}
	w := newWriter(d, head)
	if err := fn(w); err != nil {
		return err
	}
	if !w.dirty {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return store.ErrClosed
	}
	d.apply(w)
	return nil
}

func (d *Driver) head() driver.Commit {
	if len(d.commits) == 0 {
		return driver.Commit{}
	}
	return d.commits[len(d.commits)-1]
}

// nextRID is the RID the next row gets.
func (d *Driver) nextRID() int64 { return int64(len(d.rows)) + 1 }

// row returns the committed row of a RID, nil when there is none.
func (d *Driver) row(rid int64) *row {
	if rid < 1 || rid > int64(len(d.rows)) {
		return nil
	}
	return d.rows[rid-1]
}

// live returns the committed row of a record on a branch at commit at: the latest
// with Seq <= at, and whether it is live then.
func (d *Driver) live(k rowKey, at int64) (*row, bool) {
	vs := d.versions[k]
	for i := len(vs) - 1; i >= 0; i-- {
		if r := d.row(vs[i]); r != nil && r.Seq <= at {
			return r, r.Until > at
		}
	}
	return nil, false
}

// apply makes a writer's buffer the committed state. d.mu is held.
func (d *Driver) apply(w *writer) {
	seq := w.pending.Seq
	emptied := map[rowKey]bool{} // records whose every row this commit dropped
	// Deletions first: the rows of deleted branches and the dropped rows.
	for id := range w.deletedBr {
		for kk, ids := range d.ids {
			if kk.branch != id {
				continue
			}
			for _, rec := range ids {
				k := rowKey{id, kk.kind, rec}
				for _, rid := range slices.Clone(d.versions[k]) {
					d.drop(rid, emptied)
				}
				delete(d.versions, k)
			}
			delete(d.ids, kk)
		}
		delete(d.branches, id)
	}
	for rid := range w.dropped {
		d.drop(rid, emptied)
	}
	// Rows this commit ended.
	for rid := range w.ends {
		if r := d.row(rid); r != nil {
			r.Until = seq
			d.ended = append(d.ended, end{seq, rid})
		}
	}
	// New rows, in RID order.
	newIDs := map[kindKey][]string{}
	for _, r := range w.rows {
		d.rows = append(d.rows, r)
		if w.dropped[r.RID] || w.deletedBr[r.Branch] {
			d.drop(r.RID, emptied)
			continue
		}
		if r.Until != driver.Never {
			d.ended = append(d.ended, end{r.Until, r.RID})
		}
		k := rowKey{r.Branch, r.Kind, r.ID}
		kk := kindKey{r.Branch, r.Kind}
		if _, listed := slices.BinarySearch(d.ids[kk], r.ID); !listed {
			newIDs[kk] = append(newIDs[kk], r.ID)
		}
		d.versions[k] = append(d.versions[k], r.RID)
		for i, t := range r.terms {
			tk := termKey{r.Kind, t}
			d.postings[tk] = append(d.postings[tk], posting{r.RID, r.Index.Counts[i]})
		}
	}
	for kk, add := range newIDs {
		slices.Sort(add)
		d.ids[kk] = mergeSorted(d.ids[kk], slices.Compact(add))
	}
	// Records whose every row was dropped leave their ID lists.
	for k := range emptied {
		if len(d.versions[k]) > 0 {
			continue
		}
		delete(d.versions, k)
		kk := kindKey{k.branch, k.kind}
		if i, found := slices.BinarySearch(d.ids[kk], k.id); found {
			d.ids[kk] = slices.Delete(d.ids[kk], i, i+1)
		}
	}
	for id, b := range w.branches {
		d.branches[id] = b
		d.lastBr = max(d.lastBr, id)
	}
	for coll, m := range w.items {
		c := d.items[coll]
		if c == nil {
			c = &collection{data: map[string][]byte{}}
			d.items[coll] = c
		}
		var add []string
		for id, data := range m {
			_, had := c.data[id]
			switch {
			case data == nil && had:
				delete(c.data, id)
				i, _ := slices.BinarySearch(c.keys, id)
				c.keys = slices.Delete(c.keys, i, i+1)
			case data != nil:
				if !had {
					add = append(add, id)
				}
				c.data[id] = data
			}
		}
		slices.Sort(add)
		c.keys = mergeSorted(c.keys, add)
	}
	d.commits = append(d.commits, w.pending)
}

// drop removes a committed row: its postings and its place among its record's
// versions, noting in emptied a record left without any. The slot in d.rows stays,
// empty, so that RIDs are never given again.
func (d *Driver) drop(rid int64, emptied map[rowKey]bool) {
	r := d.row(rid)
	if r == nil {
		return
	}
	d.rows[rid-1] = nil
	for _, t := range r.terms {
		tk := termKey{r.Kind, t}
		ps := d.postings[tk]
		i, found := slices.BinarySearchFunc(ps, rid, func(p posting, rid int64) int { return cmp.Compare(p.rid, rid) })
		if found {
			ps = slices.Delete(ps, i, i+1)
		}
		if len(ps) == 0 {
			delete(d.postings, tk)
		} else {
			d.postings[tk] = ps
		}
	}
	k := rowKey{r.Branch, r.Kind, r.ID}
	d.versions[k] = slices.DeleteFunc(d.versions[k], func(v int64) bool { return v == rid })
	if len(d.versions[k]) == 0 {
		emptied[k] = true
	}
}

// mergeSorted merges two sorted lists of distinct strings, neither of which holds an
// element of the other, into a new list.
func mergeSorted(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] < b[j] {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// reader reads the committed state, d.mu held shared (or, for a writer, its turn).
type reader struct {
	d    *Driver
	head driver.Commit
}

// Head implements driver.Reader.
func (r *reader) Head() driver.Commit { return r.head }

// CommitAt implements driver.Reader.
func (r *reader) CommitAt(ctx context.Context, t time.Time) (driver.Commit, error) {
	cs := r.d.commits[:r.head.Seq]
	i := sort.Search(len(cs), func(i int) bool { return cs[i].At.After(t) })
	if i == 0 {
		return driver.Commit{}, ctx.Err()
	}
	return cs[i-1], ctx.Err()
}

// CommitOf implements driver.Reader.
func (r *reader) CommitOf(ctx context.Context, seq int64) (driver.Commit, error) {
	if seq < 1 || seq > r.head.Seq {
		return driver.Commit{}, ctx.Err()
	}
	return r.d.commits[seq-1], ctx.Err()
}

// Branches implements driver.Reader.
func (r *reader) Branches(ctx context.Context) ([]driver.BranchRow, error) {
	out := make([]driver.BranchRow, 0, len(r.d.branches))
	for _, b := range r.d.branches {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b driver.BranchRow) int { return cmp.Compare(a.ID, b.ID) })
	return out, ctx.Err()
}

// Row implements driver.Reader.
func (r *reader) Row(ctx context.Context, kind store.Kind, id string, branch, at int64) (driver.Row, bool, error) {
	if err := ctx.Err(); err != nil {
		return driver.Row{}, false, err
	}
	got, ok := r.d.live(rowKey{branch, kind, id}, at)
	if got == nil {
		return driver.Row{}, false, nil
	}
	return got.Row, ok, nil
}

// Rows implements driver.Reader.
func (r *reader) Rows(ctx context.Context, kind store.Kind, branch, at int64, fn func(driver.Row) error) error {
	for i, id := range r.d.ids[kindKey{branch, kind}] {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if got, ok := r.d.live(rowKey{branch, kind, id}, at); ok {
			if err := fn(got.Row); err != nil {
				return err
			}
		}
	}
	return nil
}

// Meta implements driver.Reader.
func (r *reader) Meta(ctx context.Context, after int64, fn func(driver.Meta) error) error {
	for rid := max(after, 0) + 1; rid <= int64(len(r.d.rows)); rid++ {
		if rid%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if got := r.d.row(rid); got != nil {
			if err := fn(metaOf(got)); err != nil {
				return err
			}
		}
	}
	return nil
}

func metaOf(r *row) driver.Meta {
	ix := r.Index
	return driver.Meta{
		RID: r.RID, Kind: r.Kind, ID: r.ID, Branch: r.Branch, Seq: r.Seq, Until: r.Until, Deleted: r.Deleted,
		TextKey: ix.TextKey, DocLen: ix.DocLen, Code: ix.Code, History: ix.History, Group: ix.Group,
		Order: ix.Order, Time: ix.Time, Expires: ix.Expires, Updated: ix.Updated,
	}
}

// Ended implements driver.Reader.
func (r *reader) Ended(ctx context.Context, after int64, fn func(rid, until int64) error) error {
	es := r.d.ended
	i := sort.Search(len(es), func(i int) bool { return es[i].until > after })
	for _, e := range es[i:] {
		if r.d.row(e.rid) == nil {
			continue
		}
		if err := fn(e.rid, e.until); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Postings implements driver.Reader.
func (r *reader) Postings(ctx context.Context, kind store.Kind, term string, after int64, fn func(rid int64, tf int) error) error {
	ps := r.d.postings[termKey{kind, term}]
	i := sort.Search(len(ps), func(i int) bool { return ps[i].rid > after })
	for _, p := range ps[i:] {
		if err := fn(p.rid, p.tf); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Fetch implements driver.Reader.
func (r *reader) Fetch(ctx context.Context, rids []int64, fn func(driver.Row) error) error {
	for _, rid := range rids {
		if got := r.d.row(rid); got != nil {
			if err := fn(got.Row); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// Item implements driver.Reader.
func (r *reader) Item(ctx context.Context, coll, id string) ([]byte, bool, error) {
	if c := r.d.items[coll]; c != nil {
		if data, ok := c.data[id]; ok {
			return slices.Clone(data), true, ctx.Err()
		}
	}
	return nil, false, ctx.Err()
}

// Items implements driver.Reader.
func (r *reader) Items(ctx context.Context, coll, after string, fn func(id string, data []byte) error) error {
	c := r.d.items[coll]
	if c == nil {
		return ctx.Err()
	}
	i, _ := slices.BinarySearch(c.keys, after)
	for _, id := range c.keys[i:] {
		if id == after {
			continue
		}
		if err := fn(id, c.data[id]); err != nil {
			return err
		}
	}
	return ctx.Err()
}
