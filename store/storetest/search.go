package storetest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/day1ai/day1/internal/vectest"
	"github.com/day1ai/day1/store"
)

// searchQuery is the query vector of the search fixture; the fixture's cosines to it
// are exact.
var searchQuery = vec(1)

// searchFixture is the corpus of the search subtests: six facts and two observations of
// four tokens each, every one containing "service". Cosines to searchQuery:
// fA 1, oA 0.96, fF 0.923, fB 0.8, fC 0.6, fD 0.385, oB 0.141; fE has no embedding.
// Rare terms: "restart" (fB), "ticket" (fA, oA), "bundle" (fE); "database" is in two
// facts, "kerberos" in two facts and one observation.
func searchFixture() []store.Record {
	red, blue := map[string]string{"team": "red"}, map[string]string{"team": "blue"}
	return []store.Record{
		store.Fact{ID: "fA", Text: "kerberos ticket expired service", Embedding: vec(1), Category: "auth", Status: store.FactActive,
			SessionID: "s1", TaskID: "t1", AgentID: "a1", Metadata: red, CreatedAt: micro(1)},
		store.Fact{ID: "fB", Text: "kerberos cache restart service", Embedding: vec(4, 3), Category: "auth", Status: store.FactVerified,
			SessionID: "s2", TaskID: "t1", AgentID: "a2", Metadata: blue, CreatedAt: micro(2)},
		store.Fact{ID: "fC", Text: "database migration pending service", Embedding: vec(3, 4), Category: "db", Status: store.FactActive,
			SessionID: "s1", TaskID: "t2", AgentID: "a1", CreatedAt: micro(3)},
		store.Fact{ID: "fD", Text: "database index rebuilt service", Embedding: vec(5, 12), Category: "db", Status: store.FactInvalidated,
			SessionID: "s2", TaskID: "t2", AgentID: "a2", CreatedAt: micro(4)},
		store.Fact{ID: "fE", Text: "frontend bundle size service", Category: "ui", Status: store.FactActive,
			SessionID: "s1", TaskID: "t3", AgentID: "a1", CreatedAt: micro(5)},
		store.Fact{ID: "fF", Text: "frontend cache warmup service", Embedding: vec(12, 5), Category: "ui", Status: store.FactPromoted,
			SessionID: "s2", TaskID: "t3", AgentID: "a2", Metadata: red, CreatedAt: micro(6)},
		store.Observation{ID: "oA", Type: store.ObsDiscovery, Summary: "kerberos ticket refresh service", Embedding: vec(24, 7),
			SessionID: "s1", TaskID: "t1", AgentID: "a1", CreatedAt: micro(1)},
		store.Observation{ID: "oB", Type: store.ObsError, Summary: "service latency spike observed", Embedding: vec(1, 7),
			SessionID: "s2", TaskID: "t2", AgentID: "a2", Metadata: red, CreatedAt: micro(2)},
	}
}

// writeSearchFixture writes searchFixture to main.
func (e *env) writeSearchFixture() {
	e.t.Helper()
	e.put(store.DefaultBranch, store.PutOptions{}, searchFixture()...)
}

// factsOnly limits a search to facts.
var factsOnly = []store.Kind{store.KindFact}

