package handoff

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

func TestCreateTask(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	tk, err := v.e.CreateTask(bg, TaskSpec{Name: "fix-oauth", Description: "token refresh fails", Type: "bug_fix",
		Objectives: []string{"find the cause", "fix it"}, CreatedBy: "lead"})
	if err != nil {
		t.Fatal(err)
	}
	if tk.Branch != "task/fix-oauth" || tk.Parent != "main" || tk.Status != TaskActive || tk.ObjectiveCount != 2 {
		t.Errorf("task = %+v", tk)
	}
	b, err := v.mem.GetBranch(bg, "task/fix-oauth")
	if err != nil || b.Parent != "main" {
		t.Fatalf("branch = %+v, %v; want task/fix-oauth forked from main", b, err)
	}
	got, err := v.e.GetTask(bg, "fix-oauth")
	if err != nil {
		t.Fatal(err)
	}
	var objs []string
	for _, o := range got.Objectives {
		objs = append(objs, o.Description+":"+string(o.Status))
	}
	if diff := cmp.Diff([]string{"find the cause:pending", "fix it:pending"}, objs); diff != "" {
		t.Errorf("objectives (-want +got):\n%s", diff)
	}
	evs, err := v.e.Events(bg, EventFilter{Task: "fix-oauth"})
	if err != nil || len(evs) != 1 || evs[0].Kind != EventTaskCreated || evs[0].Actor != "lead" {
		t.Errorf("events = %+v, %v", evs, err)
	}

	_, err = v.e.CreateTask(bg, TaskSpec{Name: "fix-oauth"})
	if !errors.Is(err, ErrTaskExists) || !errors.Is(err, store.ErrExists) {
		t.Errorf("creating it again: %v, want ErrTaskExists matching store.ErrExists", err)
	}
}

func TestCreateTaskBadInput(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	for _, tc := range []struct {
		spec  TaskSpec
		field string
	}{
		{TaskSpec{}, "TaskSpec.Name"},
		{TaskSpec{Name: "fix/auth"}, "TaskSpec.Name"},
		{TaskSpec{Name: "fix auth"}, "TaskSpec.Name"},
		{TaskSpec{Name: "a..b"}, "TaskSpec.Name"},
		{TaskSpec{Name: "-x"}, "TaskSpec.Name"},
		{TaskSpec{Name: strings.Repeat("x", MaxTaskNameLen+1)}, "TaskSpec.Name"},
		{TaskSpec{Name: "ok", Objectives: []string{"a", " "}}, "TaskSpec.Objectives[1]"},
		{TaskSpec{Name: "ok", Parent: "bad branch"}, "TaskSpec.Parent"},
		{TaskSpec{Name: "ok", Type: " bug"}, "TaskSpec.Type"},
		{TaskSpec{Name: "ok", CreatedBy: "who?"}, "TaskSpec.CreatedBy"},
	} {
		_, err := v.e.CreateTask(bg, tc.spec)
		wantField(t, err, tc.field)
	}
	if bs, err := v.mem.ListBranches(bg, store.BranchFilter{Prefix: "task/"}); err != nil || len(bs) != 0 {
		t.Errorf("bad input left branches: %v (%v)", bs, err)
	}
}

func TestCreateTaskUnknownParentLeavesNothing(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	_, err := v.e.CreateTask(bg, TaskSpec{Name: "x", Parent: "nope"})
	if !errors.Is(err, store.ErrBranchNotFound) {
		t.Fatalf("err = %v, want ErrBranchNotFound", err)
	}
	if _, err := v.e.GetTask(bg, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetTask after a failed create: %v, want ErrNotFound", err)
	}
}

func TestCreateTaskDocumentFailureDeletesBranch(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.st.arm(func(m string, n int) error {
		if m == "WriteDocs" {
			return errInjected
		}
		return nil
	})
	_, err := v.e.CreateTask(bg, TaskSpec{Name: "x"})
	if !errors.Is(err, errInjected) {
		t.Fatalf("err = %v, want the injected failure", err)
	}
	if _, err := v.mem.GetBranch(bg, "task/x"); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("the branch survived a failed create: %v", err)
	}
	v.st.arm(nil)
	if _, err := v.e.CreateTask(bg, TaskSpec{Name: "x"}); err != nil {
		t.Errorf("creating it after the failure: %v", err)
	}
}

