package storetest

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// testMerge checks merges through the merge engine (every strategy and policy, the
// history, the source's status, gates, dry runs) and Store.ApplyMerge directly (stale
// heads, atomicity, records).
func testMerge(t *testing.T, h Harness) {
	const area = "merge"
	main := head(store.DefaultBranch)
	testMergeEmbeddings(t, h)

	subtest(t, h, area, "native, fail policy", func(e *env) {
		e.mergeFixture()
		before := e.state(main)
		_, err := e.merge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.Native, Policy: store.ConflictFail})
		var mc *store.MergeConflictError
		if !errors.As(err, &mc) {
			e.t.Fatalf("Merge = %v; want a *store.MergeConflictError", err)
		}
		isErr(e.t, "Merge", err, store.ErrConflict)
		var refs []store.Ref
		for _, c := range mc.Conflicts {
			refs = append(refs, c.Ref)
		}
		same(e.t, "conflicting refs", []store.Ref{factRef("f1"), factRef("f6")}, sortRefs(refs))
		e.checkUnchanged(before, "b")
		_, err = e.merge(merge.Request{Source: "b", Target: store.DefaultBranch})
		isErr(e.t, "Merge with the default policy", err, store.ErrConflict)
	})

	subtest(t, h, area, "native, skip policy keeps the target", func(e *env) {
		e.mergeFixture()
		res := e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.Native, Policy: store.ConflictSkip, MergedBy: "agent-a", Message: "skip", MarkMerged: true})
		same(e.t, "main facts", map[string]string{
			"f1": "target one", "f3": "source three", "f4": "source four", "f5": "target five", "f6": "target six",
		}, e.texts(main, store.KindFact))
		same(e.t, "merged items", []store.MergeItem{
			{Ref: factRef("f2"), Action: store.ActionDelete},
			{Ref: factRef("f3"), Action: store.ActionAdopt},
			{Ref: factRef("f4"), Action: store.ActionAdopt},
			{Ref: obsRef("o2"), Action: store.ActionAdopt},
		}, items(res.Record.Merged))
		same(e.t, "rejected items", []store.MergeItem{
			{Ref: factRef("f1"), Action: store.ActionKeepTarget},
			{Ref: factRef("f6"), Action: store.ActionKeepTarget},
		}, items(res.Record.Rejected))
		same(e.t, "resolutions", []store.Resolution{
			{Ref: factRef("f1"), Action: store.ActionKeepTarget},
			{Ref: factRef("f6"), Action: store.ActionKeepTarget},
		}, resolutions(res.Record.Resolutions, false))
		e.checkRecorded(res, store.Native, "agent-a", "skip", true)
	})

	subtest(t, h, area, "a superseding chain that loses a conflict stays out whole", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "p0", Text: "sessions expire after ten minutes"})
		e.fork("b", store.DefaultBranch)
		e.put("b", store.PutOptions{},
			store.Fact{ID: "c1", Text: "sessions expire after twenty minutes", ParentID: "p0"},
			store.Fact{ID: "c2", Text: "sessions expire after thirty minutes", ParentID: "c1"},
			store.Fact{ID: "c3", Text: "sessions expire after forty minutes", ParentID: "c2"},
			store.Fact{ID: "u1", Text: "tokens are signed with ed25519"})
		e.put1(store.DefaultBranch, store.Fact{ID: "t1", Text: "sessions expire after an hour", ParentID: "p0"})
		res := e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.Native, Policy: store.ConflictSkip})
		same(e.t, "main facts", []string{"p0", "t1", "u1"}, e.listIDs(main, store.ListQuery{Kind: store.KindFact, Order: store.OrderID}))
		same(e.t, "merged items", []store.MergeItem{{Ref: factRef("u1"), Action: store.ActionAdopt}}, items(res.Record.Merged))
		same(e.t, "rejected items", []store.MergeItem{
			{Ref: factRef("c1"), Action: store.ActionKeepTarget},
			{Ref: factRef("c2"), Action: store.ActionSkip},
			{Ref: factRef("c3"), Action: store.ActionSkip},
		}, items(res.Record.Rejected))
	})

	subtest(t, h, area, "native, accept policy takes the source", func(e *env) {
		e.mergeFixture()
		res := e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.Native, Policy: store.ConflictAccept, MergedBy: "agent-a"})
		same(e.t, "main facts", map[string]string{
			"f1": "source one", "f3": "source three", "f4": "source four", "f5": "target five", "f6": "source six",
		}, e.texts(main, store.KindFact))
		same(e.t, "f1 on main", e.get(head("b"), factRef("f1")), e.get(main, factRef("f1")), ignoreBranch)
		same(e.t, "merged items", []store.MergeItem{
			{Ref: factRef("f1"), Action: store.ActionAdopt},
			{Ref: factRef("f2"), Action: store.ActionDelete},
			{Ref: factRef("f3"), Action: store.ActionAdopt},
			{Ref: factRef("f4"), Action: store.ActionAdopt},
			{Ref: factRef("f6"), Action: store.ActionAdopt},
			{Ref: obsRef("o2"), Action: store.ActionAdopt},
		}, items(res.Record.Merged))
		same(e.t, "resolutions", []store.Resolution{
			{Ref: factRef("f1"), Action: store.ActionAdopt},
			{Ref: factRef("f6"), Action: store.ActionAdopt},
		}, resolutions(res.Record.Resolutions, false))
		e.checkRecorded(res, store.Native, "agent-a", "", false)
		if d := e.diff("b", store.DefaultBranch); len(d.SourceChanges) != 0 || len(d.Conflicts) != 0 {
			e.t.Errorf("Diff after an accept merge: %d source changes, %d conflicts; want none", len(d.SourceChanges), len(d.Conflicts))
		}
	})

	subtest(t, h, area, "verdicts on an inherited fact from two siblings", func(e *env) {
		for _, id := range []string{"f1", "f2", "f3"} {
			e.put1(store.DefaultBranch, store.Fact{ID: id, Text: "unverified fact " + id})
		}
		e.fork("x", store.DefaultBranch)
		e.fork("y", store.DefaultBranch)
		judge := func(branch, id string, status store.VerificationStatus, score float64, at time.Time) store.Record {
			f := e.get(head(branch), factRef(id)).(store.Fact)
			f.Verify = store.Verification{Status: status, Score: score, By: "judge on " + branch, At: at, Notes: "seen on " + branch}
			f.Status = store.FactVerified
			if status == store.Invalidated {
				f.Status = store.FactInvalidated
			}
			f.UpdatedAt = at
			return e.put1(branch, f).Record
		}
		t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		x1 := judge("x", "f1", store.Verified, 0.8, t0)
		judge("x", "f2", store.Verified, 0.8, t0)
		judge("x", "f3", store.Verified, 0.8, t0)
		judge("y", "f1", store.Verified, 0.8, t0.Add(time.Minute))
		judge("y", "f2", store.Verified, 0.9, t0.Add(time.Minute))
		judge("y", "f3", store.Invalidated, 0.2, t0.Add(time.Minute))
		e.mustMerge(merge.Request{Source: "x", Target: store.DefaultBranch, Strategy: store.Native, Policy: store.ConflictFail})

		// The same status from both judges has converged: neither a change nor a
		// conflict, and main keeps the verdict it already holds. Opposite statuses
		// disagree.
		d := e.diff("y", store.DefaultBranch)
		var changed, conflicts []store.Ref
		for _, c := range d.SourceChanges {
			changed = append(changed, c.Ref)
		}
		for _, c := range d.Conflicts {
			if c.Reason != store.BothChanged {
				e.t.Errorf("conflict on %v: reason %q; want %q", c.Ref, c.Reason, store.BothChanged)
			}
			conflicts = append(conflicts, c.Ref)
		}
		same(e.t, "y's changes against main", []store.Ref{factRef("f3")}, changed)
		same(e.t, "conflicts", []store.Ref{factRef("f3")}, conflicts)
		res := e.mustMerge(merge.Request{Source: "y", Target: store.DefaultBranch, Strategy: store.Native, Policy: store.ConflictSkip})
		same(e.t, "merged items", []store.MergeItem(nil), items(res.Record.Merged))
		same(e.t, "f1 on main", x1, e.get(main, factRef("f1")), ignoreBranch)
		if d := e.diff("y", store.DefaultBranch); len(d.Conflicts) != 0 || len(d.SourceChanges) != 0 {
			e.t.Errorf("Diff(y, main) after the merge: %d changes, %d conflicts; want none", len(d.SourceChanges), len(d.Conflicts))
		}
	})

	subtest(t, h, area, "cherry-pick copies exactly the picked records", func(e *env) {
		e.mergeFixture()
		res := e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.CherryPick,
			Pick: []store.Ref{factRef("f4"), factRef("f3"), obsRef("o2")}, MergedBy: "agent-a"})
		same(e.t, "main facts", map[string]string{
			"f1": "target one", "f2": "base two", "f3": "source three", "f4": "source four", "f5": "target five", "f6": "target six",
		}, e.texts(main, store.KindFact))
		same(e.t, "main observations", map[string]string{"o1": "base obs", "o2": "source obs"}, e.texts(main, store.KindObservation))
		same(e.t, "merged items", []store.MergeItem{
			{Ref: factRef("f3"), Action: store.ActionAdopt},
			{Ref: factRef("f4"), Action: store.ActionAdopt},
			{Ref: obsRef("o2"), Action: store.ActionAdopt},
		}, items(res.Record.Merged))
		e.checkRecorded(res, store.CherryPick, "agent-a", "", false)
	})

	subtest(t, h, area, "squash collapses a superseded chain", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "f0", Text: "unrelated base fact", Embedding: vec(0, 0, 1)})
		e.fork("b", store.DefaultBranch)
		opts := store.PutOptions{DedupeThreshold: 0.9}
		if r := e.put("b", opts, store.Fact{ID: "fa", Text: "alpha first draft", Embedding: vec(1)})[0]; r.Outcome != store.Created {
			e.t.Fatalf("fa: %q", r.Outcome)
		}
		if r := e.put("b", opts, store.Fact{ID: "fb", Text: "alpha second draft", Embedding: vec(24, 7)})[0]; r.Outcome != store.Superseded || r.Replaced != "fa" {
			e.t.Fatalf("fb: %q replacing %q; want superseded fa", r.Outcome, r.Replaced)
		}
		if r := e.put("b", opts, store.Fact{ID: "fc", Text: "alpha final version", Embedding: vec(4, 1)})[0]; r.Outcome != store.Superseded || r.Replaced != "fb" {
			e.t.Fatalf("fc: %q replacing %q; want superseded fb", r.Outcome, r.Replaced)
		}
		e.put1("b", store.Fact{ID: "g1", Text: "plain addition"})
		res := e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.Squash, MergedBy: "agent-a", MarkMerged: true})
		same(e.t, "main facts", map[string]string{"f0": "unrelated base fact", "fc": "alpha final version", "g1": "plain addition"},
			e.texts(main, store.KindFact))
		e.missing(main, factRef("fa"))
		e.missing(main, factRef("fb"))
		if s := e.get(main, factRef("fc")).(store.Fact).Status; !s.Live() {
			e.t.Errorf("fc on main: Status %q; want a live status", s)
		}
		var merged []store.Ref
		for _, it := range res.Record.Merged {
			merged = append(merged, it.Ref)
		}
		same(e.t, "merged refs", []store.Ref{factRef("fc"), factRef("g1")}, sortRefs(merged))
		e.checkRecorded(res, store.Squash, "agent-a", "", true)
	})

	subtest(t, h, area, "auto resolves conflicts with the default resolver", func(e *env) {
		e.mergeFixture()
		res := e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.Auto, MergedBy: "agent-a"})
		// f1: source confidence 0.9 > target 0.5, the source wins; f6: 0.3 < 0.7, the target wins.
		same(e.t, "main facts", map[string]string{
			"f1": "source one", "f3": "source three", "f4": "source four", "f5": "target five", "f6": "target six",
		}, e.texts(main, store.KindFact))
		same(e.t, "main observations", map[string]string{"o1": "base obs", "o2": "source obs"}, e.texts(main, store.KindObservation))
		same(e.t, "resolutions", []store.Resolution{
			{Ref: factRef("f1"), Action: store.ActionAdopt, By: "resolver:default"},
			{Ref: factRef("f6"), Action: store.ActionKeepTarget, By: "resolver:default"},
		}, resolutions(res.Record.Resolutions, true))
		e.checkRecorded(res, store.Auto, "agent-a", "", false)
	})

	subtest(t, h, area, "history is newest first", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "f0", Text: "base"})
		e.fork("b1", store.DefaultBranch)
		e.fork("b2", store.DefaultBranch)
		e.put1("b1", store.Fact{ID: "f1", Text: "from b1"})
		e.put1("b2", store.Fact{ID: "f2", Text: "from b2"})
		m1 := e.mustMerge(merge.Request{Source: "b1", Target: store.DefaultBranch, MergedBy: "first"}).Record
		m2 := e.mustMerge(merge.Request{Source: "b2", Target: store.DefaultBranch, Strategy: store.CherryPick, Pick: []store.Ref{factRef("f2")}, MergedBy: "second"}).Record
		for _, c := range []struct {
			name string
			f    store.MergeFilter
			want []store.MergeRecord
		}{
			{"all", store.MergeFilter{}, []store.MergeRecord{m2, m1}},
			{"source", store.MergeFilter{Source: "b1"}, []store.MergeRecord{m1}},
			{"target", store.MergeFilter{Target: store.DefaultBranch}, []store.MergeRecord{m2, m1}},
			{"branch", store.MergeFilter{Branch: "b2"}, []store.MergeRecord{m2}},
			{"limit", store.MergeFilter{Limit: 1}, []store.MergeRecord{m2}},
			{"no match", store.MergeFilter{Target: "b1"}, []store.MergeRecord{}},
		} {
			same(e.t, "ListMerges "+c.name, c.want, e.listMerges(c.f))
		}
	})

	subtest(t, h, area, "a gate can block a merge", func(e *env) {
		e.mergeFixture()
		before := e.state(main)
		offenses := []store.Offense{{Ref: factRef("f4"), Reason: "not verified"}}
		var saw []store.Ref
		gate := merge.GateFunc("require-verified", func(ctx context.Context, p *store.MergePlan) ([]store.Offense, error) {
			for _, r := range p.Puts {
				saw = append(saw, store.RefOf(r))
			}
			return offenses, nil
		})
		_, err := e.merge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.Native, Policy: store.ConflictAccept, Gate: gate})
		var mb *store.MergeBlockedError
		if !errors.As(err, &mb) {
			e.t.Fatalf("Merge = %v; want a *store.MergeBlockedError", err)
		}
		isErr(e.t, "Merge", err, store.ErrMergeBlocked)
		same(e.t, "blocked merge", store.MergeBlockedError{Source: "b", Target: store.DefaultBranch, Gate: "require-verified", Offenses: offenses}, *mb)
		if !slices.Contains(saw, factRef("f4")) {
			e.t.Errorf("the gate saw puts %v; want f4 among them", saw)
		}
		e.checkUnchanged(before, "b")
	})

	subtest(t, h, area, "a dry run changes nothing", func(e *env) {
		e.mergeFixture()
		before := e.state(main)
		res, err := e.merge(merge.Request{Source: "b", Target: store.DefaultBranch, Policy: store.ConflictAccept, DryRun: true})
		if err != nil {
			e.t.Fatalf("Merge(dry run): %v", err)
		}
		if res.Applied || res.Diff == nil || len(res.Record.Merged) == 0 {
			e.t.Errorf("dry run: Applied %v, Diff %v, %d merged items; want false, a diff, items", res.Applied, res.Diff != nil, len(res.Record.Merged))
		}
		e.checkUnchanged(before, "b")
	})

	subtest(t, h, area, "invalid requests", func(e *env) {
		e.fork("b", store.DefaultBranch)
		_, err := e.merge(merge.Request{Source: "b", Target: "b"})
		isInvalid(e.t, "merging a branch into itself", err, "")
		_, err = e.merge(merge.Request{Source: "nope", Target: store.DefaultBranch})
		isErr(e.t, "merging an unknown branch", err, store.ErrBranchNotFound)
		_, err = e.merge(merge.Request{Source: "b", Target: "nope"})
		isErr(e.t, "merging into an unknown branch", err, store.ErrBranchNotFound)
	})

	subtest(t, h, area, "ApplyMerge refuses a stale plan", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "base"})
		e.fork("b", store.DefaultBranch)
		e.put1("b", store.Fact{ID: "g1", Text: "to merge"})
		d := e.diff("b", store.DefaultBranch)
		e.put1(store.DefaultBranch, store.Fact{ID: "f2", Text: "written after the diff"})
		before := e.state(main)
		_, err := e.s.ApplyMerge(e.ctx, store.MergePlan{Source: "b", Target: store.DefaultBranch, ExpectHead: d.TargetHead,
			Puts: []store.Record{d.SourceChanges[0].After}, Deletes: []store.Ref{factRef("f1")}, MarkMerged: true,
			Record: store.MergeRecord{ID: "stale", Source: "b", Target: store.DefaultBranch, Strategy: store.Native}})
		isErr(e.t, "ApplyMerge", err, store.ErrStale)
		e.checkUnchanged(before, "b")
	})

	subtest(t, h, area, "ApplyMerge is atomic", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "base"})
		e.fork("b", store.DefaultBranch)
		before := e.state(main)
		_, err := e.s.ApplyMerge(e.ctx, store.MergePlan{Source: "b", Target: store.DefaultBranch, ExpectHead: e.getBranch(store.DefaultBranch).Head,
			Puts:    []store.Record{store.Fact{ID: "g1", Text: "valid"}, store.Observation{ID: "o1", Type: store.ObsError, Summary: "valid"}, store.Fact{ID: "g2", Text: ""}},
			Deletes: []store.Ref{factRef("f1")}, MarkMerged: true,
			Record: store.MergeRecord{ID: "broken", Source: "b", Target: store.DefaultBranch, Strategy: store.Native}})
		isInvalid(e.t, "ApplyMerge with an empty fact text", err, "Fact.Text")
		e.checkUnchanged(before, "b")
	})

	subtest(t, h, area, "into a fork nothing was written to, after its parent moved on", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "a1", Text: "the cache holds ten entries"},
			store.Fact{ID: "a2", Text: "logs rotate daily"},
			store.Fact{ID: "a3", Text: "the queue has three workers"})
		e.fork("t", store.DefaultBranch)
		// main moves on: none of it may show on t, nor in a diff or a merge into t.
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "a1", Text: "the cache holds a hundred entries"},
			store.Fact{ID: "a4", Text: "backups run at midnight"})
		e.del(store.DefaultBranch, factRef("a2"))
		e.fork("s", "t")
		// s changes what main changed after t's fork too: t, and so the diff and the
		// merge, must see those records as they were at the fork.
		e.put("s", store.PutOptions{},
			store.Fact{ID: "a1", Text: "the cache holds fifty entries"},
			store.Fact{ID: "a2", Text: "logs rotate hourly"},
			store.Fact{ID: "a3", Text: "the queue has five workers"},
			store.Fact{ID: "s1", Text: "alerts page the on-call engineer"})
		d := e.diff("s", "t")
		var src []store.Ref
		before := map[string]string{}
		for _, c := range d.SourceChanges {
			src = append(src, c.Ref)
			if f, ok := c.Before.(store.Fact); ok {
				before[f.ID] = f.Text
			}
		}
		same(e.t, "source changes", []store.Ref{factRef("a1"), factRef("a2"), factRef("a3"), factRef("s1")}, sortRefs(src))
		same(e.t, "target changes", 0, len(d.TargetChanges))
		same(e.t, "conflicts", 0, len(d.Conflicts))
		same(e.t, "versions before the changes", map[string]string{
			"a1": "the cache holds ten entries", "a2": "logs rotate daily", "a3": "the queue has three workers",
		}, before)
		e.mustMerge(merge.Request{Source: "s", Target: "t", Strategy: store.Native, Policy: store.ConflictFail})
		want := map[string]string{
			"a1": "the cache holds fifty entries", "a2": "logs rotate hourly",
			"a3": "the queue has five workers", "s1": "alerts page the on-call engineer",
		}
		same(e.t, "t after the merge", want, e.texts(head("t"), store.KindFact))
		// t is written now: a second merge reads its own tables.
		e.put("s", store.PutOptions{}, store.Fact{ID: "a1", Text: "the cache holds twenty entries"})
		e.mustMerge(merge.Request{Source: "s", Target: "t", Strategy: store.Native, Policy: store.ConflictFail})
		want["a1"] = "the cache holds twenty entries"
		same(e.t, "t after the second merge", want, e.texts(head("t"), store.KindFact))
		same(e.t, "main", map[string]string{
			"a1": "the cache holds a hundred entries", "a3": "the queue has three workers", "a4": "backups run at midnight",
		}, e.texts(main, store.KindFact))
	})

	subtest(t, h, area, "ApplyMerge writes and records", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "f1", Text: "base one"}, store.Fact{ID: "f2", Text: "base two"})
		e.fork("b", store.DefaultBranch)
		put := store.Fact{ID: "g1", Text: "merged verbatim", Confidence: 0.4, Status: store.FactVerified, CreatedAt: micro(1), UpdatedAt: micro(2)}
		rec := store.MergeRecord{ID: "m-direct", Source: "b", Target: store.DefaultBranch, Strategy: store.Native,
			Merged:      []store.MergeItem{{Ref: factRef("g1"), Action: store.ActionAdopt}, {Ref: factRef("f2"), Action: store.ActionDelete}},
			Rejected:    []store.MergeItem{{Ref: factRef("f9"), Action: store.ActionSkip, Reason: "gated"}},
			Resolutions: []store.Resolution{{Ref: factRef("f1"), Action: store.ActionKeepTarget, By: "policy", Reason: "skip"}},
			MergedBy:    "tester", Message: "direct", Meta: map[string]string{"k": "v"}}
		got, err := e.s.ApplyMerge(e.ctx, store.MergePlan{Source: "b", Target: store.DefaultBranch, ExpectHead: e.getBranch(store.DefaultBranch).Head,
			Puts: []store.Record{put}, Deletes: []store.Ref{factRef("f2")}, MarkMerged: true, Record: rec})
		if err != nil {
			e.t.Fatalf("ApplyMerge: %v", err)
		}
		if got.CreatedAt.IsZero() {
			e.t.Errorf("MergeRecord.CreatedAt is zero; the store must stamp it")
		}
		rec.CreatedAt = got.CreatedAt
		same(e.t, "returned record", rec, got)
		same(e.t, "ListMerges", []store.MergeRecord{rec}, e.listMerges(store.MergeFilter{}))
		want := put
		want.Branch = store.DefaultBranch
		same(e.t, "written fact", store.Record(want), e.get(main, factRef("g1")))
		e.missing(main, factRef("f2"))
		b := e.getBranch("b")
		if b.Status != store.BranchMerged || b.MergedInto != store.DefaultBranch || b.MergedAt.IsZero() {
			e.t.Errorf("source branch: Status %q, MergedInto %q, MergedAt %v; want merged into main", b.Status, b.MergedInto, b.MergedAt)
		}
	})
}

