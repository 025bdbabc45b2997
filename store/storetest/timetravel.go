package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/vectest"
	"github.com/day1ai/day1/store"
)

// testTimeTravel checks that every read at a snapshot or an instant returns exactly what
// was visible then, on main and on a branch, and that a snapshot of another branch
// cannot be read.
//
// A read of a branch at an instant before its fork shows its parent as the parent was at
// that instant (recursively up the ancestry), so it shows exactly the records that
// existed then, none of the branch's own writes, and none of the parent's later writes.
func testTimeTravel(t *testing.T, h Harness) {
	const area = "timetravel"
	main := store.DefaultBranch

	subtest(t, h, area, "main at snapshots and instants", func(e *env) {
		t0 := tick()
		e.put(main, store.PutOptions{},
			store.Fact{ID: "f1", Text: "alpha original", Embedding: vec(1)},
			store.Fact{ID: "f2", Text: "bravo original", Embedding: vec(4, 3)},
			store.Observation{ID: "o1", Type: store.ObsDiscovery, Summary: "observation original", Embedding: vec(3, 4)},
			store.Relation{ID: "r1", Source: "A", Target: "B", Type: "calls"},
			store.Conversation{ID: "c1", Title: "conversation original"},
			store.Message{ID: "m1", ConversationID: "c1", Seq: 1, Role: store.RoleUser, Content: "message original"},
		)
		state1 := e.state(head(main))
		e.snapshot(main, "s1")
		t1 := tick()
		e.put(main, store.PutOptions{},
			store.Fact{ID: "f3", Text: "charlie created later", Embedding: vec(24, 7)},
			store.Fact{ID: "f1", Text: "alpha changed", Embedding: vec(5, 12)},
			store.Relation{ID: "r1", Source: "A", Target: "C", Type: "calls"},
			store.Relation{ID: "r2", Source: "B", Target: "C", Type: "calls"},
			store.Conversation{ID: "c1", Title: "conversation changed"},
		)
		e.del(main, factRef("f2"), obsRef("o1"), msgRef("m1"))
		state2 := e.state(head(main))
		e.snapshot(main, "s2")
		t2 := tick()
		e.put1(main, store.Fact{ID: "f4", Text: "delta after everything", Embedding: vec(1, 1)})

		for _, c := range []struct {
			name string
			v    store.View
			want map[store.Kind][]store.Record
		}{
			{"snapshot s1", atSnap(main, "s1"), state1},
			{"instant t1", atTime(main, t1), state1},
			{"snapshot s2", atSnap(main, "s2"), state2},
			{"instant t2", atTime(main, t2), state2},
		} {
			e.t.Run(c.name, func(t *testing.T) {
				e := &env{t: t, h: e.h, s: e.s, ctx: e.ctx}
				same(t, "List of every kind", c.want, e.state(c.v))
				for _, recs := range c.want {
					for _, r := range recs {
						same(t, fmt.Sprintf("Get(%v)", store.RefOf(r)), r, e.get(c.v, store.RefOf(r)))
					}
				}
				e.missing(c.v, factRef("f4"))
			})
		}

		v1s := []store.View{atSnap(main, "s1"), atTime(main, t1)}
		for _, v := range v1s {
			e.missing(v, factRef("f3"))
			e.missing(v, relRef("r2"))
			same(e.t, "f1 text", "alpha original", textOf(e.get(v, factRef("f1"))))
			same(e.t, "r1 target", "B", e.get(v, relRef("r1")).(store.Relation).Target)
			same(e.t, "relations of A", []string{"r1"}, e.listIDs(v, store.ListQuery{Kind: store.KindRelation, Filter: store.Filter{Entity: "A"}}))
			same(e.t, "keyword alpha", []string{"f1"}, hitIDs(e.search(v, store.SearchQuery{Text: "alpha", Mode: store.Keyword, WindowWeight: noContext})))
			same(e.t, "keyword bravo (deleted later)", []string{"f2"}, hitIDs(e.search(v, store.SearchQuery{Text: "bravo", Mode: store.Keyword, WindowWeight: noContext})))
			same(e.t, "keyword words written later", []string{}, hitIDs(e.search(v, store.SearchQuery{Text: "changed charlie delta", Mode: store.Keyword, WindowWeight: noContext})))
			vhits := e.search(v, store.SearchQuery{Vector: vec(1), Mode: store.Vector})
			same(e.t, "vector", []string{"f1", "f2", "o1"}, hitIDs(vhits))
			checkVectorHitsAgainst(e.t, vhits, vec(1))
			hhits := e.search(v, store.SearchQuery{Text: "alpha", Vector: vec(1), Mode: store.Hybrid})
			same(e.t, "hybrid", []string{"f1", "f2", "o1"}, hitIDs(hhits))
			if len(hhits) > 0 {
				same(e.t, "hybrid f1 retrievers", []store.Retriever{store.RetrieverKeyword, store.RetrieverVector}, sortedRetrievers(hhits[0].FoundBy))
			}
			for _, hit := range append(vhits, hhits...) {
				if hit.Record.RecordID() == "f1" {
					same(e.t, "f1 in a past search", textOf(state1[store.KindFact][0]), textOf(hit.Record))
				}
			}
		}
		same(e.t, "keyword at head", []string{"f1"}, hitIDs(e.search(head(main), store.SearchQuery{Text: "alpha", Mode: store.Keyword, WindowWeight: noContext})))
		same(e.t, "vector at head", []string{"f3", "f4", "f1"}, hitIDs(e.search(head(main), store.SearchQuery{Vector: vec(1), Mode: store.Vector})))

		empty := map[store.Kind][]store.Record{}
		for _, k := range store.Kinds {
			empty[k] = nil
		}
		same(e.t, "state before the first write", empty, e.state(atTime(main, t0)))
		// Before the store's history began, main did not exist: too old, like a branch
		// read before its fork.
		_, err := e.s.List(e.ctx, atTime(main, e.getBranch(main).ForkedAt.Add(-time.Hour)), store.ListQuery{Kind: store.KindFact})
		isErr(e.t, "List on main before the store began", err, store.ErrTooOld)
		e.missing(atTime(main, t0), factRef("f1"))
		same(e.t, "search before the first write", []string{}, hitIDs(e.search(atTime(main, t0), store.SearchQuery{Text: "alpha", Mode: store.Keyword, WindowWeight: noContext})))
	})

	subtest(t, h, area, "a branch at snapshots and instants", func(e *env) {
		e.put(main, store.PutOptions{}, store.Fact{ID: "f1", Text: "alpha on main"}, store.Fact{ID: "f2", Text: "bravo on main"})
		mainEarly := e.state(head(main))
		beforeFork := tick()
		e.put1(main, store.Fact{ID: "f3", Text: "charlie on main before the fork"})
		justBeforeFork := tick()
		e.fork("b", main)
		forkState := e.state(head("b"))
		afterFork := tick()
		e.put1("b", store.Fact{ID: "g1", Text: "golf on b"})
		e.del("b", factRef("f2"))
		snapState := e.state(head("b"))
		e.snapshot("b", "sb")
		afterSnap := tick()
		e.put("b", store.PutOptions{}, store.Fact{ID: "g2", Text: "hotel on b"}, store.Fact{ID: "f1", Text: "alpha changed on b"})
		e.put1(main, store.Fact{ID: "f4", Text: "delta on main after the fork"})

		if got := forkState[store.KindFact]; len(got) != 3 {
			e.t.Fatalf("b at its fork shows %v; want f1, f2, f3", recIDs(got))
		}
		for _, c := range []struct {
			name string
			v    store.View
			want map[store.Kind][]store.Record
		}{
			{"snapshot of the branch", atSnap("b", "sb"), snapState},
			{"instant after the snapshot", atTime("b", afterSnap), snapState},
			{"instant after the fork", atTime("b", afterFork), forkState},
		} {
			same(e.t, c.name, c.want, e.state(c.v))
		}
		// A branch's history begins at its fork: an instant before it is too old for the
		// branch, whatever its parent held then. The parent answers for that time.
		for _, at := range []time.Time{justBeforeFork, beforeFork} {
			_, err := e.s.Get(e.ctx, atTime("b", at), factRef("f1"))
			isErr(e.t, "Get on b before its fork", err, store.ErrTooOld)
			_, err = e.s.List(e.ctx, atTime("b", at), store.ListQuery{Kind: store.KindFact})
			isErr(e.t, "List on b before its fork", err, store.ErrTooOld)
			_, err = e.s.Search(e.ctx, atTime("b", at), store.SearchQuery{Text: "alpha", Mode: store.Keyword, WindowWeight: noContext})
			isErr(e.t, "Search on b before its fork", err, store.ErrTooOld)
		}
		same(e.t, "main before the fork", mainEarly, e.state(atTime(main, beforeFork)))
		e.missing(atTime(main, beforeFork), factRef("f3"))
		same(e.t, "instant at the fork", forkState, e.state(atTime("b", e.getBranch("b").ForkedAt)))
		same(e.t, "keyword on b at the snapshot", []string{"f1"}, hitIDs(e.search(atSnap("b", "sb"), store.SearchQuery{Text: "alpha", Mode: store.Keyword, WindowWeight: noContext})))
		same(e.t, "f1 on b at the snapshot", "alpha on main", textOf(e.get(atSnap("b", "sb"), factRef("f1"))))
		e.missing(atSnap("b", "sb"), factRef("g2"))
		e.missing(atSnap("b", "sb"), factRef("f4"))
		e.missing(atTime("b", afterFork), factRef("g1"))
		e.get(atTime("b", afterFork), factRef("f2"))
	})

	t.Run("reads past the retention are too old; snapshots stay", func(t *testing.T) {
		if h.Retained == nil {
			t.Skip("Harness.Retained is nil")
		}
		if reason, ok := h.Unsupported[area+"/retention"]; ok {
			t.Skip(reason)
		}
		t.Parallel()
		const r = 3 * time.Second
		clk := &clock{at: time.Now().UTC().Truncate(time.Millisecond)}
		e := &env{t: t, h: h, s: h.Retained(t, r, clk.now), ctx: t.Context()}
		t.Cleanup(func() { e.s.Close() })
		e.put1(main, store.Fact{ID: "f1", Text: "alpha original", Embedding: vec(1)})
		e.snapshot(main, "s1")
		clk.advance(5 * time.Millisecond)
		t1 := clk.now()
		clk.advance(5 * time.Millisecond)
		e.put1(main, store.Fact{ID: "f1", Text: "alpha changed", Embedding: vec(4, 3)})
		same(e.t, "f1 at t1, within the retention", "alpha original", textOf(e.get(atTime(main, t1), factRef("f1"))))
		clk.advance(r + 500*time.Millisecond)
		// Writes after the window has passed, which a store that compacts may take as
		// its cue.
		for i := range 3 {
			e.put1(main, store.Fact{ID: fmt.Sprint("g", i), Text: fmt.Sprint("golf ", i)})
		}
		_, err := e.s.Get(e.ctx, atTime(main, t1), factRef("f1"))
		isErr(e.t, "Get past the retention", err, store.ErrTooOld)
		_, err = e.s.List(e.ctx, atTime(main, t1), store.ListQuery{Kind: store.KindFact})
		isErr(e.t, "List past the retention", err, store.ErrTooOld)
		_, err = e.s.Search(e.ctx, atTime(main, t1), store.SearchQuery{Text: "alpha", Mode: store.Keyword, WindowWeight: noContext})
		isErr(e.t, "Search past the retention", err, store.ErrTooOld)
		_, err = e.s.CreateBranch(e.ctx, store.BranchSpec{Name: "past", At: store.Point{Time: t1}})
		isErr(e.t, "CreateBranch past the retention", err, store.ErrTooOld)
		same(e.t, "f1 at the snapshot", "alpha original", textOf(e.get(atSnap(main, "s1"), factRef("f1"))))
		same(e.t, "keyword at the snapshot", []string{"f1"}, hitIDs(e.search(atSnap(main, "s1"), store.SearchQuery{Text: "alpha", Mode: store.Keyword, WindowWeight: noContext})))
		e.branch(store.BranchSpec{Name: "from-s1", At: store.Point{Snapshot: "s1"}})
		same(e.t, "f1 on a branch from the snapshot", "alpha original", textOf(e.get(head("from-s1"), factRef("f1"))))
		same(e.t, "f1 at head", "alpha changed", textOf(e.get(head(main), factRef("f1"))))
		same(e.t, "f1 just now", "alpha changed", textOf(e.get(atTime(main, clk.now()), factRef("f1"))))
	})

	subtest(t, h, area, "a snapshot of another branch cannot be read", func(e *env) {
		e.fork("b", main)
		e.snapshot(main, "on-main")
		e.snapshot("b", "on-b")
		for _, v := range []store.View{atSnap("b", "on-main"), atSnap(main, "on-b")} {
			_, err := e.s.Get(e.ctx, v, factRef("f"))
			isInvalid(e.t, fmt.Sprintf("Get at %+v", v), err, "")
			_, err = e.s.List(e.ctx, v, store.ListQuery{Kind: store.KindFact})
			isInvalid(e.t, fmt.Sprintf("List at %+v", v), err, "")
			_, err = e.s.Search(e.ctx, v, store.SearchQuery{Text: "x", Mode: store.Keyword, WindowWeight: noContext})
			isInvalid(e.t, fmt.Sprintf("Search at %+v", v), err, "")
		}
	})
}

// checkVectorHitsAgainst checks that every hit's VectorScore is its cosine to q.
func checkVectorHitsAgainst(t *testing.T, hits []store.Hit, q []float32) {
	t.Helper()
	for _, h := range hits {
		if want := vectest.Cosine(q, store.EmbeddingOf(h.Record)); !near(h.VectorScore, want, 1e-4) {
			t.Errorf("hit %s: VectorScore %v; want the cosine %v of the version visible then", h.Record.RecordID(), h.VectorScore, want)
		}
	}
}