// testSearch checks keyword (BM25), vector (cosine) and hybrid (RRF and weighted)
// search, their filters, kinds, limits, minimum scores and query validation. The
// fixture's facts share sessions: the subtests of the retrievers' arithmetic search
// without the context they would lend each other (noContext). Most
// subtests search with IncludeHistory, so that the fixture's invalidated fact fD
// counts; "history is left out by default" checks the default.
func testSearch(t *testing.T, h Harness) {
	const area = "search"
	main := head(store.DefaultBranch)

	subtest(t, h, area, "keyword finds only documents with a query term", func(e *env) {
		e.writeSearchFixture()
		hits := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "database", Mode: store.Keyword})
		same(e.t, "hits", []string{"fC", "fD"}, sorted(hitIDs(hits)))
		checkKeywordHits(e.t, hits)
	})

	subtest(t, h, area, "keyword finds long words of any script", func(e *env) {
		// Words of 12 letters or more in Cyrillic, Greek or accented Latin, and a
		// mixed one whose 24th byte falls inside a letter: a record holding any of
		// them is written and found by each word, as an ASCII word is.
		words := []string{"достопримечательность", "αποκατάσταση", "éééééééééééé", "abcdefghijklmnopqrstuvé", "Straßenbahnhaltestelle"}
		var recs []store.Record
		for i, w := range words {
			recs = append(recs, store.Fact{ID: fmt.Sprint("w", i), Text: "the word " + w + " stands here"},
				store.Observation{ID: fmt.Sprint("o", i), Type: store.ObsToolUse, Summary: "saw " + w + " in a log"},
				store.Message{ID: fmt.Sprint("m", i), ConversationID: "c1", Seq: i + 1, Role: store.RoleUser, Content: "say " + w})
		}
		e.put(store.DefaultBranch, store.PutOptions{}, append([]store.Record{store.Conversation{ID: "c1", Title: "words"}}, recs...)...)
		for i, w := range words {
			hits := e.search(main, store.SearchQuery{WindowWeight: noContext, Text: w, Mode: store.Keyword,
				Kinds: []store.Kind{store.KindFact, store.KindObservation, store.KindMessage}})
			same(e.t, "hits for "+w, []string{fmt.Sprint("m", i), fmt.Sprint("o", i), fmt.Sprint("w", i)}, sorted(hitIDs(hits)))
		}
	})

	subtest(t, h, area, "keyword ranks more matching terms higher", func(e *env) {
		e.writeSearchFixture()
		hits := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "kerberos ticket", Mode: store.Keyword, Kinds: factsOnly})
		same(e.t, "hits", []string{"fA", "fB"}, hitIDs(hits))
		checkKeywordHits(e.t, hits)
		if len(hits) == 2 && !(hits[0].KeywordScore > hits[1].KeywordScore) {
			e.t.Errorf("KeywordScore of fA %v is not above fB's %v", hits[0].KeywordScore, hits[1].KeywordScore)
		}
	})

	subtest(t, h, area, "keyword ranks a rarer term higher", func(e *env) {
		e.writeSearchFixture()
		// "restart" is in one fact, "database" in two; the documents are equally long.
		hits := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "restart database", Mode: store.Keyword, Kinds: factsOnly})
		if ids := hitIDs(hits); len(ids) != 3 || ids[0] != "fB" || !slices.Equal(sorted(ids[1:]), []string{"fC", "fD"}) {
			e.t.Errorf("hits = %v; want fB first, then fC and fD", ids)
		}
		checkKeywordHits(e.t, hits)
	})

	subtest(t, h, area, "vector ranks by cosine", func(e *env) {
		e.writeSearchFixture()
		hits := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Vector: searchQuery, Mode: store.Vector})
		same(e.t, "hits", []string{"fA", "oA", "fF", "fB", "fC", "fD", "oB"}, hitIDs(hits))
		checkVectorHits(e.t, hits)
		for _, hit := range hits {
			same(e.t, "hit record "+hit.Record.RecordID(), e.get(main, store.RefOf(hit.Record)), hit.Record)
		}
	})

	subtest(t, h, area, "hybrid ranks a document found by both first", func(e *env) {
		e.writeSearchFixture()
		// Keyword finds only fB; vector ranks fA, fF, fB, fC, fD. RRF: fB = 1/61 + 1/63.
		hits := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "restart", Vector: searchQuery, Mode: store.Hybrid, Kinds: factsOnly})
		same(e.t, "hits", []string{"fB", "fA", "fF", "fC", "fD"}, hitIDs(hits))
		checkRRF(e.t, hits, store.DefaultRRFK)
		if len(hits) > 0 {
			same(e.t, "fB ranks and retrievers", []any{1, 3, []store.Retriever{store.RetrieverKeyword, store.RetrieverVector}},
				[]any{hits[0].KeywordRank, hits[0].VectorRank, sortedRetrievers(hits[0].FoundBy)})
			if !(hits[0].KeywordScore > 0) || !near(hits[0].VectorScore, 0.8, 1e-4) {
				e.t.Errorf("fB KeywordScore %v, VectorScore %v; want > 0 and 0.8", hits[0].KeywordScore, hits[0].VectorScore)
			}
		}
		for _, hit := range hits[1:] {
			same(e.t, "retrievers of "+hit.Record.RecordID(), []store.Retriever{store.RetrieverVector}, hit.FoundBy)
		}
	})

	subtest(t, h, area, "hybrid RRF with a custom k", func(e *env) {
		e.writeSearchFixture()
		hits := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "kerberos ticket", Vector: searchQuery, Mode: store.Hybrid, Fusion: store.RRF, RRFK: 10, Limit: 100})
		// Keyword: fA and oA (both terms), fB; vector: fA, oA, fF, fB, fC, fD, oB.
		if ids := hitIDs(hits); len(ids) != 7 || !slices.Equal(sorted(ids[:2]), []string{"fA", "oA"}) || ids[2] != "fB" {
			e.t.Errorf("hits = %v; want fA and oA, then fB, then the vector-only hits", ids)
		}
		checkRRF(e.t, hits, 10)
	})

	subtest(t, h, area, "hybrid fill fusion", func(e *env) {
		e.writeSearchFixture()
		// "service" is in every record: keyword hits fill any limit up to eight, in
		// keyword order, and the vector retriever, which could change nothing, is
		// not asked.
		q := store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "service", Vector: searchQuery, Mode: store.Hybrid, Fusion: store.Fill, Limit: 5}
		kw := q
		kw.Mode, kw.Vector = store.Keyword, nil
		hits := e.search(main, q)
		same(e.t, "full: keyword order", hitIDs(e.search(main, kw)), hitIDs(hits))
		for _, h := range hits {
			if h.VectorRank != 0 || h.Score < 1 {
				e.t.Errorf("%s: VectorRank %d, Score %v; want no vector rank and a score of 1 or more", h.Record.RecordID(), h.VectorRank, h.Score)
			}
		}
		// Keyword finds only fB: it comes first, then the vector's other hits in
		// vector order, with scores below 1.
		q.Text, q.Kinds = "restart", factsOnly
		hits = e.search(main, q)
		same(e.t, "filled", []string{"fB", "fA", "fF", "fC", "fD"}, hitIDs(hits))
		if len(hits) == 5 {
			if hits[0].Score < 1 || hits[0].VectorRank != 3 || hits[1].Score >= 1 || hits[1].KeywordRank != 0 {
				e.t.Errorf("fB score %v vector rank %d; fA score %v keyword rank %d", hits[0].Score, hits[0].VectorRank,
					hits[1].Score, hits[1].KeywordRank)
			}
		}
		checkDescending(e.t, hits)
	})

	subtest(t, h, area, "hybrid weighted fusion", func(e *env) {
		e.writeSearchFixture()
		for _, c := range []struct {
			text  string
			alpha float64
			top   string
			score float64
		}{
			// fA tops both rankings: 0.5*1 + 0.5*1.
			{"kerberos ticket", 0.5, "fA", 1},
			// fA tops the vector ranking and is not found by keyword: 0.9*1 + 0.1*0.
			{"frontend bundle", 0.9, "fA", 0.9},
			// fE tops the keyword ranking and has no embedding: 0.1*0 + 0.9*1.
			{"frontend bundle", 0.1, "fE", 0.9},
		} {
			hits := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: c.text, Vector: searchQuery, Mode: store.Hybrid,
				Fusion: store.Weighted, Alpha: c.alpha, Kinds: factsOnly})
			if len(hits) == 0 || hits[0].Record.RecordID() != c.top || !near(hits[0].Score, c.score, 1e-6) {
				e.t.Errorf("%q alpha %v: hits %v (top score %v); want %s first with score %v", c.text, c.alpha, hitIDs(hits), topScore(hits), c.top, c.score)
			}
			checkDescending(e.t, hits)
		}
	})

	modes := []store.SearchMode{store.Keyword, store.Vector, store.Hybrid}
	for _, mode := range modes {
		subtest(t, h, area, fmt.Sprintf("filters apply (%s)", mode), func(e *env) {
			e.writeSearchFixture()
			e.fork("other", store.DefaultBranch)
			e.put1("other", store.Fact{ID: "fX", Text: "kerberos ticket database frontend service", Embedding: vec(1), Category: "auth",
				Status: store.FactActive, SessionID: "s1", CreatedAt: micro(1)})
			e.put1(store.DefaultBranch, store.Fact{ID: "fY", Text: "database service written after the fork", Embedding: vec(2, 1),
				Category: "db", Status: store.FactActive, SessionID: "s9", CreatedAt: micro(9)})
			all := searchFixture()
			fx := e.get(head("other"), factRef("fX"))
			fy := e.get(main, factRef("fY"))
			for _, c := range []struct {
				name   string
				branch string
				kinds  []store.Kind
				f      store.Filter
			}{
				{"none", store.DefaultBranch, nil, store.Filter{}},
				{"other branch", "other", nil, store.Filter{}},
				{"category", store.DefaultBranch, nil, store.Filter{Category: "auth"}},
				{"category on other branch", "other", nil, store.Filter{Category: "auth"}},
				{"status", store.DefaultBranch, nil, store.Filter{Status: store.FactVerified}},
				{"statuses", store.DefaultBranch, nil, store.Filter{Statuses: []store.FactStatus{store.FactActive, store.FactPromoted}}},
				{"session", store.DefaultBranch, nil, store.Filter{SessionID: "s1"}},
				{"task", store.DefaultBranch, nil, store.Filter{TaskID: "t2"}},
				{"agent", store.DefaultBranch, nil, store.Filter{AgentID: "a2"}},
				{"metadata", store.DefaultBranch, nil, store.Filter{Metadata: map[string]string{"team": "red"}}},
				{"time range", store.DefaultBranch, nil, store.Filter{Since: micro(2), Until: micro(5)}},
				{"observation type", store.DefaultBranch, nil, store.Filter{ObsType: store.ObsError}},
				{"ids", store.DefaultBranch, nil, store.Filter{IDs: []string{"fA", "oB", "fX"}}},
				{"facts only", store.DefaultBranch, []store.Kind{store.KindFact}, store.Filter{}},
				{"observations only", store.DefaultBranch, []store.Kind{store.KindObservation}, store.Filter{}},
				{"observations only with session", store.DefaultBranch, []store.Kind{store.KindObservation}, store.Filter{SessionID: "s1"}},
			} {
				e.t.Run(c.name, func(t *testing.T) {
					corpus := slices.Clone(all)
					if c.branch == "other" {
						corpus = append(corpus, fx)
					} else {
						corpus = append(corpus, fy)
					}
					var want []string
					for _, r := range corpus {
						if len(c.kinds) > 0 && !slices.Contains(c.kinds, r.RecordKind()) || !c.f.Match(r) {
							continue
						}
						if mode == store.Vector && len(store.EmbeddingOf(r)) == 0 {
							continue
						}
						want = append(want, r.RecordID())
					}
					q := store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "service", Vector: searchQuery, Mode: mode, Kinds: c.kinds, Filter: c.f, Limit: 100}
					if mode == store.Keyword {
						q.Vector = nil
					}
					hits, err := e.s.Search(e.ctx, head(c.branch), q)
					if err != nil {
						t.Fatalf("Search: %v", err)
					}
					same(t, "hits", sorted(want), sorted(hitIDs(hits)))
					for _, hit := range hits {
						if b := hit.Record.RecordBranch(); b != c.branch {
							t.Errorf("hit %s has Branch %q; want %q", hit.Record.RecordID(), b, c.branch)
						}
					}
				})
			}
		})
	}

	subtest(t, h, area, "limit", func(e *env) {
		e.writeSearchFixture()
		same(e.t, "vector, limit 2", []string{"fA", "oA"}, hitIDs(e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Vector: searchQuery, Mode: store.Vector, Limit: 2})))
		if n := len(e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "service", Mode: store.Keyword, Limit: 3})); n != 3 {
			e.t.Errorf("keyword, limit 3: %d hits", n)
		}
		same(e.t, "hybrid, limit 1", []string{"fB"}, hitIDs(e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "restart", Vector: searchQuery, Mode: store.Hybrid, Kinds: factsOnly, Limit: 1})))
		if n := len(e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Vector: searchQuery, Mode: store.Vector})); n != 7 {
			e.t.Errorf("vector, default limit: %d hits; want all 7 (the default is %d)", n, store.DefaultSearchLimit)
		}
	})

	subtest(t, h, area, "min score", func(e *env) {
		e.writeSearchFixture()
		same(e.t, "vector, min 0.7", []string{"fA", "fF", "fB"}, hitIDs(e.search(main,
			store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Vector: searchQuery, Mode: store.Vector, Kinds: factsOnly, MinScore: 0.7})))
		// fB = 1/61 + 1/63 ≈ 0.0323; fA = 1/61 ≈ 0.0164.
		same(e.t, "hybrid, min 0.02", []string{"fB"}, hitIDs(e.search(main,
			store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "restart", Vector: searchQuery, Mode: store.Hybrid, Kinds: factsOnly, MinScore: 0.02})))
		kw := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "kerberos ticket", Mode: store.Keyword, Kinds: factsOnly})
		if len(kw) == 2 {
			cut := (kw[0].Score + kw[1].Score) / 2
			same(e.t, "keyword, min between the two scores", []string{"fA"}, hitIDs(e.search(main,
				store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "kerberos ticket", Mode: store.Keyword, Kinds: factsOnly, MinScore: cut})))
		}
	})

	testRelevance(t, h)

	for _, mode := range modes {
		subtest(t, h, area, fmt.Sprintf("history is left out by default (%s)", mode), func(e *env) {
			e.writeSearchFixture()
			// fG supersedes nothing; fH is a superseded version of it.
			e.put1(store.DefaultBranch, store.Fact{ID: "fH", Text: "database schema old service", Embedding: vec(2, 1),
				Category: "db", Status: store.FactSuperseded, CreatedAt: micro(7)})
			e.put1(store.DefaultBranch, store.Fact{ID: "fG", Text: "database schema new service", Embedding: vec(2, 1), ParentID: "fH",
				Category: "db", Status: store.FactActive, CreatedAt: micro(8)})
			q := func(f store.Filter, history bool) store.SearchQuery {
				q := store.SearchQuery{Text: "database service", Vector: searchQuery, Mode: mode, Filter: f, Limit: 100, IncludeHistory: history}
				if mode == store.Keyword {
					q.Vector = nil
				}
				return q
			}
			ids := func(q store.SearchQuery) []string { return sorted(hitIDs(e.search(main, q))) }
			// Every fixture record has "service"; vector search skips fE, which has no embedding.
			current := []string{"fA", "fB", "fC", "fE", "fF", "fG", "oA", "oB"}
			everything := []string{"fA", "fB", "fC", "fD", "fE", "fF", "fG", "fH", "oA", "oB"}
			if mode == store.Vector {
				current = slices.DeleteFunc(current, func(id string) bool { return id == "fE" })
				everything = slices.DeleteFunc(everything, func(id string) bool { return id == "fE" })
			}
			same(e.t, "default", current, ids(q(store.Filter{}, false)))
			same(e.t, "IncludeHistory", everything, ids(q(store.Filter{}, true)))
			same(e.t, "Status invalidated", []string{"fD"}, ids(q(store.Filter{Status: store.FactInvalidated}, false)))
			same(e.t, "Statuses superseded, active, with session", []string{"fC"}, ids(q(store.Filter{SessionID: "s1",
				Statuses: []store.FactStatus{store.FactSuperseded, store.FactActive}, Category: "db"}, false)))
			same(e.t, "Statuses superseded", []string{"fH"}, ids(q(store.Filter{Statuses: []store.FactStatus{store.FactSuperseded}}, false)))
			same(e.t, "ExcludeStatuses verified with history", slices.DeleteFunc(slices.Clone(everything), func(id string) bool { return id == "fB" }),
				ids(q(store.Filter{ExcludeStatuses: []store.FactStatus{store.FactVerified}}, true)))
		})
	}

	subtest(t, h, area, "invalid queries", func(e *env) {
		e.writeSearchFixture()
		nan := vec(1)
		nan[3] = float32(math.NaN())
		for _, c := range []struct {
			name  string
			q     store.SearchQuery
			field string
		}{
			{"negative limit", store.SearchQuery{Text: "service", Mode: store.Keyword, Limit: -1}, "SearchQuery.Limit"},
			{"limit above MaxLimit", store.SearchQuery{Text: "service", Mode: store.Keyword, Limit: store.MaxLimit + 1}, "SearchQuery.Limit"},
			{"empty keyword text", store.SearchQuery{Mode: store.Keyword}, "SearchQuery.Text"},
			{"blank keyword text", store.SearchQuery{Text: "  \t", Mode: store.Keyword}, "SearchQuery.Text"},
			{"empty hybrid query", store.SearchQuery{Mode: store.Hybrid}, "SearchQuery.Text"},
			{"vector mode without vector", store.SearchQuery{Text: "service", Mode: store.Vector}, "SearchQuery.Vector"},
			{"NaN vector", store.SearchQuery{Vector: nan, Mode: store.Vector}, "SearchQuery.Vector"},
			{"zero vector", store.SearchQuery{Vector: make([]float32, dims), Mode: store.Vector}, "SearchQuery.Vector"},
			{"wrong dimension", store.SearchQuery{Vector: []float32{1, 0, 0, 0}, Mode: store.Vector}, "SearchQuery.Vector"},
			{"unknown mode", store.SearchQuery{Text: "service", Mode: "fuzzy"}, "SearchQuery.Mode"},
			{"relation kind", store.SearchQuery{Text: "service", Mode: store.Keyword, Kinds: []store.Kind{store.KindRelation}}, "SearchQuery.Kinds"},
			{"unknown fusion", store.SearchQuery{Text: "service", Mode: store.Hybrid, Fusion: "max"}, "SearchQuery.Fusion"},
			{"alpha above 1", store.SearchQuery{Text: "service", Vector: searchQuery, Mode: store.Hybrid, Fusion: store.Weighted, Alpha: 1.5}, "SearchQuery.Alpha"},
			{"NaN min score", store.SearchQuery{Text: "service", Mode: store.Keyword, MinScore: math.NaN()}, "SearchQuery.MinScore"},
			{"min relevance above 1", store.SearchQuery{Text: "service", Mode: store.Keyword, MinRelevance: 1.5}, "SearchQuery.MinRelevance"},
			{"negative min relevance", store.SearchQuery{Text: "service", Mode: store.Keyword, MinRelevance: -0.1}, "SearchQuery.MinRelevance"},
			{"NaN min relevance", store.SearchQuery{Text: "service", Mode: store.Keyword, MinRelevance: math.NaN()}, "SearchQuery.MinRelevance"},
			{"infinite min score", store.SearchQuery{Text: "service", Mode: store.Keyword, MinScore: math.Inf(-1)}, "SearchQuery.MinScore"},
			{"vector weight above 1", store.SearchQuery{Text: "service", Mode: store.Hybrid, VectorWeight: 2}, "SearchQuery.VectorWeight"},
			{"NaN alpha", store.SearchQuery{Text: "service", Vector: searchQuery, Mode: store.Hybrid, Fusion: store.Weighted, Alpha: math.NaN()}, "SearchQuery.Alpha"},
			{"infinite RRF k", store.SearchQuery{Text: "service", Mode: store.Hybrid, RRFK: math.Inf(1)}, "SearchQuery.RRFK"},
			{"NaN RRF k", store.SearchQuery{Text: "service", Mode: store.Hybrid, RRFK: math.NaN()}, "SearchQuery.RRFK"},
			{"until before since", store.SearchQuery{Text: "service", Mode: store.Keyword, Filter: store.Filter{Since: micro(2), Until: micro(1)}}, "Filter.Until"},
		} {
			_, err := e.s.Search(e.ctx, main, c.q)
			isInvalid(e.t, c.name, err, c.field)
		}
	})
}