// mergeFixture writes a base to main, forks b and changes both sides:
//
//	base:   f1 "base one", f2 "base two", f3 "base three", f6 "base six", o1 "base obs"
//	b:      f1 "source one" (confidence 0.9), f6 "source six" (0.3), f3 "source three",
//	        f4 "source four" added, f2 deleted, o2 "source obs" added
//	main:   f1 "target one" (0.5), f6 "target six" (0.7), f5 "target five" added
//
// f1 and f6 conflict (both changed).
func (e *env) mergeFixture() {
	e.t.Helper()
	e.put(store.DefaultBranch, store.PutOptions{},
		store.Fact{ID: "f1", Text: "base one"}, store.Fact{ID: "f2", Text: "base two"},
		store.Fact{ID: "f3", Text: "base three"}, store.Fact{ID: "f6", Text: "base six"},
		store.Observation{ID: "o1", Type: store.ObsDiscovery, Summary: "base obs"})
	e.fork("b", store.DefaultBranch)
	e.put("b", store.PutOptions{},
		store.Fact{ID: "f1", Text: "source one", Confidence: 0.9}, store.Fact{ID: "f6", Text: "source six", Confidence: 0.3},
		store.Fact{ID: "f3", Text: "source three"}, store.Fact{ID: "f4", Text: "source four"},
		store.Observation{ID: "o2", Type: store.ObsInsight, Summary: "source obs"})
	e.del("b", factRef("f2"))
	e.put(store.DefaultBranch, store.PutOptions{},
		store.Fact{ID: "f1", Text: "target one", Confidence: 0.5}, store.Fact{ID: "f6", Text: "target six", Confidence: 0.7},
		store.Fact{ID: "f5", Text: "target five"})
}

