package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/day1ai/day1/store"
)

// testDiff checks Diff: per-kind changes on each side since the merge base, for a child
// and its parent, two siblings and a grandchild; Before/After; equal changes left out;
// both kinds of conflict; TargetHead; an empty diff after a merge; unknown branches.
func testDiff(t *testing.T, h Harness) {
	const area = "diff"

	subtest(t, h, area, "child and parent, every kind", func(e *env) {
		base := map[store.Ref]store.Record{}
		for _, k := range store.Kinds {
			for _, r := range e.put(store.DefaultBranch, store.PutOptions{},
				recOf(k, "a", "base alpha"), recOf(k, "b", "base bravo"),
				recOf(k, "c", "base charlie"), recOf(k, "f", "base foxtrot")) {
				base[store.RefOf(r.Record)] = r.Record
			}
		}
		b := e.fork("b", store.DefaultBranch)
		for _, k := range store.Kinds {
			e.put("b", store.PutOptions{}, recOf(k, "d", "source delta"), recOf(k, "a", "source alpha"))
			e.del("b", store.Ref{Kind: k, ID: "b"})
			e.put(store.DefaultBranch, store.PutOptions{}, recOf(k, "e", "target echo"), recOf(k, "c", "target charlie"))
			e.del(store.DefaultBranch, store.Ref{Kind: k, ID: "f"})
		}
		var src, tgt []store.Change
		for _, k := range store.Kinds {
			ref := func(id string) store.Ref { return store.Ref{Kind: k, ID: id} }
			src = append(src,
				store.Change{Ref: ref("a"), Op: store.OpUpdated, Before: base[ref("a")], After: e.get(head("b"), ref("a"))},
				store.Change{Ref: ref("b"), Op: store.OpDeleted, Before: base[ref("b")]},
				store.Change{Ref: ref("d"), Op: store.OpAdded, After: e.get(head("b"), ref("d"))},
			)
			tgt = append(tgt,
				store.Change{Ref: ref("c"), Op: store.OpUpdated, Before: base[ref("c")], After: e.get(head(store.DefaultBranch), ref("c"))},
				store.Change{Ref: ref("e"), Op: store.OpAdded, After: e.get(head(store.DefaultBranch), ref("e"))},
				store.Change{Ref: ref("f"), Op: store.OpDeleted, Before: base[ref("f")]},
			)
		}
		d := e.diff("b", store.DefaultBranch)
		e.checkDiff(d, "b", store.DefaultBranch, store.DefaultBranch, b, src, tgt, nil)
		rev := e.diff(store.DefaultBranch, "b")
		e.checkDiff(rev, store.DefaultBranch, "b", store.DefaultBranch, b, tgt, src, nil)
	})

	subtest(t, h, area, "ids the target changed twice since the fork", func(e *env) {
		one := e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "base one"}).Record
		two := e.put1(store.DefaultBranch, store.Fact{ID: "f2", Text: "base two"}).Record
		three := e.put1(store.DefaultBranch, store.Fact{ID: "f3", Text: "base three"}).Record
		b := e.fork("b", store.DefaultBranch)
		// The versions between the fork and the head are seen by neither: the
		// target's changes run from the base's version to the head's.
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "main one, first change"})
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "main one, second change"})
		e.del(store.DefaultBranch, factRef("f3"))
		e.put1(store.DefaultBranch, store.Fact{ID: "f3", Text: "main three, written again"})
		e.put1("b", store.Fact{ID: "f2", Text: "source two"})
		src := []store.Change{{Ref: factRef("f2"), Op: store.OpUpdated, Before: two, After: e.get(head("b"), factRef("f2"))}}
		tgt := []store.Change{
			{Ref: factRef("f1"), Op: store.OpUpdated, Before: one, After: e.get(head(store.DefaultBranch), factRef("f1"))},
			{Ref: factRef("f3"), Op: store.OpUpdated, Before: three, After: e.get(head(store.DefaultBranch), factRef("f3"))},
		}
		e.checkDiff(e.diff("b", store.DefaultBranch), "b", store.DefaultBranch, store.DefaultBranch, b, src, tgt, nil)
	})

	subtest(t, h, area, "two siblings forked at different times", func(e *env) {
		f1 := e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "base one"}).Record
		f3 := e.put1(store.DefaultBranch, store.Fact{ID: "f3", Text: "base three"}).Record
		a := e.fork("a", store.DefaultBranch)
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "f2", Text: "main two"}, store.Fact{ID: "f1", Text: "main one changed"})
		e.del(store.DefaultBranch, factRef("f3"))
		e.fork("b", store.DefaultBranch)
		e.put1("a", store.Fact{ID: "a1", Text: "on a"})
		e.put1("b", store.Fact{ID: "b1", Text: "on b"})
		e.put1(store.DefaultBranch, store.Fact{ID: "f9", Text: "main after both forks"})
		src := []store.Change{{Ref: factRef("a1"), Op: store.OpAdded, After: e.get(head("a"), factRef("a1"))}}
		tgt := []store.Change{
			{Ref: factRef("b1"), Op: store.OpAdded, After: e.get(head("b"), factRef("b1"))},
			{Ref: factRef("f1"), Op: store.OpUpdated, Before: f1, After: e.get(head("b"), factRef("f1"))},
			{Ref: factRef("f2"), Op: store.OpAdded, After: e.get(head("b"), factRef("f2"))},
			{Ref: factRef("f3"), Op: store.OpDeleted, Before: f3},
		}
		e.checkDiff(e.diff("a", "b"), "a", "b", store.DefaultBranch, a, src, tgt, nil)
	})

	subtest(t, h, area, "grandchild and grandparent", func(e *env) {
		m1 := e.put1(store.DefaultBranch, store.Fact{ID: "m1", Text: "main one"}).Record
		m2 := e.put1(store.DefaultBranch, store.Fact{ID: "m2", Text: "main two"}).Record
		b := e.fork("b", store.DefaultBranch)
		e.put("b", store.PutOptions{}, store.Fact{ID: "g1", Text: "b one"}, store.Fact{ID: "m1", Text: "main one changed on b"})
		e.fork("c", "b")
		e.put1("c", store.Fact{ID: "h1", Text: "c one"})
		e.del("c", factRef("m2"))
		e.put1(store.DefaultBranch, store.Fact{ID: "x1", Text: "main after"})
		src := []store.Change{
			{Ref: factRef("g1"), Op: store.OpAdded, After: e.get(head("c"), factRef("g1"))},
			{Ref: factRef("h1"), Op: store.OpAdded, After: e.get(head("c"), factRef("h1"))},
			{Ref: factRef("m1"), Op: store.OpUpdated, Before: m1, After: e.get(head("c"), factRef("m1"))},
			{Ref: factRef("m2"), Op: store.OpDeleted, Before: m2},
		}
		tgt := []store.Change{{Ref: factRef("x1"), Op: store.OpAdded, After: e.get(head(store.DefaultBranch), factRef("x1"))}}
		e.checkDiff(e.diff("c", store.DefaultBranch), "c", store.DefaultBranch, store.DefaultBranch, b, src, tgt, nil)
	})

	subtest(t, h, area, "changes equal on both sides are left out", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "f1", Text: "base one"}, store.Fact{ID: "f2", Text: "base two"},
			store.Observation{ID: "o1", Type: store.ObsDecision, Summary: "base obs"})
		b := e.fork("b", store.DefaultBranch)
		both := []store.Record{
			store.Fact{ID: "f1", Text: "same change", CreatedAt: micro(0), UpdatedAt: micro(1)},
			store.Fact{ID: "f4", Text: "same addition", CreatedAt: micro(0), UpdatedAt: micro(0)},
			store.Observation{ID: "o2", Type: store.ObsInsight, Summary: "same observation", CreatedAt: micro(0)},
		}
		for _, br := range []string{"b", store.DefaultBranch} {
			e.put(br, store.PutOptions{}, both...)
			e.del(br, factRef("f2"), obsRef("o1"))
		}
		e.put1("b", store.Fact{ID: "f5", Text: "only on b"})
		src := []store.Change{{Ref: factRef("f5"), Op: store.OpAdded, After: e.get(head("b"), factRef("f5"))}}
		e.checkDiff(e.diff("b", store.DefaultBranch), "b", store.DefaultBranch, store.DefaultBranch, b, src, nil, nil)
	})

	subtest(t, h, area, "conflict: both changed", func(e *env) {
		base := e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "f1", Text: "base one"},
			store.Observation{ID: "o1", Type: store.ObsDecision, Summary: "base obs"})
		b := e.fork("b", store.DefaultBranch)
		e.put1("b", store.Fact{ID: "f1", Text: "source one"})
		e.del("b", obsRef("o1"))
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "f1", Text: "target one"},
			store.Observation{ID: "o1", Type: store.ObsDecision, Summary: "target obs"})
		sf1 := store.Change{Ref: factRef("f1"), Op: store.OpUpdated, Before: base[0].Record, After: e.get(head("b"), factRef("f1"))}
		tf1 := store.Change{Ref: factRef("f1"), Op: store.OpUpdated, Before: base[0].Record, After: e.get(head(store.DefaultBranch), factRef("f1"))}
		so1 := store.Change{Ref: obsRef("o1"), Op: store.OpDeleted, Before: base[1].Record}
		to1 := store.Change{Ref: obsRef("o1"), Op: store.OpUpdated, Before: base[1].Record, After: e.get(head(store.DefaultBranch), obsRef("o1"))}
		conflicts := []store.Conflict{
			{Ref: factRef("f1"), Reason: store.BothChanged, Source: sf1, Target: tf1},
			{Ref: obsRef("o1"), Reason: store.BothChanged, Source: so1, Target: to1},
		}
		e.checkDiff(e.diff("b", store.DefaultBranch), "b", store.DefaultBranch, store.DefaultBranch, b,
			[]store.Change{sf1, so1}, []store.Change{tf1, to1}, conflicts)
	})

	subtest(t, h, area, "conflict: both superseded", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "p0", Text: "tokens expire after one hour"})
		b := e.fork("b", store.DefaultBranch)
		e.put1("b", store.Fact{ID: "sb", Text: "tokens expire after two hours", ParentID: "p0"})
		e.put1(store.DefaultBranch, store.Fact{ID: "tm", Text: "tokens expire after thirty minutes", ParentID: "p0"})
		sc := store.Change{Ref: factRef("sb"), Op: store.OpAdded, After: e.get(head("b"), factRef("sb"))}
		tc := store.Change{Ref: factRef("tm"), Op: store.OpAdded, After: e.get(head(store.DefaultBranch), factRef("tm"))}
		conflicts := []store.Conflict{{Ref: factRef("p0"), Reason: store.BothSuperseded, Source: sc, Target: tc}}
		e.checkDiff(e.diff("b", store.DefaultBranch), "b", store.DefaultBranch, store.DefaultBranch, b,
			[]store.Change{sc}, []store.Change{tc}, conflicts)
	})

	subtest(t, h, area, "nothing to diff after a merge", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "f1", Text: "base one"}, store.Fact{ID: "f2", Text: "base two"},
			store.Relation{ID: "r1", Source: "A", Target: "B", Type: "calls"})
		e.fork("b", store.DefaultBranch)
		e.put("b", store.PutOptions{}, store.Fact{ID: "f3", Text: "new on b"}, store.Fact{ID: "f1", Text: "changed on b"},
			store.Relation{ID: "r2", Source: "A", Target: "C", Type: "calls"})
		e.del("b", factRef("f2"), relRef("r1"))
		d := e.diff("b", store.DefaultBranch)
		plan := store.MergePlan{Source: "b", Target: store.DefaultBranch, ExpectHead: d.TargetHead,
			Record: store.MergeRecord{ID: "merge-1", Source: "b", Target: store.DefaultBranch, Strategy: store.Native}}
		for _, c := range d.SourceChanges {
			if c.Op == store.OpDeleted {
				plan.Deletes = append(plan.Deletes, c.Ref)
			} else {
				plan.Puts = append(plan.Puts, c.After)
			}
		}
		if _, err := e.s.ApplyMerge(e.ctx, plan); err != nil {
			e.t.Fatalf("ApplyMerge: %v", err)
		}
		for _, pair := range [][2]string{{"b", store.DefaultBranch}, {store.DefaultBranch, "b"}} {
			if d := e.diff(pair[0], pair[1]); !d.Empty() {
				e.t.Errorf("Diff(%s, %s) after the merge = %+v; want empty", pair[0], pair[1], d)
			}
		}
	})

	subtest(t, h, area, "filtered by category", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "f1", Text: "base bug", Category: "bug_fix"},
			store.Fact{ID: "f2", Text: "base design", Category: "architecture"},
			store.Fact{ID: "f3", Text: "base moved", Category: "bug_fix"})
		e.fork("b", store.DefaultBranch)
		e.put("b", store.PutOptions{},
			store.Fact{ID: "f4", Text: "new bug on b", Category: "bug_fix"},
			store.Fact{ID: "f5", Text: "new design on b", Category: "architecture"},
			store.Fact{ID: "f3", Text: "base moved", Category: "architecture"},
			store.Observation{ID: "o1", Type: store.ObsDecision, Summary: "an observation has no category"})
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "f1", Text: "bug changed on main", Category: "bug_fix"},
			store.Fact{ID: "f2", Text: "design changed on main", Category: "architecture"})
		e.put1("b", store.Fact{ID: "f1", Text: "bug changed on b", Category: "bug_fix"})
		d := e.diff("b", store.DefaultBranch)
		refs := func(cs []store.Change) []string {
			var out []string
			for _, c := range cs {
				out = append(out, c.Ref.String())
			}
			return out
		}
		bugs := d.Filter(store.Filter{Category: "bug_fix"})
		if got, want := refs(bugs.SourceChanges), []string{"fact/f1", "fact/f3", "fact/f4"}; !slices.Equal(got, want) {
			e.t.Errorf("bug_fix source changes = %v; want %v (f3 left the category)", got, want)
		}
		if got, want := refs(bugs.TargetChanges), []string{"fact/f1"}; !slices.Equal(got, want) {
			e.t.Errorf("bug_fix target changes = %v; want %v", got, want)
		}
		if len(bugs.Conflicts) != 1 || bugs.Conflicts[0].Ref != factRef("f1") {
			e.t.Errorf("bug_fix conflicts = %+v; want the one on f1", bugs.Conflicts)
		}
		design := d.Filter(store.Filter{Category: "architecture"})
		if got, want := refs(design.SourceChanges), []string{"fact/f3", "fact/f5"}; !slices.Equal(got, want) {
			e.t.Errorf("architecture source changes = %v; want %v", got, want)
		}
		if len(design.Conflicts) != 0 {
			e.t.Errorf("architecture conflicts = %+v; want none", design.Conflicts)
		}
		if all := d.Filter(store.Filter{}); len(all.SourceChanges) != len(d.SourceChanges) || len(all.SourceChanges) != 5 {
			e.t.Errorf("zero filter kept %d of %d source changes; want all 5", len(all.SourceChanges), len(d.SourceChanges))
		}
		if again := e.diff("b", store.DefaultBranch); len(again.SourceChanges) != len(d.SourceChanges) {
			e.t.Errorf("Filter changed the diff it was called on")
		}
	})

	subtest(t, h, area, "a merge that promotes facts leaves nothing to diff", func(e *env) {
		e.fork("b", store.DefaultBranch)
		e.put("b", store.PutOptions{},
			store.Fact{ID: "f1", Text: "verified on b", Status: store.FactVerified},
			store.Fact{ID: "f2", Text: "active on b"})
		d := e.diff("b", store.DefaultBranch)
		plan := store.MergePlan{Source: "b", Target: store.DefaultBranch, ExpectHead: d.TargetHead, SourceRev: d.SourceRev,
			Record: store.MergeRecord{ID: "merge-p", Source: "b", Target: store.DefaultBranch, Strategy: store.Native}}
		for _, c := range d.SourceChanges {
			f := c.After.(store.Fact)
			if f.Status == store.FactVerified {
				f.Status = store.FactPromoted
			}
			plan.Puts = append(plan.Puts, f)
		}
		if _, err := e.s.ApplyMerge(e.ctx, plan); err != nil {
			e.t.Fatalf("ApplyMerge: %v", err)
		}
		if f := e.get(head(store.DefaultBranch), factRef("f1")).(store.Fact); f.Status != store.FactPromoted {
			e.t.Errorf("f1 on main is %q; want promoted", f.Status)
		}
		if f := e.get(head("b"), factRef("f1")).(store.Fact); f.Status != store.FactVerified {
			e.t.Errorf("f1 on b is %q; want verified, as the source wrote it", f.Status)
		}
		// The promotion marks where the knowledge sits; it is no change to merge back.
		for _, pair := range [][2]string{{"b", store.DefaultBranch}, {store.DefaultBranch, "b"}} {
			if d := e.diff(pair[0], pair[1]); !d.Empty() {
				e.t.Errorf("Diff(%s, %s) after the merge = %+v; want empty", pair[0], pair[1], d)
			}
		}
		// A fact added on both sides, verified on one and promoted on the other, is no
		// conflict either, as after a promoting cherry-pick.
		e.fork("c", store.DefaultBranch)
		at := micro(7)
		e.put1("c", store.Fact{ID: "f9", Text: "verified on c", Status: store.FactVerified, CreatedAt: at, UpdatedAt: at})
		e.put1(store.DefaultBranch, store.Fact{ID: "f9", Text: "verified on c", Status: store.FactPromoted, CreatedAt: at, UpdatedAt: at})
		if d := e.diff("c", store.DefaultBranch); !d.Empty() {
			e.t.Errorf("Diff(c, main) with f9 verified and promoted = %+v; want empty", d)
		}
		recs, err := e.s.List(e.ctx, head(store.DefaultBranch), store.ListQuery{Kind: store.KindFact, Filter: store.Filter{Status: store.FactPromoted}})
		if err != nil || len(recs) != 2 || recs[0].RecordID() != "f1" && recs[1].RecordID() != "f1" {
			e.t.Errorf("List status promoted = %v, %v; want f1 and f9", recs, err)
		}
	})

	subtest(t, h, area, "the caller owns the records of a diff", func(e *env) {
		meta := func(v string) map[string]string { return map[string]string{"k": v} }
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "base one", Embedding: vec(1), Metadata: meta("base")})
		e.put1(store.DefaultBranch, store.Fact{ID: "f2", Text: "base two", Embedding: vec(0, 1), Metadata: meta("base")})
		e.fork("b", store.DefaultBranch)
		// f1 changed on both sides (a conflict), f2 on the source, f3 added on the target.
		e.put1("b", store.Fact{ID: "f1", Text: "source one", Embedding: vec(2), Metadata: meta("source")})
		e.put1("b", store.Fact{ID: "f2", Text: "source two", Embedding: vec(0, 2), Metadata: meta("source")})
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "target one", Embedding: vec(3), Metadata: meta("target")})
		e.put1(store.DefaultBranch, store.Fact{ID: "f3", Text: "target three", Embedding: vec(0, 0, 3), Metadata: meta("target")})
		// records lists a diff's records, each once.
		records := func(d *store.Diff) []*store.Record {
			var out []*store.Record
			add := func(c *store.Change) {
				for _, r := range []*store.Record{&c.Before, &c.After} {
					if *r != nil {
						out = append(out, r)
					}
				}
			}
			for i := range d.SourceChanges {
				add(&d.SourceChanges[i])
			}
			for i := range d.TargetChanges {
				add(&d.TargetChanges[i])
			}
			for i := range d.Conflicts {
				add(&d.Conflicts[i].Source)
				add(&d.Conflicts[i].Target)
			}
			return out
		}
		diffs := map[string]func() (*store.Diff, error){
			"Diff":     func() (*store.Diff, error) { return e.s.Diff(e.ctx, "b", store.DefaultBranch) },
			"DiffLean": func() (*store.Diff, error) { return store.DiffLean(e.ctx, e.s, "b", store.DefaultBranch) },
		}
		for name, diff := range diffs {
			want, err := diff()
			if err != nil {
				e.t.Fatalf("%s: %v", name, err)
			}
			if len(want.SourceChanges) == 0 || len(want.TargetChanges) == 0 || len(want.Conflicts) == 0 {
				e.t.Fatalf("%s = %+v; want changes on both sides and a conflict", name, want)
			}
			for _, r := range records(want) {
				*r = store.Clone(*r)
			}
			for range 2 {
				d, err := diff()
				if err != nil {
					e.t.Fatalf("%s: %v", name, err)
				}
				// Changing what a diff returned changes neither the store nor a later diff.
				for _, r := range records(d) {
					f := (*r).(store.Fact)
					if len(f.Embedding) > 0 {
						f.Embedding[0] = 42
					}
					f.Metadata["k"] = "changed"
				}
			}
			if got, err := diff(); err != nil || !reflect.DeepEqual(got, want) {
				e.t.Errorf("%s after its records were changed = %+v, %v; want %+v", name, got, err, want)
			}
		}
		for _, at := range []struct {
			branch, id, meta string
		}{{"b", "f1", "source"}, {"b", "f2", "source"}, {store.DefaultBranch, "f1", "target"}, {store.DefaultBranch, "f3", "target"}} {
			f := e.get(head(at.branch), store.Ref{Kind: store.KindFact, ID: at.id}).(store.Fact)
			if f.Embedding[0] == 42 || f.Metadata["k"] != at.meta {
				e.t.Errorf("Get %s on %s after a diff's records were changed = %+v", at.id, at.branch, f)
			}
		}
	})

	subtest(t, h, area, "unknown branch", func(e *env) {
		_, err := e.s.Diff(e.ctx, "nope", store.DefaultBranch)
		isErr(e.t, "unknown source", err, store.ErrBranchNotFound)
		_, err = e.s.Diff(e.ctx, store.DefaultBranch, "nope")
		isErr(e.t, "unknown target", err, store.ErrBranchNotFound)
	})
}

