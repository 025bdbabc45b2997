package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
)

// sessionFact is a fact of session s with text, stamped by the write.
func sessionFact(id, s, text string) store.Fact {
	return store.Fact{ID: id, SessionID: s, Text: text}
}

// testFactContext checks that the facts of one session lend each other keyword score
// as the messages of a conversation do: by their places in the session's creation
// order, within store.DefaultContextSpan, only in the session, within the search's
// filter and history rule, as the view sees them, and not in a vector search.
func testFactContext(t *testing.T, h Harness) {
	const area = "factcontext"
	main := head(store.DefaultBranch)
	facts := []store.Kind{store.KindFact}
	// scores returns the keyword scores of a search without context, by id.
	scores := func(e *env, v store.View, q store.SearchQuery) map[string]float64 {
		q.WindowWeight = noContext
		out := map[string]float64{}
		for _, h := range e.search(v, q) {
			out[h.Record.RecordID()] = h.Score
		}
		return out
	}
	// gains checks the hits of q against the scores without context b and the gains
	// want, in WindowScore, for every hit.
	gains := func(e *env, name string, hits []store.Hit, b, want map[string]float64) {
		e.t.Helper()
		ids := make([]string, 0, len(b)+len(want))
		for id := range b {
			ids = append(ids, id)
		}
		for id := range want {
			if _, ok := b[id]; !ok {
				ids = append(ids, id)
			}
		}
		same(e.t, name+": hits", sorted(ids), sorted(hitIDs(hits)))
		for _, h := range hits {
			id := h.Record.RecordID()
			if !near(h.WindowScore, want[id], 1e-9) || !near(h.KeywordScore, b[id], 1e-9) || !near(h.Score, b[id]+want[id], 1e-9) {
				e.t.Errorf("%s: %s: Score %v, WindowScore %v, KeywordScore %v; want %v, %v, %v", name, id, h.Score, h.WindowScore,
					h.KeywordScore, b[id]+want[id], want[id], b[id])
			}
			same(e.t, name+": FoundBy of "+id, []store.Retriever{store.RetrieverKeyword}, h.FoundBy)
		}
		checkDescending(e.t, hits)
	}

	subtest(t, h, area, "the facts of a session lend each other keyword score", func(e *env) {
		// One write, so in creation order f5, f4, f3, f2, f1: the order of the batch,
		// not of the ids.
		e.put(store.DefaultBranch, store.PutOptions{},
			sessionFact("f5", "s1", "what did you cook last night"),
			sessionFact("f4", "s1", "a spinach lasagna"),
			sessionFact("f3", "s1", "then we watched a film"),
			sessionFact("f2", "s1", "the film ran long"),
			sessionFact("f1", "s1", "good night"),
			sessionFact("g1", "s2", "I cook on sundays"),
			sessionFact("g2", "s2", "with my sister"),
			store.Fact{ID: "h1", Text: "cook the rice first"},
			store.Fact{ID: "h2", Text: "no session to lend from"},
		)
		q := store.SearchQuery{Text: "cook", Mode: store.Keyword, Kinds: facts}
		b := scores(e, main, q)
		if !same(e.t, "hits without context", []string{"f5", "g1", "h1"}, sorted(keys(b))) {
			return
		}
		w := store.DefaultWindowWeight
		// f4 and f3 are within two places of f5, f2 and f1 are not; g2 follows g1 in
		// its own session; h1 and h2 have no session, and were written one after the
		// other (see the next test).
		gains(e, "by default", e.search(main, q), b, map[string]float64{"f4": w * b["f5"], "f3": w * b["f5"], "g2": w * b["g1"], "h2": w * b["h1"]})

		// The same with a weight of 0.5, and a window of 1 keeps the span of two.
		q.WindowWeight, q.Window = 0.5, 1
		gains(e, "weight 0.5, window 1", e.search(main, q), b, map[string]float64{"f4": 0.5 * b["f5"], "f3": 0.5 * b["f5"], "g2": 0.5 * b["g1"], "h2": 0.5 * b["h1"]})

		// Neighbours that match lend each other: "film" is in f3 and f2.
		q = store.SearchQuery{Text: "film", Mode: store.Keyword, Kinds: facts}
		b = scores(e, main, q)
		gains(e, "film", e.search(main, q), b, map[string]float64{
			"f5": w * b["f3"], "f4": w * (b["f3"] + b["f2"]), "f3": w * b["f2"], "f2": w * b["f3"], "f1": w * (b["f3"] + b["f2"]),
		})
	})

	subtest(t, h, area, "facts with no session lend each other in the order they were written", func(e *env) {
		t0 := micro(1)
		min := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
		loose := func(id, text string, at time.Time) store.Fact { return store.Fact{ID: id, Text: text, CreatedAt: at} }
		e.put(store.DefaultBranch, store.PutOptions{},
			loose("l1", "deploy the api", min(0)),
			loose("l2", "it needs a token", min(1)),
			store.Fact{ID: "x1", SessionID: "s", Text: "a session of its own", CreatedAt: min(1)},
			loose("l3", "read from vault", min(2)),
			loose("l4", "then restart it", min(3)),
		)
		// A pause longer than store.LooseGap ends a stretch of work.
		e.put(store.DefaultBranch, store.PutOptions{}, loose("l5", "after lunch", min(120)), loose("l6", "deploy again", min(121)))
		q := store.SearchQuery{Text: "deploy", Mode: store.Keyword, Kinds: facts}
		b := scores(e, main, q)
		if !same(e.t, "hits without context", []string{"l1", "l6"}, sorted(keys(b))) {
			return
		}
		w := store.DefaultWindowWeight
		// l2 and l3 follow l1 within two places (x1 has a session, and no place
		// among them); l4 is three places on; l5 comes just before l6, and l4 two
		// hours before l5.
		gains(e, "deploy", e.search(main, q), b, map[string]float64{"l2": w * b["l1"], "l3": w * b["l1"], "l5": w * b["l6"]})
		if h.Reopen != nil {
			e.reopen()
			gains(e, "deploy, reopened", e.search(main, q), b, map[string]float64{"l2": w * b["l1"], "l3": w * b["l1"], "l5": w * b["l6"]})
		}
	})

	subtest(t, h, area, "a fact with no session lends nothing to facts created long before or after it", func(e *env) {
		t0 := micro(1)
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "old", Text: "restart the cache weekly", CreatedAt: t0})
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "r", Text: "an unrelated note", CreatedAt: t0.Add(10 * time.Hour)})
		// A new version of the old fact, written after r, keeps its creation time.
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "old", Text: "restart the cache nightly", CreatedAt: t0})
		q := store.SearchQuery{Text: "restart", Mode: store.Keyword, Kinds: facts}
		same(e.t, "restart", []string{"old"}, hitIDs(e.search(main, q)))
	})

	subtest(t, h, area, "facts with no session lend across the writes of other branches", func(e *env) {
		e.fork("side", store.DefaultBranch)
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "a", Text: "kinit renews tickets"})
		var side []store.Record
		for i := range store.LooseScan + 6 {
			side = append(side, store.Fact{ID: fmt.Sprintf("s%02d", i), Text: "written on the side"})
		}
		e.put("side", store.PutOptions{}, side...)
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "b", Text: "every morning"})
		q := store.SearchQuery{Text: "kinit", Mode: store.Keyword, Kinds: facts}
		same(e.t, "main", []string{"a", "b"}, sorted(hitIDs(e.search(main, q))))
	})

	subtest(t, h, area, "facts with no session lend along the branch's own history", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "b1", Text: "kinit renews tickets"})
		e.fork("side", store.DefaultBranch)
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "b2", Text: "written on main"})
		e.put("side", store.PutOptions{}, store.Fact{ID: "b3", Text: "written on the side"})
		q := store.SearchQuery{Text: "kinit", Mode: store.Keyword, Kinds: facts}
		same(e.t, "main", []string{"b1", "b2"}, sorted(hitIDs(e.search(main, q))))
		same(e.t, "side", []string{"b1", "b3"}, sorted(hitIDs(e.search(head("side"), q))))
		q.Filter = store.Filter{Category: "none"}
		same(e.t, "a filter no fact passes", []string{}, hitIDs(e.search(main, q)))
	})

	subtest(t, h, area, "facts created at one instant follow their ids, the shorter first", func(e *env) {
		at := micro(1)
		var recs []store.Record
		for _, id := range []string{"t13", "t12", "t11", "t10", "t9", "t8"} {
			text := "filler " + id
			if id == "t8" {
				text = "alpha"
			}
			recs = append(recs, store.Fact{ID: id, SessionID: "s", Text: text, CreatedAt: at})
		}
		e.put(store.DefaultBranch, store.PutOptions{}, recs...)
		q := store.SearchQuery{Text: "alpha", Mode: store.Keyword, Kinds: facts}
		b := scores(e, main, q)
		w := store.DefaultWindowWeight
		gains(e, "t8", e.search(main, q), b, map[string]float64{"t9": w * b["t8"], "t10": w * b["t8"]})
	})

	subtest(t, h, area, "context keeps to the filter, the history rule and the mode", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "k1", SessionID: "s", Text: "renew with kinit", Category: "auth", Embedding: vec(1)},
			store.Fact{ID: "k2", SessionID: "s", Text: "ticket lifetime", Category: "ops", Embedding: vec(1, 1)},
			store.Fact{ID: "k3", SessionID: "s", Text: "old ticket note", Category: "auth", Status: store.FactSuperseded, Embedding: vec(1, 2)},
		)
		q := store.SearchQuery{Text: "kinit", Mode: store.Keyword, Kinds: facts}
		hits := e.search(main, q)
		same(e.t, "default: history left out", []string{"k1", "k2"}, sorted(hitIDs(hits)))
		// k2 is a hit by its context alone, and comes whole, embedding included.
		for _, h := range hits {
			same(e.t, "hit "+h.Record.RecordID(), e.get(main, store.RefOf(h.Record)), h.Record)
		}
		q.IncludeHistory = true
		same(e.t, "with history", []string{"k1", "k2", "k3"}, sorted(hitIDs(e.search(main, q))))
		q.IncludeHistory, q.Filter = false, store.Filter{Category: "auth"}
		same(e.t, "category auth", []string{"k1"}, hitIDs(e.search(main, q)))
		q.Filter, q.WindowWeight = store.Filter{}, noContext
		same(e.t, "without context", []string{"k1"}, hitIDs(e.search(main, q)))
		for _, h := range e.search(main, store.SearchQuery{Vector: searchQuery, Mode: store.Vector, Kinds: facts}) {
			if h.WindowScore != 0 {
				e.t.Errorf("vector hit %s gained %v from context", h.Record.RecordID(), h.WindowScore)
			}
		}
	})

	subtest(t, h, area, "context sees the branch and the time read", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, sessionFact("a1", "s", "kinit renews tickets"), sessionFact("a2", "s", "every morning"))
		e.snapshot(store.DefaultBranch, "two")
		e.fork("side", store.DefaultBranch)
		e.put("side", store.PutOptions{}, sessionFact("a3", "s", "on the side branch"))
		e.put(store.DefaultBranch, store.PutOptions{}, sessionFact("a4", "s", "on main"), sessionFact("a5", "s", "too far"))
		q := store.SearchQuery{Text: "kinit", Mode: store.Keyword, Kinds: facts}
		same(e.t, "main", []string{"a1", "a2", "a4"}, sorted(hitIDs(e.search(main, q))))
		same(e.t, "side", []string{"a1", "a2", "a3"}, sorted(hitIDs(e.search(head("side"), q))))
		same(e.t, "snapshot", []string{"a1", "a2"}, sorted(hitIDs(e.search(atSnap(store.DefaultBranch, "two"), q))))
		for _, h := range e.search(main, q) {
			same(e.t, "hit "+h.Record.RecordID(), e.get(main, store.RefOf(h.Record)), h.Record)
		}
		if h.Reopen != nil {
			e.reopen()
			same(e.t, "main, reopened", []string{"a1", "a2", "a4"}, sorted(hitIDs(e.search(main, q))))
		}
	})
}

// keys returns the keys of m.
func keys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
