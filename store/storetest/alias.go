package storetest

import (
	"testing"

	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// testAlias checks the aliases of store.Alias: a fact written under a caller's id and
// deduplicated against another fact's text leaves that id as an alias of the other
// fact; reads by the id return the canonical fact; a later write under the id follows
// the documented rule; aliases are branched, merged, read in the past, deleted and
// kept across a reopen like records; chains resolve and loops do not.
func testAlias(t *testing.T, h Harness) {
	const area = "alias"
	main := store.DefaultBranch

	subtest(t, h, area, "a deduplicated caller id becomes an alias", func(e *env) {
		e.put1(main, store.Fact{ID: "canon", Text: "The cache is Redis"})
		before := e.getBranch(main).Head
		res := e.put1(main, store.Fact{ID: "mine", Text: "the cache is  redis", SessionID: "s2"})
		if res.Outcome != store.Deduplicated || res.Replaced != "canon" || res.AliasOf != "canon" {
			e.t.Errorf("Put: Outcome %q, Replaced %q, AliasOf %q; want deduplicated, canon, canon", res.Outcome, res.Replaced, res.AliasOf)
		}
		if f, _ := res.Record.(store.Fact); f.ID != "canon" {
			e.t.Errorf("Put: Record.ID = %q; want the canonical fact's", f.ID)
		}
		if e.getBranch(main).Head == before {
			e.t.Errorf("Head did not move: the alias was not written")
		}
		got := e.get(head(main), factRef("mine")).(store.Fact)
		if got.ID != "canon" || got.Text != "The cache is Redis" || got.SessionID != "" {
			e.t.Errorf("Get(mine) = %+v; want the canonical fact, with its own ID", got)
		}
		as := e.list(head(main), store.ListQuery{Kind: store.KindAlias})
		if len(as) != 1 || as[0].(store.Alias).ID != "mine" || as[0].(store.Alias).Target != "canon" || as[0].RecordTime().IsZero() {
			e.t.Errorf("List(alias) = %+v; want one alias mine -> canon with a CreatedAt", as)
		}
		// The same write again changes nothing and says the same.
		before = e.getBranch(main).Head
		res = e.put1(main, store.Fact{ID: "mine", Text: "the cache is  redis", SessionID: "s2"})
		if res.Outcome != store.Deduplicated || res.AliasOf != "canon" {
			e.t.Errorf("repeated Put: Outcome %q, AliasOf %q; want deduplicated, canon", res.Outcome, res.AliasOf)
		}
		if after := e.getBranch(main).Head; after != before {
			e.t.Errorf("repeated Put moved Head from %d to %d", before, after)
		}
		// An update of the canonical fact shows through the alias.
		e.put1(main, store.Fact{ID: "canon", Text: "The cache is Redis 7"})
		if got := e.get(head(main), factRef("mine")).(store.Fact); got.Text != "The cache is Redis 7" {
			e.t.Errorf("Get(mine) after an update of canon: Text %q", got.Text)
		}
		// The same text twice in one batch: the second id is an alias of the first.
		res2 := e.put(main, store.PutOptions{}, store.Fact{ID: "x1", Text: "batch text"}, store.Fact{ID: "x2", Text: "Batch text"})
		if res2[1].AliasOf != "x1" {
			e.t.Errorf("second of a batch: AliasOf %q; want x1", res2[1].AliasOf)
		}
		if got := e.get(head(main), factRef("x2")).(store.Fact); got.ID != "x1" {
			e.t.Errorf("Get(x2) = %q; want x1", got.ID)
		}
	})

	subtest(t, h, area, "generated ids leave no alias", func(e *env) {
		e.put1(main, store.Fact{ID: "canon", Text: "deploys run on fridays"})
		res := e.put(main, store.PutOptions{GeneratedIDs: map[string]bool{"gen-1": true}},
			store.Fact{ID: "gen-1", Text: "Deploys run on Fridays"}, store.Fact{ID: "chosen", Text: "deploys run on fridays"})
		if res[0].Outcome != store.Deduplicated || res[0].AliasOf != "" {
			e.t.Errorf("generated id: Outcome %q, AliasOf %q; want deduplicated and no alias", res[0].Outcome, res[0].AliasOf)
		}
		if res[1].AliasOf != "canon" {
			e.t.Errorf("chosen id: AliasOf %q; want canon", res[1].AliasOf)
		}
		e.missing(head(main), factRef("gen-1"))
		same(e.t, "aliases", []string{"chosen"}, e.listIDs(head(main), store.ListQuery{Kind: store.KindAlias}))
	})

	subtest(t, h, area, "a write under an alias id follows the rule", func(e *env) {
		e.put(main, store.PutOptions{}, store.Fact{ID: "b", Text: "bravo text"}, store.Fact{ID: "c", Text: "charlie text"})
		e.put1(main, store.Fact{ID: "a", Text: "bravo text"})
		// The text of another fact: deduplicated again, the alias now names that fact.
		res := e.put1(main, store.Fact{ID: "a", Text: "charlie text"})
		if res.Outcome != store.Deduplicated || res.AliasOf != "c" {
			e.t.Errorf("Put(a, charlie): Outcome %q, AliasOf %q; want deduplicated, c", res.Outcome, res.AliasOf)
		}
		if got := e.get(head(main), factRef("a")).(store.Fact); got.ID != "c" {
			e.t.Errorf("Get(a) = %q; want c", got.ID)
		}
		// A text of its own: the id becomes a fact and the alias goes, in one commit.
		res = e.put1(main, store.Fact{ID: "a", Text: "alpha text of its own"})
		if res.Outcome != store.Created || res.AliasOf != "" {
			e.t.Errorf("Put(a, own text): Outcome %q, AliasOf %q; want created and no alias", res.Outcome, res.AliasOf)
		}
		if got := e.get(head(main), factRef("a")).(store.Fact); got.ID != "a" || got.Text != "alpha text of its own" {
			e.t.Errorf("Get(a) = %+v; want the fact a", got)
		}
		same(e.t, "aliases", []string{}, e.listIDs(head(main), store.ListQuery{Kind: store.KindAlias}))
		same(e.t, "facts", []string{"a", "b", "c"}, e.listIDs(head(main), store.ListQuery{Kind: store.KindFact, Order: store.OrderID}))
		// A fact id is never turned into an alias: writing its text elsewhere's updates it.
		res = e.put1(main, store.Fact{ID: "a", Text: "bravo text"})
		if res.Outcome != store.Updated || res.AliasOf != "" {
			e.t.Errorf("Put(a, bravo) once a is a fact: Outcome %q, AliasOf %q; want updated", res.Outcome, res.AliasOf)
		}
	})

	subtest(t, h, area, "deleting an alias id deletes the alias", func(e *env) {
		e.put1(main, store.Fact{ID: "canon", Text: "owned by the first writer"})
		e.put1(main, store.Fact{ID: "mine", Text: "owned by the first writer"})
		e.del(main, factRef("mine"))
		e.missing(head(main), factRef("mine"))
		if got := e.get(head(main), factRef("canon")).(store.Fact); got.ID != "canon" {
			e.t.Errorf("Get(canon) = %q", got.ID)
		}
		isErr(e.t, "deleting it again", e.s.Delete(e.ctx, main, []store.Ref{factRef("mine")}), store.ErrNotFound)
		// And an alias by its own Ref.
		e.put1(main, store.Fact{ID: "again", Text: "owned by the first writer"})
		e.del(main, store.AliasRef("again"))
		e.missing(head(main), factRef("again"))
	})

	subtest(t, h, area, "branches, diff, merge and time travel", func(e *env) {
		e.put1(main, store.Fact{ID: "canon", Text: "tests need docker"})
		e.snapshot(main, "before")
		e.fork("b", main)
		e.put1("b", store.Fact{ID: "mine", Text: "Tests need Docker"})
		if got := e.get(head("b"), factRef("mine")).(store.Fact); got.ID != "canon" {
			e.t.Errorf("Get(b, mine) = %q; want canon", got.ID)
		}
		e.missing(head(main), factRef("mine"))
		d := e.diff("b", main)
		found := false
		for _, c := range d.SourceChanges {
			if c.Ref == store.AliasRef("mine") && c.Op == store.OpAdded {
				if a, ok := c.After.(store.Alias); ok && a.Target == "canon" {
					found = true
				}
			}
		}
		if !found {
			e.t.Errorf("Diff(b, main).SourceChanges = %+v; want alias/mine added", d.SourceChanges)
		}
		e.mustMerge(merge.Request{Source: "b", Target: main, Strategy: store.Native})
		if got := e.get(head(main), factRef("mine")).(store.Fact); got.ID != "canon" {
			e.t.Errorf("Get(main, mine) after the merge = %q; want canon", got.ID)
		}
		if d := e.diff("b", main); !d.Empty() {
			e.t.Errorf("Diff after the merge: %+v; want empty", d)
		}
		e.missing(atSnap(main, "before"), factRef("mine"))
		t1 := tick()
		e.del(main, factRef("mine"))
		if got := e.get(atTime(main, t1), factRef("mine")).(store.Fact); got.ID != "canon" {
			e.t.Errorf("Get(main at t1, mine) = %q; want canon", got.ID)
		}
		e.missing(head(main), factRef("mine"))
		// The child branch still has its alias.
		if got := e.get(head("b"), factRef("mine")).(store.Fact); got.ID != "canon" {
			e.t.Errorf("Get(b, mine) after the delete on main = %q; want canon", got.ID)
		}
	})

	subtest(t, h, area, "chains resolve, loops and bad aliases do not", func(e *env) {
		e.put1(main, store.Fact{ID: "c", Text: "charlie"})
		e.put(main, store.PutOptions{}, store.Alias{ID: "x", Target: "y"}, store.Alias{ID: "y", Target: "c"})
		if got := e.get(head(main), factRef("x")).(store.Fact); got.ID != "c" {
			e.t.Errorf("Get(x) through x -> y -> c = %q; want c", got.ID)
		}
		e.put(main, store.PutOptions{}, store.Alias{ID: "p", Target: "q"}, store.Alias{ID: "q", Target: "p"})
		e.missing(head(main), factRef("p"))
		e.put1(main, store.Alias{ID: "dangling", Target: "nothing"})
		e.missing(head(main), factRef("dangling"))
		// A fact wins over an alias of its id.
		e.put(main, store.PutOptions{}, store.Alias{ID: "d", Target: "c"}, store.Fact{ID: "d", Text: "delta"})
		if got := e.get(head(main), factRef("d")).(store.Fact); got.ID != "d" {
			e.t.Errorf("Get(d) = %q; want the fact d", got.ID)
		}
		// An alias is not found as another kind.
		e.missing(head(main), obsRef("x"))
		before := e.getBranch(main).Head
		_, err := e.s.Put(e.ctx, main, []store.Record{store.Alias{ID: "self", Target: "self"}}, store.PutOptions{})
		isInvalid(e.t, "an alias of itself", err, "Alias.Target")
		_, err = e.s.Put(e.ctx, main, []store.Record{store.Alias{ID: "no-target"}}, store.PutOptions{})
		isInvalid(e.t, "an alias without a target", err, "Alias.Target")
		if after := e.getBranch(main).Head; after != before {
			e.t.Errorf("failed Puts moved Head from %d to %d", before, after)
		}
	})

	if h.Reopen != nil {
		subtest(t, h, area, "aliases survive reopen", func(e *env) {
			e.put1(main, store.Fact{ID: "canon", Text: "kept across restarts"})
			e.put1(main, store.Fact{ID: "mine", Text: "kept across restarts"})
			e.put1(main, store.Fact{ID: "gone", Text: "kept across restarts"})
			e.del(main, factRef("gone"))
			e.reopen()
			if got := e.get(head(main), factRef("mine")).(store.Fact); got.ID != "canon" {
				e.t.Errorf("Get(mine) after reopen = %q; want canon", got.ID)
			}
			e.missing(head(main), factRef("gone"))
			same(e.t, "aliases after reopen", []string{"mine"}, e.listIDs(head(main), store.ListQuery{Kind: store.KindAlias}))
		})
	}
}
