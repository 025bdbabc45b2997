package storetest

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/day1ai/day1/store"
)

// call is one Store method called with valid arguments.
type call struct {
	name string
	fn   func(ctx context.Context, s store.Store) error
}

// everyCall calls every context-taking Store method once with valid arguments for the
// state errorsFixture leaves.
func everyCall() []call {
	main := store.DefaultBranch
	f := store.Fact{ID: "new", Text: "never written"}
	return []call{
		{"Put", func(ctx context.Context, s store.Store) error {
			_, err := s.Put(ctx, main, []store.Record{f}, store.PutOptions{})
			return err
		}},
		{"Delete", func(ctx context.Context, s store.Store) error { return s.Delete(ctx, main, []store.Ref{factRef("f1")}) }},
		{"Get", func(ctx context.Context, s store.Store) error {
			_, err := s.Get(ctx, head(main), factRef("f1"))
			return err
		}},
		{"List", func(ctx context.Context, s store.Store) error {
			_, err := s.List(ctx, head(main), store.ListQuery{Kind: store.KindFact})
			return err
		}},
		{"Search", func(ctx context.Context, s store.Store) error {
			_, err := s.Search(ctx, head(main), store.SearchQuery{Text: "fact", Mode: store.Keyword})
			return err
		}},
		{"CreateBranch", func(ctx context.Context, s store.Store) error {
			_, err := s.CreateBranch(ctx, store.BranchSpec{Name: "new-branch"})
			return err
		}},
		{"GetBranch", func(ctx context.Context, s store.Store) error { _, err := s.GetBranch(ctx, "b"); return err }},
		{"ListBranches", func(ctx context.Context, s store.Store) error {
			_, err := s.ListBranches(ctx, store.BranchFilter{})
			return err
		}},
		{"SetBranchStatus", func(ctx context.Context, s store.Store) error {
			_, err := s.SetBranchStatus(ctx, "b", store.BranchArchived)
			return err
		}},
		{"DeleteBranch", func(ctx context.Context, s store.Store) error { return s.DeleteBranch(ctx, "b") }},
		{"Diff", func(ctx context.Context, s store.Store) error { _, err := s.Diff(ctx, "b", main); return err }},
		{"ApplyMerge", func(ctx context.Context, s store.Store) error {
			_, err := s.ApplyMerge(ctx, store.MergePlan{Source: "b", Target: main, ExpectHead: 0,
				Puts: []store.Record{f}, MarkMerged: true, Record: store.MergeRecord{ID: "m", Source: "b", Target: main, Strategy: store.Native}})
			return err
		}},
		{"ListMerges", func(ctx context.Context, s store.Store) error {
			_, err := s.ListMerges(ctx, store.MergeFilter{})
			return err
		}},
		{"CreateSnapshot", func(ctx context.Context, s store.Store) error {
			_, err := s.CreateSnapshot(ctx, main, "new-snap", "")
			return err
		}},
		{"GetSnapshot", func(ctx context.Context, s store.Store) error { _, err := s.GetSnapshot(ctx, "snap"); return err }},
		{"ListSnapshots", func(ctx context.Context, s store.Store) error { _, err := s.ListSnapshots(ctx, ""); return err }},
		{"DeleteSnapshot", func(ctx context.Context, s store.Store) error { return s.DeleteSnapshot(ctx, "snap") }},
		{"PutSession", func(ctx context.Context, s store.Store) error {
			_, err := s.PutSession(ctx, store.Session{ID: "new-session", Branch: main, Status: store.SessionActive, StartedAt: micro(1)})
			return err
		}},
		{"GetSession", func(ctx context.Context, s store.Store) error { _, err := s.GetSession(ctx, "sess"); return err }},
		{"ListSessions", func(ctx context.Context, s store.Store) error {
			_, err := s.ListSessions(ctx, store.SessionFilter{})
			return err
		}},
	}
}

// errorsFixture writes what everyCall expects: fact f1 on main, branch b, snapshot
// snap (on main), session sess.
func (e *env) errorsFixture() {
	e.t.Helper()
	e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "a fact"})
	e.fork("b", store.DefaultBranch)
	e.snapshot(store.DefaultBranch, "snap")
	if _, err := e.s.PutSession(e.ctx, store.Session{ID: "sess", Branch: store.DefaultBranch, Status: store.SessionActive, StartedAt: micro(0)}); err != nil {
		e.t.Fatal(err)
	}
}