// diff runs a Diff and fails the test on error.
func (e *env) diff(source, target string) *store.Diff {
	e.t.Helper()
	d, err := e.s.Diff(e.ctx, source, target)
	if err != nil {
		e.t.Fatalf("Diff(%s, %s): %v", source, target, err)
	}
	if d == nil {
		e.t.Fatalf("Diff(%s, %s) returned nil", source, target)
	}
	return d
}

// checkDiff compares a diff with the expected changes and conflicts. The merge base is
// base as of the fork of forked; Before and After are compared without their Branch
// field. Changes must be sorted by kind, then id.
func (e *env) checkDiff(d *store.Diff, source, target, base string, forked store.Branch, src, tgt []store.Change, conflicts []store.Conflict) {
	e.t.Helper()
	if d.Source != source || d.Target != target || d.Base != base {
		e.t.Errorf("Diff Source, Target, Base = %q, %q, %q; want %q, %q, %q", d.Source, d.Target, d.Base, source, target, base)
	}
	// BaseAt is an instant at which Base shows the merge base: every change's Before,
	// and none of the records added since.
	if d.BaseAt.IsZero() {
		e.t.Errorf("Diff BaseAt is zero")
	} else {
		atBase := atTime(base, d.BaseAt)
		for _, c := range slices.Concat(src, tgt) {
			got, err := e.s.Get(e.ctx, atBase, c.Ref)
			switch {
			case c.Before == nil && !errors.Is(err, store.ErrNotFound):
				e.t.Errorf("Get(%v) on %s at BaseAt %v = %s, %v; want ErrNotFound: it was added after the merge base (%s forked at %v)",
					c.Ref, base, d.BaseAt, describe(got), err, forked.Name, forked.ForkedAt)
			case c.Before != nil && err != nil:
				e.t.Errorf("Get(%v) on %s at BaseAt %v: %v; want the merge base version (%s forked at %v)", c.Ref, base, d.BaseAt, err, forked.Name, forked.ForkedAt)
			case c.Before != nil:
				same(e.t, fmt.Sprintf("Get(%v) on %s at BaseAt", c.Ref, base), c.Before, got, ignoreBranch)
			}
		}
	}
	if h := e.getBranch(target).Head; d.TargetHead != h {
		e.t.Errorf("Diff TargetHead = %d; want GetBranch(%s).Head = %d", d.TargetHead, target, h)
	}
	checkChangeOrder(e.t, "SourceChanges", d.SourceChanges)
	checkChangeOrder(e.t, "TargetChanges", d.TargetChanges)
	same(e.t, "SourceChanges", sortChanges(src), sortChanges(d.SourceChanges), ignoreBranch)
	same(e.t, "TargetChanges", sortChanges(tgt), sortChanges(d.TargetChanges), ignoreBranch)
	got := slices.Clone(d.Conflicts)
	want := slices.Clone(conflicts)
	byRef := func(a, b store.Conflict) int {
		return cmp.Or(cmp.Compare(a.Ref.Kind, b.Ref.Kind), cmp.Compare(a.Ref.ID, b.Ref.ID), cmp.Compare(a.Reason, b.Reason))
	}
	slices.SortFunc(got, byRef)
	slices.SortFunc(want, byRef)
	same(e.t, "Conflicts", want, got, ignoreBranch)
	if d.Empty() != (len(src)+len(tgt)+len(conflicts) == 0) {
		e.t.Errorf("Diff.Empty() = %v", d.Empty())
	}
}