func TestJoinTask(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.task(t, "t1", []string{"a", "b", "c"})
	m, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "inv", Role: "investigator", Objectives: []int{2, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Branch != "task/t1/inv" || m.Status != MemberActive || !cmp.Equal(m.Objectives, []int{1, 2}) {
		t.Errorf("member = %+v", m)
	}
	b, err := v.mem.GetBranch(bg, "task/t1/inv")
	if err != nil || b.Parent != "task/t1" {
		t.Fatalf("agent branch = %+v, %v", b, err)
	}
	// Joining again the same way changes nothing; another role is a conflict.
	again, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "inv", Role: "investigator", Objectives: []int{1, 2}})
	if err != nil || again.Version != m.Version {
		t.Errorf("joining again: %+v, %v; want the same membership", again, err)
	}
	if _, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "inv", Role: "tester"}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("joining with another role: %v, want ErrConflict", err)
	}
	if _, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "rev", Role: "reviewer"}); err != nil {
		t.Fatal(err)
	}
	tk, err := v.e.GetTask(bg, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Owner != "inv" {
		t.Errorf("owner = %q, want the first to join", tk.Owner)
	}
	if diff := cmp.Diff([]string{"inv", "inv", ""}, []string{
		strings.Join(tk.Objectives[0].Assignees, ","), strings.Join(tk.Objectives[1].Assignees, ","), strings.Join(tk.Objectives[2].Assignees, ","),
	}); diff != "" {
		t.Errorf("assignees (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		r     JoinRequest
		field string
	}{
		{JoinRequest{Task: "t1", Agent: "x", Objectives: []int{4}}, "JoinRequest.Objectives[0]"},
		{JoinRequest{Task: "t1", Agent: "x", Objectives: []int{0}}, "JoinRequest.Objectives[0]"},
		{JoinRequest{Task: "t1", Agent: "a/b"}, "JoinRequest.Agent"},
		{JoinRequest{Task: "t1", Agent: strings.Repeat("a", MaxAgentIDLen+1)}, "JoinRequest.Agent"},
		{JoinRequest{Task: "", Agent: "x"}, "JoinRequest.Task"},
	} {
		_, err := v.e.JoinTask(bg, tc.r)
		wantField(t, err, tc.field)
	}
	if _, err := v.e.JoinTask(bg, JoinRequest{Task: "nope", Agent: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("joining an unknown task: %v, want ErrNotFound", err)
	}
}

func TestJoinTaskDocumentFailureDeletesBranch(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.task(t, "t1", nil)
	v.st.arm(func(m string, n int) error {
		if m == "WriteDocs" {
			return errInjected
		}
		return nil
	})
	if _, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "a"}); !errors.Is(err, errInjected) {
		t.Fatalf("err = %v", err)
	}
	if _, err := v.mem.GetBranch(bg, "task/t1/a"); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("branch left after a failed join: %v", err)
	}
}

func TestUpdateObjectiveAndLeave(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.task(t, "t1", []string{"find", "fix"}, "inv")
	o, err := v.e.UpdateObjective(bg, ObjectiveUpdate{Task: "t1", Objective: 1, Status: ObjectiveInProgress, By: "inv"})
	if err != nil {
		t.Fatal(err)
	}
	o, err = v.e.UpdateObjective(bg, ObjectiveUpdate{Task: "t1", Objective: 1, Status: ObjectiveDone, By: "inv", Note: "found in token_service.py"})
	if err != nil {
		t.Fatal(err)
	}
	type change struct{ From, To, By, Note string }
	var got []change
	for _, h := range o.History {
		got = append(got, change{string(h.From), string(h.To), h.By, h.Note})
		if h.At.IsZero() {
			t.Error("a change has no time")
		}
	}
	want := []change{{"pending", "in_progress", "inv", ""}, {"in_progress", "done", "inv", "found in token_service.py"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	// The same status without a note changes nothing.
	same, err := v.e.UpdateObjective(bg, ObjectiveUpdate{Task: "t1", Objective: 1, Status: ObjectiveDone})
	if err != nil || same.Version != o.Version {
		t.Errorf("same status: version %d, %v; want %d", same.Version, err, o.Version)
	}
	if _, err := v.e.UpdateObjective(bg, ObjectiveUpdate{Task: "t1", Objective: 3, Status: ObjectiveDone}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown objective: %v, want ErrNotFound", err)
	}
	_, err = v.e.UpdateObjective(bg, ObjectiveUpdate{Task: "t1", Objective: 1, Status: "finished"})
	wantField(t, err, "ObjectiveUpdate.Status")
	_, err = v.e.UpdateObjective(bg, ObjectiveUpdate{Task: "t1", Objective: 0, Status: ObjectiveDone})
	wantField(t, err, "ObjectiveUpdate.Objective")
	_, err = v.e.UpdateObjective(bg, ObjectiveUpdate{Task: "t1", Objective: 2, Status: ObjectiveDone, By: strings.Repeat("b", MaxAgentIDLen+1)})
	wantField(t, err, "ObjectiveUpdate.By")
	// Anyone may change an objective; the change is found by who made it.
	if _, err := v.e.UpdateObjective(bg, ObjectiveUpdate{Task: "t1", Objective: 2, Status: ObjectiveBlocked, By: "lead@example.com", Note: "waiting"}); err != nil {
		t.Fatal(err)
	}
	if evs, err := v.e.Events(bg, EventFilter{Agent: "lead@example.com"}); err != nil || len(evs) != 1 || evs[0].To != string(ObjectiveBlocked) {
		t.Errorf("events of lead@example.com = %+v, %v", evs, err)
	}

	m, err := v.e.LeaveTask(bg, LeaveRequest{Task: "t1", Agent: "inv", Summary: "found the cause"})
	if err != nil || m.Status != MemberLeft || m.Summary != "found the cause" || m.LeftAt.IsZero() {
		t.Fatalf("leave: %+v, %v", m, err)
	}
	tk, _ := v.e.GetTask(bg, "t1")
	if tk.Owner != "" {
		t.Errorf("owner after the owner left = %q", tk.Owner)
	}
	if _, err := v.e.LeaveTask(bg, LeaveRequest{Task: "t1", Agent: "inv"}); !errors.Is(err, ErrNotMember) || !errors.Is(err, store.ErrNotFound) {
		t.Errorf("leaving twice: %v, want ErrNotMember", err)
	}
	// A member that left may join again.
	if m, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "inv"}); err != nil || m.Status != MemberActive || m.Summary != "" {
		t.Errorf("rejoin: %+v, %v", m, err)
	}
	evs, err := v.e.Events(bg, EventFilter{Agent: "inv"})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []EventKind
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	wantKinds := []EventKind{EventAgentJoined, EventObjectiveUpdated, EventObjectiveUpdated, EventAgentLeft, EventAgentJoined}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("events of inv (-want +got):\n%s", diff)
	}
}

