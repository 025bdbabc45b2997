package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// testRemerge checks that a merge is a new merge base: repeated merges of the same pair
// in either direction, syncs of the parent into the child, and criss-cross merges
// replay nothing already merged and report no conflict over it.
func testRemerge(t *testing.T, h Harness) {
	const area = "remerge"
	main := head(store.DefaultBranch)

	subtest(t, h, area, "a merged change is not diffed again", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "m0", Text: "the service listens on port 8080"})
		e.fork("b", store.DefaultBranch)
		e.put1("b", store.Fact{ID: "b1", Text: "retries back off exponentially"})
		e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch})
		e.put1(store.DefaultBranch, store.Fact{ID: "b1", Text: "retries back off exponentially, capped at a minute"})
		e.put1("b", store.Fact{ID: "n2", Text: "health checks run every ten seconds"})

		d := e.diff("b", store.DefaultBranch)
		same(e.t, "source changes", []changeSummary{{factRef("n2"), store.OpAdded}}, summarize(d.SourceChanges))
		same(e.t, "conflicts", []store.Ref(nil), conflictRefs(d))
		res := e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch})
		same(e.t, "merged", []store.MergeItem{{Ref: factRef("n2"), Action: store.ActionAdopt}}, items(res.Record.Merged))
		same(e.t, "main facts", map[string]string{
			"m0": "the service listens on port 8080",
			"b1": "retries back off exponentially, capped at a minute",
			"n2": "health checks run every ten seconds",
		}, e.texts(main, store.KindFact))

		// An accept merge has nothing of b's old b1 to put back either.
		e.put1("b", store.Fact{ID: "n3", Text: "logs rotate daily"})
		res = e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Policy: store.ConflictAccept})
		same(e.t, "merged with accept", []store.MergeItem{{Ref: factRef("n3"), Action: store.ActionAdopt}}, items(res.Record.Merged))
		if got := e.get(main, factRef("b1")).(store.Fact).Text; got != "retries back off exponentially, capped at a minute" {
			e.t.Errorf("b1 on main = %q; want main's newer text", got)
		}
		if d := e.diff("b", store.DefaultBranch); len(d.SourceChanges) != 0 || len(d.Conflicts) != 0 {
			e.t.Errorf("diff after the last merge: source changes %v, conflicts %v; want none", summarize(d.SourceChanges), conflictRefs(d))
		}
	})

	subtest(t, h, area, "a merge before either side wrote keeps a merge base", func(e *env) {
		// b forks and is merged back with nothing to bring, before anything else is
		// written: b and main then descend from each other at one revision, and that
		// point, not an empty base, is where later diffs start.
		e.put1(store.DefaultBranch, store.Fact{ID: "m0", Text: "deploys need a green build"})
		e.fork("b", store.DefaultBranch)
		e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch})
		e.put1(store.DefaultBranch, store.Fact{ID: "m0", Text: "deploys need a green build and a review"})
		e.put1("b", store.Fact{ID: "b1", Text: "the queue drains in order"})

		d := e.diff("b", store.DefaultBranch)
		same(e.t, "source changes", []changeSummary{{factRef("b1"), store.OpAdded}}, summarize(d.SourceChanges))
		same(e.t, "conflicts", []store.Ref(nil), conflictRefs(d))
		res := e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Policy: store.ConflictAccept})
		same(e.t, "merged", []store.MergeItem{{Ref: factRef("b1"), Action: store.ActionAdopt}}, items(res.Record.Merged))
		same(e.t, "main facts", map[string]string{
			"m0": "deploys need a green build and a review",
			"b1": "the queue drains in order",
		}, e.texts(main, store.KindFact))
	})

	subtest(t, h, area, "the merge base moves in both directions", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "m0", Text: "builds run on every push"})
		e.fork("b", store.DefaultBranch)
		e.put1(store.DefaultBranch, store.Fact{ID: "m1", Text: "releases are tagged by hand"})
		e.put1("b", store.Fact{ID: "b1", Text: "the cache is warmed at start"})
		e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch})

		// main into b brings main's own change and nothing of b's back.
		d := e.diff(store.DefaultBranch, "b")
		same(e.t, "main's changes for b", []changeSummary{{factRef("m1"), store.OpAdded}}, summarize(d.SourceChanges))
		same(e.t, "conflicts", []store.Ref(nil), conflictRefs(d))
		e.mustMerge(merge.Request{Source: store.DefaultBranch, Target: "b"})
		same(e.t, "b facts", map[string]string{
			"m0": "builds run on every push", "m1": "releases are tagged by hand", "b1": "the cache is warmed at start",
		}, e.texts(head("b"), store.KindFact))

		// Both sides change what the other merged; each sync takes only the news.
		e.put1("b", store.Fact{ID: "m1", Text: "releases are tagged by the pipeline"})
		e.put1(store.DefaultBranch, store.Fact{ID: "b1", Text: "the cache is warmed lazily"})
		d = e.diff("b", store.DefaultBranch)
		same(e.t, "b's news", []changeSummary{{factRef("m1"), store.OpUpdated}}, summarize(d.SourceChanges))
		same(e.t, "main's news", []changeSummary{{factRef("b1"), store.OpUpdated}}, summarize(d.TargetChanges))
		same(e.t, "conflicts after syncs", []store.Ref(nil), conflictRefs(d))
		e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch})
		e.mustMerge(merge.Request{Source: store.DefaultBranch, Target: "b"})
		want := map[string]string{
			"m0": "builds run on every push", "m1": "releases are tagged by the pipeline", "b1": "the cache is warmed lazily",
		}
		same(e.t, "main after the round trip", want, e.texts(main, store.KindFact))
		same(e.t, "b after the round trip", want, e.texts(head("b"), store.KindFact))
		for _, pair := range [][2]string{{"b", store.DefaultBranch}, {store.DefaultBranch, "b"}} {
			if d := e.diff(pair[0], pair[1]); !d.Empty() {
				e.t.Errorf("Diff(%s, %s) after the round trip: source %v, target %v, conflicts %v; want empty",
					pair[0], pair[1], summarize(d.SourceChanges), summarize(d.TargetChanges), conflictRefs(d))
			}
		}
	})

	subtest(t, h, area, "a decision of a skip merge sticks", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "p", Text: "the timeout is ten seconds"})
		e.fork("b", store.DefaultBranch)
		e.put1("b", store.Fact{ID: "p", Text: "the timeout is twenty seconds"})
		e.put1(store.DefaultBranch, store.Fact{ID: "p", Text: "the timeout is thirty seconds"})
		res := e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Policy: store.ConflictSkip})
		same(e.t, "rejected", []store.MergeItem{{Ref: factRef("p"), Action: store.ActionKeepTarget}}, items(res.Record.Rejected))
		e.put1("b", store.Fact{ID: "q", Text: "the pool holds eight connections"})
		d := e.diff("b", store.DefaultBranch)
		same(e.t, "source changes after the skip", []changeSummary{{factRef("q"), store.OpAdded}}, summarize(d.SourceChanges))
		same(e.t, "conflicts after the skip", []store.Ref(nil), conflictRefs(d))
	})

	subtest(t, h, area, "a cherry-pick does not move the base", func(e *env) {
		e.fork("b", store.DefaultBranch)
		e.put("b", store.PutOptions{},
			store.Fact{ID: "x", Text: "picked fact"},
			store.Fact{ID: "y", Text: "fact left behind"})
		e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.CherryPick, Pick: []store.Ref{factRef("x")}})
		d := e.diff("b", store.DefaultBranch)
		// x is the same on both sides now, so only y is a change.
		same(e.t, "source changes after a pick", []changeSummary{{factRef("y"), store.OpAdded}}, summarize(d.SourceChanges))
	})

	subtest(t, h, area, "criss-cross merges of three branches", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "r", Text: "root fact"})
		e.fork("x", store.DefaultBranch)
		e.fork("y", store.DefaultBranch)
		e.put1("x", store.Fact{ID: "x1", Text: "x's first fact"})
		e.put1("y", store.Fact{ID: "y1", Text: "y's first fact"})
		// Each takes the other's state from before either merge.
		dxy := e.diff("x", "y")
		dyx := e.diff("y", "x")
		e.applyDiff(dxy, "x", "y")
		e.applyDiff(dyx, "y", "x")
		want := map[string]string{"r": "root fact", "x1": "x's first fact", "y1": "y's first fact"}
		same(e.t, "x after the criss-cross", want, e.texts(head("x"), store.KindFact))
		same(e.t, "y after the criss-cross", want, e.texts(head("y"), store.KindFact))

		e.put1("x", store.Fact{ID: "x2", Text: "x's second fact"})
		e.put1("y", store.Fact{ID: "y1", Text: "y's first fact, revised"})
		d := e.diff("x", "y")
		same(e.t, "x's news", []changeSummary{{factRef("x2"), store.OpAdded}}, summarize(d.SourceChanges))
		same(e.t, "y's news", []changeSummary{{factRef("y1"), store.OpUpdated}}, summarize(d.TargetChanges))
		same(e.t, "conflicts after the criss-cross", []store.Ref(nil), conflictRefs(d))

		// A third branch forked from x after the criss-cross merges into main, after x
		// and y did, with nothing of theirs replayed.
		e.fork("z", "x")
		e.put1("z", store.Fact{ID: "z1", Text: "z's fact"})
		e.mustMerge(merge.Request{Source: "x", Target: store.DefaultBranch})
		e.mustMerge(merge.Request{Source: "y", Target: store.DefaultBranch})
		d = e.diff("z", store.DefaultBranch)
		same(e.t, "z's changes against main", []changeSummary{{factRef("z1"), store.OpAdded}}, summarize(d.SourceChanges))
		same(e.t, "conflicts of z and main", []store.Ref(nil), conflictRefs(d))
		e.mustMerge(merge.Request{Source: "z", Target: store.DefaultBranch})
		same(e.t, "main at the end", map[string]string{
			"r": "root fact", "x1": "x's first fact", "x2": "x's second fact", "y1": "y's first fact, revised", "z1": "z's fact",
		}, e.texts(main, store.KindFact))
	})

	subtest(t, h, area, "a sync from main leaves both branches active", func(e *env) {
		e.fork("b", store.DefaultBranch)
		e.put1(store.DefaultBranch, store.Fact{ID: "m1", Text: "a fact for the child"})
		e.mustMerge(merge.Request{Source: store.DefaultBranch, Target: "b"})
		e.put1("b", store.Fact{ID: "b1", Text: "a fact for main"})
		e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch})
		active := e.listBranches(store.BranchFilter{Status: store.BranchActive})
		var names []string
		for _, b := range active {
			names = append(names, b.Name)
		}
		same(e.t, "active branches", []string{"b", store.DefaultBranch}, names)
		_, err := e.merge(merge.Request{Source: store.DefaultBranch, Target: "b", MarkMerged: true})
		isErr(e.t, "marking main merged", err, store.ErrInvalidArgument)
		e.put1("b", store.Fact{ID: "b2", Text: "delivered last"})
		e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, MarkMerged: true})
		if b := e.getBranch("b"); b.Status != store.BranchMerged || b.MergedInto != store.DefaultBranch {
			e.t.Errorf("b after a merge that marks it: %q into %q; want merged into main", b.Status, b.MergedInto)
		}
		// A merged branch stays writable; reactivating it is a matter of labels.
		e.put1("b", store.Fact{ID: "b3", Text: "written after the branch was merged"})
	})

	subtest(t, h, area, "a merged fact with the target's text is deduplicated", func(e *env) {
		e.fork("feature", store.DefaultBranch)
		e.put1(store.DefaultBranch, store.Fact{ID: "on-main", Text: "The cache holds sessions for an hour"})
		e.put1("feature", store.Fact{ID: "on-feature", Text: "the cache holds  sessions for an hour"})
		e.put1("feature", store.Fact{ID: "other", Text: "a fact only the feature has"})
		res := e.mustMerge(merge.Request{Source: "feature", Target: store.DefaultBranch})
		same(e.t, "main facts", map[string]string{
			"on-main": "The cache holds sessions for an hour", "other": "a fact only the feature has",
		}, e.texts(main, store.KindFact))
		same(e.t, "merged items", []store.MergeItem{
			{Ref: factRef("on-feature"), Action: store.ActionDeduplicate},
			{Ref: factRef("other"), Action: store.ActionAdopt},
		}, items(res.Record.Merged))
		for _, it := range res.Record.Merged {
			if it.Action == store.ActionDeduplicate && !strings.Contains(it.Reason, "on-main") {
				e.t.Errorf("deduplicated item reason %q does not name on-main", it.Reason)
			}
		}
	})

	subtest(t, h, area, "concurrent merges into one target all land", func(e *env) {
		const n = 8
		want := map[string]string{}
		for i := range n {
			name := fmt.Sprintf("agent-%d", i)
			e.fork(name, store.DefaultBranch)
			id := fmt.Sprintf("f%d", i)
			e.put1(name, store.Fact{ID: id, Text: fmt.Sprintf("finding number %d of agent %d", i, i)})
			want[id] = fmt.Sprintf("finding number %d of agent %d", i, i)
		}
		// One engine each, as separate processes would have: nothing queues them but
		// the retries.
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				eng := &merge.Engine{Store: e.s}
				_, errs[i] = eng.Merge(e.ctx, merge.Request{Source: fmt.Sprintf("agent-%d", i), Target: store.DefaultBranch})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				e.t.Errorf("merge of agent-%d: %v", i, err)
			}
		}
		same(e.t, "main after the concurrent merges", want, e.texts(main, store.KindFact))
		if got := len(e.listMerges(store.MergeFilter{Target: store.DefaultBranch})); got != n {
			e.t.Errorf("%d merges recorded; want %d", got, n)
		}
	})

	subtest(t, h, area, "the base survives a reopen", func(e *env) {
		if e.h.Reopen == nil {
			e.t.Skip("the store is not durable")
		}
		e.fork("b", store.DefaultBranch)
		e.put1("b", store.Fact{ID: "b1", Text: "first delivery"})
		e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch})
		e.put1(store.DefaultBranch, store.Fact{ID: "b1", Text: "first delivery, amended on main"})
		e.reopen()
		e.put1("b", store.Fact{ID: "b2", Text: "second delivery"})
		d := e.diff("b", store.DefaultBranch)
		same(e.t, "source changes after a reopen", []changeSummary{{factRef("b2"), store.OpAdded}}, summarize(d.SourceChanges))
		same(e.t, "conflicts after a reopen", []store.Ref(nil), conflictRefs(d))
	})
}

