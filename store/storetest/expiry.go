package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

// testExpiry specifies facts that expire (Fact.ExpiresAt, Fact.TTL): searches and
// lists that ask for live facts (Filter.LiveAt, Filter.NotExpired) leave expired ones
// out, on every path a store decides by (keyword, vector, both, lists, one session's
// facts), while gets, other kinds and reads that do not ask still see them; an expired
// fact takes no new fact's text; bad expiries are refused.
func testExpiry(t *testing.T, h Harness) {
	// The fixture: at micro(0) three facts about the freeze, one that expires at
	// micro(2) ("fx"), one that expires at micro(4) ("fy") and one that never does
	// ("fz"), in one session, with embeddings like the query's; and an observation.
	fixture := func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "fx", Text: "deploy freeze holds until tuesday", Embedding: vec(1), SessionID: "s1",
				CreatedAt: micro(0), ExpiresAt: micro(2)},
			store.Fact{ID: "fy", Text: "deploy freeze exempts hotfixes", Embedding: vec(4, 3), SessionID: "s1",
				CreatedAt: micro(0), TTL: 4 * time.Hour},
			store.Fact{ID: "fz", Text: "deploy freeze needs the release manager", Embedding: vec(3, 4), SessionID: "s1",
				CreatedAt: micro(0)},
			store.Observation{ID: "o1", Type: store.ObsDiscovery, Summary: "deploy freeze announced", Embedding: vec(1), CreatedAt: micro(0)},
		)
	}
	main := store.View{Branch: store.DefaultBranch}
	at := func(hours int) store.Filter { return store.Filter{LiveAt: micro(hours)} }
	sorted := func(ids []string) []string { slices.Sort(ids); return ids }

	subtest(t, h, "expiry", "a TTL becomes ExpiresAt and both come back as written", func(e *env) {
		fixture(e)
		for id, want := range map[string]time.Time{"fx": micro(2), "fy": micro(4), "fz": {}} {
			f := e.get(main, store.Ref{Kind: store.KindFact, ID: id}).(store.Fact)
			if !f.ExpiresAt.Equal(want) || f.TTL != 0 {
				e.t.Errorf("%s: ExpiresAt %v, TTL %v; want %v and no TTL", id, f.ExpiresAt, f.TTL, want)
			}
		}
	})

	subtest(t, h, "expiry", "searches at an instant leave out what expired by it", func(e *env) {
		fixture(e)
		for _, c := range []struct {
			hours int
			want  []string
		}{{1, []string{"fx", "fy", "fz", "o1"}}, {2, []string{"fy", "fz", "o1"}}, {5, []string{"fz", "o1"}}} {
			for _, mode := range []store.SearchMode{store.Keyword, store.Vector, store.Hybrid} {
				q := store.SearchQuery{Text: "deploy freeze", Vector: vec(1), Mode: mode, Filter: at(c.hours), WindowWeight: noContext}
				if got := sorted(hitIDs(e.search(main, q))); !cmp.Equal(got, c.want) {
					e.t.Errorf("%s search live at +%dh: %v; want %v", mode, c.hours, got, c.want)
				}
			}
			// The same with history left in: the filter is then decided record by record.
			q := store.SearchQuery{Text: "deploy freeze", Mode: store.Keyword, Filter: at(c.hours), IncludeHistory: true, WindowWeight: noContext}
			if got := sorted(hitIDs(e.search(main, q))); !cmp.Equal(got, c.want) {
				e.t.Errorf("keyword search with history, live at +%dh: %v; want %v", c.hours, got, c.want)
			}
		}
		// Without LiveAt nothing is left out.
		q := store.SearchQuery{Text: "deploy freeze", Mode: store.Keyword, WindowWeight: noContext}
		if got := sorted(hitIDs(e.search(main, q))); len(got) != 4 {
			e.t.Errorf("a search without LiveAt found %v; want all four records", got)
		}
	})

	subtest(t, h, "expiry", "lists at an instant leave out what expired by it", func(e *env) {
		fixture(e)
		history := store.Filter{LiveAt: micro(3), ExcludeStatuses: store.HistoryStatuses}
		for name, f := range map[string]store.Filter{
			"live only":        at(3),
			"history left out": history,
			"of one session":   {LiveAt: micro(3), SessionID: "s1"},
		} {
			if got := sorted(e.listIDs(main, store.ListQuery{Kind: store.KindFact, Filter: f})); !cmp.Equal(got, []string{"fy", "fz"}) {
				e.t.Errorf("list (%s) live at +3h: %v; want [fy fz]", name, got)
			}
		}
		if got := e.listIDs(main, store.ListQuery{Kind: store.KindFact, Filter: at(3), Order: store.OrderID, Limit: 1}); !cmp.Equal(got, []string{"fy"}) {
			e.t.Errorf("first page of one, live at +3h: %v; want [fy]", got)
		}
		if got := e.listIDs(main, store.ListQuery{Kind: store.KindObservation, Filter: at(9)}); !cmp.Equal(got, []string{"o1"}) {
			e.t.Errorf("observations live at +9h: %v; want [o1]: expiry applies to facts", got)
		}
		if got := e.listIDs(main, store.ListQuery{Kind: store.KindFact}); len(got) != 3 {
			e.t.Errorf("a list without LiveAt: %v; want all three facts", got)
		}
	})

	subtest(t, h, "expiry", "NotExpired judges by now", func(e *env) {
		// Instants far enough from any clock a store runs on: one long past, one far
		// ahead.
		long, ahead := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "old", Text: "the office closes at noon", CreatedAt: long, ExpiresAt: long.Add(time.Hour)},
			store.Fact{ID: "new", Text: "the office closes at five", CreatedAt: long, ExpiresAt: ahead},
		)
		q := store.SearchQuery{Text: "office closes", Mode: store.Keyword, Filter: store.Filter{NotExpired: true}, WindowWeight: noContext}
		if got := hitIDs(e.search(main, q)); !cmp.Equal(got, []string{"new"}) {
			e.t.Errorf("search of live facts: %v; want [new]", got)
		}
		if got := e.listIDs(main, store.ListQuery{Kind: store.KindFact, Filter: store.Filter{NotExpired: true}}); !cmp.Equal(got, []string{"new"}) {
			e.t.Errorf("list of live facts: %v; want [new]", got)
		}
		// LiveAt, when set, names the instant instead.
		q.Filter.LiveAt = long.Add(time.Minute)
		if got := sorted(hitIDs(e.search(main, q))); !cmp.Equal(got, []string{"new", "old"}) {
			e.t.Errorf("search of facts live at %v: %v; want [new old]", q.Filter.LiveAt, got)
		}
	})

	subtest(t, h, "expiry", "an expired fact takes no new fact's text", func(e *env) {
		fixture(e)
		// fx expired at +2h: the same text written at +3h is a new fact; at +1h it is
		// the same fact.
		res := e.put1(store.DefaultBranch, store.Fact{ID: "again", Text: "Deploy freeze holds until Tuesday", CreatedAt: micro(3)})
		if res.Outcome != store.Created {
			e.t.Errorf("the text of an expired fact written again: %s; want created", res.Outcome)
		}
		e.del(store.DefaultBranch, store.Ref{Kind: store.KindFact, ID: "again"})
		res = e.put1(store.DefaultBranch, store.Fact{ID: "before", Text: "Deploy freeze holds until Tuesday", CreatedAt: micro(1)})
		if res.Outcome != store.Deduplicated || res.Replaced != "fx" {
			e.t.Errorf("the text of a fact not yet expired: %s of %q; want deduplicated against fx", res.Outcome, res.Replaced)
		}
	})

	subtest(t, h, "expiry", "bad expiries are refused and write nothing", func(e *env) {
		for field, f := range map[string]store.Fact{
			"Fact.ExpiresAt": {ID: "b1", Text: "a fact", CreatedAt: micro(2), ExpiresAt: micro(1)},
			"Fact.TTL":       {ID: "b2", Text: "a fact", TTL: -time.Minute},
		} {
			_, err := e.s.Put(e.ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "ok", Text: "a good fact"}, f}, store.PutOptions{})
			isInvalid(e.t, field, err, field)
		}
		if got := e.listIDs(main, store.ListQuery{Kind: store.KindFact}); len(got) != 0 {
			e.t.Errorf("refused batches wrote %v", got)
		}
	})

	subtest(t, h, "expiry", "the past shows an expired fact, and a diff and a merge carry the expiry", func(e *env) {
		fixture(e)
		e.branch(store.BranchSpec{Name: "b", From: store.DefaultBranch})
		e.put1("b", store.Fact{ID: "fb", Text: "the freeze ends friday", CreatedAt: micro(1), ExpiresAt: micro(6)})
		d := e.diff("b", store.DefaultBranch)
		if len(d.SourceChanges) != 1 || !d.SourceChanges[0].After.(store.Fact).ExpiresAt.Equal(micro(6)) {
			e.t.Fatalf("diff of b: %+v; want fb with its expiry", d.SourceChanges)
		}
		e.applyDiff(d, "b", store.DefaultBranch)
		f := e.get(main, store.Ref{Kind: store.KindFact, ID: "fb"}).(store.Fact)
		if !f.ExpiresAt.Equal(micro(6)) {
			e.t.Errorf("fb merged into main expires at %v; want %v", f.ExpiresAt, micro(6))
		}
		// Gets ignore expiry.
		if got := e.get(main, store.Ref{Kind: store.KindFact, ID: "fx"}); got == nil {
			e.t.Error("get of an expired fact found nothing")
		}
	})
}
