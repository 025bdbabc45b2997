package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
)

// testSnapshot checks CreateSnapshot, GetSnapshot, ListSnapshots and DeleteSnapshot.
func testSnapshot(t *testing.T, h Harness) {
	const area = "snapshot"

	subtest(t, h, area, "create, get, list, delete", func(e *env) {
		e.fork("b", store.DefaultBranch)
		before := time.Now()
		s1, err := e.s.CreateSnapshot(e.ctx, store.DefaultBranch, "before-refactor", "state before the refactor")
		if err != nil {
			e.t.Fatalf("CreateSnapshot: %v", err)
		}
		after := time.Now()
		want := store.Snapshot{Name: "before-refactor", Branch: store.DefaultBranch, Description: "state before the refactor", At: s1.At, CreatedAt: s1.CreatedAt}
		same(e.t, "CreateSnapshot result", want, s1)
		for _, at := range []time.Time{s1.At, s1.CreatedAt} {
			if at.Before(before.Add(-time.Minute)) || at.After(after.Add(time.Minute)) {
				e.t.Errorf("snapshot time %v is not around its creation (%v .. %v)", at, before, after)
			}
		}
		got, err := e.s.GetSnapshot(e.ctx, "before-refactor")
		if err != nil {
			e.t.Fatalf("GetSnapshot: %v", err)
		}
		same(e.t, "GetSnapshot", s1, got)
		tick()
		s2 := e.snapshot("b", "on-b")
		tick()
		s3 := e.snapshot(store.DefaultBranch, "later")
		same(e.t, "ListSnapshots(main)", []store.Snapshot{s1, s3}, e.listSnapshots(store.DefaultBranch))
		same(e.t, "ListSnapshots(b)", []store.Snapshot{s2}, e.listSnapshots("b"))
		same(e.t, "ListSnapshots(all)", []store.Snapshot{s1, s2, s3}, e.listSnapshots(""))
		if err := e.s.DeleteSnapshot(e.ctx, "before-refactor"); err != nil {
			e.t.Fatalf("DeleteSnapshot: %v", err)
		}
		_, err = e.s.GetSnapshot(e.ctx, "before-refactor")
		isErr(e.t, "GetSnapshot after delete", err, store.ErrSnapshotNotFound)
		same(e.t, "ListSnapshots after delete", []store.Snapshot{s2, s3}, e.listSnapshots(""))
		_, err = e.s.Get(e.ctx, atSnap(store.DefaultBranch, "before-refactor"), factRef("f"))
		isErr(e.t, "reading at a deleted snapshot", err, store.ErrSnapshotNotFound)
	})

	subtest(t, h, area, "duplicates, unknown names and branches", func(e *env) {
		e.fork("b", store.DefaultBranch)
		e.snapshot(store.DefaultBranch, "s")
		_, err := e.s.CreateSnapshot(e.ctx, store.DefaultBranch, "s", "")
		isErr(e.t, "duplicate", err, store.ErrSnapshotExists)
		_, err = e.s.CreateSnapshot(e.ctx, "b", "s", "")
		isErr(e.t, "duplicate on another branch", err, store.ErrSnapshotExists)
		_, err = e.s.GetSnapshot(e.ctx, "nope")
		isErr(e.t, "GetSnapshot(unknown)", err, store.ErrSnapshotNotFound)
		if !errors.Is(err, store.ErrNotFound) {
			e.t.Errorf("ErrSnapshotNotFound must also match ErrNotFound: %v", err)
		}
		isErr(e.t, "DeleteSnapshot(unknown)", e.s.DeleteSnapshot(e.ctx, "nope"), store.ErrSnapshotNotFound)
		_, err = e.s.CreateSnapshot(e.ctx, "nope", "s2", "")
		isErr(e.t, "CreateSnapshot on an unknown branch", err, store.ErrBranchNotFound)
		_, err = e.s.Get(e.ctx, atSnap(store.DefaultBranch, "nope"), factRef("f"))
		isErr(e.t, "reading at an unknown snapshot", err, store.ErrSnapshotNotFound)
		same(e.t, "ListSnapshots of a branch without snapshots", []store.Snapshot{}, e.listSnapshots("b"))
	})

	subtest(t, h, area, "names", func(e *env) {
		for _, name := range []string{"v1.0", "before-refactor", "run:42@agent_a"} {
			if _, err := e.s.CreateSnapshot(e.ctx, store.DefaultBranch, name, ""); err != nil {
				e.t.Errorf("CreateSnapshot(%q): %v; want it accepted", name, err)
			}
		}
		for _, name := range []string{"", "a b", "/x", "-x", "a/b", strings.Repeat("s", 200)} {
			_, err := e.s.CreateSnapshot(e.ctx, store.DefaultBranch, name, "")
			isInvalid(e.t, "CreateSnapshot("+name+")", err, "")
		}
	})

	subtest(t, h, area, "a branch forked from a snapshot outlives it", func(e *env) {
		e.put1(store.DefaultBranch, store.Fact{ID: "f1", Text: "in the snapshot"})
		e.snapshot(store.DefaultBranch, "s")
		e.put1(store.DefaultBranch, store.Fact{ID: "f2", Text: "after the snapshot"})
		e.branch(store.BranchSpec{Name: "from-s", At: store.Point{Snapshot: "s"}})
		if err := e.s.DeleteSnapshot(e.ctx, "s"); err != nil {
			e.t.Fatalf("DeleteSnapshot: %v", err)
		}
		same(e.t, "facts of the forked branch", []string{"f1"}, e.listIDs(head("from-s"), store.ListQuery{Kind: store.KindFact}))
	})
}

// listSnapshots lists snapshots and fails the test on error.
func (e *env) listSnapshots(branch string) []store.Snapshot {
	e.t.Helper()
	ss, err := e.s.ListSnapshots(e.ctx, branch)
	if err != nil {
		e.t.Fatalf("ListSnapshots(%q): %v", branch, err)
	}
	return ss
}
