package handoff

import (
	"errors"
	"testing"

	"github.com/day1ai/day1/store"
)

// TestUpdateRunsAgainOnAStaleRead checks Engine.update, which every read-modify-write
// of the engine goes through: when another writer changes the task between an
// attempt's read and its write, the attempt's batch is refused and the function runs
// again on what is there now; neither change is lost.
func TestUpdateRunsAgainOnAStaleRead(t *testing.T) {
	v := newEnv(t)
	v.task(t, "t1", []string{"fix", "test"}, "a")
	other := &Engine{Store: v.mem, Now: v.clk.Now}
	v.st.arm(func(method string, n int) error {
		if method == "WriteDocs" && n == 1 {
			// Another writer updates the task after this attempt read it.
			if _, err := other.UpdateObjective(bg, ObjectiveUpdate{Task: "t1", Objective: 2, Status: ObjectiveInProgress, By: "b"}); err != nil {
				t.Errorf("the other writer: %v", err)
			}
		}
		return nil
	})
	m, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "c", Role: "reviewer", Objectives: []int{1}})
	if err != nil {
		t.Fatalf("JoinTask beside another writer: %v", err)
	}
	if got := v.st.calls["WriteDocs"]; got != 2 {
		t.Errorf("%d batches written; want 2: the stale one, then the one run again", got)
	}
	tk, err := v.e.GetTask(bg, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Objectives[1].Status != ObjectiveInProgress {
		t.Errorf("the other writer's change is lost: objective 2 is %s", tk.Objectives[1].Status)
	}
	var found bool
	for _, mm := range tk.Members {
		found = found || (mm.Agent == "c" && mm.Version == m.Version && m.Version != 0)
	}
	if !found {
		t.Errorf("the member c (version %d) is not in the task: %+v", m.Version, tk.Members)
	}
}

// TestUpdateGivesUp checks that a read-modify-write refused as stale on every attempt
// stops after maxRetries attempts with an error that still matches store.ErrStale, and
// that a branch an attempt made is deleted again when its batch fails.
func TestUpdateGivesUp(t *testing.T) {
	v := newEnv(t)
	v.task(t, "t1", []string{"fix"}, "a")
	v.st.arm(func(method string, n int) error {
		if method == "WriteDocs" {
			return store.ErrStale
		}
		return nil
	})
	_, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "c", Role: "reviewer"})
	if !errors.Is(err, store.ErrStale) {
		t.Fatalf("JoinTask refused every time: %v; want an error matching store.ErrStale", err)
	}
	if got := v.st.calls["WriteDocs"]; got != maxRetries {
		t.Errorf("%d attempts; want maxRetries, %d", got, maxRetries)
	}
	v.st.arm(func(method string, n int) error {
		if method == "WriteDocs" {
			return errInjected
		}
		return nil
	})
	if _, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "d", Role: "reviewer"}); !errors.Is(err, errInjected) {
		t.Fatalf("JoinTask whose write fails: %v; want the write's error", err)
	}
	if _, err := v.mem.GetBranch(bg, AgentBranch("t1", "d")); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("the branch of a join that failed is left: %v", err)
	}
}
