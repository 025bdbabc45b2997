package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/vectest"
	"github.com/day1ai/day1/store"
)

// testWrite checks Put, Get, Delete and List: round trips, defaults, batch atomicity,
// deduplication, updates, near-duplicate supersession, deletes and list filters.
func testWrite(t *testing.T, h Harness) {
	const area = "write"
	main := head(store.DefaultBranch)

	subtest(t, h, area, "put and get each kind", func(e *env) {
		at := micro(0)
		recs := []store.Record{
			store.Fact{
				ID: "f1", Text: "The auth service validates JWT tokens with RS256", Embedding: vec(1, 2, 3),
				Category: "architecture", SourceType: "observation", SourceID: "o1", SessionID: "s1",
				TaskID: "t1", AgentID: "agent-a", Metadata: map[string]string{"file": "auth.go"},
				Verify: store.Verification{Status: store.Verified, Score: 0.75, By: "judge", At: at, Notes: "checked"},
			},
			store.Observation{
				ID: "o1", SessionID: "s1", TaskID: "t1", AgentID: "agent-a", Type: store.ObsToolUse,
				Tool: "grep", Summary: "searched the code for token validation", Embedding: vec(0, 1),
				RawInput: `{"pattern":"RS256"}`, RawOutput: "auth.go:12", Metadata: map[string]string{"exit": "0"},
			},
			store.Relation{
				ID: "r1", Source: "AuthService", Target: "UserDB", Type: "depends_on",
				Properties: map[string]string{"env": "prod"}, SessionID: "s1", TaskID: "t1", AgentID: "agent-a",
			},
			store.Conversation{
				ID: "c1", SessionID: "s1", AgentID: "agent-a", TaskID: "t1", Title: "Fix the login bug",
				Verify: store.Verification{Status: store.Pending}, Metadata: map[string]string{"channel": "cli"},
			},
			store.Message{
				ID: "m1", ConversationID: "c1", Seq: 1, Role: store.RoleAssistant, Content: "The bug is in the token parser",
				Tool: "editor", PickedTo: []string{"task/fix-auth"}, SessionID: "s1", TaskID: "t1", AgentID: "agent-a",
				Metadata: map[string]string{"tokens": "42"},
			},
		}
		res := e.put(store.DefaultBranch, store.PutOptions{}, recs...)
		for i, in := range recs {
			ref := store.RefOf(in)
			if res[i].Outcome != store.Created {
				e.t.Errorf("Put %v: Outcome = %q; want %q", ref, res[i].Outcome, store.Created)
			}
			got := e.get(main, ref)
			want := stampedLike(e.t, in, got)
			same(e.t, fmt.Sprintf("Get(%v)", ref), want, got)
			same(e.t, fmt.Sprintf("PutResult.Record of %v", ref), got, res[i].Record)
		}
	})

	subtest(t, h, area, "explicit times are kept and PutOptions.Now stamps zero ones", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "kept", Text: "kept times", CreatedAt: micro(0), UpdatedAt: micro(1)})
		f := e.get(main, factRef("kept")).(store.Fact)
		same(e.t, "kept CreatedAt", micro(0), f.CreatedAt)
		same(e.t, "kept UpdatedAt", micro(1), f.UpdatedAt)

		now := micro(5)
		e.put(store.DefaultBranch, store.PutOptions{Now: now},
			store.Fact{ID: "f", Text: "stamped by options"},
			store.Observation{ID: "o", Type: store.ObsInsight, Summary: "stamped"},
			store.Relation{ID: "r", Source: "A", Target: "B", Type: "calls"},
			store.Conversation{ID: "c", Title: "stamped"},
			store.Message{ID: "m", ConversationID: "c", Role: store.RoleUser, Content: "stamped"},
		)
		// The records of one write are a microsecond apart, in the order given, the
		// last stamped with Now (store.BatchTime).
		at := func(i int) time.Time { return now.Add(time.Duration(i-4) * time.Microsecond) }
		f = e.get(main, factRef("f")).(store.Fact)
		same(e.t, "Fact times", [2]any{at(0), at(0)}, [2]any{f.CreatedAt, f.UpdatedAt})
		same(e.t, "Observation.CreatedAt", at(1), e.get(main, obsRef("o")).RecordTime())
		r := e.get(main, relRef("r")).(store.Relation)
		same(e.t, "Relation CreatedAt, ValidFrom", [2]any{at(2), at(2)}, [2]any{r.CreatedAt, r.ValidFrom})
		c := e.get(main, convRef("c")).(store.Conversation)
		same(e.t, "Conversation times", [2]any{at(3), at(3)}, [2]any{c.CreatedAt, c.UpdatedAt})
		same(e.t, "Message.CreatedAt", at(4), e.get(main, msgRef("m")).RecordTime())
	})

	subtest(t, h, area, "the Branch field is set to the branch written", func(e *env) {
		e.fork("other", store.DefaultBranch)
		res := e.put1("other", store.Fact{ID: "f", Branch: "elsewhere", Text: "branch field"})
		if got := res.Record.RecordBranch(); got != "other" {
			e.t.Errorf("PutResult.Record.Branch = %q; want %q", got, "other")
		}
		if got := e.get(head("other"), factRef("f")).RecordBranch(); got != "other" {
			e.t.Errorf("Get: Branch = %q; want %q", got, "other")
		}
		e.missing(main, factRef("f"))
	})

	subtest(t, h, area, "records are copies", func(e *env) {
		in := store.Fact{ID: "f", Text: "copied", Embedding: vec(1, 2), Metadata: map[string]string{"k": "v"}}
		e.put1(store.DefaultBranch, in)
		in.Embedding[0], in.Metadata["k"] = 9, "changed by the caller after Put"
		got := e.get(main, factRef("f")).(store.Fact)
		same(e.t, "after changing the input", []any{vec(1, 2), map[string]string{"k": "v"}}, []any{got.Embedding, got.Metadata})
		got.Embedding[0], got.Metadata["k"] = 9, "changed by the caller after Get"
		again := e.get(main, factRef("f")).(store.Fact)
		same(e.t, "after changing a read", []any{vec(1, 2), map[string]string{"k": "v"}}, []any{again.Embedding, again.Metadata})
	})

	subtest(t, h, area, "a message's picks: branch, conversation and time, beside PickedTo", func(e *env) {
		at := time.Date(2026, 3, 1, 10, 30, 0, 123456000, time.UTC)
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Conversation{ID: "c1"},
			store.Message{ID: "m1", ConversationID: "c1", Seq: 1, Role: store.RoleToolCall, Content: "grep token",
				Picks: []store.Pick{{Branch: "task/a", ConversationID: "c9", At: at}}},
			store.Message{ID: "m2", ConversationID: "c1", Seq: 2, Role: store.RoleToolResult, Content: "parser.go:12",
				PickedTo: []string{"task/b"}, Picks: []store.Pick{{Branch: "task/a", ConversationID: "c9", At: at}}})
		m1 := e.get(main, msgRef("m1")).(store.Message)
		same(e.t, "m1 picks", []any{[]string{"task/a"}, []store.Pick{{Branch: "task/a", ConversationID: "c9", At: at}}},
			[]any{m1.PickedTo, m1.Picks})
		m2 := e.get(main, msgRef("m2")).(store.Message)
		same(e.t, "m2 picks", []any{[]string{"task/a", "task/b"}, []store.Pick{{Branch: "task/a", ConversationID: "c9", At: at}, {Branch: "task/b"}}},
			[]any{m2.PickedTo, m2.Picks})
		if !m1.PickedAt("task/a", "c9") || m1.PickedAt("task/a", "c1") {
			e.t.Errorf("m1.PickedAt: want true for task/a c9 only")
		}
		// Writing the same picks again is deduplicated; a second pick is an update.
		res := e.put1(store.DefaultBranch, m1)
		if res.Outcome != store.Deduplicated {
			e.t.Errorf("rewriting m1 as read: Outcome = %q; want deduplicated", res.Outcome)
		}
		m1.Picks = append(m1.Picks, store.Pick{Branch: "task/a", ConversationID: "c10", At: at.Add(time.Minute)})
		if res := e.put1(store.DefaultBranch, m1); res.Outcome != store.Updated {
			e.t.Errorf("a second pick to task/a: Outcome = %q; want updated", res.Outcome)
		}
		m1 = e.get(main, msgRef("m1")).(store.Message)
		if len(m1.Picks) != 2 || len(m1.PickedTo) != 1 || !m1.PickedAt("task/a", "c10") {
			e.t.Errorf("after the second pick: PickedTo %v, Picks %+v; want one branch, two picks", m1.PickedTo, m1.Picks)
		}
	})

	subtest(t, h, area, "limits on ids and categories", func(e *env) {
		// The design's limits: 36-character ids, 50-character categories. day1 keeps
		// wider ones (store.MaxIDLen bytes, store.MaxCategoryLen characters) that hold
		// all of the design's values.
		uuid := "0b8e2f4c-5d6a-4e1f-9a3b-7c2d1e0f4a5b"
		longID := strings.Repeat("i", store.MaxIDLen)
		cjk50 := strings.Repeat("缺", 50)
		cjkMax := strings.Repeat("類", store.MaxCategoryLen)
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: uuid, Text: "a fact with a UUID", Category: cjk50},
			store.Fact{ID: longID, Text: "a fact with the longest id", Category: cjkMax})
		if f := e.get(main, factRef(uuid)).(store.Fact); f.Category != cjk50 {
			e.t.Errorf("50-character category read back as %q", f.Category)
		}
		if f := e.get(main, factRef(longID)).(store.Fact); f.Category != cjkMax {
			e.t.Errorf("%d-character category read back as %q", store.MaxCategoryLen, f.Category)
		}
		_, err := e.s.Put(e.ctx, store.DefaultBranch, []store.Record{store.Fact{ID: longID + "x", Text: "too long"}}, store.PutOptions{})
		isInvalid(e.t, "Put with a 129-byte id", err, "Fact.ID")
		_, err = e.s.Put(e.ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "cat", Text: "too long", Category: cjkMax + "x"}}, store.PutOptions{})
		isInvalid(e.t, "Put with a category over the limit", err, "Fact.Category")
	})

	subtest(t, h, area, "a batch with one invalid record writes nothing", func(e *env) {
		before := e.getBranch(store.DefaultBranch).Head
		_, err := e.s.Put(e.ctx, store.DefaultBranch, []store.Record{
			store.Fact{ID: "ok1", Text: "valid"},
			store.Observation{ID: "ok2", Type: store.ObsDecision, Summary: "valid"},
			store.Fact{ID: "bad", Text: "  "},
		}, store.PutOptions{})
		isInvalid(e.t, "Put with an empty fact text", err, "Fact.Text")
		e.missing(main, factRef("ok1"))
		e.missing(main, obsRef("ok2"))
		same(e.t, "facts after the failed batch", []string{}, e.listIDs(main, store.ListQuery{Kind: store.KindFact}))
		same(e.t, "observations after the failed batch", []string{}, e.listIDs(main, store.ListQuery{Kind: store.KindObservation}))
		if after := e.getBranch(store.DefaultBranch).Head; after != before {
			e.t.Errorf("Head moved from %d to %d after a failed batch", before, after)
		}
	})

	subtest(t, h, area, "the error of a large batch names its first invalid record", func(e *env) {
		// Large enough for a store to check the records in parallel.
		var recs []store.Record
		for i := range 300 {
			f := store.Fact{ID: fmt.Sprintf("f%03d", i), Text: fmt.Sprintf("fact number %d", i), Embedding: vec(1, float32(i))}
			switch i {
			case 130:
				f.Embedding = vec(1, 2)[:dims-1] // another length than the batch's first
			case 270:
				f.Text = " "
			}
			recs = append(recs, f)
		}
		_, err := e.s.Put(e.ctx, store.DefaultBranch, recs, store.PutOptions{})
		isInvalid(e.t, "Put of a batch with invalid records 130 and 270", err, "records[130].Fact.Embedding")
		same(e.t, "facts after the failed batch", []string{}, e.listIDs(main, store.ListQuery{Kind: store.KindFact}))
	})

	for _, k := range store.Kinds {
		subtest(t, h, area, "repeated write is deduplicated ("+string(k)+")", func(e *env) {
			in := recOf(k, "x", "same content twice")
			first := e.put1(store.DefaultBranch, in)
			headAfterFirst := e.getBranch(store.DefaultBranch).Head
			second := e.put1(store.DefaultBranch, in)
			if second.Outcome != store.Deduplicated {
				e.t.Errorf("second Put: Outcome = %q; want %q", second.Outcome, store.Deduplicated)
			}
			same(e.t, "second PutResult.Record", first.Record, second.Record)
			same(e.t, "Get after the repeat", first.Record, e.get(main, store.RefOf(in)))
			if h := e.getBranch(store.DefaultBranch).Head; h != headAfterFirst {
				e.t.Errorf("Head moved from %d to %d on a deduplicated write; no new version may be written", headAfterFirst, h)
			}
		})

		subtest(t, h, area, "same id with other content is updated ("+string(k)+")", func(e *env) {
			first := e.put1(store.DefaultBranch, recOf(k, "x", "first version"))
			headAfterFirst := e.getBranch(store.DefaultBranch).Head
			second := e.put1(store.DefaultBranch, recOf(k, "x", "second version"))
			if second.Outcome != store.Updated {
				e.t.Errorf("Put: Outcome = %q; want %q", second.Outcome, store.Updated)
			}
			got := e.get(main, store.RefOf(second.Record))
			if textOf(got) != "second version" {
				e.t.Errorf("Get after update = %s; want the second version", describe(got))
			}
			same(e.t, "ids after update", []string{"x"}, e.listIDs(main, store.ListQuery{Kind: k}))
			if h := e.getBranch(store.DefaultBranch).Head; h == headAfterFirst {
				e.t.Errorf("Head did not move on an update")
			}
			if f, ok := got.(store.Fact); ok && f.UpdatedAt.Before(first.Record.(store.Fact).UpdatedAt) {
				e.t.Errorf("UpdatedAt went back: %v before %v", f.UpdatedAt, first.Record.(store.Fact).UpdatedAt)
			}
		})
	}

	subtest(t, h, area, "same fact text under another id is deduplicated", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "Passwords are hashed with bcrypt"})
		res := e.put1(store.DefaultBranch, store.Fact{ID: "f2", Text: "Passwords are hashed with bcrypt", Category: "security"})
		if res.Outcome != store.Deduplicated || res.Replaced != "f1" {
			e.t.Errorf("Put: Outcome, Replaced = %q, %q; want %q, %q", res.Outcome, res.Replaced, store.Deduplicated, "f1")
		}
		if res.Record == nil || res.Record.RecordID() != "f1" {
			e.t.Errorf("PutResult.Record = %s; want the existing fact f1", describe(res.Record))
		}
		// f2 is an alias of f1 (see the alias area): a read of it returns f1.
		if got := e.get(main, factRef("f2")); got.RecordID() != "f1" {
			e.t.Errorf("Get(f2) = %s; want f1 through its alias", describe(got))
		}
		same(e.t, "facts", []string{"f1"}, e.listIDs(main, store.ListQuery{Kind: store.KindFact}))
	})

	subtest(t, h, area, "same fact text with a near embedding is deduplicated, not superseded", func(e *env) {
		// The stored fact is found twice over, by its text and by its embedding: the
		// text decides.
		opts := store.PutOptions{DedupeThreshold: 0.9}
		e.put(store.DefaultBranch, opts, store.Fact{ID: "f1", Text: "Sessions are cached in Redis", Embedding: vec(1)})
		res := e.put(store.DefaultBranch, opts, store.Fact{ID: "f2", Text: "sessions are cached in redis", Embedding: vec(1)})[0]
		if res.Outcome != store.Deduplicated || res.Replaced != "f1" {
			e.t.Errorf("Put: Outcome, Replaced = %q, %q; want %q, %q", res.Outcome, res.Replaced, store.Deduplicated, "f1")
		}
	})

	subtest(t, h, area, "same text as a fact that is not live is created", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "Sessions last one hour", Status: store.FactInvalidated})
		res := e.put1(store.DefaultBranch, store.Fact{ID: "f2", Text: "Sessions last one hour"})
		if res.Outcome != store.Created {
			e.t.Errorf("Put: Outcome = %q; want %q (f1 is invalidated, not live)", res.Outcome, store.Created)
		}
		same(e.t, "facts", []string{"f1", "f2"}, e.listIDs(main, store.ListQuery{Kind: store.KindFact, Order: store.OrderID}))
	})

	for _, c := range []struct {
		name      string
		threshold float64
		old, new  []float32
		want      store.Outcome
	}{
		{"identical vector, threshold 0.9", 0.9, vec(1), vec(1), store.Superseded},
		{"cosine 0.96, threshold 0.9", 0.9, vec(1), vec(24, 7), store.Superseded},
		{"cosine 0.8 equals threshold 0.8", 0.8, vec(1), vec(4, 3), store.Superseded},
		{"cosine 0.6 below threshold 0.8", 0.8, vec(1), vec(3, 4), store.Created},
		{"identical vector, threshold 0 turns detection off", 0, vec(1), vec(1), store.Created},
	} {
		subtest(t, h, area, "near-duplicate fact ("+c.name+")", func(e *env) {
			opts := store.PutOptions{DedupeThreshold: c.threshold}
			// The texts share no word: near-duplicates are found by embedding alone.
			e.put(store.DefaultBranch, opts, store.Fact{ID: "old", Text: "Tokens expire after one hour", Embedding: c.old, Confidence: 0.9})
			res := e.put(store.DefaultBranch, opts, store.Fact{ID: "new", Text: "Login sessions last sixty minutes", Embedding: c.new, Confidence: 0.6})[0]
			if res.Outcome != c.want {
				e.t.Fatalf("Put: Outcome = %q; want %q", res.Outcome, c.want)
			}
			nf := e.get(main, factRef("new")).(store.Fact)
			of := e.get(main, factRef("old")).(store.Fact)
			if c.want == store.Superseded {
				if res.Replaced != "old" || !near(res.Similarity, vectest.Cosine(c.old, c.new), 1e-4) {
					e.t.Errorf("Replaced, Similarity = %q, %v; want %q, %v", res.Replaced, res.Similarity, "old", vectest.Cosine(c.old, c.new))
				}
				if nf.ParentID != "old" || res.Record.(store.Fact).ParentID != "old" {
					e.t.Errorf("new fact ParentID = %q (PutResult %q); want %q", nf.ParentID, res.Record.(store.Fact).ParentID, "old")
				}
				if of.Status != store.FactSuperseded {
					e.t.Errorf("old fact Status = %q; want %q", of.Status, store.FactSuperseded)
				}
				// The restated knowledge keeps the firmer confidence of the two.
				if nf.Confidence != 0.9 || res.Record.(store.Fact).Confidence != 0.9 {
					e.t.Errorf("new fact Confidence = %v (PutResult %v); want the old fact's 0.9", nf.Confidence, res.Record.(store.Fact).Confidence)
				}
				same(e.t, "live facts", []string{"new"}, e.listIDs(main, store.ListQuery{Kind: store.KindFact,
					Filter: store.Filter{Statuses: []store.FactStatus{store.FactActive, store.FactVerified, store.FactPromoted}}}))
				return
			}
			if res.Replaced != "" || nf.ParentID != "" || of.Status != store.FactActive {
				e.t.Errorf("Replaced %q, new ParentID %q, old Status %q; want \"\", \"\", active", res.Replaced, nf.ParentID, of.Status)
			}
		})
	}

	subtest(t, h, area, "near-duplicate only on another branch is created", func(e *env) {
		opts := store.PutOptions{DedupeThreshold: 0.9}
		e.fork("other", store.DefaultBranch)
		e.put("other", opts, store.Fact{ID: "old", Text: "Cache entries live five minutes", Embedding: vec(1)})
		res := e.put(store.DefaultBranch, opts, store.Fact{ID: "new", Text: "Cache entries live ten minutes", Embedding: vec(1)})[0]
		if res.Outcome != store.Created || res.Record.(store.Fact).ParentID != "" {
			e.t.Errorf("Put: Outcome %q, ParentID %q; want created without parent", res.Outcome, res.Record.(store.Fact).ParentID)
		}
		if s := e.get(head("other"), factRef("old")).(store.Fact).Status; s != store.FactActive {
			e.t.Errorf("fact on the other branch: Status = %q; want active", s)
		}
	})

	subtest(t, h, area, "near-duplicate of a fact inherited from the parent supersedes it on the child only", func(e *env) {
		opts := store.PutOptions{DedupeThreshold: 0.9}
		e.put(store.DefaultBranch, opts, store.Fact{ID: "old", Text: "Cache entries live five minutes", Embedding: vec(1)})
		e.fork("child", store.DefaultBranch)
		res := e.put("child", opts, store.Fact{ID: "new", Text: "Cache entries live ten minutes", Embedding: vec(24, 7)})[0]
		if res.Outcome != store.Superseded || res.Replaced != "old" || res.Record.(store.Fact).ParentID != "old" {
			e.t.Errorf("Put on the child: Outcome %q, Replaced %q, ParentID %q; want superseded, old, old",
				res.Outcome, res.Replaced, res.Record.(store.Fact).ParentID)
		}
		if s := e.get(head("child"), factRef("old")).(store.Fact).Status; s != store.FactSuperseded {
			e.t.Errorf("the inherited fact on the child: Status = %q; want superseded", s)
		}
		if s := e.get(main, factRef("old")).(store.Fact).Status; s != store.FactActive {
			e.t.Errorf("the fact on the parent: Status = %q; want active", s)
		}
	})

	subtest(t, h, area, "near-duplicate of a fact that is not live is created", func(e *env) {
		opts := store.PutOptions{DedupeThreshold: 0.9}
		e.put(store.DefaultBranch, opts, store.Fact{ID: "old", Text: "Retries use linear backoff", Embedding: vec(1), Status: store.FactInvalidated})
		res := e.put(store.DefaultBranch, opts, store.Fact{ID: "new", Text: "Retries use exponential backoff", Embedding: vec(1)})[0]
		if res.Outcome != store.Created {
			e.t.Errorf("Put: Outcome = %q; want %q", res.Outcome, store.Created)
		}
		if s := e.get(main, factRef("old")).(store.Fact).Status; s != store.FactInvalidated {
			e.t.Errorf("old fact Status = %q; want invalidated", s)
		}
	})

	subtest(t, h, area, "a fact without embedding is written and keyword searchable", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{DedupeThreshold: 0.9},
			store.Fact{ID: "with", Text: "embedded neighbour", Embedding: vec(1)},
			store.Fact{ID: "without", Text: "kerberos realm misconfigured"},
		)
		if f := e.get(main, factRef("without")).(store.Fact); len(f.Embedding) != 0 {
			e.t.Errorf("Embedding = %v; want none", f.Embedding)
		}
		hits := e.search(main, store.SearchQuery{Text: "kerberos", Mode: store.Keyword, WindowWeight: noContext})
		same(e.t, "keyword hits", []string{"without"}, hitIDs(hits))
	})

	for _, k := range store.Kinds {
		subtest(t, h, area, "delete ("+string(k)+")", func(e *env) {
			e.put(store.DefaultBranch, store.PutOptions{}, recOf(k, "a", "alpha"), recOf(k, "b", "bravo"))
			ref := store.Ref{Kind: k, ID: "a"}
			e.del(store.DefaultBranch, ref)
			e.missing(main, ref)
			same(e.t, "ids after delete", []string{"b"}, e.listIDs(main, store.ListQuery{Kind: k}))
			isErr(e.t, "deleting it again", e.s.Delete(e.ctx, store.DefaultBranch, []store.Ref{ref}), store.ErrNotFound)
			err := e.s.Delete(e.ctx, store.DefaultBranch, []store.Ref{{Kind: k, ID: "b"}, {Kind: k, ID: "never-written"}})
			isErr(e.t, "deleting an existing and a missing record", err, store.ErrNotFound)
			same(e.t, "ids after the failed delete", []string{"b"}, e.listIDs(main, store.ListQuery{Kind: k}))
		})
	}

	subtest(t, h, area, "messages in seq order", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Conversation{ID: "c1", Title: "one"},
			store.Conversation{ID: "c2", Title: "two"},
			store.Message{ID: "m-a", ConversationID: "c1", Seq: 3, Role: store.RoleUser, Content: "third", CreatedAt: micro(1)},
			store.Message{ID: "m-b", ConversationID: "c1", Seq: 1, Role: store.RoleUser, Content: "first", CreatedAt: micro(3)},
			store.Message{ID: "m-c", ConversationID: "c1", Seq: 2, Role: store.RoleAssistant, Content: "second", CreatedAt: micro(2)},
			store.Message{ID: "m-d", ConversationID: "c2", Seq: 0, Role: store.RoleUser, Content: "other", CreatedAt: micro(0)},
		)
		q := store.ListQuery{Kind: store.KindMessage, Filter: store.Filter{ConversationID: "c1"}, Order: store.OrderSeq}
		same(e.t, "seq order", []string{"m-b", "m-c", "m-a"}, e.listIDs(main, q))
		q.Desc = true
		same(e.t, "seq order, descending", []string{"m-a", "m-c", "m-b"}, e.listIDs(main, q))
		same(e.t, "created order", []string{"m-a", "m-c", "m-b"}, e.listIDs(main,
			store.ListQuery{Kind: store.KindMessage, Filter: store.Filter{ConversationID: "c1"}}))
	})

	subtest(t, h, area, "updated order places an update after later writes", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "fa", Text: "fact a", CreatedAt: micro(1)},
			store.Fact{ID: "fb", Text: "fact b", CreatedAt: micro(2)},
			store.Fact{ID: "fc", Text: "fact c", CreatedAt: micro(3)},
			store.Conversation{ID: "ca", Title: "conv a", CreatedAt: micro(1)},
			store.Conversation{ID: "cb", Title: "conv b", CreatedAt: micro(2)},
			store.Observation{ID: "oa", Type: store.ObsInsight, Summary: "obs a", CreatedAt: micro(2)},
			store.Observation{ID: "ob", Type: store.ObsInsight, Summary: "obs b", CreatedAt: micro(1)},
		)
		// Updates that leave CreatedAt unset keep the creation time of the version
		// they replace and carry a later UpdatedAt.
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "fa", Text: "fact a, corrected", UpdatedAt: micro(5)},
			store.Conversation{ID: "ca", Title: "conv a, renamed", UpdatedAt: micro(4)},
		)
		facts := store.ListQuery{Kind: store.KindFact, Order: store.OrderUpdated}
		same(e.t, "facts by update", []string{"fb", "fc", "fa"}, e.listIDs(main, facts))
		facts.Desc, facts.Limit = true, 2
		same(e.t, "facts by update, newest two", []string{"fa", "fc"}, e.listIDs(main, facts))
		same(e.t, "facts by creation", []string{"fa", "fb", "fc"}, e.listIDs(main, store.ListQuery{Kind: store.KindFact}))
		same(e.t, "facts by update, filtered", []string{"fc", "fa"}, e.listIDs(main,
			store.ListQuery{Kind: store.KindFact, Order: store.OrderUpdated, Filter: store.Filter{IDs: []string{"fa", "fc"}}}))
		same(e.t, "conversations by update", []string{"cb", "ca"}, e.listIDs(main, store.ListQuery{Kind: store.KindConversation, Order: store.OrderUpdated}))
		same(e.t, "observations by update (their creation)", []string{"ob", "oa"}, e.listIDs(main, store.ListQuery{Kind: store.KindObservation, Order: store.OrderUpdated}))
		f := e.get(main, factRef("fa")).(store.Fact)
		if !f.CreatedAt.Equal(micro(1)) || !f.UpdatedAt.Equal(micro(5)) {
			e.t.Errorf("updated fact: CreatedAt %v, UpdatedAt %v; want %v and %v", f.CreatedAt, f.UpdatedAt, micro(1), micro(5))
		}
		// A later update moves the fact to the end, after lists that a store may have
		// answered from what it keeps.
		e.put1(store.DefaultBranch, store.Fact{ID: "fb", Text: "fact b, corrected", UpdatedAt: micro(6)})
		same(e.t, "facts by update after another update", []string{"fc", "fa", "fb"}, e.listIDs(main, store.ListQuery{Kind: store.KindFact, Order: store.OrderUpdated}))
	})

	subtest(t, h, area, "list filters and order", func(e *env) {
		red, blue := map[string]string{"team": "red"}, map[string]string{"team": "blue"}
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "fa", Text: "fact a", Category: "auth", Status: store.FactActive, SessionID: "s1", TaskID: "t1", AgentID: "a1", Metadata: red, CreatedAt: micro(1)},
			store.Fact{ID: "fb", Text: "fact b", Category: "auth", Status: store.FactVerified, SessionID: "s2", TaskID: "t1", AgentID: "a2", Metadata: blue, CreatedAt: micro(2)},
			store.Fact{ID: "fc", Text: "fact c", Category: "db", Status: store.FactInvalidated, SessionID: "s1", TaskID: "t2", AgentID: "a1", Metadata: map[string]string{"team": "red", "tier": "1"}, CreatedAt: micro(3)},
			store.Fact{ID: "fd", Text: "fact d", Category: "db", Status: store.FactSuperseded, SessionID: "s2", TaskID: "t2", AgentID: "a2", CreatedAt: micro(4)},
			store.Fact{ID: "fe", Text: "fact e", Category: "ui", Status: store.FactPromoted, SessionID: "s3", CreatedAt: micro(5)},
			store.Observation{ID: "oa", Type: store.ObsToolUse, Summary: "obs a", SessionID: "s1", AgentID: "a1", CreatedAt: micro(1)},
			store.Observation{ID: "ob", Type: store.ObsError, Summary: "obs b", SessionID: "s2", CreatedAt: micro(2)},
			store.Observation{ID: "oc", Type: store.ObsDecision, Summary: "obs c", SessionID: "s1", Metadata: red, CreatedAt: micro(3)},
			store.Relation{ID: "ra", Source: "AuthService", Target: "UserDB", Type: "depends_on", SessionID: "s1", Properties: map[string]string{"env": "prod"}, CreatedAt: micro(1)},
			store.Relation{ID: "rb", Source: "UserDB", Target: "Backup", Type: "replicates_to", SessionID: "s2", CreatedAt: micro(2)},
			store.Relation{ID: "rc", Source: "Gateway", Target: "AuthService", Type: "depends_on", SessionID: "s1", Properties: map[string]string{"env": "dev"}, CreatedAt: micro(3)},
			store.Conversation{ID: "ca", Title: "conv a", SessionID: "s1", AgentID: "a1", CreatedAt: micro(1)},
			store.Conversation{ID: "cb", Title: "conv b", SessionID: "s2", Metadata: map[string]string{"topic": "auth"}, CreatedAt: micro(2)},
		)
		facts := func(f store.Filter) store.ListQuery { return store.ListQuery{Kind: store.KindFact, Filter: f} }
		obs := func(f store.Filter) store.ListQuery { return store.ListQuery{Kind: store.KindObservation, Filter: f} }
		rels := func(f store.Filter) store.ListQuery { return store.ListQuery{Kind: store.KindRelation, Filter: f} }
		for _, c := range []struct {
			name string
			q    store.ListQuery
			want []string
		}{
			{"facts, no filter, created order", facts(store.Filter{}), []string{"fa", "fb", "fc", "fd", "fe"}},
			{"category", facts(store.Filter{Category: "auth"}), []string{"fa", "fb"}},
			{"status", facts(store.Filter{Status: store.FactVerified}), []string{"fb"}},
			{"statuses", facts(store.Filter{Statuses: []store.FactStatus{store.FactActive, store.FactPromoted}}), []string{"fa", "fe"}},
			{"session", facts(store.Filter{SessionID: "s1"}), []string{"fa", "fc"}},
			{"task", facts(store.Filter{TaskID: "t2"}), []string{"fc", "fd"}},
			{"agent", facts(store.Filter{AgentID: "a2"}), []string{"fb", "fd"}},
			{"metadata", facts(store.Filter{Metadata: map[string]string{"team": "red"}}), []string{"fa", "fc"}},
			{"metadata, every pair", facts(store.Filter{Metadata: map[string]string{"team": "red", "tier": "1"}}), []string{"fc"}},
			{"since is inclusive", facts(store.Filter{Since: micro(2)}), []string{"fb", "fc", "fd", "fe"}},
			{"until is exclusive", facts(store.Filter{Until: micro(3)}), []string{"fa", "fb"}},
			{"since and until", facts(store.Filter{Since: micro(2), Until: micro(4)}), []string{"fb", "fc"}},
			{"ids", facts(store.Filter{IDs: []string{"fe", "fa", "zz"}}), []string{"fa", "fe"}},
			{"combined", facts(store.Filter{Category: "db", SessionID: "s1"}), []string{"fc"}},
			{"relation fields exclude facts", facts(store.Filter{Entity: "AuthService"}), []string{}},
			{"order id, descending", store.ListQuery{Kind: store.KindFact, Order: store.OrderID, Desc: true}, []string{"fe", "fd", "fc", "fb", "fa"}},
			{"created, descending", store.ListQuery{Kind: store.KindFact, Desc: true}, []string{"fe", "fd", "fc", "fb", "fa"}},
			{"limit", store.ListQuery{Kind: store.KindFact, Limit: 2}, []string{"fa", "fb"}},
			{"offset and limit", store.ListQuery{Kind: store.KindFact, Offset: 1, Limit: 2}, []string{"fb", "fc"}},
			{"offset past the end", store.ListQuery{Kind: store.KindFact, Offset: 10}, []string{}},
			{"descending with limit", store.ListQuery{Kind: store.KindFact, Desc: true, Limit: 2}, []string{"fe", "fd"}},
			{"filter then limit", store.ListQuery{Kind: store.KindFact, Filter: store.Filter{AgentID: "a1"}, Limit: 1, Offset: 1}, []string{"fc"}},
			{"observation type", obs(store.Filter{ObsType: store.ObsError}), []string{"ob"}},
			{"observation session", obs(store.Filter{SessionID: "s1"}), []string{"oa", "oc"}},
			{"observation agent", obs(store.Filter{AgentID: "a1"}), []string{"oa"}},
			{"observation metadata", obs(store.Filter{Metadata: map[string]string{"team": "red"}}), []string{"oc"}},
			{"fact fields exclude observations", obs(store.Filter{Category: "auth"}), []string{}},
			{"relation type", rels(store.Filter{RelationType: "depends_on"}), []string{"ra", "rc"}},
			{"relation entity as source or target", rels(store.Filter{Entity: "AuthService"}), []string{"ra", "rc"}},
			{"relation entity and type", rels(store.Filter{Entity: "UserDB", RelationType: "replicates_to"}), []string{"rb"}},
			{"relation properties", rels(store.Filter{Metadata: map[string]string{"env": "prod"}}), []string{"ra"}},
			{"relation session", rels(store.Filter{SessionID: "s2"}), []string{"rb"}},
			{"conversation session", store.ListQuery{Kind: store.KindConversation, Filter: store.Filter{SessionID: "s2"}}, []string{"cb"}},
			{"conversation metadata", store.ListQuery{Kind: store.KindConversation, Filter: store.Filter{Metadata: map[string]string{"topic": "auth"}}}, []string{"cb"}},
			{"conversation agent", store.ListQuery{Kind: store.KindConversation, Filter: store.Filter{AgentID: "a1"}}, []string{"ca"}},
		} {
			e.t.Run(c.name, func(t *testing.T) {
				rs, err := e.s.List(e.ctx, main, c.q)
				if err != nil {
					t.Fatalf("List(%+v): %v", c.q, err)
				}
				same(t, "ids", c.want, recIDs(rs))
				for _, r := range rs {
					if r.RecordKind() != c.q.Kind || r.RecordBranch() != store.DefaultBranch {
						t.Errorf("List returned %v on branch %q; want kind %s on main", store.RefOf(r), r.RecordBranch(), c.q.Kind)
					}
				}
			})
		}
		// On a branch, a session's facts are those the branch sees: one it moved to
		// another session, or deleted, has left; one it moved in has come.
		e.fork("listing", store.DefaultBranch)
		e.put("listing", store.PutOptions{},
			store.Fact{ID: "fa", Text: "fact a", Category: "auth", Status: store.FactActive, SessionID: "s2", CreatedAt: micro(1)},
			store.Fact{ID: "fe", Text: "fact e", Category: "ui", Status: store.FactPromoted, SessionID: "s1", CreatedAt: micro(5)})
		e.del("listing", store.Ref{Kind: store.KindFact, ID: "fc"})
		branch := store.View{Branch: "listing"}
		same(e.t, "session s1 on the branch", []string{"fe"}, e.listIDs(branch, facts(store.Filter{SessionID: "s1"})))
		same(e.t, "session s2 on the branch", []string{"fa", "fb", "fd"}, e.listIDs(branch, facts(store.Filter{SessionID: "s2"})))
		same(e.t, "session s1 on main, after", []string{"fa", "fc"}, e.listIDs(main, facts(store.Filter{SessionID: "s1"})))
	})
}