// checkKeywordHits checks the scores and ranks of a keyword search.
func checkKeywordHits(t *testing.T, hits []store.Hit) {
	t.Helper()
	for i, h := range hits {
		id := h.Record.RecordID()
		if !(h.KeywordScore > 0) || h.KeywordRank != i+1 || !near(h.Score, h.KeywordScore, 1e-9) {
			t.Errorf("hit %d %s: Score %v, KeywordScore %v, KeywordRank %d; want KeywordScore > 0 equal to Score, rank %d",
				i, id, h.Score, h.KeywordScore, h.KeywordRank, i+1)
		}
		if h.VectorRank != 0 || h.VectorScore != 0 {
			t.Errorf("hit %s: VectorRank %d, VectorScore %v; want 0 in a keyword search", id, h.VectorRank, h.VectorScore)
		}
		same(t, "FoundBy of "+id, []store.Retriever{store.RetrieverKeyword}, h.FoundBy)
	}
	checkDescending(t, hits)
}

// checkVectorHits checks the scores and ranks of a vector search against searchQuery.
func checkVectorHits(t *testing.T, hits []store.Hit) {
	t.Helper()
	for i, h := range hits {
		id := h.Record.RecordID()
		want := vectest.Cosine(searchQuery, store.EmbeddingOf(h.Record))
		if !near(h.VectorScore, want, 1e-4) || !near(h.Score, h.VectorScore, 1e-9) || h.VectorRank != i+1 {
			t.Errorf("hit %d %s: Score %v, VectorScore %v, VectorRank %d; want the cosine %v as both, rank %d",
				i, id, h.Score, h.VectorScore, h.VectorRank, want, i+1)
		}
		if h.KeywordRank != 0 || h.KeywordScore != 0 {
			t.Errorf("hit %s: KeywordRank %d, KeywordScore %v; want 0 in a vector search", id, h.KeywordRank, h.KeywordScore)
		}
		same(t, "FoundBy of "+id, []store.Retriever{store.RetrieverVector}, h.FoundBy)
	}
	checkDescending(t, hits)
}

