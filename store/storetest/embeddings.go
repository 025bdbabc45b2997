package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/day1ai/day1/internal/vectest"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// testMergeEmbeddings checks that merges keep the embeddings of the records they write,
// whatever diff the engine plans from, and the contract of store.LeanDiffer for the
// stores that have it.
func testMergeEmbeddings(t *testing.T, h Harness) {
	const area = "merge"
	main := head(store.DefaultBranch)

	subtest(t, h, area, "merged records keep their embeddings", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "m1", Text: "the cache holds sessions", Embedding: vec(1)},
			store.Fact{ID: "p0", Text: "deploys run on fridays", Embedding: vec(0, 1)})
		e.fork("b", store.DefaultBranch)
		src := []store.Record{
			store.Fact{ID: "m1", Text: "the cache holds sessions and tokens", Embedding: vec(1, 1)},
			store.Fact{ID: "n1", Text: "the queue retries three times", Embedding: vec(0, 0, 1)},
			store.Fact{ID: "c1", Text: "deploys run on mondays", ParentID: "p0", Embedding: vec(0, 1, 0, 1)},
			store.Observation{ID: "o1", Type: store.ObsDiscovery, Summary: "the queue drops poison messages", Embedding: vec(0, 0, 0, 1)},
		}
		e.put("b", store.PutOptions{}, src...)
		// A competing successor of p0 on main: a BothSuperseded conflict that the accept
		// policy settles by marking it superseded.
		t1 := store.Fact{ID: "t1", Text: "deploys run on tuesdays", ParentID: "p0", Embedding: vec(0, 1, 1)}
		e.put1(store.DefaultBranch, t1)
		e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.Native, Policy: store.ConflictAccept})
		for _, r := range src {
			e.sameEmbedding(main, r)
		}
		got := e.get(main, factRef("t1")).(store.Fact)
		if got.Status != store.FactSuperseded {
			e.t.Errorf("t1 after the merge: status %q, want superseded", got.Status)
		}
		e.sameEmbedding(main, t1)
		if hits := e.search(main, store.SearchQuery{Vector: vec(0, 0, 1), Mode: store.Vector, Limit: 1}); len(hits) != 1 || hits[0].Record.RecordID() != "n1" {
			e.t.Errorf("vector search for n1's embedding on main: %v", hitIDs(hits))
		}

		// A cherry-pick of a record added later.
		e.fork("c", store.DefaultBranch)
		n2 := store.Fact{ID: "n2", Text: "the scheduler runs hourly", Embedding: vec(0, 0, 0, 0, 1)}
		e.put("c", store.PutOptions{}, n2, store.Fact{ID: "n3", Text: "left behind", Embedding: vec(0, 0, 0, 0, 0, 1)})
		e.mustMerge(merge.Request{Source: "c", Target: store.DefaultBranch, Strategy: store.CherryPick, Pick: []store.Ref{factRef("n2")}})
		e.sameEmbedding(main, n2)
	})

	subtest(t, h, area, "a merge of thousands of records lands whole", func(e *env) {
		// More records than a store may write at once (the MatrixOne store writes a
		// merge a thousand records at a time): every one lands, with its embedding, in
		// one merge; the target's own versions are replaced or deleted whatever part
		// of the plan they fall in.
		const n = 2500
		var old []store.Record
		for i := range 30 {
			old = append(old, store.Fact{ID: fmt.Sprintf("f%04d", i*97), Text: fmt.Sprintf("old fact %d", i), Embedding: spread(i)})
		}
		e.put(store.DefaultBranch, store.PutOptions{}, old...)
		e.fork("b", store.DefaultBranch)
		want := map[string]store.Record{}
		for _, r := range old {
			want[r.RecordID()] = r
		}
		var recs []store.Record
		for i := range n {
			f := store.Fact{ID: fmt.Sprintf("f%04d", i), Text: fmt.Sprintf("fact number %d of the large merge", i), Embedding: spread(i + 1)}
			recs = append(recs, f)
			want[f.ID] = f
		}
		e.put("b", store.PutOptions{}, recs...)
		e.del("b", factRef("f0097"))
		delete(want, "f0097")
		res := e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.Native})
		if got := len(res.Record.Merged); got != n {
			e.t.Errorf("merged %d items, want %d", got, n)
		}
		got := e.list(main, store.ListQuery{Kind: store.KindFact, Order: store.OrderID})
		if len(got) != len(want) {
			e.t.Fatalf("main holds %d facts after the merge, want %d", len(got), len(want))
		}
		for _, r := range got {
			w, ok := want[r.RecordID()]
			if !ok || store.SearchText(r) != store.SearchText(w) {
				e.t.Fatalf("main holds %s %q, want %v", r.RecordID(), store.SearchText(r), w)
			}
		}
		for _, i := range []int{0, 999, 1000, 1001, 1999, 2000, n - 1} {
			e.sameEmbedding(main, recs[i])
		}
		e.missing(main, factRef("f0097"))
		again := e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.Native})
		if len(again.Record.Merged) != 0 {
			e.t.Errorf("merging again merged %d items, want none", len(again.Record.Merged))
		}
	})

	subtest(t, h, area, "a lean diff is the diff without embeddings", func(e *env) {
		ld, ok := e.s.(store.LeanDiffer)
		if !ok {
			e.t.Skip("the store does not implement store.LeanDiffer")
		}
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "f1", Text: "alpha", Embedding: vec(1)},
			store.Fact{ID: "f2", Text: "bravo", Embedding: vec(0, 1)})
		e.fork("b", store.DefaultBranch)
		e.put("b", store.PutOptions{},
			store.Fact{ID: "f1", Text: "alpha on b", Embedding: vec(1, 1)},
			store.Observation{ID: "o1", Type: store.ObsInsight, Summary: "an insight", Embedding: vec(0, 0, 1)},
			store.Relation{ID: "r1", Source: "a", Target: "b", Type: "knows"})
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "alpha on main", Embedding: vec(1, 0, 1)})
		e.del(store.DefaultBranch, factRef("f2"))
		full, err := e.s.Diff(e.ctx, "b", store.DefaultBranch)
		if err != nil {
			e.t.Fatal(err)
		}
		lean, err := ld.DiffLean(e.ctx, "b", store.DefaultBranch)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, d := range []*store.Diff{full, lean} {
			if len(d.SourceChanges) != 3 || len(d.TargetChanges) != 2 || len(d.Conflicts) != 1 {
				e.t.Fatalf("diff: %d source changes, %d target changes, %d conflicts; want 3, 2, 1",
					len(d.SourceChanges), len(d.TargetChanges), len(d.Conflicts))
			}
		}
		for _, ch := range slices.Concat(lean.SourceChanges, lean.TargetChanges) {
			if len(store.EmbeddingOf(ch.Before)) > 0 || len(store.EmbeddingOf(ch.After)) > 0 {
				e.t.Errorf("the lean diff's change of %v carries an embedding", ch.Ref)
			}
		}
		if len(store.EmbeddingOf(full.SourceChanges[0].After)) == 0 {
			e.t.Errorf("the whole diff's change of %v carries no embedding", full.SourceChanges[0].Ref)
		}
		same(e.t, "lean diff", stripDiff(full), lean)
	})

	subtest(t, h, area, "a change of the embedding alone is a change", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "f1", Text: "alpha", Embedding: vec(1)},
			store.Fact{ID: "f2", Text: "bravo", Embedding: vec(0, 1)},
			store.Observation{ID: "o1", Type: store.ObsInsight, Summary: "an insight", Embedding: vec(0, 0, 1)})
		f1 := e.get(main, factRef("f1")).(store.Fact)
		f1.Embedding = vec(1, 1)
		if res := e.put1(store.DefaultBranch, f1); res.Outcome != store.Updated {
			e.t.Errorf("f1 with another embedding: Outcome = %q; want updated", res.Outcome)
		}
		e.sameEmbedding(main, f1)
		res := e.put1(store.DefaultBranch, f1)
		if res.Outcome != store.Deduplicated || !slices.Equal(store.EmbeddingOf(res.Record), f1.Embedding) {
			e.t.Errorf("f1 again: Outcome = %q, embedding %v; want deduplicated with %v", res.Outcome, store.EmbeddingOf(res.Record), f1.Embedding)
		}

		// On a branch, f2's and o1's embeddings change and nothing else does.
		e.fork("b", store.DefaultBranch)
		f2 := e.get(main, factRef("f2")).(store.Fact)
		f2.Embedding = vec(0, 1, 1)
		o1 := e.get(main, obsRef("o1")).(store.Observation)
		o1.Embedding = vec(1, 0, 1)
		e.put("b", store.PutOptions{}, f2, o1)
		d := e.diff("b", store.DefaultBranch)
		var got []string
		for _, c := range d.SourceChanges {
			got = append(got, c.Ref.String()+" "+string(c.Op))
		}
		same(e.t, "source changes of the embeddings alone", []string{factRef("f2").String() + " updated", obsRef("o1").String() + " updated"}, got)
		if ld, ok := e.s.(store.LeanDiffer); ok {
			lean, err := ld.DiffLean(e.ctx, "b", store.DefaultBranch)
			if err != nil {
				e.t.Fatal(err)
			}
			same(e.t, "lean diff of the embeddings alone", stripDiff(d), lean)
		}
		e.mustMerge(merge.Request{Source: "b", Target: store.DefaultBranch, Strategy: store.Native})
		e.sameEmbedding(main, f2)
		e.sameEmbedding(main, o1)
	})

	subtest(t, h, area, "a put without an embedding takes the one of its text", func(e *env) {
		if _, ok := e.s.(store.LeanDiffer); !ok {
			e.t.Skip("the store does not implement store.LeanDiffer")
		}
		e.put1(store.DefaultBranch, store.Fact{ID: "t1", Text: "kept on main", Embedding: vec(0, 1)})
		e.fork("b", store.DefaultBranch)
		s1 := store.Fact{ID: "s1", Text: "written on b", Embedding: vec(1)}
		s2 := store.Fact{ID: "s2", Text: "also written on b", Embedding: vec(1, 1)}
		o1 := store.Observation{ID: "o1", Type: store.ObsInsight, Summary: "seen on b", Embedding: vec(0, 0, 1)}
		e.put("b", store.PutOptions{}, s1, s2, o1)
		t1 := e.get(main, factRef("t1")).(store.Fact)
		t1.Status, t1.Embedding = store.FactSuperseded, nil
		puts := []store.Record{
			store.WithEmbedding(e.get(head("b"), factRef("s1")), nil), // the source's text: its embedding
			store.Fact{ID: "s2", Text: "rewritten on the way"},
			store.WithEmbedding(e.get(head("b"), obsRef("o1")), nil),
			t1, // the target's text: its embedding
		}
		_, err := e.s.ApplyMerge(e.ctx, store.MergePlan{Source: "b", Target: store.DefaultBranch,
			ExpectHead: e.getBranch(store.DefaultBranch).Head, Puts: puts,
			Record: store.MergeRecord{Strategy: store.Native}})
		if err != nil {
			e.t.Fatal(err)
		}
		e.sameEmbedding(main, s1)
		e.sameEmbedding(main, o1)
		e.sameEmbedding(main, store.Fact{ID: "t1", Embedding: vec(0, 1)})
		if got := e.get(main, factRef("s2")); len(store.EmbeddingOf(got)) != 0 {
			e.t.Errorf("s2, put with a new text and no embedding, got one: %v", store.EmbeddingOf(got))
		}
	})

	subtest(t, h, area, "a lean plan applied after its source moved keeps its embeddings", func(e *env) {
		ld, ok := e.s.(store.LeanDiffer)
		if !ok {
			e.t.Skip("the store does not implement store.LeanDiffer")
		}
		e.put1(store.DefaultBranch, store.Fact{ID: "k1", Text: "kept on main", Embedding: vec(0, 1)})
		e.fork("b", store.DefaultBranch)
		s1 := store.Fact{ID: "s1", Text: "written on b", Embedding: vec(1)}
		o1 := store.Observation{ID: "o1", Type: store.ObsInsight, Summary: "seen on b", Embedding: vec(0, 0, 1)}
		e.put("b", store.PutOptions{}, s1, o1)
		d, err := ld.DiffLean(e.ctx, "b", store.DefaultBranch)
		if err != nil {
			e.t.Fatal(err)
		}
		// The source moves between the diff and the apply: both records get another
		// text and embedding.
		e.put("b", store.PutOptions{},
			store.Fact{ID: "s1", Text: "rewritten on b", Embedding: vec(1, 0, 0, 1)},
			store.Observation{ID: "o1", Type: store.ObsInsight, Summary: "seen again on b", Embedding: vec(1, 1, 1)})
		plan := store.MergePlan{Source: "b", Target: store.DefaultBranch, ExpectHead: d.TargetHead, SourceRev: d.SourceRev,
			Record: store.MergeRecord{Strategy: store.Native}}
		for _, c := range d.SourceChanges {
			plan.Puts = append(plan.Puts, c.After)
		}
		if _, err := e.s.ApplyMerge(e.ctx, plan); err != nil {
			e.t.Fatal(err)
		}
		// The plan's records, as the diff read them, with the embeddings they had then.
		e.sameEmbedding(main, s1)
		e.sameEmbedding(main, o1)
		if got := e.get(main, factRef("s1")).(store.Fact); got.Text != s1.Text {
			e.t.Errorf("s1 on main: text %q, want the plan's %q", got.Text, s1.Text)
		}
	})
}

