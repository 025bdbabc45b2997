package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/day1ai/day1/store"
)

// messageFixture is the corpus of the message search subtests: two conversations and
// their messages, and one fact. Conversation c1 (session s1, agent a1) holds m1..m4,
// c2 (session s2, agent a2) holds n1..n3. "kerberos" is in m2, n3, the fact fK and
// c1's title; "expired" in m2 alone, "kinit" in m3 alone. Messages of c1 are said at
// hours 1 to 4, those of c2 at hours 10 to 12. Cosines to searchQuery: m2 1, n3 0.96,
// m3 0.8, n1 0.6, m1 0.385; m4 and n2 have no embedding.
func messageFixture() []store.Record {
	msg := func(id, conv string, seq int, role store.Role, text string, emb []float32, hour int) store.Message {
		session, agent := "s1", "a1"
		if conv == "c2" {
			session, agent = "s2", "a2"
		}
		return store.Message{ID: id, ConversationID: conv, Seq: seq, Role: role, Content: text, Embedding: emb,
			SessionID: session, AgentID: agent, CreatedAt: micro(hour)}
	}
	return []store.Record{
		store.Conversation{ID: "c1", Title: "kerberos outage review", SessionID: "s1", AgentID: "a1", CreatedAt: micro(1)},
		store.Conversation{ID: "c2", Title: "frontend planning", SessionID: "s2", AgentID: "a2", CreatedAt: micro(10)},
		msg("m1", "c1", 1, store.RoleUser, "the login service fails every morning", vec(5, 12), 1),
		msg("m2", "c1", 2, store.RoleAssistant, "the kerberos ticket expired on the gateway", vec(1), 2),
		msg("m3", "c1", 3, store.RoleUser, "renew it with kinit every week", vec(4, 3), 3),
		msg("m4", "c1", 4, store.RoleAssistant, "noted the cron schedule", nil, 4),
		msg("n1", "c2", 1, store.RoleUser, "bundle size grew after the upgrade", vec(3, 4), 10),
		msg("n2", "c2", 2, store.RoleAssistant, "tree shaking was disabled", nil, 11),
		msg("n3", "c2", 3, store.RoleUser, "kerberos is unrelated here", vec(24, 7), 12),
		store.Fact{ID: "fK", Text: "kerberos ticket lifetime is ten hours", Embedding: vec(0, 1), Status: store.FactActive,
			SessionID: "s1", AgentID: "a1", CreatedAt: micro(5)},
	}
}

// refIDs names hits as kind/id.
func refIDs(hs []store.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = store.RefOf(h.Record).String()
	}
	return out
}

