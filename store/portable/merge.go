package portable

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/day1ai/day1/internal/ids"
	"github.com/day1ai/day1/internal/reccodec"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// mergeItem is a merge record as an item, with the merge point it made (nil for a
// cherry-pick or a plan without a source revision).
type mergeItem struct {
	Record store.MergeRecord `json:"record"`
	Point  *store.MergePoint `json:"point,omitempty"`
}

// mergeKey orders merge items by the commit that made them.
func mergeKey(seq int64, id string) string { return fmt.Sprintf("%020d/%s", seq, id) }

// merges returns the merge items the state sees, oldest first.
func (st *state) merges(ctx context.Context) ([]mergeItem, error) {
	if st.mergeLog == nil {
		return readMerges(ctx, st.r, "", nil)
	}
	return st.mergeLog.read(ctx, st.r, st.writer)
}

// readMerges appends to out the merge items of r after the key after, oldest first,
// with their keys.
func readMerges(ctx context.Context, r driver.Reader, after string, keys *[]string) ([]mergeItem, error) {
	var out []mergeItem
	err := r.Items(ctx, collMerge, after, func(id string, data []byte) error {
		var m mergeItem
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("%w: merge %q: %v", store.ErrCorrupt, id, err)
		}
		out = append(out, m)
		if keys != nil {
			*keys = append(*keys, id)
		}
		return nil
	})
	return out, err
}

// mergeLog keeps the merge items a store has read. They are written once and never
// removed, under keys that sort by the commit that wrote them (mergeKey), so the log
// reads only the items after the last key it holds, and a reader of an earlier
// commit takes those of the commits it sees.
type mergeLog struct {
	mu    sync.Mutex
	keys  []string
	items []mergeItem
}

// read returns the merge items r sees. A writer's reads may see what it wrote and
// has not committed yet: the log keeps none of that.
func (l *mergeLog) read(ctx context.Context, r driver.Reader, writer bool) ([]mergeItem, error) {
	l.mu.Lock()
	last := ""
	if n := len(l.keys); n > 0 {
		last = l.keys[n-1]
	}
	keys, items := l.keys, l.items
	l.mu.Unlock()
	var newKeys []string
	more, err := readMerges(ctx, r, last, &newKeys)
	if err != nil {
		return nil, err
	}
	head := mergeKey(r.Head().Seq+1, "")
	if !writer && len(more) > 0 {
		l.mu.Lock()
		if len(l.keys) == len(keys) { // nobody added any meanwhile
			for i, k := range newKeys {
				if k < head {
					l.keys, l.items = append(l.keys, k), append(l.items, more[i])
				}
			}
		}
		l.mu.Unlock()
	}
	// The items of commits after r's head, which another reader added, are not r's.
	n := sort.SearchStrings(keys, head)
	return append(items[:n:n], more...), nil
}

// history returns the forks and merge points of the branches: where diffs start.
func (st *state) history(ctx context.Context) (*store.History, error) {
	h := &store.History{}
	bs := make([]*branch, 0, len(st.byID))
	for _, b := range st.byID {
		bs = append(bs, b)
	}
	slices.SortFunc(bs, func(a, b *branch) int { return int(a.id - b.id) })
	for _, b := range bs {
		if b.parent != nil {
			h.AddBranch(b.info.Name, b.parent.info.Name, uint64(b.forkSeq))
		}
	}
	ms, err := st.merges(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.Point != nil && st.byName[m.Point.Source] != nil && st.byName[m.Point.Target] != nil {
			h.AddMerge(*m.Point)
		}
	}
	return h, nil
}

// same reports whether two records, either nil for none, hold equivalent content with
// equal embeddings.
func same(a, b store.Record) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return store.Equivalent(a, b) && slices.Equal(store.EmbeddingOf(a), store.EmbeddingOf(b))
}

// Diff lists what changed on each side since the merge base. It reads the records
// the branches of either side wrote since the base: its cost follows the changes.
func (s *Store) Diff(ctx context.Context, source, target string) (*store.Diff, error) {
	return s.listDiff(ctx, source, target, false)
}

// DiffLean is Diff without the embeddings of facts and observations (see
// store.LeanDiffer): a diff of many records then holds no vectors, and ApplyMerge finds
// them again a chunk at a time.
func (s *Store) DiffLean(ctx context.Context, source, target string) (*store.Diff, error) {
	return s.listDiff(ctx, source, target, true)
}