// merge runs the merge engine on the store.
func (e *env) merge(req merge.Request) (merge.Result, error) {
	eng := &merge.Engine{Store: e.s}
	return eng.Merge(e.ctx, req)
}

// mustMerge runs a merge and fails the test on error.
func (e *env) mustMerge(req merge.Request) merge.Result {
	e.t.Helper()
	res, err := e.merge(req)
	if err != nil {
		e.t.Fatalf("Merge(%s into %s, %s): %v", req.Source, req.Target, req.Strategy, err)
	}
	if !res.Applied {
		e.t.Fatalf("Merge: Applied = false")
	}
	return res
}

// listMerges lists merge records and fails the test on error.
func (e *env) listMerges(f store.MergeFilter) []store.MergeRecord {
	e.t.Helper()
	ms, err := e.s.ListMerges(e.ctx, f)
	if err != nil {
		e.t.Fatalf("ListMerges(%+v): %v", f, err)
	}
	return ms
}

// texts maps the id of every record of kind k in v to its text.
func (e *env) texts(v store.View, k store.Kind) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for _, r := range e.list(v, store.ListQuery{Kind: k}) {
		out[r.RecordID()] = textOf(r)
	}
	return out
}

// checkRecorded checks that a merge from b to main is the newest merge record and that
// the source's status is merged, or still active when markMerged is false.
func (e *env) checkRecorded(res merge.Result, strategy store.Strategy, by, msg string, markMerged bool) {
	e.t.Helper()
	r := res.Record
	if r.ID == "" || r.CreatedAt.IsZero() || r.Source != "b" || r.Target != store.DefaultBranch || r.Strategy != strategy || r.MergedBy != by || r.Message != msg {
		e.t.Errorf("MergeRecord = %+v; want an id, a time, b into main, strategy %s, by %q, message %q", r, strategy, by, msg)
	}
	ms := e.listMerges(store.MergeFilter{})
	if len(ms) != 1 {
		e.t.Fatalf("ListMerges: %d records; want 1", len(ms))
	}
	same(e.t, "ListMerges()[0]", r, ms[0])
	b := e.getBranch("b")
	want := store.BranchActive
	if markMerged {
		want = store.BranchMerged
	}
	if b.Status != want {
		e.t.Errorf("source branch Status = %q; want %q", b.Status, want)
	}
	if markMerged && (b.MergedInto != store.DefaultBranch || b.MergedAt.IsZero()) {
		e.t.Errorf("source branch MergedInto %q, MergedAt %v; want main and a time", b.MergedInto, b.MergedAt)
	}
}