// testErrors checks closed stores, cancelled contexts and input validation.
func testErrors(t *testing.T, h Harness) {
	const area = "errors"
	main := head(store.DefaultBranch)

	subtest(t, h, area, "closed store", func(e *env) {
		e.errorsFixture()
		if err := e.s.Close(); err != nil {
			e.t.Fatalf("Close: %v", err)
		}
		for _, c := range everyCall() {
			isErr(e.t, c.name+" after Close", c.fn(e.ctx, e.s), store.ErrClosed)
		}
		if err := e.s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			e.t.Errorf("second Close = %v; want nil or ErrClosed", err)
		}
	})

	subtest(t, h, area, "cancelled context", func(e *env) {
		e.errorsFixture()
		before := e.state(main)
		branches := e.listBranches(store.BranchFilter{})
		snaps := e.listSnapshots("")
		sessions := e.listSessions(store.SessionFilter{})
		ctx, cancel := context.WithCancel(e.ctx)
		cancel()
		for _, c := range everyCall() {
			isErr(e.t, c.name+" with a cancelled context", c.fn(ctx, e.s), context.Canceled)
		}
		same(e.t, "main", before, e.state(main))
		same(e.t, "branches", branches, e.listBranches(store.BranchFilter{}))
		same(e.t, "snapshots", snaps, e.listSnapshots(""))
		same(e.t, "sessions", sessions, e.listSessions(store.SessionFilter{}))
		same(e.t, "merges", []store.MergeRecord{}, e.listMerges(store.MergeFilter{}))
	})

	subtest(t, h, area, "invalid records", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "seen", Text: "sets the embedding dimension", Embedding: vec(1)})
		nan, inf := vec(1), vec(1)
		nan[2], inf[2] = float32(math.NaN()), float32(math.Inf(1))
		for _, c := range []struct {
			name  string
			rec   store.Record
			field string
		}{
			{"empty fact id", store.Fact{Text: "x"}, "Fact.ID"},
			{"fact id with a space", store.Fact{ID: "a b", Text: "x"}, "Fact.ID"},
			{"fact id with a slash", store.Fact{ID: "a/b", Text: "x"}, "Fact.ID"},
			{"fact id too long", store.Fact{ID: strings.Repeat("x", store.MaxIDLen+1), Text: "x"}, "Fact.ID"},
			{"empty fact text", store.Fact{ID: "f", Text: ""}, "Fact.Text"},
			{"blank fact text", store.Fact{ID: "f", Text: " \n "}, "Fact.Text"},
			{"NaN embedding", store.Fact{ID: "f", Text: "x", Embedding: nan}, "Fact.Embedding"},
			{"infinite embedding", store.Fact{ID: "f", Text: "x", Embedding: inf}, "Fact.Embedding"},
			{"zero embedding", store.Fact{ID: "f", Text: "x", Embedding: make([]float32, dims)}, "Fact.Embedding"},
			{"embedding of another dimension", store.Fact{ID: "f", Text: "x", Embedding: []float32{1, 2, 3}}, "Fact.Embedding"},
			{"confidence above 1", store.Fact{ID: "f", Text: "x", Confidence: 1.5}, "Fact.Confidence"},
			{"unknown fact status", store.Fact{ID: "f", Text: "x", Status: "bogus"}, "Fact.Status"},
			{"bad parent id", store.Fact{ID: "f", Text: "x", ParentID: "a b"}, "Fact.ParentID"},
			{"observation without type", store.Observation{ID: "o", Summary: "x"}, "Observation.Type"},
			{"observation without summary", store.Observation{ID: "o", Type: store.ObsError}, "Observation.Summary"},
			{"observation NaN embedding", store.Observation{ID: "o", Type: store.ObsError, Summary: "x", Embedding: nan}, "Observation.Embedding"},
			{"relation without type", store.Relation{ID: "r", Source: "A", Target: "B"}, "Relation.Type"},
			{"relation without source", store.Relation{ID: "r", Target: "B", Type: "calls"}, "Relation.Source"},
			{"relation valid to before valid from", store.Relation{ID: "r", Source: "A", Target: "B", Type: "calls", ValidFrom: micro(2), ValidTo: micro(1)}, "Relation.ValidTo"},
			{"conversation bad id", store.Conversation{ID: "-c"}, "Conversation.ID"},
			{"message bad role", store.Message{ID: "m", ConversationID: "c", Role: "robot"}, "Message.Role"},
			{"message without conversation", store.Message{ID: "m", Role: store.RoleUser}, "Message.ConversationID"},
			{"message negative seq", store.Message{ID: "m", ConversationID: "c", Role: store.RoleUser, Seq: -1}, "Message.Seq"},
			{"nil record", nil, "Record"},
			{"pointer record", &store.Fact{ID: "f", Text: "x"}, "Record"},
		} {
			_, err := e.s.Put(e.ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "ok", Text: "valid neighbour"}, c.rec}, store.PutOptions{})
			isInvalid(e.t, c.name, err, c.field)
		}
		same(e.t, "facts after the failed writes", []string{"seen"}, e.listIDs(main, store.ListQuery{Kind: store.KindFact}))
	})

	subtest(t, h, area, "the same ref twice in a batch", func(e *env) {
		_, err := e.s.Put(e.ctx, store.DefaultBranch, []store.Record{
			store.Fact{ID: "f", Text: "first"}, store.Observation{ID: "f", Type: store.ObsError, Summary: "another kind, same id"},
			store.Fact{ID: "f", Text: "second"},
		}, store.PutOptions{})
		isInvalid(e.t, "Put", err, "")
		e.missing(main, factRef("f"))
		e.missing(main, obsRef("f"))
	})

	subtest(t, h, area, "invalid refs", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "f", Text: "present"})
		for _, c := range []struct {
			name  string
			ref   store.Ref
			field string
		}{
			{"bad kind", store.Ref{Kind: "bogus", ID: "f"}, "Kind"},
			{"empty kind", store.Ref{ID: "f"}, "Kind"},
			{"empty id", store.Ref{Kind: store.KindFact}, "ID"},
			{"bad id", store.Ref{Kind: store.KindFact, ID: "a b"}, "ID"},
		} {
			_, err := e.s.Get(e.ctx, main, c.ref)
			isInvalid(e.t, "Get with "+c.name, err, c.field)
			isInvalid(e.t, "Delete with "+c.name, e.s.Delete(e.ctx, store.DefaultBranch, []store.Ref{factRef("f"), c.ref}), c.field)
		}
		e.get(main, factRef("f"))
	})

	subtest(t, h, area, "error messages start with day1:", func(e *env) {
		e.fork("b", store.DefaultBranch)
		errs := map[string]error{}
		_, errs["Put with an invalid record"] = e.s.Put(e.ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "ok", Text: "ok"}, store.Fact{ID: "f"}}, store.PutOptions{})
		_, errs["Put to an unknown branch"] = e.s.Put(e.ctx, "nope", []store.Record{store.Fact{ID: "f", Text: "x"}}, store.PutOptions{})
		_, errs["Get of a missing record"] = e.s.Get(e.ctx, main, factRef("missing"))
		errs["Delete with a bad ref"] = e.s.Delete(e.ctx, store.DefaultBranch, []store.Ref{{Kind: "bogus", ID: "x"}})
		_, errs["List with a bad kind"] = e.s.List(e.ctx, main, store.ListQuery{Kind: "bogus"})
		_, errs["Search with a bad limit"] = e.s.Search(e.ctx, main, store.SearchQuery{Text: "x", Limit: -1})
		_, errs["CreateBranch with a bad name"] = e.s.CreateBranch(e.ctx, store.BranchSpec{Name: "a b"})
		_, errs["CreateBranch of an existing name"] = e.s.CreateBranch(e.ctx, store.BranchSpec{Name: "b"})
		_, errs["GetSnapshot of an unknown name"] = e.s.GetSnapshot(e.ctx, "nope")
		_, errs["ApplyMerge with an invalid record"] = e.s.ApplyMerge(e.ctx, store.MergePlan{Source: "b", Target: store.DefaultBranch,
			ExpectHead: e.getBranch(store.DefaultBranch).Head, Puts: []store.Record{store.Fact{ID: "f"}},
			Record: store.MergeRecord{ID: "m", Source: "b", Target: store.DefaultBranch, Strategy: store.Native}})
		for what, err := range errs {
			if err == nil {
				e.t.Errorf("%s: no error", what)
			} else if !strings.HasPrefix(err.Error(), "day1: ") {
				e.t.Errorf("%s: error message %q does not start with \"day1: \"", what, err.Error())
			}
		}
	})

	subtest(t, h, area, "invalid list queries", func(e *env) {
		for _, c := range []struct {
			name  string
			q     store.ListQuery
			field string
		}{
			{"no kind", store.ListQuery{}, "ListQuery.Kind"},
			{"bad kind", store.ListQuery{Kind: "bogus"}, "ListQuery.Kind"},
			{"negative limit", store.ListQuery{Kind: store.KindFact, Limit: -1}, "ListQuery.Limit"},
			{"limit above MaxLimit", store.ListQuery{Kind: store.KindFact, Limit: store.MaxLimit + 1}, "ListQuery.Limit"},
			{"negative offset", store.ListQuery{Kind: store.KindFact, Offset: -1}, "ListQuery.Offset"},
			{"bad order", store.ListQuery{Kind: store.KindFact, Order: "random"}, "ListQuery.Order"},
			{"bad statuses", store.ListQuery{Kind: store.KindFact, Filter: store.Filter{Statuses: []store.FactStatus{"bogus"}}}, "Filter.Statuses"},
			{"bad observation type", store.ListQuery{Kind: store.KindObservation, Filter: store.Filter{ObsType: "bogus"}}, "Filter.ObsType"},
			{"until before since", store.ListQuery{Kind: store.KindFact, Filter: store.Filter{Since: micro(2), Until: micro(2)}}, "Filter.Until"},
		} {
			_, err := e.s.List(e.ctx, main, c.q)
			isInvalid(e.t, c.name, err, c.field)
		}
	})
}