// spread returns an embedding of i's own: a unit vector on one of the dims axes,
// turned a little towards another, so that no two of the first few thousand are
// near-duplicates of each other by more than the store's default threshold.
func spread(i int) []float32 {
	v := make([]float32, dims)
	v[i%dims] = 1
	v[(i/dims+1+i%dims)%dims] += float32(1+i/(dims*dims)%50) / 100
	return v
}

// sameEmbedding checks that the view's version of want's record has want's embedding.
func (e *env) sameEmbedding(v store.View, want store.Record) {
	e.t.Helper()
	got := store.EmbeddingOf(e.get(v, store.RefOf(want)))
	w := store.EmbeddingOf(want)
	if len(got) != len(w) || vectest.Cosine(got, w) < 1-1e-6 {
		e.t.Errorf("%v on %s: embedding %v, want %v", store.RefOf(want), v.Branch, got, w)
	}
}

// stripDiff returns a copy of d whose records carry no embeddings.
func stripDiff(d *store.Diff) *store.Diff {
	out := *d
	strip := func(chs []store.Change) []store.Change {
		res := make([]store.Change, len(chs))
		for i, ch := range chs {
			ch.Before, ch.After = store.WithEmbedding(ch.Before, nil), store.WithEmbedding(ch.After, nil)
			res[i] = ch
		}
		return res
	}
	out.SourceChanges, out.TargetChanges = strip(d.SourceChanges), strip(d.TargetChanges)
	out.Conflicts = make([]store.Conflict, len(d.Conflicts))
	for i, c := range d.Conflicts {
		c.Source = strip([]store.Change{c.Source})[0]
		c.Target = strip([]store.Change{c.Target})[0]
		out.Conflicts[i] = c
	}
	return &out
}
