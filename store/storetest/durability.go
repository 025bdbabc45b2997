package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/day1ai/day1/store"
)

// testDurability checks that everything a store holds survives Harness.Reopen and
// reads the same: records of every kind with their versions and deletes, branches with
// their fork points and statuses, snapshots, merges, sessions, and the search indexes.
// It is skipped when Harness.Reopen is nil.
func testDurability(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("Harness.Reopen is nil: the store is not durable")
	}
	const area = "durability"
	main := store.DefaultBranch

	subtest(t, h, area, "everything survives reopen", func(e *env) {
		e.put(main, store.PutOptions{DedupeThreshold: 0.9},
			store.Fact{ID: "f1", Text: "alpha original", Embedding: vec(1), Category: "auth", Metadata: map[string]string{"k": "v"}},
			store.Fact{ID: "f2", Text: "bravo doomed", Embedding: vec(0, 1)},
			store.Observation{ID: "o1", Type: store.ObsError, Summary: "observation kept", Embedding: vec(0, 0, 1), RawInput: "in", RawOutput: "out"},
			store.Relation{ID: "r1", Source: "A", Target: "B", Type: "calls", Properties: map[string]string{"env": "prod"}, ValidTo: micro(100)},
			store.Conversation{ID: "c1", Title: "conversation kept", Verify: store.Verification{Status: store.Verified, Score: 0.9, At: micro(1)}},
			store.Message{ID: "m1", ConversationID: "c1", Seq: 1, Role: store.RoleToolCall, Content: "message kept", PickedTo: []string{"b"}},
		)
		e.snapshot(main, "s1")
		t1 := tick()
		e.put1(main, store.Fact{ID: "f1", Text: "alpha changed", Embedding: vec(1), Category: "auth"})
		e.put(main, store.PutOptions{DedupeThreshold: 0.9}, store.Fact{ID: "f3", Text: "charlie superseded", Embedding: vec(0, 0, 0, 1)})
		if r := e.put(main, store.PutOptions{DedupeThreshold: 0.9}, store.Fact{ID: "f4", Text: "charlie successor", Embedding: vec(0, 0, 0, 24, 7)})[0]; r.Outcome != store.Superseded {
			e.t.Errorf("f4: Outcome %q; want superseded", r.Outcome)
		}
		e.del(main, factRef("f2"))
		e.fork("b", main)
		e.put1("b", store.Fact{ID: "g1", Text: "golf on b", Embedding: vec(0, 0, 0, 0, 1)})
		bForked := tick()
		e.put1("b", store.Observation{ID: "o2", Type: store.ObsInsight, Summary: "insight on b"})
		e.snapshot("b", "sb")
		e.fork("arch", main)
		if _, err := e.s.SetBranchStatus(e.ctx, "arch", store.BranchArchived); err != nil {
			e.t.Fatal(err)
		}
		e.fork("done", main)
		e.put1("done", store.Fact{ID: "d1", Text: "delta merged"})
		d := e.diff("done", main)
		if _, err := e.s.ApplyMerge(e.ctx, store.MergePlan{Source: "done", Target: main, ExpectHead: d.TargetHead,
			Puts: []store.Record{d.SourceChanges[0].After}, MarkMerged: true,
			Record: store.MergeRecord{ID: "m-1", Source: "done", Target: main, Strategy: store.Native, MergedBy: "tester",
				Merged: []store.MergeItem{{Ref: factRef("d1"), Action: store.ActionAdopt}}}}); err != nil {
			e.t.Fatalf("ApplyMerge: %v", err)
		}
		for _, s := range []store.Session{
			{ID: "s1", Branch: main, AgentID: "a1", Status: store.SessionActive, StartedAt: micro(1)},
			{ID: "s2", Branch: "b", AgentID: "a2", Status: store.SessionCompleted, StartedAt: micro(2), EndedAt: micro(3)},
		} {
			if _, err := e.s.PutSession(e.ctx, s); err != nil {
				e.t.Fatal(err)
			}
		}

		views := []store.View{
			head(main), head("b"), head("arch"), head("done"),
			atSnap(main, "s1"), atTime(main, t1), atSnap("b", "sb"), atTime("b", bForked),
		}
		capture := func() map[string]any {
			out := map[string]any{
				"branches":  e.listBranches(store.BranchFilter{}),
				"snapshots": e.listSnapshots(""),
				"merges":    e.listMerges(store.MergeFilter{}),
				"sessions":  e.listSessions(store.SessionFilter{}),
			}
			for _, v := range views {
				key := v.Branch + "@" + v.At.Snapshot + v.At.Time.String()
				out["state "+key] = e.state(v)
				out["keyword "+key] = e.search(v, store.SearchQuery{Text: "alpha charlie golf delta observation", Mode: store.Keyword})
				out["vector "+key] = e.search(v, store.SearchQuery{Vector: vec(1, 1, 1, 1, 1), Mode: store.Vector})
				out["hybrid "+key] = e.search(v, store.SearchQuery{Text: "alpha charlie golf", Vector: vec(1), Mode: store.Hybrid})
			}
			return out
		}
		before := capture()
		ignoreHead := cmpopts.IgnoreFields(store.Branch{}, "Head")

		e.reopen()
		same(e.t, "after reopen", before, capture(), ignoreHead)

		// The reopened store keeps working: writes, deduplication and its indexes.
		if r := e.put1(main, store.Fact{ID: "f1", Text: "alpha changed", Embedding: vec(1), Category: "auth"}); r.Outcome != store.Deduplicated {
			e.t.Errorf("repeating f1 after reopen: Outcome %q; want deduplicated", r.Outcome)
		}
		if r := e.put1(main, store.Fact{ID: "f9", Text: "alpha changed"}); r.Outcome != store.Deduplicated || r.Replaced != "f1" {
			e.t.Errorf("f1's text under a new id after reopen: Outcome %q, Replaced %q; want deduplicated, f1", r.Outcome, r.Replaced)
		}
		r := e.put(main, store.PutOptions{DedupeThreshold: 0.9}, store.Fact{ID: "f5", Text: "alpha near duplicate", Embedding: vec(24, 7)})[0]
		if r.Outcome != store.Superseded || r.Replaced != "f1" {
			e.t.Errorf("near-duplicate of f1 after reopen: Outcome %q, Replaced %q; want superseded, f1", r.Outcome, r.Replaced)
		}
		_, err := e.s.Search(e.ctx, head(main), store.SearchQuery{Vector: []float32{1, 0, 0}, Mode: store.Vector})
		isInvalid(e.t, "vector of another dimension after reopen", err, "SearchQuery.Vector")
		e.fork("after", main)
		e.snapshot(main, "s2")
		before = capture()
		afterState := e.state(head("after"))
		e.reopen()
		same(e.t, "after a second reopen", before, capture(), ignoreHead)
		same(e.t, "branch created after the first reopen", afterState, e.state(head("after")))
		same(e.t, "f5 after the second reopen", "alpha near duplicate", textOf(e.get(head(main), factRef("f5"))))
		if s := e.get(head(main), factRef("f1")).(store.Fact).Status; s != store.FactSuperseded {
			e.t.Errorf("f1 after the second reopen: Status %q; want superseded", s)
		}
	})

	subtest(t, h, area, "reopen of an empty store", func(e *env) {
		e.reopen()
		same(e.t, "branches", []string{main}, branchNames(e.listBranches(store.BranchFilter{})))
		e.put1(main, store.Fact{ID: "f1", Text: "first fact after reopen"})
		e.reopen()
		same(e.t, "facts", []string{"f1"}, e.listIDs(head(main), store.ListQuery{Kind: store.KindFact}))
	})
}