// stampedLike returns in as a read must return it after a first write to main: Branch
// set, times taken from got (they must be set), defaults filled.
func stampedLike(t *testing.T, in, got store.Record) store.Record {
	t.Helper()
	if got.RecordTime().IsZero() {
		t.Errorf("%v: CreatedAt is zero; the store must stamp it", store.RefOf(in))
	}
	switch w := in.(type) {
	case store.Fact:
		g := got.(store.Fact)
		if !g.UpdatedAt.Equal(g.CreatedAt) {
			t.Errorf("fact UpdatedAt = %v; want it stamped equal to CreatedAt %v", g.UpdatedAt, g.CreatedAt)
		}
		w.Branch, w.CreatedAt, w.UpdatedAt = store.DefaultBranch, g.CreatedAt, g.UpdatedAt
		w.Status, w.Confidence = store.FactActive, 1
		return w
	case store.Observation:
		w.Branch, w.CreatedAt = store.DefaultBranch, got.RecordTime()
		return w
	case store.Relation:
		w.Branch, w.CreatedAt, w.ValidFrom, w.Confidence = store.DefaultBranch, got.RecordTime(), got.RecordTime(), 1
		return w
	case store.Conversation:
		g := got.(store.Conversation)
		if !g.UpdatedAt.Equal(g.CreatedAt) {
			t.Errorf("conversation UpdatedAt = %v; want it stamped equal to CreatedAt %v", g.UpdatedAt, g.CreatedAt)
		}
		w.Branch, w.CreatedAt, w.UpdatedAt = store.DefaultBranch, g.CreatedAt, g.UpdatedAt
		return w
	case store.Message:
		w.Branch, w.CreatedAt = store.DefaultBranch, got.RecordTime()
		// A branch written in PickedTo alone is recorded as a pick with no details.
		if len(w.PickedTo) > 0 && len(w.Picks) == 0 {
			for _, b := range w.PickedTo {
				w.Picks = append(w.Picks, store.Pick{Branch: b})
			}
		}
		return w
	}
	return in
}