// checkRRF checks that every hit's score is the reciprocal-rank fusion of its ranks and
// that FoundBy agrees with the ranks.
func checkRRF(t *testing.T, hits []store.Hit, k float64) {
	t.Helper()
	for _, h := range hits {
		var want float64
		var by []store.Retriever
		if h.KeywordRank > 0 {
			want += 1 / (k + float64(h.KeywordRank))
			by = append(by, store.RetrieverKeyword)
		}
		if h.VectorRank > 0 {
			want += 1 / (k + float64(h.VectorRank))
			by = append(by, store.RetrieverVector)
		}
		id := h.Record.RecordID()
		if !near(h.Score, want, 1e-9) {
			t.Errorf("hit %s: Score %v; want RRF %v from KeywordRank %d, VectorRank %d, k %v", id, h.Score, want, h.KeywordRank, h.VectorRank, k)
		}
		same(t, "FoundBy of "+id, by, sortedRetrievers(h.FoundBy))
		if h.VectorRank > 0 && !near(h.VectorScore, vectest.Cosine(searchQuery, store.EmbeddingOf(h.Record)), 1e-4) {
			t.Errorf("hit %s: VectorScore %v; want the cosine", id, h.VectorScore)
		}
		if h.KeywordRank > 0 && !(h.KeywordScore > 0) {
			t.Errorf("hit %s: KeywordScore %v; want > 0", id, h.KeywordScore)
		}
	}
	checkDescending(t, hits)
}

