package memstore

import (
	"context"
	"fmt"

	"github.com/day1ai/day1/store"
)

// Land implements store.Lander: it lands source on target, the branch it was forked
// from, when target has not changed since the fork. Each record the source wrote is
// adopted as it stands there: the target's copy shares the source's embedding and
// index data, and the log names the source's version (as a merge's adoptions do)
// rather than holding the record again. Nothing is copied beyond one new version per
// record, so the memory a landing needs does not follow the diff of the two branches,
// which it never builds.
func (s *Store) Land(ctx context.Context, source, target string, rec store.MergeRecord) (store.MergeRecord, error) {
	if err := store.ValidateBranchName("source", source); err != nil {
		return store.MergeRecord{}, err
	}
	if err := store.ValidateBranchName("target", target); err != nil {
		return store.MergeRecord{}, err
	}
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return store.MergeRecord{}, err
	}
	defer unlock()
	sb, err := s.branch(source)
	if err != nil {
		return store.MergeRecord{}, err
	}
	tb, err := s.writable(target)
	if err != nil {
		return store.MergeRecord{}, err
	}
	if sb.parent != tb {
		return store.MergeRecord{}, fmt.Errorf("%w: %q is not a branch of %q; merge it instead", store.ErrStale, source, target)
	}
	if tb.info.Head > sb.forkSeq {
		return store.MergeRecord{}, fmt.Errorf("%w: %q changed since %q was forked from it; merge instead", store.ErrStale, target, source)
	}
	if err := ctx.Err(); err != nil {
		return store.MergeRecord{}, err
	}
	now := s.commitNow()
	sourceAt := s.seq
	head := s.chainOf(tb, never)
	// The source's current versions, each key once: those no later version replaced.
	var vs []*version
	for _, v := range sb.log {
		if v.next == never {
			vs = append(vs, v)
		}
	}
	var ops []op
	var merged []store.MergeItem
	for _, v := range vs {
		ref := store.Ref{Kind: v.key.kind, ID: v.key.id}
		cur := head.resolve(v.key)
		if v.rec == nil {
			if cur == nil || cur.rec == nil {
				continue
			}
			s.applyDelete(tb, v.key)
			ops = append(ops, op{Type: opDelete, Name: target, Kind: ref.Kind, ID: ref.ID})
			merged = append(merged, store.MergeItem{Ref: ref, Action: store.ActionDelete})
			continue
		}
		var r store.Record
		h := hint{from: v}
		adopt := v.ord >= 0
		if adopt {
			r = store.WithBranch(v.plain(), target)
		} else {
			// A kind the store does not index: the copy is its own.
			r, h.from = copyFor(v.full(), target), nil
		}
		if s.index[v.key.kind] != nil {
			if text := store.SearchText(r); v.terms != nil && v.terms.text == text {
				h.terms = v.terms
			} else {
				t := analyze(text)
				h.terms = &t
			}
		}
		nv := s.addVersionAfter(tb, v.key, r, h, cur)
		if s.log != nil {
			if adopt {
				ops = append(ops, op{Type: opAdopt, Name: target, Kind: ref.Kind, ID: ref.ID, From: source, Seq: v.seq})
			} else {
				o := putOp(nv.full())
				o.Name = target
				ops = append(ops, o)
			}
		}
		merged = append(merged, store.MergeItem{Ref: ref, Action: store.ActionAdopt})
	}
	rec = store.Landed(rec, source, target, merged, now)
	ops = append(ops, op{Type: opMerge, Merge: &rec, SourceSeq: sourceAt})
	if err := s.logCommit(now, ops); err != nil {
		return store.MergeRecord{}, err
	}
	s.merges = append(s.merges, rec)
	s.hist.AddMerge(store.MergePoint{Target: target, At: s.seq, Source: source, SourceAt: sourceAt})
	for _, ix := range s.index {
		ix.fold(mergeFoldSlack)
	}
	return rec, nil
}