// checkUnchanged checks that main still shows before, that no merge was recorded and
// that source is still active.
func (e *env) checkUnchanged(before map[store.Kind][]store.Record, source string) {
	e.t.Helper()
	same(e.t, "main after a refused merge", before, e.state(head(store.DefaultBranch)))
	same(e.t, "ListMerges after a refused merge", []store.MergeRecord{}, e.listMerges(store.MergeFilter{}))
	if s := e.getBranch(source).Status; s != store.BranchActive {
		e.t.Errorf("source branch Status = %q after a refused merge; want active", s)
	}
}

// items returns merge items without their reasons, sorted by ref.
func items(its []store.MergeItem) []store.MergeItem {
	out := make([]store.MergeItem, len(its))
	for i, it := range its {
		out[i] = store.MergeItem{Ref: it.Ref, Action: it.Action}
	}
	slices.SortFunc(out, func(a, b store.MergeItem) int { return compareRefs(a.Ref, b.Ref) })
	return out
}

// resolutions returns resolutions with only Ref and Action, and By when withBy is set,
// sorted by ref.
func resolutions(rs []store.Resolution, withBy bool) []store.Resolution {
	out := make([]store.Resolution, len(rs))
	for i, r := range rs {
		out[i] = store.Resolution{Ref: r.Ref, Action: r.Action}
		if withBy {
			out[i].By = r.By
		}
	}
	slices.SortFunc(out, func(a, b store.Resolution) int { return compareRefs(a.Ref, b.Ref) })
	return out
}

// sortRefs returns refs sorted by kind, then id.
func sortRefs(refs []store.Ref) []store.Ref {
	out := slices.Clone(refs)
	slices.SortFunc(out, compareRefs)
	return out
}

func compareRefs(a, b store.Ref) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ID, b.ID))
}
