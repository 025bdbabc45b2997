package memstore

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/day1ai/day1/internal/ids"
	"github.com/day1ai/day1/store"
)

// Diff lists what changed on each side since the merge base. It visits only the
// versions written since the base, so its cost follows the number of changes.
func (s *Store) Diff(ctx context.Context, source, target string) (*store.Diff, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return s.diff(source, target)
}

func (s *Store) diff(source, target string) (*store.Diff, error) {
	if err := store.ValidateBranchName("source", source); err != nil {
		return nil, err
	}
	if err := store.ValidateBranchName("target", target); err != nil {
		return nil, err
	}
	sb, err := s.branch(source)
	if err != nil {
		return nil, err
	}
	tb, err := s.branch(target)
	if err != nil {
		return nil, err
	}
	sv, tv := s.chainOf(sb, never), s.chainOf(tb, never)
	base, sPath, tPath := mergeBase(sv, tv)
	d := &store.Diff{Source: source, Target: target, TargetHead: tb.info.Head}
	if base.br != nil {
		d.Base = base.br.info.Name
		d.BaseAt = s.timeOf(base.cut)
		if base.cut == 0 {
			d.BaseAt = base.br.info.CreatedAt
		}
	}
	keys := map[key]bool{}
	for _, l := range append(sPath, tPath...) {
		for _, v := range l.since() {
			keys[v.key] = true
		}
	}
	var bv view
	if base.br != nil {
		bv = s.chainOf(base.br, base.cut)
	}
	sorted := make([]key, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, func(a, b key) int {
		if c := kindOrder(a.kind) - kindOrder(b.kind); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	for _, k := range sorted {
		var before *version
		if base.br != nil {
			before = bv.resolve(k)
		}
		after, theirs := sv.resolve(k), tv.resolve(k)
		// Most keys changed on one side only: the other side still holds the base
		// version itself, which needs no comparison and no copy.
		if same(after, theirs) {
			continue
		}
		ref := store.Ref{Kind: k.kind, ID: k.id}
		var sc, tc store.Change
		var sok, tok bool
		b := recOf(before)
		if !same(after, before) {
			// The two sides share one copy of the base version: a Diff is read-only.
			b = clone(b)
			sc, sok = store.ChangeOf(ref, b, clone(recOf(after)))
		}
		if !same(theirs, before) {
			if !sok {
				b = clone(b)
			}
			tc, tok = store.ChangeOf(ref, b, clone(recOf(theirs)))
		}
		if sok {
			d.SourceChanges = append(d.SourceChanges, sc)
		}
		if tok {
			d.TargetChanges = append(d.TargetChanges, tc)
		}
		if sok && tok {
			d.Conflicts = append(d.Conflicts, store.Conflict{Ref: sc.Ref, Reason: store.BothChanged, Source: sc, Target: tc})
		}
	}
	d.Conflicts = append(d.Conflicts, store.SupersedeConflicts(d)...)
	return d, nil
}

// same reports whether two resolved versions hold equivalent content: the same
// version, both absent or deleted, or equal records.
func same(a, b *version) bool {
	if a == b {
		return true
	}
	return store.Equivalent(recOf(a), recOf(b))
}

func recOf(v *version) store.Record {
	if v == nil {
		return nil
	}
	return v.rec
}

func kindOrder(k store.Kind) int { return slices.Index(store.Kinds, k) }

func clone(r store.Record) store.Record {
	if r == nil {
		return nil
	}
	return store.Clone(r)
}

// segment is the part of a branch's own history between two sequence numbers.
type segment struct {
	br       *branch
	from, to uint64 // (from, to]
}

func (g segment) since() []*version {
	log := g.br.log
	i := sort.Search(len(log), func(i int) bool { return log[i].seq > g.from })
	j := sort.Search(len(log), func(i int) bool { return log[i].seq > g.to })
	return log[i:j]
}

// mergeBase finds the nearest common ancestor of two chains and the segments of each
// side written since.
func mergeBase(sv, tv view) (base link, sPath, tPath []segment) {
	for i, sl := range sv.chain {
		for j, tl := range tv.chain {
			if sl.br != tl.br {
				continue
			}
			base = link{br: sl.br, cut: min(sl.cut, tl.cut)}
			for _, l := range sv.chain[:i] {
				sPath = append(sPath, segment{l.br, 0, l.cut})
			}
			sPath = append(sPath, segment{sl.br, base.cut, sl.cut})
			for _, l := range tv.chain[:j] {
				tPath = append(tPath, segment{l.br, 0, l.cut})
			}
			tPath = append(tPath, segment{tl.br, base.cut, tl.cut})
			return base, sPath, tPath
		}
	}
	for _, l := range sv.chain {
		sPath = append(sPath, segment{l.br, 0, l.cut})
	}
	for _, l := range tv.chain {
		tPath = append(tPath, segment{l.br, 0, l.cut})
	}
	return link{}, sPath, tPath
}

// ApplyMerge applies a merge plan atomically.
func (s *Store) ApplyMerge(ctx context.Context, plan store.MergePlan) (store.MergeRecord, error) {
	if !plan.Record.Strategy.Valid() {
		return store.MergeRecord{}, store.Invalid("MergePlan.Record.Strategy", "must be native, cherry_pick, squash or auto", plan.Record.Strategy)
	}
	if plan.Source == plan.Target {
		return store.MergeRecord{}, store.Invalid("MergePlan.Target", "must differ from the source", plan.Target)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return store.MergeRecord{}, err
	}
	sb, err := s.branch(plan.Source)
	if err != nil {
		return store.MergeRecord{}, err
	}
	tb, err := s.writable(plan.Target)
	if err != nil {
		return store.MergeRecord{}, err
	}
	if tb.info.Head != plan.ExpectHead {
		return store.MergeRecord{}, fmt.Errorf("%w: %q moved from head %d to %d", store.ErrStale, plan.Target, plan.ExpectHead, tb.info.Head)
	}
	head := s.chainOf(tb, never)
	seen := map[key]bool{}
	for i, r := range plan.Puts {
		if err := store.ValidateRecord(r, s.dims); err != nil {
			return store.MergeRecord{}, store.AtIndex(err, "MergePlan.Puts", i)
		}
		k := key{r.RecordKind(), r.RecordID()}
		if seen[k] {
			return store.MergeRecord{}, store.Invalid("MergePlan.Puts", "repeats "+store.RefOf(r).String(), i)
		}
		seen[k] = true
	}
	for i, ref := range plan.Deletes {
		if err := store.ValidateRef(fmt.Sprintf("MergePlan.Deletes[%d]", i), ref); err != nil {
			return store.MergeRecord{}, err
		}
		k := key{ref.Kind, ref.ID}
		if seen[k] {
			return store.MergeRecord{}, store.Invalid("MergePlan.Deletes", "repeats "+ref.String(), i)
		}
		seen[k] = true
	}
	now := s.commitNow()
	rec := plan.Record
	rec.Source, rec.Target = plan.Source, plan.Target
	if rec.ID == "" {
		rec.ID = ids.New()
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = now
	}
	var ops []op
	src := s.chainOf(sb, never)
	terms := analyzeAll(plan.Puts)
	for i, r := range plan.Puts {
		r = store.WithDefaults(s.copyIn(r, plan.Target, false), now)
		k := key{r.RecordKind(), r.RecordID()}
		if cur := head.get(k); cur != nil && store.SameContent(cur, r) {
			continue
		}
		// A record adopted as the source holds it shares the source version's
		// embedding and index data instead of computing them again.
		from := src.resolve(k)
		if from != nil && (from.rec == nil || from.ord < 0 || !store.SameContent(from.rec, r)) {
			from = nil
		}
		h := hint{from: from}
		if terms != nil {
			h.terms = &terms[i]
		}
		s.addVersion(tb, k, r, false, h)
		if s.log != nil {
			o := putOp(r)
			o.Name = plan.Target
			ops = append(ops, o)
		}
	}
	for _, ref := range plan.Deletes {
		k := key{ref.Kind, ref.ID}
		if head.get(k) == nil {
			continue
		}
		s.applyDelete(tb, k)
		ops = append(ops, op{Type: opDelete, Name: plan.Target, Kind: ref.Kind, ID: ref.ID})
	}
	if plan.MarkMerged {
		s.applyStatus(sb, store.BranchMerged, plan.Target, now)
		ops = append(ops, op{Type: opBranchStatus, Name: plan.Source, Status: store.BranchMerged, Into: plan.Target})
	}
	s.merges = append(s.merges, rec)
	ops = append(ops, op{Type: opMerge, Merge: &rec})
	if err := s.logCommit(now, ops); err != nil {
		return store.MergeRecord{}, err
	}
	return rec, nil
}

// ListMerges returns merge records, newest first.
func (s *Store) ListMerges(ctx context.Context, f store.MergeFilter) ([]store.MergeRecord, error) {
	if f.Limit < 0 || f.Limit > store.MaxLimit {
		return nil, store.Invalid("MergeFilter.Limit", fmt.Sprintf("must be between 0 (no limit) and %d", store.MaxLimit), f.Limit)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var out []store.MergeRecord
	for i := len(s.merges) - 1; i >= 0; i-- {
		m := s.merges[i]
		if f.Source != "" && m.Source != f.Source || f.Target != "" && m.Target != f.Target ||
			f.Branch != "" && m.Source != f.Branch && m.Target != f.Branch {
			continue
		}
		out = append(out, m)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out, nil
}
