package memstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/day1ai/day1/internal/ids"
	"github.com/day1ai/day1/internal/parallel"
	"github.com/day1ai/day1/store"
)

// Diff lists what changed on each side since the merge base. It visits only the
// versions written since the base, so its cost follows the number of changes.
func (s *Store) Diff(ctx context.Context, source, target string) (*store.Diff, error) {
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return s.diff(source, target, false)
}

// DiffLean is Diff without the embeddings of facts and observations (see
// store.LeanDiffer): the merge engine's diff, which copies no vectors.
func (s *Store) DiffLean(ctx context.Context, source, target string) (*store.Diff, error) {
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return s.diff(source, target, true)
}

var _ store.LeanDiffer = (*Store)(nil)

// diff lists the changes; lean leaves embeddings out.
func (s *Store) diff(source, target string, lean bool) (*store.Diff, error) {
	sb, sok := s.branches[source]
	tb, tok := s.branches[target]
	if !sok || !tok {
		// Existing branches have valid names; otherwise say which name is wrong.
		if err := store.ValidateBranchName("source", source); err != nil {
			return nil, err
		}
		if err := store.ValidateBranchName("target", target); err != nil {
			return nil, err
		}
		var err error
		if sb, err = s.branch(source); err != nil {
			return nil, err
		}
		if tb, err = s.branch(target); err != nil {
			return nil, err
		}
	}
	sv, tv := s.chainOf(sb, never), s.chainOf(tb, never)
	base := s.hist.MergeBase(store.BranchRev{Branch: source, Rev: s.seq}, store.BranchRev{Branch: target, Rev: s.seq})
	d := &store.Diff{Source: source, Target: target, TargetHead: tb.info.Head, SourceRev: s.seq}
	if len(base.Points) > 0 {
		p := base.Points[0]
		d.Base = p.Branch
		d.BaseAt = s.timeOf(p.Rev)
		if b := s.branches[p.Branch]; p.Rev == 0 && b != nil {
			d.BaseAt = b.info.CreatedAt
		}
	}
	// The views of every point of the base, criss-cross bases below it included.
	bviews := map[store.BranchRev]view{}
	for b := base; b != nil; b = b.Below {
		for _, p := range b.Points {
			bviews[p] = s.pointView(p)
		}
	}
	// The keys written on either side since the base, and on which: a side that wrote
	// no version of a key in a range where its view and a base point's differ sees the
	// base's version of it.
	const onSource, onTarget = 1, 2
	keys := map[key]uint8{}
	for _, p := range base.Points {
		for _, g := range between(sv, bviews[p]) {
			for _, v := range g.since() {
				keys[v.key] |= onSource
			}
		}
		for _, g := range between(tv, bviews[p]) {
			for _, v := range g.since() {
				keys[v.key] |= onTarget
			}
		}
	}
	if len(base.Points) == 0 {
		for _, l := range sv.chain {
			for _, v := range (segment{l.br, 0, l.cut}).since() {
				keys[v.key] |= onSource
			}
		}
		for _, l := range tv.chain {
			for _, v := range (segment{l.br, 0, l.cut}).since() {
				keys[v.key] |= onTarget
			}
		}
	}
	atBase := func(k key) *version {
		return store.ResolveBase(base, func(p store.BranchRev) *version { return bviews[p].resolve(k) }, same)
	}
	type written struct {
		key
		sides uint8
	}
	sorted := make([]written, 0, len(keys))
	// Most keys changed on the source, the side a merge reads.
	d.SourceChanges = make([]store.Change, 0, len(keys))
	for k, sides := range keys {
		sorted = append(sorted, written{k, sides})
	}
	slices.SortFunc(sorted, func(a, b written) int {
		if c := kindOrder(a.kind) - kindOrder(b.kind); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	// The versions each side changed, found before any is copied so that their
	// embeddings can be copied into one allocation.
	type changed struct {
		key
		before, after, theirs *version
		onSource, onTarget    bool
	}
	found := make([]changed, 0, len(sorted))
	var floats int
	for _, w := range sorted {
		c := changed{key: w.key}
		c.before = atBase(c.key)
		c.after, c.theirs = c.before, c.before
		if w.sides&onSource != 0 {
			c.after = sv.resolve(c.key)
		}
		if w.sides&onTarget != 0 {
			c.theirs = tv.resolve(c.key)
		}
		// Most keys changed on one side only: the other side still holds the base
		// version itself, which needs no comparison and no copy.
		if same(c.after, c.theirs) {
			continue
		}
		c.onSource, c.onTarget = !same(c.after, c.before), !same(c.theirs, c.before)
		if c.onSource && c.onTarget && agree(c.after, c.theirs) {
			continue
		}
		if c.onSource && !lean {
			floats += dimsOf(c.before) + dimsOf(c.after)
		}
		if c.onTarget && !lean {
			floats += dimsOf(c.before) + dimsOf(c.theirs)
		}
		found = append(found, c)
	}
	cp := copier{lean: lean}
	if floats > 0 {
		cp.slab = make([]float32, floats)
	}
	for _, c := range found {
		ref := store.Ref{Kind: c.kind, ID: c.id}
		var sc, tc store.Change
		var sok, tok bool
		// Both sides were compared with the base already: what differs is a change.
		if c.onSource {
			sc, sok = changeOf(ref, cp.record(c.before), cp.record(c.after)), true
		}
		if c.onTarget {
			tc, tok = changeOf(ref, cp.record(c.before), cp.record(c.theirs)), true
		}
		d.AddChanges(sc, sok, tc, tok)
	}
	if len(d.SourceChanges) == 0 {
		d.SourceChanges = nil
	}
	d.Conflicts = append(d.Conflicts, store.SupersedeConflicts(d)...)
	return d, nil
}

// changeOf returns the change from before to after, two records known to differ.
func changeOf(ref store.Ref, before, after store.Record) store.Change {
	c := store.Change{Ref: ref, Before: before, After: after, Op: store.OpUpdated}
	switch {
	case before == nil:
		c.Op = store.OpAdded
	case after == nil:
		c.Op = store.OpDeleted
	}
	return c
}

// same reports whether two resolved versions hold equivalent content: the same
// version, both absent or deleted, or equal records.
func same(a, b *version) bool {
	if a == b {
		return true
	}
	return equivalent(a, b) && embOf(a).same(embOf(b))
}

// agree reports whether two versions of a key have converged (see store.Agree).
func agree(a, b *version) bool {
	return a != nil && b != nil && store.Agree(recOf(a), recOf(b))
}

// recOf returns v's record without its embedding; nil for none.
func recOf(v *version) store.Record {
	if v == nil {
		return nil
	}
	return v.plain()
}

// embOf returns v's packed embedding; nil for none.
func embOf(v *version) packed {
	if v == nil {
		return nil
	}
	return v.emb
}

// dimsOf returns the length of v's embedding, 0 for none.
func dimsOf(v *version) int { return embOf(v).dims() }

func kindOrder(k store.Kind) int { return slices.Index(store.Kinds, k) }

// copier copies the records of a diff, their embeddings into one slab: a diff of a
// hundred facts makes one allocation for their vectors instead of a hundred.
type copier struct {
	slab []float32
	lean bool // leave embeddings out
}

// record returns a copy of v's record that shares nothing with the store; nil for none.
func (c *copier) record(v *version) store.Record {
	if v == nil || v.rec == nil {
		return nil
	}
	switch r := v.rec.(type) {
	case *factRec:
		f := r.fact()
		f.Embedding = c.embedding(v.emb)
		f.Metadata = maps.Clone(f.Metadata)
		return f
	case store.Observation:
		r.Embedding = c.embedding(v.emb)
		r.Metadata = maps.Clone(r.Metadata)
		return r
	default:
		// Messages keep their embeddings even in a lean diff, as they always have.
		return store.WithEmbedding(store.Clone(v.plain()), v.emb.unpack())
	}
}

// embedding unpacks p into the slab, capped so that appending to the copy cannot
// reach the next one.
func (c *copier) embedding(p packed) []float32 {
	n := p.dims()
	if c.lean || n == 0 {
		return nil
	}
	if n > len(c.slab) {
		return p.unpack()
	}
	out := p.appendTo(c.slab[:0:n])
	c.slab = c.slab[n:]
	return out
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

// between returns the segments of history where views a and b differ: on each branch
// either chain holds, the versions between the two cuts (a missing branch is cut at
// 0). A key with no version in any of them resolves the same in both views.
func between(a, b view) []segment {
	var out []segment
	for _, l := range a.chain {
		o := b.cutOf(l.br)
		if o != l.cut {
			out = append(out, segment{l.br, min(o, l.cut), max(o, l.cut)})
		}
	}
	for _, l := range b.chain {
		if a.cutOf(l.br) == 0 && l.cut > 0 {
			out = append(out, segment{l.br, 0, l.cut})
		}
	}
	return out
}

// cutOf returns the cut of br in the view's chain, 0 when br is not in it.
func (v view) cutOf(br *branch) uint64 {
	for _, l := range v.chain {
		if l.br == br {
			return l.cut
		}
	}
	return 0
}

// pointView returns the view of a branch as of a revision; an empty view for a branch
// that no longer exists.
func (s *Store) pointView(p store.BranchRev) view {
	b := s.branches[p.Branch]
	if b == nil {
		return view{}
	}
	return s.chainOf(b, p.Rev)
}

// ApplyMerge applies a merge plan atomically. A fact or observation put without an
// embedding gets the embedding of the same record's version on the source, as of
// plan.SourceRev or at its head, or on the target, when that version has the same
// search text, as store.LeanDiffer says.
func (s *Store) ApplyMerge(ctx context.Context, plan store.MergePlan) (store.MergeRecord, error) {
	if err := store.ValidateMergePlan(plan); err != nil {
		return store.MergeRecord{}, err
	}
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return store.MergeRecord{}, err
	}
	defer unlock()
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
	now := s.commitNow()
	// The source as the plan's diff read it, where a lean put finds its embedding even
	// after the source moved; its head when the plan names no revision.
	planned := s.chainOf(sb, never)
	if plan.SourceRev > 0 && plan.SourceRev <= s.seq {
		planned = s.chainOf(sb, plan.SourceRev)
	}
	puts := s.prepareMerge(plan, head, s.chainOf(sb, never), planned, now)
	for i, p := range puts {
		if p.err != nil {
			return store.MergeRecord{}, store.AtIndex(p.err, "MergePlan.Puts", i)
		}
	}
	rec := plan.Record
	rec.Source, rec.Target = plan.Source, plan.Target
	if rec.ID == "" {
		rec.ID = ids.New()
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = now
	}
	if len(tb.own.first) == 0 {
		// A fresh branch, the common target: size its maps once rather than grow them.
		tb.own = newVersionLists[key](len(puts) + len(plan.Deletes))
		tb.log = slices.Grow(tb.log, len(puts)+len(plan.Deletes))
	}
	var ops []op
	for _, p := range puts {
		if p.same {
			continue
		}
		v := s.addVersionAfter(tb, p.k, p.rec, hint{from: p.from, terms: p.terms}, p.cur)
		if s.log != nil && p.adopt {
			ops = append(ops, op{Type: opAdopt, Name: plan.Target, Kind: p.k.kind, ID: p.k.id, From: p.from.br.info.Name, Seq: p.from.seq})
		} else if s.log != nil {
			// The log holds what the version holds: the embedding it shares with the
			// source's, which a lean plan's record lacks and another's may hold with a
			// zero of the other sign.
			o := putOp(v.full())
			o.Name = plan.Target
			ops = append(ops, o)
		}
	}
	for _, ref := range plan.Deletes {
		k := key{ref.Kind, ref.ID}
		if !head.has(k) {
			continue
		}
		s.applyDelete(tb, k)
		ops = append(ops, op{Type: opDelete, Name: plan.Target, Kind: ref.Kind, ID: ref.ID})
	}
	if plan.MarkMerged {
		s.applyStatus(sb, store.BranchMerged, plan.Target, now)
		ops = append(ops, op{Type: opBranchStatus, Name: plan.Source, Status: store.BranchMerged, Into: plan.Target})
	}
	mop := op{Type: opMerge, Merge: &rec}
	if plan.SourceRev > 0 && rec.Strategy != store.CherryPick {
		mop.SourceSeq = plan.SourceRev
	}
	ops = append(ops, mop)
	if err := s.logCommit(now, ops); err != nil {
		return store.MergeRecord{}, err
	}
	s.merges = append(s.merges, rec)
	if mop.SourceSeq > 0 {
		s.hist.AddMerge(store.MergePoint{Target: plan.Target, At: s.seq, Source: plan.Source, SourceAt: mop.SourceSeq})
	}
	for _, ix := range s.index {
		ix.fold(mergeFoldSlack)
	}
	return rec, nil
}

// mergePut is one record of a merge plan, checked and made ready to write.
type mergePut struct {
	err  error // the record is invalid; nothing else is set
	rec  store.Record
	k    key
	cur  *version // the target's version of k at its head, nil for none
	same bool     // the target holds this content already
	// from is the source's version of the record when it holds the same content, whose
	// embedding and index data the target's copy shares.
	from  *version
	terms *docTerms // the analysis of the search text, for indexed kinds
	// adopt: from is set, rec is from's record on the target, and from is the version
	// the source sees at its head, which every later load of the store holds: the log
	// names it (opAdopt) rather than holding the record again.
	adopt bool
}

// minMergePart is the smallest number of records worth preparing on a goroutine of
// their own. Below a thousand records or so, waking a second processor and moving the
// prepared records between caches costs more than it saves, and adds to the slowest
// merges the wait for a processor that is busy elsewhere.
const minMergePart = 512

// prepareMerge validates the records of a merge plan and copies them for the target,
// with their defaults filled from now, and finds what writing each needs: whether the
// target (head) holds it already, the source's version to share (at planned, the
// source as the plan's diff read it), the analysis of its text. A lean put takes its
// embedding from the source at planned or at its head (src), or from the target. It
// only reads the store, so a large plan is prepared on every processor. Callers hold
// s.mu for writing.
func (s *Store) prepareMerge(plan store.MergePlan, head, src, planned view, now time.Time) []mergePut {
	puts := make([]mergePut, len(plan.Puts))
	parallel.Do(len(puts), parallel.Parts(len(puts), minMergePart), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			p := &puts[i]
			// The records of a plan come from a diff with their defaults filled: this
			// rarely copies. The copy to store is made once its embedding is known.
			var r store.Record
			var from, cur *version
			adopt := false
			owned := false // r is the store's own version: its maps are never changed
			if plan.Puts[i] != nil {
				r = store.WithDefaults(plan.Puts[i], now)
				p.k = key{r.RecordKind(), r.RecordID()}
				from, cur = planned.resolve(p.k), head.resolve(p.k)
				p.cur = cur
				lean := indexed(p.k.kind) && len(store.EmbeddingOf(r)) == 0
				switch {
				case from == nil || from.rec == nil:
					from = nil
				case lean && from.holdsExceptEmbedding(r):
					// A lean plan's copy of the source's version: the version itself,
					// whose embedding the copy shares.
					r = from.plain()
					adopt = src.resolve(p.k) == from
					owned = true
				case !from.holds(r):
					from = nil
				}
				if lean && from == nil {
					// A record as the target holds it, or of the source's text.
					r = embeddingFrom(r, planned.resolve(p.k), src.resolve(p.k), cur)
				}
			}
			// Most records of a plan are the source's versions, which were checked when
			// they were written: only the others need checking.
			if from == nil {
				if p.err = store.ValidateRecord(plan.Puts[i], s.dims); p.err != nil {
					continue
				}
			}
			if from != nil && from.ord < 0 {
				from = nil
			}
			// The copy's embedding is from's when from is set (a lean r has none), else
			// r's own.
			if cur != nil && cur.rec != nil && cur.holdsExceptEmbedding(r) {
				same := cur.emb.equal(store.EmbeddingOf(r))
				if from != nil {
					same = cur.emb.same(from.emb)
				}
				if same {
					p.rec, p.same = r, true
					continue
				}
			}
			p.from, p.adopt = from, adopt && from != nil
			if owned {
				p.rec = store.WithBranch(r, plan.Target)
			} else {
				p.rec = copyFor(r, plan.Target)
			}
			if s.index[p.k.kind] == nil {
				continue
			}
			text := store.SearchText(p.rec)
			if p.from != nil && p.from.terms != nil && p.from.terms.text == text {
				p.terms = p.from.terms
			} else {
				t := analyze(text)
				p.terms = &t
			}
		}
	})
	return puts
}

// embeddingFrom returns r with the embedding of the first of vs that holds r's record
// with the same search text and an embedding, or r itself.
func embeddingFrom(r store.Record, vs ...*version) store.Record {
	text := store.SearchText(r)
	for _, v := range vs {
		if v == nil || v.rec == nil {
			continue
		}
		if len(v.emb) > 0 && v.searchText() == text {
			return store.WithEmbedding(r, v.emb.unpack())
		}
	}
	return r
}

// ListMerges returns merge records, newest first.
func (s *Store) ListMerges(ctx context.Context, f store.MergeFilter) ([]store.MergeRecord, error) {
	if err := store.ValidateMergeFilter(f); err != nil {
		return nil, err
	}
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var out []store.MergeRecord
	for i := len(s.merges) - 1; i >= 0; i-- {
		m := s.merges[i]
		if !f.Match(m) {
			continue
		}
		out = append(out, m)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out, nil
}