// msgIDs returns the ids of messages.
func msgIDs(ms []store.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// noContext is the WindowWeight of a search whose messages, and facts of one session,
// lend each other no keyword score, for the subtests that check what the retrievers
// alone find.
const noContext = -1

// testMessageSearch checks that messages (by Content and embedding) and conversations
// (by Title) are searched like facts, found by a default search, filtered by role,
// conversation, session, agent and time, and that a Window returns and scores a
// message hit's neighbours as the view sees them.
func testMessageSearch(t *testing.T, h Harness) {
	const area = "messagesearch"
	main := head(store.DefaultBranch)

	subtest(t, h, area, "a default search finds messages, conversations and facts", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, messageFixture()...)
		hits := e.search(main, store.SearchQuery{Text: "kerberos", Mode: store.Keyword, WindowWeight: noContext})
		same(e.t, "hits", []string{"conversation/c1", "fact/fK", "message/m2", "message/n3"}, sorted(refIDs(hits)))
		checkKeywordHits(e.t, hits)
		for _, k := range store.SearchKinds {
			hits := e.search(main, store.SearchQuery{Text: "kerberos", Mode: store.Keyword, Kinds: []store.Kind{k}})
			for _, h := range hits {
				if h.Record.RecordKind() != k {
					e.t.Errorf("Kinds %v gave a hit %s", k, store.RefOf(h.Record))
				}
			}
		}
	})

	subtest(t, h, area, "a message hit carries what renders it", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, messageFixture()...)
		hits := e.search(main, store.SearchQuery{Text: "expired", Mode: store.Keyword, WindowWeight: noContext})
		if !same(e.t, "hits", []string{"message/m2"}, refIDs(hits)) {
			return
		}
		m, ok := hits[0].Message()
		if !ok {
			e.t.Fatalf("hit %T is not a message", hits[0].Record)
		}
		same(e.t, "message", e.get(main, msgRef("m2")), hits[0].Record)
		same(e.t, "conversation, seq, role", []any{"c1", 2, store.RoleAssistant, "kerberos outage review", store.DefaultBranch},
			[]any{m.ConversationID, m.Seq, m.Role, hits[0].ConversationTitle, m.Branch})
		if hits[0].Before != nil || hits[0].After != nil || hits[0].WindowScore != 0 {
			e.t.Errorf("a search without a window gave neighbours %v %v, window score %v", hits[0].Before, hits[0].After, hits[0].WindowScore)
		}
		conv := e.search(main, store.SearchQuery{Text: "outage", Mode: store.Keyword})
		if same(e.t, "title hits", []string{"conversation/c1"}, refIDs(conv)) {
			if c, ok := conv[0].Conversation(); !ok || c.Title != "kerberos outage review" {
				e.t.Errorf("conversation hit %+v", conv[0].Record)
			}
		}
	})

	subtest(t, h, area, "filters on role, conversation, session, agent and time", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, messageFixture()...)
		for _, mode := range []store.SearchMode{store.Keyword, store.Vector, store.Hybrid} {
			q := func(f store.Filter) []string {
				q := store.SearchQuery{Text: "kerberos ticket service kinit", Vector: searchQuery, Mode: mode, Filter: f, Limit: 100,
					WindowWeight: noContext}
				if mode == store.Keyword {
					q.Vector = nil
				}
				if mode == store.Vector {
					q.Text = ""
				}
				return sorted(refIDs(e.search(main, q)))
			}
			// What keyword and vector search find under each filter; hybrid finds both.
			for _, c := range []struct {
				name    string
				f       store.Filter
				kw, vec []string
			}{
				{"role user", store.Filter{Role: store.RoleUser},
					[]string{"m1", "m3", "n3"}, []string{"m1", "m3", "n1", "n3"}},
				{"conversation c1", store.Filter{ConversationID: "c1"},
					[]string{"m1", "m2", "m3"}, []string{"m1", "m2", "m3"}},
				{"session s1, hours 2 to 3", store.Filter{SessionID: "s1", Since: micro(2), Until: micro(4)},
					[]string{"m2", "m3"}, []string{"m2", "m3"}},
				{"agent a2", store.Filter{AgentID: "a2"}, []string{"n3"}, []string{"n1", "n3"}},
				{"agent a2, assistant", store.Filter{AgentID: "a2", Role: store.RoleAssistant}, nil, nil},
				// fK is at a right angle to the query vector: vector search does not
				// find it.
				{"session s1", store.Filter{SessionID: "s1"},
					[]string{"c1", "fK", "m1", "m2", "m3"}, []string{"m1", "m2", "m3"}},
			} {
				var want []string
				if mode != store.Vector {
					want = append(want, c.kw...)
				}
				if mode != store.Keyword {
					want = append(want, c.vec...)
				}
				slices.Sort(want)
				want = slices.Compact(want)
				var got []string
				for _, ref := range q(c.f) {
					_, id, _ := strings.Cut(ref, "/")
					got = append(got, id)
				}
				same(e.t, string(mode)+": "+c.name, sorted(want), sorted(got))
			}
		}
	})

	subtest(t, h, area, "vector search ranks messages by cosine", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, messageFixture()...)
		hits := e.search(main, store.SearchQuery{Vector: searchQuery, Mode: store.Vector, Kinds: []store.Kind{store.KindMessage}})
		same(e.t, "hits", []string{"m2", "n3", "m3", "n1", "m1"}, hitIDs(hits))
		checkVectorHits(e.t, hits)
		same(e.t, "embedding read back", vec(24, 7), store.EmbeddingOf(e.get(main, msgRef("n3"))))
	})

	subtest(t, h, area, "a window returns the neighbours of each message hit", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, messageFixture()...)
		hits := e.search(main, store.SearchQuery{Text: "kerberos", Mode: store.Keyword, Kinds: []store.Kind{store.KindMessage}, Window: 1,
			WindowWeight: noContext})
		byID := map[string]store.Hit{}
		for _, h := range hits {
			byID[h.Record.RecordID()] = h
		}
		same(e.t, "hits", []string{"m2", "n3"}, sorted(hitIDs(hits)))
		same(e.t, "m2 before", []string{"m1"}, msgIDs(byID["m2"].Before))
		same(e.t, "m2 after", []string{"m3"}, msgIDs(byID["m2"].After))
		same(e.t, "n3 before", []string{"n2"}, msgIDs(byID["n3"].Before))
		same(e.t, "n3 after", []string{}, msgIDs(byID["n3"].After))
		if b := byID["m2"].Before; len(b) == 1 {
			want := e.get(main, msgRef("m1")).(store.Message)
			want.Embedding = nil
			same(e.t, "neighbour m1", want, b[0])
		}
		wide := e.search(main, store.SearchQuery{Text: "expired", Mode: store.Keyword, Window: 5, WindowWeight: noContext})
		if same(e.t, "wide hits", []string{"message/m2"}, refIDs(wide)) {
			same(e.t, "wide window", [][]string{{"m1"}, {"m3", "m4"}}, [][]string{msgIDs(wide[0].Before), msgIDs(wide[0].After)})
		}
		// Other kinds get no neighbours.
		for _, h := range e.search(main, store.SearchQuery{Text: "kerberos", Mode: store.Keyword, Window: 2}) {
			if _, ok := h.Message(); !ok && (h.Before != nil || h.After != nil) {
				e.t.Errorf("%s has neighbours", store.RefOf(h.Record))
			}
		}
	})

	subtest(t, h, area, "a message gains the keyword scores of its neighbours", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, messageFixture()...)
		// "expired" is in m2, "kinit" in m3, "bundle" in n1.
		q := store.SearchQuery{Text: "expired kinit bundle", Mode: store.Keyword, Kinds: []store.Kind{store.KindMessage},
			WindowWeight: noContext}
		plain := e.search(main, q)
		if !same(e.t, "hits without context", []string{"m2", "m3", "n1"}, sorted(hitIDs(plain))) {
			return
		}
		b := map[string]float64{}
		for _, h := range plain {
			b[h.Record.RecordID()] = h.Score
		}
		// Within DefaultContextSpan (2) of each other: m1..m4 all, n1..n3 all. Messages
		// with no query word join through the neighbours of the candidates.
		for _, c := range []struct {
			name   string
			window int
			weight float64
			w      float64
		}{
			{"by default", 0, 0, store.DefaultWindowWeight},
			{"with a window of 1 and weight 0.5", 1, 0.5, 0.5},
		} {
			q.Window, q.WindowWeight = c.window, c.weight
			got := e.search(main, q)
			want := map[string]float64{
				"m1": c.w * (b["m2"] + b["m3"]), "m2": c.w * b["m3"], "m3": c.w * b["m2"], "m4": c.w * (b["m2"] + b["m3"]),
				"n2": c.w * b["n1"], "n3": c.w * b["n1"],
			}
			same(e.t, c.name+": hits", []string{"m1", "m2", "m3", "m4", "n1", "n2", "n3"}, sorted(hitIDs(got)))
			for _, h := range got {
				id := h.Record.RecordID()
				if !near(h.WindowScore, want[id], 1e-9) || !near(h.KeywordScore, b[id], 1e-9) || !near(h.Score, b[id]+want[id], 1e-9) {
					e.t.Errorf("%s: %s: Score %v, WindowScore %v, KeywordScore %v; want %v, %v, %v", c.name, id, h.Score, h.WindowScore,
						h.KeywordScore, b[id]+want[id], want[id], b[id])
				}
				same(e.t, c.name+": FoundBy of "+id, []store.Retriever{store.RetrieverKeyword}, h.FoundBy)
			}
			checkDescending(e.t, got)
		}
		// A wider window widens the span: n1 reaches nothing new, m2 reaches m4's zero.
		q.Window, q.WindowWeight = 3, 0
		if got := e.search(main, q); len(got) != 7 {
			e.t.Errorf("window 3: hits %v, want all seven messages", hitIDs(got))
		}
		// Other kinds lend and gain nothing.
		for _, h := range e.search(main, store.SearchQuery{Text: "kerberos", Mode: store.Keyword}) {
			if _, ok := h.Message(); !ok && h.WindowScore != 0 {
				e.t.Errorf("%s gained %v from context", store.RefOf(h.Record), h.WindowScore)
			}
		}
	})

	subtest(t, h, area, "context keeps to the filter and the search mode", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, messageFixture()...)
		// m3 is the user's; its neighbours m2 and m4 are the assistant's, m1 the user's.
		users := e.search(main, store.SearchQuery{Text: "kinit", Mode: store.Keyword, Filter: store.Filter{Role: store.RoleUser}})
		same(e.t, "user turns", []string{"m1", "m3"}, sorted(hitIDs(users)))
		// No message of the assistant's holds "kinit": nothing to lend context from.
		none := e.search(main, store.SearchQuery{Text: "kinit", Mode: store.Keyword, Filter: store.Filter{Role: store.RoleAssistant}})
		same(e.t, "assistant turns", []string{}, hitIDs(none))
		// A vector search has no keyword scores to lend.
		vs := e.search(main, store.SearchQuery{Vector: searchQuery, Mode: store.Vector, Kinds: []store.Kind{store.KindMessage}})
		for _, h := range vs {
			if h.WindowScore != 0 {
				e.t.Errorf("vector hit %s gained %v from context", h.Record.RecordID(), h.WindowScore)
			}
		}
	})

	subtest(t, h, area, "a window sees the branch and the time read", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, messageFixture()...)
		e.snapshot(store.DefaultBranch, "before-five")
		e.fork("side", store.DefaultBranch)
		e.put("side", store.PutOptions{},
			store.Message{ID: "m5", ConversationID: "c1", Seq: 5, Role: store.RoleUser, Content: "cron runs at noon", SessionID: "s1"},
			store.Message{ID: "m3", ConversationID: "c1", Seq: 3, Role: store.RoleUser, Content: "renew it with kinit daily", SessionID: "s1"})
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Message{ID: "m6", ConversationID: "c1", Seq: 5, Role: store.RoleUser, Content: "main only turn", SessionID: "s1"})
		e.del(store.DefaultBranch, msgRef("m3"))
		q := store.SearchQuery{Text: "schedule", Mode: store.Keyword, Window: 2, WindowWeight: noContext}
		around := func(v store.View) [][]string {
			hits := e.search(v, q)
			if len(hits) != 1 {
				e.t.Fatalf("%+v: hits %v, want m4", v, hitIDs(hits))
			}
			out := [][]string{msgIDs(hits[0].Before), msgIDs(hits[0].After)}
			for _, m := range hits[0].Before {
				if m.ID == "m3" {
					out = append(out, []string{m.Content, m.Branch})
				}
			}
			return out
		}
		same(e.t, "main", [][]string{{"m2"}, {"m6"}}, around(main))
		same(e.t, "side", [][]string{{"m2", "m3"}, {"m5"}, {"renew it with kinit daily", "side"}}, around(head("side")))
		same(e.t, "snapshot", [][]string{{"m2", "m3"}, {}, {"renew it with kinit every week", store.DefaultBranch}},
			around(atSnap(store.DefaultBranch, "before-five")))
	})

	subtest(t, h, area, "invalid message searches", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, messageFixture()...)
		for _, c := range []struct {
			name  string
			q     store.SearchQuery
			field string
		}{
			{"negative window", store.SearchQuery{Text: "kerberos", Window: -1}, "SearchQuery.Window"},
			{"window above MaxWindow", store.SearchQuery{Text: "kerberos", Window: store.MaxWindow + 1}, "SearchQuery.Window"},
			{"window weight above 1", store.SearchQuery{Text: "kerberos", Window: 1, WindowWeight: 1.5}, "SearchQuery.WindowWeight"},
			{"unknown role", store.SearchQuery{Text: "kerberos", Filter: store.Filter{Role: "boss"}}, "Filter.Role"},
			{"a kind twice", store.SearchQuery{Text: "kerberos", Kinds: []store.Kind{store.KindMessage, store.KindMessage}}, "SearchQuery.Kinds"},
		} {
			_, err := e.s.Search(e.ctx, main, c.q)
			isInvalid(e.t, c.name, err, c.field)
		}
		_, err := e.s.Put(e.ctx, store.DefaultBranch, []store.Record{store.Message{ID: "bad", ConversationID: "c1", Seq: 9,
			Role: store.RoleUser, Content: "x", Embedding: []float32{1, 2}}}, store.PutOptions{})
		isInvalid(e.t, "message embedding of the wrong dimension", err, "Message.Embedding")
		if got := e.listIDs(main, store.ListQuery{Kind: store.KindMessage, Filter: store.Filter{IDs: []string{"bad"}}}); len(got) != 0 {
			e.t.Errorf("the refused message was written: %v", got)
		}
	})

	subtest(t, h, area, "message embeddings survive a reopen", func(e *env) {
		if e.h.Reopen == nil {
			e.t.Skip("the harness cannot reopen its store")
		}
		e.put(store.DefaultBranch, store.PutOptions{}, messageFixture()...)
		e.reopen()
		same(e.t, "embedding", vec(3, 4), store.EmbeddingOf(e.get(main, msgRef("n1"))))
		hits := e.search(main, store.SearchQuery{Vector: searchQuery, Text: "kinit", Mode: store.Hybrid, Kinds: []store.Kind{store.KindMessage}, Window: 1,
			WindowWeight: noContext})
		if len(hits) == 0 || hits[0].Record.RecordID() != "m3" || !slices.Equal(msgIDs(hits[0].After), []string{"m4"}) {
			e.t.Errorf("after a reopen: hits %v", refIDs(hits))
		}
	})
}