// checkDescending checks that hits are sorted by Score, best first.
func checkDescending(t *testing.T, hits []store.Hit) {
	t.Helper()
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("hit %d (%s, %v) scores above hit %d (%s, %v); hits must be sorted best first",
				i, hits[i].Record.RecordID(), hits[i].Score, i-1, hits[i-1].Record.RecordID(), hits[i-1].Score)
		}
	}
}

// sortedRetrievers returns rs as keyword, vector.
func sortedRetrievers(rs []store.Retriever) []store.Retriever {
	out := slices.Clone(rs)
	slices.Sort(out)
	return out
}

// topScore is the score of the first hit, or NaN.
func topScore(hits []store.Hit) float64 {
	if len(hits) == 0 {
		return math.NaN()
	}
	return hits[0].Score
}

// testRelevance checks Hit.Relevance and SearchQuery.MinRelevance. The fixture's
// records of a kind are equally long, so that a record holding each query term once
// scores exactly the sum of the terms' IDFs: relevance 1.
func testRelevance(t *testing.T, h Harness) {
	const area = "search"
	main := head(store.DefaultBranch)
	const eps = 1e-9

	subtest(t, h, area, "relevance is the share of the query a keyword hit matches", func(e *env) {
		e.writeSearchFixture()
		hits := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "kerberos ticket", Mode: store.Keyword})
		rel := map[string]float64{}
		for _, h := range hits {
			rel[h.Record.RecordID()] = h.Relevance
		}
		// fA and oA hold both words, each among the records of its kind; fB one.
		for _, id := range []string{"fA", "oA"} {
			if math.Abs(rel[id]-1) > eps {
				e.t.Errorf("relevance of %s, which holds every word of the query = %v; want 1", id, rel[id])
			}
		}
		if r := rel["fB"]; !(r > 0.2 && r < 0.8) {
			e.t.Errorf("relevance of fB, which holds one of two words = %v; want between 0.2 and 0.8", r)
		}
		// A word no record holds counts against every hit, as the rarest word would.
		more := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "kerberos ticket zeppelin", Mode: store.Keyword, Kinds: factsOnly})
		if len(more) == 0 || more[0].Record.RecordID() != "fA" || !(more[0].Relevance > 0.3 && more[0].Relevance < 1-eps) {
			e.t.Errorf("with a word no record holds, the hits are %v; want fA first with a relevance between 0.3 and 1", relevances(more))
		}
		// The common word alone matches everything and says little.
		common := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "service zeppelin", Mode: store.Keyword})
		for _, h := range common {
			if h.Relevance > 0.1 {
				e.t.Errorf("%s matches only the word every record holds: relevance %v; want under 0.1", h.Record.RecordID(), h.Relevance)
			}
		}
	})

	subtest(t, h, area, "an absent time does not count against a hit, an absent name twice", func(e *env) {
		e.writeSearchFixture()
		rel := func(text string) float64 {
			hits := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: text, Mode: store.Keyword, Kinds: factsOnly})
			if len(hits) == 0 || hits[0].Record.RecordID() != "fA" {
				e.t.Fatalf("%q: %v; want fA first", text, relevances(hits))
			}
			return hits[0].Relevance
		}
		whole := rel("kerberos ticket")
		// Records keep their time apart from their text: a date no record holds
		// says nothing against them.
		if r := rel("the kerberos ticket in May 2023"); math.Abs(r-whole) > eps {
			e.t.Errorf("relevance with a date no record holds = %v; want %v, as without it", r, whole)
		}
		// A name no record holds counts twice a word no record holds.
		word, name := rel("the zeppelin kerberos ticket"), rel("the Zeppelin kerberos ticket")
		if !(name < word && word < whole) {
			e.t.Errorf("relevance with a word no record holds = %v, with a name = %v; want the name lower, both below %v", word, name, whole)
		}
		// At the start of a sentence, or in a title, a capital names nothing.
		if r := rel("Zeppelin kerberos ticket"); math.Abs(r-word) > eps {
			e.t.Errorf("relevance with the word at the start = %v; want %v", r, word)
		}
		if r := rel("Zeppelin Kerberos Ticket Rules"); r < name {
			e.t.Errorf("relevance of a title = %v; want no less than %v", r, name)
		}
	})

	subtest(t, h, area, "relevance by vector is the positive cosine", func(e *env) {
		e.writeSearchFixture()
		// At a right angle to the query, and facing away from it: not like it at all.
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "fR", Text: "right angle zero service", Embedding: vec(0, 0, 0, 0, 0, 0, 0, 1), CreatedAt: micro(7)},
			store.Fact{ID: "fN", Text: "facing away negative service", Embedding: vec(-1), CreatedAt: micro(8)})
		hits := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Vector: searchQuery, Mode: store.Vector, Limit: 20})
		for _, h := range hits {
			if id := h.Record.RecordID(); id == "fR" || id == "fN" {
				e.t.Errorf("vector search found %s, whose cosine to the query is %v", id, h.VectorScore)
			}
			if math.Abs(h.Relevance-h.VectorScore) > eps {
				e.t.Errorf("%s: relevance %v, cosine %v; want them equal", h.Record.RecordID(), h.Relevance, h.VectorScore)
			}
		}
		if len(hits) != 7 {
			e.t.Errorf("vector hits = %v; want the fixture's seven with an embedding", hitIDs(hits))
		}
		// Hybrid: the larger of the two.
		hy := e.search(main, store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "restart", Vector: searchQuery, Mode: store.Hybrid, Kinds: factsOnly, Limit: 20})
		for _, h := range hy {
			want := max(h.VectorScore, 0)
			if h.KeywordRank > 0 {
				want = 1 // fB holds the query's one word
			}
			if math.Abs(h.Relevance-want) > eps {
				e.t.Errorf("hybrid %s: relevance %v; want %v", h.Record.RecordID(), h.Relevance, want)
			}
		}
	})

	subtest(t, h, area, "min relevance answers nothing when nothing is relevant", func(e *env) {
		e.writeSearchFixture()
		for _, mode := range []store.SearchMode{store.Keyword, store.Vector, store.Hybrid} {
			q := store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "service zeppelin", Mode: mode, MinRelevance: 0.3}
			if mode != store.Keyword {
				q.Vector = vec(0, 0, 0, 0, 0, 0, 1) // like no record of the fixture
			}
			if hits := e.search(main, q); len(hits) != 0 {
				e.t.Errorf("%s search of what no record is about, MinRelevance 0.3: %v; want nothing", mode, relevances(hits))
			}
		}
		// With a relevant hit, the hits down to half the floor come with it.
		q := store.SearchQuery{WindowWeight: noContext, IncludeHistory: true, Text: "kerberos ticket", Mode: store.Keyword}
		all := e.search(main, q)
		q.MinRelevance = 0.9
		var want []string
		for _, h := range all {
			if h.Relevance >= q.MinRelevance/2 {
				want = append(want, h.Record.RecordID())
			}
		}
		got := e.search(main, q)
		same(e.t, "hits at MinRelevance 0.9", want, hitIDs(got))
		if len(want) == len(all) || len(want) < 2 {
			e.t.Errorf("the fixture should keep some hits and drop others at 0.9: %v", relevances(all))
		}
	})
}

// relevances lists hits as id=relevance, for messages.
func relevances(hs []store.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = fmt.Sprintf("%s=%.3f", h.Record.RecordID(), h.Relevance)
	}
	return out
}