func TestCompleteTaskPromotesVerifiedOnly(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.task(t, "t1", []string{"fix"}, "dev")
	br := "task/t1"
	invalid := verifiedFact("f-invalid", "wrong guess")
	invalid.Status, invalid.Verify.Status = store.FactInvalidated, store.Invalidated
	v.put(t, br, verifiedFact("f-ok", "the refresh token is not retried"), fact("f-maybe", "maybe a clock skew"), invalid,
		store.Observation{ID: "o1", Type: store.ObsError, Summary: "timeout"})
	verified := conversation("c-verified", "fix session", "fix it", "done")
	c := verified[0].(store.Conversation)
	c.Verify = store.Verification{Status: store.Verified, Score: 0.8}
	verified[0] = c
	v.put(t, br, verified...)
	picked := conversation("c-picked", "picked", "why", "because")
	m := picked[2].(store.Message)
	m.PickedTo = []string{br}
	picked[2] = m
	v.put(t, br, picked...)
	ranged := conversation("c-range", "range pick", "copied")
	m = ranged[1].(store.Message)
	m.Metadata = map[string]string{MetaPickedFromMessage: "x-1"}
	ranged[1] = m
	v.put(t, br, ranged...)
	v.put(t, br, conversation("c-plain", "chatter", "hi", "hello")...)

	res, err := v.e.CompleteTask(bg, CompleteRequest{Task: "t1", By: "dev", ResultSummary: "fixed", Merge: true, Archive: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := func(k store.Kind, id string) store.Ref { return store.Ref{Kind: k, ID: id} }
	wantPromoted := []store.Ref{
		ref(store.KindFact, "f-ok"),
		ref(store.KindConversation, "c-picked"), ref(store.KindConversation, "c-range"), ref(store.KindConversation, "c-verified"),
		ref(store.KindMessage, "c-picked-m1"), ref(store.KindMessage, "c-picked-m2"), ref(store.KindMessage, "c-range-m1"),
		ref(store.KindMessage, "c-verified-m1"), ref(store.KindMessage, "c-verified-m2"),
	}
	if diff := cmp.Diff(wantPromoted, res.Promoted); diff != "" {
		t.Errorf("promoted (-want +got):\n%s", diff)
	}
	wantKept := []store.Ref{ref(store.KindFact, "f-invalid"), ref(store.KindFact, "f-maybe"), ref(store.KindConversation, "c-plain")}
	if diff := cmp.Diff(wantKept, res.Kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if res.Merge == nil || res.Task.MergeID != res.Merge.Record.ID || res.Task.Status != TaskCompleted || res.Task.ResultSummary != "fixed" {
		t.Errorf("completion = %+v", res.Task)
	}
	for _, r := range wantPromoted {
		if _, err := v.mem.Get(bg, store.View{Branch: "main"}, r); err != nil {
			t.Errorf("%v not on main: %v", r, err)
		}
	}
	if r, err := v.mem.Get(bg, store.View{Branch: "main"}, ref(store.KindFact, "f-ok")); err != nil || r.(store.Fact).Status != store.FactPromoted {
		t.Errorf("f-ok on main = %+v, %v; want status promoted", r, err)
	}
	if got, err := v.mem.List(bg, store.View{Branch: "main"}, store.ListQuery{Kind: store.KindFact, Filter: store.Filter{Status: store.FactPromoted}}); err != nil || len(got) != 1 {
		t.Errorf("promoted facts on main = %v, %v; want f-ok", got, err)
	}
	for _, r := range append(wantKept, ref(store.KindObservation, "o1")) {
		if _, err := v.mem.Get(bg, store.View{Branch: "main"}, r); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%v reached main: %v", r, err)
		}
	}
	for _, b := range []string{"task/t1", "task/t1/dev"} {
		if br, _ := v.mem.GetBranch(bg, b); br.Status != store.BranchArchived {
			t.Errorf("branch %s is %s, want archived", b, br.Status)
		}
	}
	if br, _ := v.mem.GetBranch(bg, "task/t1"); br.MergedInto != "main" || br.MergedAt.IsZero() {
		t.Errorf("task branch MergedInto %q at %v; want merged into main by the completion", br.MergedInto, br.MergedAt)
	}
	if _, err := v.e.CompleteTask(bg, CompleteRequest{Task: "t1"}); !errors.Is(err, ErrTaskClosed) || !errors.Is(err, store.ErrConflict) {
		t.Errorf("completing twice: %v, want ErrTaskClosed", err)
	}
	if _, err := v.e.JoinTask(bg, JoinRequest{Task: "t1", Agent: "late"}); !errors.Is(err, ErrTaskClosed) {
		t.Errorf("joining a completed task: %v, want ErrTaskClosed", err)
	}
}

func TestCompleteTaskWithoutMergeOrNothingToPromote(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.task(t, "t1", nil)
	v.put(t, "task/t1", fact("f1", "unverified"))
	res, err := v.e.CompleteTask(bg, CompleteRequest{Task: "t1", Merge: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Merge != nil || len(res.Promoted) != 0 || len(res.Kept) != 1 {
		t.Errorf("completion = %+v; want no merge and one kept fact", res)
	}
	merges, err := v.mem.ListMerges(bg, store.MergeFilter{})
	if err != nil || len(merges) != 0 {
		t.Errorf("merges = %v (%v), want none", merges, err)
	}
}

func TestCompleteTaskMergeFailureKeepsTaskActive(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	if _, err := v.mem.CreateBranch(bg, store.BranchSpec{Name: "release"}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.CreateTask(bg, TaskSpec{Name: "t1", Type: "bug_fix", Parent: "release"}); err != nil {
		t.Fatal(err)
	}
	v.put(t, "task/t1", verifiedFact("f1", "fine"))
	if _, err := v.mem.SetBranchStatus(bg, "release", store.BranchArchived); err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.CompleteTask(bg, CompleteRequest{Task: "t1", Merge: true}); !errors.Is(err, store.ErrBranchArchived) {
		t.Fatalf("err = %v, want ErrBranchArchived", err)
	}
	tk, _ := v.e.GetTask(bg, "t1")
	if tk.Status != TaskActive {
		t.Errorf("status after a failed merge = %s", tk.Status)
	}
}

func TestListTasks(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.task(t, "a", nil, "x")
	v.task(t, "b", nil, "y")
	if _, err := v.e.CreateTask(bg, TaskSpec{Name: "c", Type: "feature"}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.CompleteTask(bg, CompleteRequest{Task: "b"}); err != nil {
		t.Fatal(err)
	}
	names := func(f TaskFilter) []string {
		ts, err := v.e.ListTasks(bg, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tk := range ts {
			out = append(out, tk.Name)
		}
		return out
	}
	for _, tc := range []struct {
		f    TaskFilter
		want []string
	}{
		{TaskFilter{}, []string{"a", "b", "c"}},
		{TaskFilter{Status: TaskActive}, []string{"a", "c"}},
		{TaskFilter{Status: TaskCompleted}, []string{"b"}},
		{TaskFilter{Type: "feature"}, []string{"c"}},
		{TaskFilter{Agent: "y"}, []string{"b"}},
		{TaskFilter{Limit: 2}, []string{"a", "b"}},
	} {
		if diff := cmp.Diff(tc.want, names(tc.f)); diff != "" {
			t.Errorf("ListTasks(%+v) (-want +got):\n%s", tc.f, diff)
		}
	}
	_, err := v.e.ListTasks(bg, TaskFilter{Status: "done"})
	wantField(t, err, "TaskFilter.Status")
}