// changeSummary is a change without its records.
type changeSummary struct {
	Ref store.Ref
	Op  store.Op
}

func summarize(cs []store.Change) []changeSummary {
	var out []changeSummary
	for _, c := range cs {
		out = append(out, changeSummary{c.Ref, c.Op})
	}
	return out
}

func conflictRefs(d *store.Diff) []store.Ref {
	var out []store.Ref
	for _, c := range d.Conflicts {
		out = append(out, c.Ref)
	}
	return sortRefs(out)
}

// applyDiff merges source into target from a diff taken earlier, as the merge engine
// does with a diff of its own: the source's changes as puts and deletes, recorded with
// the diff's revisions. Two such merges from diffs taken before either was applied make
// a criss-cross.
func (e *env) applyDiff(d *store.Diff, source, target string) {
	e.t.Helper()
	tb := e.getBranch(target)
	plan := store.MergePlan{Source: source, Target: target, ExpectHead: tb.Head, SourceRev: d.SourceRev,
		Record: store.MergeRecord{Strategy: store.Native}}
	for _, c := range slices.Clone(d.SourceChanges) {
		if c.Op == store.OpDeleted {
			plan.Deletes = append(plan.Deletes, c.Ref)
		} else {
			plan.Puts = append(plan.Puts, c.After)
		}
	}
	if _, err := e.s.ApplyMerge(e.ctx, plan); err != nil {
		e.t.Fatalf("ApplyMerge(%s into %s): %v", source, target, err)
	}
}