var _ store.LeanDiffer = (*Store)(nil)

func (s *Store) listDiff(ctx context.Context, source, target string, lean bool) (*store.Diff, error) {
	var d *store.Diff
	err := s.read(ctx, func(st *state) error {
		var err error
		d, err = st.diff(ctx, &s.ix, source, target, lean)
		return err
	})
	return d, err
}

// diff lists the changes of source and target; lean leaves their embeddings out.
func (st *state) diff(ctx context.Context, ix *index, source, target string, lean bool) (*store.Diff, error) {
	if err := store.ValidateBranchName("source", source); err != nil {
		return nil, err
	}
	if err := store.ValidateBranchName("target", target); err != nil {
		return nil, err
	}
	sb, err := st.branch(source)
	if err != nil {
		return nil, err
	}
	tb, err := st.branch(target)
	if err != nil {
		return nil, err
	}
	hist, err := st.history(ctx)
	if err != nil {
		return nil, err
	}
	head := st.r.Head().Seq
	base := hist.MergeBase(store.BranchRev{Branch: source, Rev: uint64(head)}, store.BranchRev{Branch: target, Rev: uint64(head)})
	d := &store.Diff{Source: source, Target: target, TargetHead: tb.info.Head, SourceRev: uint64(head)}
	if len(base.Points) > 0 {
		p := base.Points[0]
		d.Base = p.Branch
		if b := st.byName[p.Branch]; p.Rev == 0 && b != nil {
			d.BaseAt = b.info.CreatedAt
		} else if c, err := st.r.CommitOf(ctx, int64(p.Rev)); err != nil {
			return nil, err
		} else {
			d.BaseAt = c.At
		}
	}
	sv, tv := st.head(sb), st.head(tb)
	// The views of every point of the base, criss-cross bases below it included, and
	// the records on which either side may differ from one of them: those that a branch
	// of one of the two chains wrote between the commits the two views read it at.
	bviews := map[store.BranchRev]view{}
	for b := base; b != nil; b = b.Below {
		for _, p := range b.Points {
			if pb, ok := st.byName[p.Branch]; ok {
				bviews[p] = st.chainOf(pb, int64(p.Rev))
			}
		}
	}
	if err := ix.catchUp(ctx, st.r, st, true, false); err != nil {
		return nil, err
	}
	ix.mu.RLock()
	keys := map[store.Ref]bool{}
	if len(bviews) == 0 {
		ix.changed(keys, sv, view{})
		ix.changed(keys, tv, view{})
	}
	for _, bv := range bviews {
		ix.changed(keys, sv, bv)
		ix.changed(keys, tv, bv)
	}
	ix.mu.RUnlock()
	sorted := make([]store.Ref, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, func(a, b store.Ref) int {
		if c := slices.Index(store.Kinds, a.Kind) - slices.Index(store.Kinds, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for lo := 0; lo < len(sorted); lo += mergeChunk {
		refs := sorted[lo:min(lo+mergeChunk, len(sorted))]
		ns, nt, nc := len(d.SourceChanges), len(d.TargetChanges), len(d.Conflicts)
		bases := make(map[store.BranchRev][]store.Record, len(bviews))
		for p, bv := range bviews {
			if bases[p], err = bv.borrowMany(ctx, ix, refs); err != nil {
				return nil, err
			}
		}
		afters, err := sv.borrowMany(ctx, ix, refs)
		if err != nil {
			return nil, err
		}
		theirss, err := tv.borrowMany(ctx, ix, refs)
		if err != nil {
			return nil, err
		}
		for i, ref := range refs {
			var before store.Record
			if len(base.Points) > 0 {
				before = store.ResolveBase(base, func(p store.BranchRev) store.Record {
					if got := bases[p]; got != nil {
						return got[i]
					}
					return nil
				}, same)
			}
			addChange(d, ref, before, afters[i], theirss[i])
		}
		// Compared whole above; the changes own their records from here on, without
		// the vectors when lean.
		ownFrom(d, ns, nt, nc, borrows(len(refs)), lean)
	}
	d.Conflicts = append(d.Conflicts, store.SupersedeConflicts(d)...)
	return d, nil
}

// ownFrom makes the records of the changes and conflicts of d from the given
// positions on d's own, cloning them when they were borrowed from the record cache
// (view.borrowMany) and dropping their embeddings when lean.
func ownFrom(d *store.Diff, source, target, conflicts int, borrowed, lean bool) {
	own := func(c *store.Change) {
		for _, r := range []*store.Record{&c.Before, &c.After} {
			if *r == nil {
				continue
			}
			if lean && len(store.EmbeddingOf(*r)) > 0 {
				*r = store.WithEmbedding(*r, nil)
			}
			if borrowed {
				*r = store.Clone(*r)
			}
		}
	}
	for i := range d.SourceChanges[source:] {
		own(&d.SourceChanges[source+i])
	}
	for i := range d.TargetChanges[target:] {
		own(&d.TargetChanges[target+i])
	}
	for i := range d.Conflicts[conflicts:] {
		own(&d.Conflicts[conflicts+i].Source)
		own(&d.Conflicts[conflicts+i].Target)
	}
}

// addChange adds to d what differs of one record between the base (before), the
// source (after) and the target (theirs). A change both sides made alike is none.
func addChange(d *store.Diff, ref store.Ref, before, after, theirs store.Record) {
	if same(after, theirs) {
		return
	}
	onSource, onTarget := !same(after, before), !same(theirs, before)
	if onSource && onTarget && after != nil && theirs != nil && store.Agree(after, theirs) {
		return
	}
	var sc, tc store.Change
	if onSource {
		sc, onSource = store.ChangeOf(ref, before, after)
	}
	if onTarget {
		tc, onTarget = store.ChangeOf(ref, before, theirs)
	}
	d.AddChanges(sc, onSource, tc, onTarget)
}

// ApplyMerge applies a merge plan atomically and records it.
func (s *Store) ApplyMerge(ctx context.Context, plan store.MergePlan) (store.MergeRecord, error) {
	if err := store.ValidateMergePlan(plan); err != nil {
		return store.MergeRecord{}, err
	}
	var rec store.MergeRecord
	err := s.update(ctx, func(st *state, w driver.Writer) error {
		sb, err := st.branch(plan.Source)
		if err != nil {
			return err
		}
		tb, err := st.writable(plan.Target)
		if err != nil {
			return err
		}
		if tb.info.Head != plan.ExpectHead {
			return fmt.Errorf("%w: %q moved from head %d to %d", store.ErrStale, plan.Target, plan.ExpectHead, tb.info.Head)
		}
		dims, err := s.dims(ctx, st)
		if err != nil {
			return err
		}
		now := w.Pending().At
		head := st.head(tb)
		src := st.head(sb)
		planned := src
		if plan.SourceRev > 0 && int64(plan.SourceRev) <= w.Head().Seq {
			planned = st.chainOf(sb, int64(plan.SourceRev))
		}
		// The records the plan puts and deletes are read a chunk at a time through the
		// index, and each chunk's rows are written before the next is read.
		if err := s.ix.catchUp(ctx, w, st, true, false); err != nil {
			return err
		}
		wrote := false
		for lo := 0; lo < len(plan.Puts); lo += mergeChunk {
			puts := plan.Puts[lo:min(lo+mergeChunk, len(plan.Puts))]
			recs := make([]store.Record, len(puts))
			refs := make([]store.Ref, len(puts))
			var lean []int // the puts without the embedding their kind carries
			for i, in := range puts {
				recs[i] = store.WithBranch(store.WithDefaults(store.Clone(in), now), plan.Target)
				refs[i] = store.RefOf(recs[i])
				if hasEmbeddings(refs[i].Kind) && len(store.EmbeddingOf(recs[i])) == 0 {
					lean = append(lean, i)
				}
			}
			curs, err := head.borrowMany(ctx, &s.ix, refs)
			if err != nil {
				return err
			}
			if len(lean) > 0 {
				// A lean plan: the embedding of the source's or the target's version
				// with the same search text.
				if err := embedFrom(ctx, &s.ix, recs, curs, lean, planned, src); err != nil {
					return err
				}
			}
			var rows []driver.Row
			for i, r := range recs {
				if err := store.ValidateRecord(r, dims); err != nil {
					return store.AtIndex(err, "MergePlan.Puts", lo+i)
				}
				if cur := curs[i]; cur != nil && store.SameContentExceptEmbedding(cur, r) && slices.Equal(store.EmbeddingOf(cur), store.EmbeddingOf(r)) {
					continue
				}
				rows = append(rows, rowOf(r, tb.id))
			}
			if err := w.Put(ctx, rows...); err != nil {
				return err
			}
			wrote = wrote || len(rows) > 0
		}
		var dels []driver.Row
		s.ix.mu.RLock()
		for _, ref := range plan.Deletes {
			if _, ok := s.ix.find(head, ref); ok {
				dels = append(dels, driver.Row{Kind: ref.Kind, ID: ref.ID, Branch: tb.id, Deleted: true})
			}
		}
		s.ix.mu.RUnlock()
		if len(dels) > 0 {
			if err := w.Put(ctx, dels...); err != nil {
				return err
			}
			wrote = true
		}
		if wrote {
			if err := touch(ctx, w, tb); err != nil {
				return err
			}
		}
		if plan.MarkMerged {
			sb.info.Status, sb.info.MergedInto, sb.info.MergedAt = store.BranchMerged, plan.Target, now
			if _, err := putBranch(ctx, w, sb); err != nil {
				return err
			}
		}
		rec = plan.Record
		rec.Source, rec.Target = plan.Source, plan.Target
		if rec.ID == "" {
			rec.ID = ids.New()
		}
		if rec.CreatedAt.IsZero() {
			rec.CreatedAt = now
		}
		item := mergeItem{Record: rec}
		if plan.SourceRev > 0 && rec.Strategy != store.CherryPick {
			item.Point = &store.MergePoint{Target: plan.Target, At: uint64(w.Pending().Seq), Source: plan.Source, SourceAt: plan.SourceRev}
		}
		data, err := json.Marshal(item)
		if err != nil {
			return err
		}
		return w.PutItem(ctx, collMerge, mergeKey(w.Pending().Seq, rec.ID), data)
	})
	return rec, err
}

var _ store.Lander = (*Store)(nil)

// Land lands source on target, its parent, when target has not changed since the
// fork (see store.Lander): the source's live rows, a chunk at a time, are written to
// the target in one commit, with rec as a merge record and a merge point.
func (s *Store) Land(ctx context.Context, source, target string, rec store.MergeRecord) (store.MergeRecord, error) {
	if err := store.ValidateBranchName("source", source); err != nil {
		return store.MergeRecord{}, err
	}
	if err := store.ValidateBranchName("target", target); err != nil {
		return store.MergeRecord{}, err
	}
	var landed store.MergeRecord
	err := s.update(ctx, func(st *state, w driver.Writer) error {
		sb, err := st.branch(source)
		if err != nil {
			return err
		}
		tb, err := st.writable(target)
		if err != nil {
			return err
		}
		if sb.parent != tb {
			return fmt.Errorf("%w: %q is not a branch of %q; merge it instead", store.ErrStale, source, target)
		}
		if err := s.ix.catchUp(ctx, w, st, true, false); err != nil {
			return err
		}
		s.ix.mu.RLock()
		var ps []int32
		// The target's rows are in commit order: its last says whether it moved.
		moved := false
		if own := s.ix.byBranch[tb.id]; own != nil && own.len() > 0 {
			moved = s.ix.rows.at(*own.at(int32(own.len() - 1))).seq > sb.forkSeq
		}
		if rows := s.ix.byBranch[sb.id]; rows != nil {
			for _, part := range [2][]int32{rows.base, rows.tail} {
				for _, p := range part {
					if m := s.ix.rows.at(p); m.until == driver.Never && !m.dead() {
						ps = append(ps, p)
					}
				}
			}
		}
		s.ix.mu.RUnlock()
		if moved {
			return fmt.Errorf("%w: %q changed since %q was forked from it; merge instead", store.ErrStale, target, source)
		}
		head := st.head(tb)
		wrote := false
		var merged []store.MergeItem // what the record lists, as a merge's does
		for lo := 0; lo < len(ps); lo += mergeChunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			chunk := ps[lo:min(lo+mergeChunk, len(ps))]
			rids := make([]int64, len(chunk))
			s.ix.mu.RLock()
			for i, p := range chunk {
				rids[i] = s.ix.rows.at(p).rid
			}
			s.ix.mu.RUnlock()
			var rows []driver.Row
			err := w.Fetch(ctx, rids, func(row driver.Row) error {
				if row.Deleted {
					ref := store.Ref{Kind: row.Kind, ID: row.ID}
					s.ix.mu.RLock()
					_, seen := s.ix.find(head, ref)
					s.ix.mu.RUnlock()
					if seen {
						rows = append(rows, driver.Row{Kind: row.Kind, ID: row.ID, Branch: tb.id, Deleted: true})
						merged = append(merged, store.MergeItem{Ref: ref, Action: store.ActionDelete})
					}
					return nil
				}
				r, err := reccodec.Join(row.Kind, row.Data, row.Vector)
				if err != nil {
					return fmt.Errorf("%w: %s %q: %v", store.ErrCorrupt, row.Kind, row.ID, err)
				}
				rows = append(rows, rowOf(store.WithBranch(r, target), tb.id))
				merged = append(merged, store.MergeItem{Ref: store.RefOf(r), Action: store.ActionAdopt})
				return nil
			})
			if err != nil {
				return err
			}
			if err := w.Put(ctx, rows...); err != nil {
				return err
			}
			wrote = wrote || len(rows) > 0
		}
		if wrote {
			if err := touch(ctx, w, tb); err != nil {
				return err
			}
		}
		landed = store.Landed(rec, source, target, merged, w.Pending().At)
		item := mergeItem{Record: landed, Point: &store.MergePoint{Target: target, At: uint64(w.Pending().Seq), Source: source, SourceAt: uint64(w.Head().Seq)}}
		data, err := json.Marshal(item)
		if err != nil {
			return err
		}
		return w.PutItem(ctx, collMerge, mergeKey(w.Pending().Seq, landed.ID), data)
	})
	return landed, err
}

// hasEmbeddings reports whether records of a kind carry embeddings.
func hasEmbeddings(k store.Kind) bool {
	return k == store.KindFact || k == store.KindObservation || k == store.KindMessage
}

// embedFrom gives each record of recs at the positions lean the embedding of the
// first version of it with the same search text and an embedding: in the views'
// order, then curs (the target's versions).
func embedFrom(ctx context.Context, ix *index, recs, curs []store.Record, lean []int, views ...view) error {
	refs := make([]store.Ref, len(lean))
	for j, i := range lean {
		refs[j] = store.RefOf(recs[i])
	}
	found := make([][]store.Record, 0, len(views)+1)
	for _, v := range views {
		got, err := v.borrowMany(ctx, ix, refs)
		if err != nil {
			return err
		}
		found = append(found, got)
	}
	for j, i := range lean {
		text := store.SearchText(recs[i])
		for k := 0; k <= len(found); k++ {
			x := curs[i]
			if k < len(found) {
				x = found[k][j]
			}
			if x != nil && len(store.EmbeddingOf(x)) > 0 && store.SearchText(x) == text {
				recs[i] = store.WithEmbedding(recs[i], store.EmbeddingOf(x))
				break
			}
		}
	}
	return nil
}

// mergeChunk is how many of a merge plan's records are read and written at a time.
const mergeChunk = 1000

// ListMerges returns merge records, newest first.
func (s *Store) ListMerges(ctx context.Context, f store.MergeFilter) ([]store.MergeRecord, error) {
	if err := store.ValidateMergeFilter(f); err != nil {
		return nil, err
	}
	var out []store.MergeRecord
	err := s.read(ctx, func(st *state) error {
		ms, err := st.merges(ctx)
		if err != nil {
			return err
		}
		for i := len(ms) - 1; i >= 0; i-- {
			m := ms[i].Record
			if f.Source != "" && m.Source != f.Source || f.Target != "" && m.Target != f.Target ||
				f.Branch != "" && m.Source != f.Branch && m.Target != f.Branch {
				continue
			}
			// The log's records are shared by every read: the caller gets copies.
			m.Merged, m.Rejected = slices.Clone(m.Merged), slices.Clone(m.Rejected)
			m.Resolutions, m.Meta = slices.Clone(m.Resolutions), maps.Clone(m.Meta)
			out = append(out, m)
			if f.Limit > 0 && len(out) == f.Limit {
				break
			}
		}
		return nil
	})
	return out, err
}