// sortChanges returns changes sorted by kind name, then id.
func sortChanges(cs []store.Change) []store.Change {
	out := slices.Clone(cs)
	slices.SortFunc(out, func(a, b store.Change) int {
		return cmp.Or(cmp.Compare(a.Ref.Kind, b.Ref.Kind), cmp.Compare(a.Ref.ID, b.Ref.ID))
	})
	return out
}

// checkChangeOrder checks that changes are grouped by kind, in one of the two readings
// of "sorted by kind" (store.Kinds order, or kind name), with ids ascending per kind.
func checkChangeOrder(t *testing.T, what string, cs []store.Change) {
	t.Helper()
	byName := func(a, b store.Change) int {
		return cmp.Or(cmp.Compare(a.Ref.Kind, b.Ref.Kind), cmp.Compare(a.Ref.ID, b.Ref.ID))
	}
	byKinds := func(a, b store.Change) int {
		return cmp.Or(cmp.Compare(slices.Index(store.Kinds, a.Ref.Kind), slices.Index(store.Kinds, b.Ref.Kind)), cmp.Compare(a.Ref.ID, b.Ref.ID))
	}
	if !slices.IsSortedFunc(cs, byName) && !slices.IsSortedFunc(cs, byKinds) {
		refs := make([]string, len(cs))
		for i, c := range cs {
			refs[i] = c.Ref.String()
		}
		t.Errorf("%s are not sorted by kind, then id: %v", what, refs)
	}
}
