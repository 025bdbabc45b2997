package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
)

// testBranch checks branch creation, naming, listing, fork-point visibility, isolation,
// status changes and deletion.
func testBranch(t *testing.T, h Harness) {
	const area = "branch"
	main := head(store.DefaultBranch)

	subtest(t, h, area, "the default branch", func(e *env) {
		b := e.getBranch(store.DefaultBranch)
		if b.Name != store.DefaultBranch || b.Parent != "" || b.Status != store.BranchActive {
			e.t.Errorf("GetBranch(main) = %+v; want name main, no parent, active", b)
		}
		same(e.t, "ListBranches", []string{store.DefaultBranch}, branchNames(e.listBranches(store.BranchFilter{})))
		e.put1(store.DefaultBranch, store.Fact{ID: "f", Text: "an empty View reads main"})
		if got := e.get(store.View{}, factRef("f")).RecordBranch(); got != store.DefaultBranch {
			e.t.Errorf("Get with an empty View read branch %q; want main", got)
		}
	})

	subtest(t, h, area, "create and get", func(e *env) {
		before := time.Now()
		b := e.branch(store.BranchSpec{Name: "task/fix-auth", Description: "fix the auth bug", Metadata: map[string]string{"task": "t1"}})
		after := time.Now()
		got := e.getBranch("task/fix-auth")
		same(e.t, "CreateBranch result and GetBranch", b, got)
		want := store.Branch{Name: "task/fix-auth", Parent: store.DefaultBranch, Status: store.BranchActive,
			Description: "fix the auth bug", Metadata: map[string]string{"task": "t1"},
			ForkedAt: got.ForkedAt, CreatedAt: got.CreatedAt, Head: got.Head}
		same(e.t, "GetBranch", want, got)
		if got.ForkedAt.IsZero() || got.CreatedAt.IsZero() {
			e.t.Errorf("ForkedAt %v, CreatedAt %v; want both set", got.ForkedAt, got.CreatedAt)
		}
		for _, at := range []time.Time{got.ForkedAt, got.CreatedAt} {
			if at.Before(before.Add(-time.Minute)) || at.After(after.Add(time.Minute)) {
				e.t.Errorf("branch time %v is not around the creation (%v .. %v)", at, before, after)
			}
		}
		child := e.fork("task/fix-auth/agent-a", "task/fix-auth")
		if child.Parent != "task/fix-auth" || child.Status != store.BranchActive {
			e.t.Errorf("child = %+v; want parent task/fix-auth, active", child)
		}
		if child.ForkedAt.Before(got.ForkedAt) {
			e.t.Errorf("child ForkedAt %v is before its parent's %v", child.ForkedAt, got.ForkedAt)
		}
	})

	subtest(t, h, area, "names", func(e *env) {
		for _, name := range []string{"a", "task/fix-auth/agent-a", "feature_x.2-b", "A1/b2/c3", strings.Repeat("x", store.MaxBranchNameLen)} {
			if _, err := e.s.CreateBranch(e.ctx, store.BranchSpec{Name: name}); err != nil {
				e.t.Errorf("CreateBranch(%q): %v; want it accepted", name, err)
			}
		}
		for _, name := range []string{"", "a//b", "/a", "a/", "a b", "-a", "a/../b", "a..b", "a\tb", "ä", strings.Repeat("x", 200)} {
			_, err := e.s.CreateBranch(e.ctx, store.BranchSpec{Name: name})
			isInvalid(e.t, "CreateBranch("+name+")", err, "Name")
		}
		_, err := e.s.CreateBranch(e.ctx, store.BranchSpec{Name: "ok", From: "bad name"})
		isInvalid(e.t, "CreateBranch from a bad name", err, "From")
	})

	subtest(t, h, area, "duplicate and unknown parent", func(e *env) {
		e.fork("dup", store.DefaultBranch)
		_, err := e.s.CreateBranch(e.ctx, store.BranchSpec{Name: "dup"})
		isErr(e.t, "second CreateBranch", err, store.ErrBranchExists)
		_, err = e.s.CreateBranch(e.ctx, store.BranchSpec{Name: store.DefaultBranch})
		isErr(e.t, "CreateBranch(main)", err, store.ErrBranchExists)
		_, err = e.s.CreateBranch(e.ctx, store.BranchSpec{Name: "orphan", From: "nope"})
		isErr(e.t, "CreateBranch from an unknown parent", err, store.ErrBranchNotFound)
		_, err = e.s.GetBranch(e.ctx, "orphan")
		isErr(e.t, "GetBranch after the failed create", err, store.ErrBranchNotFound)
		_, err = e.s.CreateBranch(e.ctx, store.BranchSpec{Name: "orphan", At: store.Point{Snapshot: "nope"}})
		isErr(e.t, "CreateBranch from an unknown snapshot", err, store.ErrSnapshotNotFound)
	})

	subtest(t, h, area, "list with filters", func(e *env) {
		for _, b := range [][2]string{{"task/b", "main"}, {"task/a", "main"}, {"task/a/x", "task/a"}, {"task/a/y", "task/a"}, {"zeta", "main"}} {
			e.fork(b[0], b[1])
		}
		if _, err := e.s.SetBranchStatus(e.ctx, "task/a/y", store.BranchArchived); err != nil {
			e.t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			f    store.BranchFilter
			want []string
		}{
			{"all, sorted by name", store.BranchFilter{}, []string{"main", "task/a", "task/a/x", "task/a/y", "task/b", "zeta"}},
			{"status", store.BranchFilter{Status: store.BranchArchived}, []string{"task/a/y"}},
			{"parent", store.BranchFilter{Parent: "task/a"}, []string{"task/a/x", "task/a/y"}},
			{"prefix", store.BranchFilter{Prefix: "task/a/"}, []string{"task/a/x", "task/a/y"}},
			{"prefix and status", store.BranchFilter{Prefix: "task/", Status: store.BranchActive}, []string{"task/a", "task/a/x", "task/b"}},
			{"no match", store.BranchFilter{Parent: "zeta"}, []string{}},
		} {
			same(e.t, c.name, c.want, branchNames(e.listBranches(c.f)))
		}
	})

	subtest(t, h, area, "a branch sees its parent as of the fork", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "f1", Text: "original alpha"},
			store.Fact{ID: "f2", Text: "original bravo"},
			store.Fact{ID: "f3", Text: "original charlie"},
			store.Relation{ID: "r1", Source: "A", Target: "B", Type: "calls"},
		)
		atFork := e.state(main)
		e.fork("b", store.DefaultBranch)
		// Later parent writes: a create, an update and a delete of records b saw.
		e.put(store.DefaultBranch, store.PutOptions{},
			store.Fact{ID: "f4", Text: "later delta"},
			store.Fact{ID: "f1", Text: "changed alpha"},
			store.Relation{ID: "r2", Source: "A", Target: "C", Type: "calls"},
		)
		e.del(store.DefaultBranch, factRef("f2"), relRef("r1"))

		bv := head("b")
		same(e.t, "branch state", atFork, e.state(bv), ignoreBranch)
		e.missing(bv, factRef("f4"))
		if got := textOf(e.get(bv, factRef("f1"))); got != "original alpha" {
			e.t.Errorf("f1 on b = %q; want the version at the fork", got)
		}
		if got := e.get(bv, factRef("f2")).RecordBranch(); got != "b" {
			e.t.Errorf("f2 read from b has Branch %q; want b", got)
		}
		same(e.t, "keyword search on b for later words", []string{}, hitIDs(e.search(bv, store.SearchQuery{Text: "changed delta", Mode: store.Keyword, WindowWeight: noContext})))
		same(e.t, "keyword search on b for old words", []string{"f1", "f2"}, sorted(hitIDs(e.search(bv, store.SearchQuery{Text: "alpha bravo", Mode: store.Keyword, WindowWeight: noContext}))))
	})

	subtest(t, h, area, "branch writes never show on the parent", func(e *env) {
		e.put(store.DefaultBranch, store.PutOptions{}, store.Fact{ID: "f1", Text: "shared alpha"}, store.Fact{ID: "f2", Text: "shared bravo"})
		e.fork("b", store.DefaultBranch)
		before := e.state(main)
		e.put("b", store.PutOptions{}, store.Fact{ID: "g1", Text: "branch golf"}, store.Fact{ID: "f1", Text: "branch alpha"},
			store.Observation{ID: "o1", Type: store.ObsInsight, Summary: "branch only"})
		e.del("b", factRef("f2"))
		same(e.t, "parent state", before, e.state(main))
		same(e.t, "branch facts", []string{"f1", "g1"}, e.listIDs(head("b"), store.ListQuery{Kind: store.KindFact, Order: store.OrderID}))
		same(e.t, "parent keyword search", []string{}, hitIDs(e.search(main, store.SearchQuery{Text: "golf", Mode: store.Keyword, WindowWeight: noContext})))
	})

	subtest(t, h, area, "a branch of a branch sees the grandparent as of its parent's fork", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "m1", Text: "main one"})
		e.fork("b", store.DefaultBranch)
		e.put1(store.DefaultBranch, store.Fact{ID: "m2", Text: "main two"})
		e.put1("b", store.Fact{ID: "b1", Text: "b one"})
		e.fork("c", "b")
		e.put1("b", store.Fact{ID: "b2", Text: "b two"})
		e.put1(store.DefaultBranch, store.Fact{ID: "m3", Text: "main three"})
		e.put1("c", store.Fact{ID: "c1", Text: "c one"})
		same(e.t, "c", []string{"b1", "c1", "m1"}, e.listIDs(head("c"), store.ListQuery{Kind: store.KindFact, Order: store.OrderID}))
		same(e.t, "b", []string{"b1", "b2", "m1"}, e.listIDs(head("b"), store.ListQuery{Kind: store.KindFact, Order: store.OrderID}))
		same(e.t, "main", []string{"m1", "m2", "m3"}, e.listIDs(main, store.ListQuery{Kind: store.KindFact, Order: store.OrderID}))
	})

	subtest(t, h, area, "create from a snapshot", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "before the snapshot"})
		e.snapshot(store.DefaultBranch, "s")
		e.put1(store.DefaultBranch, store.Fact{ID: "f2", Text: "after the snapshot"})
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "changed after the snapshot"})
		b := e.branch(store.BranchSpec{Name: "from-snap", At: store.Point{Snapshot: "s"}})
		if b.Parent != store.DefaultBranch || b.FromSnap != "s" {
			e.t.Errorf("branch = %+v; want Parent main, FromSnap s", b)
		}
		same(e.t, "facts", []string{"f1"}, e.listIDs(head("from-snap"), store.ListQuery{Kind: store.KindFact}))
		if got := textOf(e.get(head("from-snap"), factRef("f1"))); got != "before the snapshot" {
			e.t.Errorf("f1 = %q; want the snapshot's version", got)
		}
	})

	subtest(t, h, area, "create from a time in the past", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "early"})
		t0 := tick()
		e.put1(store.DefaultBranch, store.Fact{ID: "f2", Text: "late"})
		e.del(store.DefaultBranch, factRef("f1"))
		b := e.branch(store.BranchSpec{Name: "past", At: store.Point{Time: t0}})
		if b.Parent != store.DefaultBranch {
			e.t.Errorf("Parent = %q; want main", b.Parent)
		}
		if d := b.ForkedAt.Sub(t0); d < -time.Millisecond || d > time.Millisecond {
			e.t.Errorf("ForkedAt = %v; want the requested instant %v", b.ForkedAt, t0)
		}
		same(e.t, "facts", []string{"f1"}, e.listIDs(head("past"), store.ListQuery{Kind: store.KindFact}))
		e.put1("past", store.Fact{ID: "p1", Text: "written on the past branch"})
		same(e.t, "facts after a write", []string{"f1", "p1"}, e.listIDs(head("past"), store.ListQuery{Kind: store.KindFact, Order: store.OrderID}))
	})

	subtest(t, h, area, "archived branches refuse writes and stay readable", func(e *env) {
		e.fork("b", store.DefaultBranch)
		e.put1("b", store.Fact{ID: "f1", Text: "written before archiving"})
		b, err := e.s.SetBranchStatus(e.ctx, "b", store.BranchArchived)
		if err != nil || b.Status != store.BranchArchived {
			e.t.Fatalf("SetBranchStatus(archived) = %+v, %v", b, err)
		}
		if got := e.getBranch("b").Status; got != store.BranchArchived {
			e.t.Errorf("GetBranch: Status = %q; want archived", got)
		}
		_, err = e.s.Put(e.ctx, "b", []store.Record{store.Fact{ID: "f2", Text: "refused"}}, store.PutOptions{})
		isErr(e.t, "Put to an archived branch", err, store.ErrBranchArchived)
		isErr(e.t, "Delete on an archived branch", e.s.Delete(e.ctx, "b", []store.Ref{factRef("f1")}), store.ErrBranchArchived)
		e.get(head("b"), factRef("f1"))
		e.missing(head("b"), factRef("f2"))
		same(e.t, "search on an archived branch", []string{"f1"}, hitIDs(e.search(head("b"), store.SearchQuery{Text: "archiving", Mode: store.Keyword, WindowWeight: noContext})))
		if b, err = e.s.SetBranchStatus(e.ctx, "b", store.BranchActive); err != nil || b.Status != store.BranchActive {
			e.t.Fatalf("SetBranchStatus(active) = %+v, %v", b, err)
		}
		e.put1("b", store.Fact{ID: "f2", Text: "accepted after reactivation"})
		_, err = e.s.SetBranchStatus(e.ctx, "b", "frozen")
		isInvalid(e.t, "SetBranchStatus(frozen)", err, "")
		_, err = e.s.SetBranchStatus(e.ctx, "nope", store.BranchArchived)
		isErr(e.t, "SetBranchStatus of an unknown branch", err, store.ErrBranchNotFound)
		// The default branch takes every default write: it stays active.
		for _, st := range []store.BranchStatus{store.BranchArchived, store.BranchMerged} {
			_, err = e.s.SetBranchStatus(e.ctx, store.DefaultBranch, st)
			isInvalid(e.t, "SetBranchStatus(main, "+string(st)+")", err, "status")
		}
		if got := e.getBranch(store.DefaultBranch).Status; got != store.BranchActive {
			e.t.Errorf("main: Status = %q; want active", got)
		}
		e.put1(store.DefaultBranch, store.Fact{ID: "m1", Text: "main still takes writes"})
	})

	subtest(t, h, area, "delete", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "on main"})
		e.fork("b", store.DefaultBranch)
		e.put1("b", store.Fact{ID: "g1", Text: "on b"})
		e.fork("b/child", "b")
		isErr(e.t, "DeleteBranch(main)", e.s.DeleteBranch(e.ctx, store.DefaultBranch), store.ErrInvalidArgument)
		isErr(e.t, "DeleteBranch with a child", e.s.DeleteBranch(e.ctx, "b"), store.ErrInvalidArgument)
		isErr(e.t, "DeleteBranch(unknown)", e.s.DeleteBranch(e.ctx, "nope"), store.ErrBranchNotFound)
		if err := e.s.DeleteBranch(e.ctx, "b/child"); err != nil {
			e.t.Fatalf("DeleteBranch(b/child): %v", err)
		}
		if err := e.s.DeleteBranch(e.ctx, "b"); err != nil {
			e.t.Fatalf("DeleteBranch(b): %v", err)
		}
		_, err := e.s.GetBranch(e.ctx, "b")
		isErr(e.t, "GetBranch after delete", err, store.ErrBranchNotFound)
		_, err = e.s.Get(e.ctx, head("b"), factRef("g1"))
		isErr(e.t, "Get on a deleted branch", err, store.ErrBranchNotFound)
		same(e.t, "ListBranches", []string{store.DefaultBranch}, branchNames(e.listBranches(store.BranchFilter{})))
		same(e.t, "main facts", []string{"f1"}, e.listIDs(main, store.ListQuery{Kind: store.KindFact}))
		e.fork("b", store.DefaultBranch)
		same(e.t, "a new branch with the deleted name", []string{"f1"}, e.listIDs(head("b"), store.ListQuery{Kind: store.KindFact}))
		// Search indexes forget the deleted branches and keep working for the others.
		e.put1(store.DefaultBranch, store.Fact{ID: "f3", Text: "main stays searchable", Embedding: vec(1, 0, 0)})
		e.put1("b", store.Fact{ID: "g2", Text: "b stays searchable", Embedding: vec(0, 1, 0)})
		same(e.t, "keyword search on main after a delete", []string{"f1", "f3"}, sorted(hitIDs(e.search(main, store.SearchQuery{Text: "main", Mode: store.Keyword, WindowWeight: noContext}))))
		same(e.t, "keyword search on b after a delete", []string{"g2"}, hitIDs(e.search(head("b"), store.SearchQuery{Text: "searchable", Mode: store.Keyword, WindowWeight: noContext})))
		same(e.t, "keyword search for main on b", []string{"f1"}, hitIDs(e.search(head("b"), store.SearchQuery{Text: "main", Mode: store.Keyword, WindowWeight: noContext})))
		same(e.t, "vector search on b after a delete", []string{"g2"}, hitIDs(e.search(head("b"), store.SearchQuery{Vector: vec(0, 1, 0), Mode: store.Vector, Limit: 1})))
	})

	subtest(t, h, area, "unknown branch", func(e *env) {
		_, err := e.s.Put(e.ctx, "nope", []store.Record{store.Fact{ID: "f", Text: "lost"}}, store.PutOptions{})
		isErr(e.t, "Put", err, store.ErrBranchNotFound)
		isErr(e.t, "Delete", e.s.Delete(e.ctx, "nope", []store.Ref{factRef("f")}), store.ErrBranchNotFound)
		_, err = e.s.Get(e.ctx, head("nope"), factRef("f"))
		isErr(e.t, "Get", err, store.ErrBranchNotFound)
		_, err = e.s.List(e.ctx, head("nope"), store.ListQuery{Kind: store.KindFact})
		isErr(e.t, "List", err, store.ErrBranchNotFound)
		_, err = e.s.Search(e.ctx, head("nope"), store.SearchQuery{Text: "lost", Mode: store.Keyword, WindowWeight: noContext})
		isErr(e.t, "Search", err, store.ErrBranchNotFound)
		_, err = e.s.GetBranch(e.ctx, "nope")
		isErr(e.t, "GetBranch", err, store.ErrBranchNotFound)
		if !errors.Is(err, store.ErrNotFound) {
			e.t.Errorf("ErrBranchNotFound must also match ErrNotFound")
		}
	})
}

// listBranches lists branches and fails the test on error.
func (e *env) listBranches(f store.BranchFilter) []store.Branch {
	e.t.Helper()
	bs, err := e.s.ListBranches(e.ctx, f)
	if err != nil {
		e.t.Fatalf("ListBranches(%+v): %v", f, err)
	}
	return bs
}

// branchNames returns the names of bs in order.
func branchNames(bs []store.Branch) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Name
	}
	return out
}
