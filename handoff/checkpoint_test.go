package handoff

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/store"
)

func TestCheckpointAndResume(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	if _, err := v.e.ResumeFromCheckpoint(bg, ResumeRequest{Task: "t1", Agent: "inv"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("resume without a checkpoint: %v, want ErrNotFound", err)
	}
	c1, err := v.e.Checkpoint(bg, CheckpointRequest{Task: "t1", Agent: "inv", Session: "s1", Note: "cause found"})
	if err != nil {
		t.Fatal(err)
	}
	// A checkpoint carries unverified work too, and changes no ownership.
	if diff := cmp.Diff([]string{"f-cause", "f-guess"}, factIDs(c1.Packet.Facts)); diff != "" {
		t.Errorf("checkpoint facts (-want +got):\n%s", diff)
	}
	if c1.Packet.Type != TypeCheckpoint || c1.Branch != "task/t1/inv" || len(c1.Packet.RecentErrors) != 1 {
		t.Errorf("checkpoint = %+v", c1)
	}
	v.put(t, "task/t1/inv", fact("f-more", "more work"))
	c2, err := v.e.Checkpoint(bg, CheckpointRequest{Task: "t1", Agent: "inv", Note: "trying a fix"})
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := v.e.GetTask(bg, "t1")
	if tk.Owner != "inv" || !tk.LastCheckpoint.Equal(c2.CreatedAt) {
		t.Errorf("task owner %q, last checkpoint %v; want inv, %v", tk.Owner, tk.LastCheckpoint, c2.CreatedAt)
	}
	cs, err := v.e.ListCheckpoints(bg, CheckpointFilter{Task: "t1"})
	if err != nil || len(cs) != 2 || cs[0].ID != c2.ID {
		t.Errorf("checkpoints = %v, %v; want newest first", cs, err)
	}

	// The agent crashes; its branch is gone too. Resuming brings both back.
	if err := v.mem.DeleteBranch(bg, "task/t1/inv"); err != nil {
		t.Fatal(err)
	}
	res, err := v.e.ResumeFromCheckpoint(bg, ResumeRequest{Task: "t1", Session: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Checkpoint.ID != c2.ID || res.Member.Agent != "inv" || res.Member.Session != "s2" || res.Member.Status != MemberActive {
		t.Errorf("resumption = %+v", res)
	}
	if _, err := v.mem.GetBranch(bg, "task/t1/inv"); err != nil {
		t.Errorf("branch not recreated: %v", err)
	}
	if len(res.Checkpoint.Packet.Facts) != 3 {
		t.Errorf("the resumed packet has %d facts, want the 3 of the latest checkpoint", len(res.Checkpoint.Packet.Facts))
	}
	evs, _ := v.e.Events(bg, EventFilter{Task: "t1", Kind: EventCheckpointUsed})
	if len(evs) != 1 || evs[0].Note != c2.ID {
		t.Errorf("resume events = %+v", evs)
	}

	if _, err := v.e.Checkpoint(bg, CheckpointRequest{Task: "t1", Agent: "ghost"}); !errors.Is(err, ErrNotMember) {
		t.Errorf("checkpoint by a non-member: %v, want ErrNotMember", err)
	}
	_, err = v.e.Checkpoint(bg, CheckpointRequest{Task: "t1", Agent: "inv", Blockers: []string{" "}})
	wantField(t, err, "CheckpointRequest.Blockers[0]")
}

func TestStalledTasks(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.task(t, "quiet", nil, "a", "b")
	v.task(t, "busy", nil, "c")
	v.task(t, "done", nil, "d")
	if _, err := v.e.CompleteTask(bg, CompleteRequest{Task: "done"}); err != nil {
		t.Fatal(err)
	}
	if got, err := v.e.StalledTasks(bg, StallQuery{Idle: time.Hour}); err != nil || len(got) != 0 {
		t.Fatalf("stalls right away = %v, %v", got, err)
	}
	v.clk.Advance(50 * time.Minute)
	// b checkpoints, c writes to its branch: both show life.
	if _, err := v.e.Checkpoint(bg, CheckpointRequest{Task: "quiet", Agent: "b"}); err != nil {
		t.Fatal(err)
	}
	v.put(t, "task/busy/c", fact("f1", "progress"))
	v.clk.Advance(20 * time.Minute)

	got, err := v.e.StalledTasks(bg, StallQuery{Idle: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Task, Agent string
		Stalled     bool
	}
	var rows []row
	for _, s := range got {
		rows = append(rows, row{s.Task, s.Agent, s.Idle >= time.Hour})
	}
	// The quiet task showed life through b's checkpoint; only a is stalled.
	if diff := cmp.Diff([]row{{"quiet", "a", true}}, rows); diff != "" {
		t.Errorf("stalls (-want +got):\n%s", diff)
	}
	v.clk.Advance(time.Hour)
	got, _ = v.e.StalledTasks(bg, StallQuery{Idle: time.Hour, Task: "busy"})
	if len(got) != 2 || got[0].Agent != "" || got[1].Agent != "c" || got[1].LastWrite.IsZero() {
		t.Errorf("stalls of busy = %+v", got)
	}
	_, err = v.e.StalledTasks(bg, StallQuery{})
	wantField(t, err, "StallQuery.Idle")
	if _, err := v.e.StalledTasks(bg, StallQuery{Idle: time.Hour, Task: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown task: %v", err)
	}
}

func TestTaskContext(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	p, err := v.e.TaskContext(bg, "t1", ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Handoff != "" || len(p.Facts) != 1 || len(p.Conversations) != 1 || len(p.RecentErrors) != 1 || len(p.Task.Members) != 1 {
		t.Errorf("context = %+v", p)
	}
	p, err = v.e.TaskContext(bg, "t1", ContextOptions{IncludeUnverified: true})
	if err != nil || len(p.Facts) != 2 {
		t.Errorf("with unverified: %d facts, %v", len(p.Facts), err)
	}
	if _, err := v.e.TaskContext(bg, "nope", ContextOptions{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown task: %v", err)
	}
}

func TestPacketSummaryByModel(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	model := llmfake.NewModel().On(`summarise the context`, "The investigator found the cause in token_service.py; an OAuth2 expert should fix it.").
		On(`summarise one conversation`, "The investigator traced the failure to a missing expiry check.")
	v.e.Model = model
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", Type: TypeEscalation, FromAgent: "inv"})
	if err != nil {
		t.Fatal(err)
	}
	if h.Packet.SummaryBy != "model:llmfake" || h.Packet.Summary != "The investigator found the cause in token_service.py; an OAuth2 expert should fix it." {
		t.Errorf("summary = %q by %s", h.Packet.Summary, h.Packet.SummaryBy)
	}
	calls := model.Calls()
	if len(calls) != len(h.Packet.Conversations)+1 || !strings.Contains(llmfake.Prompt(calls[len(calls)-1]), "token_service.py:142") {
		t.Errorf("the model was not shown the packet: %d calls", len(calls))
	}
	if len(h.Packet.Conversations) == 0 {
		t.Fatal("the packet has no conversation")
	}
	for _, c := range h.Packet.Conversations {
		if c.SummaryBy != "model:llmfake" || c.Summary != "The investigator traced the failure to a missing expiry check." {
			t.Errorf("conversation %s summary = %q by %s", c.ID, c.Summary, c.SummaryBy)
		}
	}
	// A failing model never fails the handoff: the heuristic summaries stand in.
	model.FailNext(len(calls), nil)
	h, err = v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", Type: TypeEscalation, FromAgent: "inv"})
	if err != nil {
		t.Fatal(err)
	}
	if h.Packet.SummaryBy != "heuristic" || h.Packet.SummaryError == "" || !strings.HasPrefix(h.Packet.Summary, "Task t1") {
		t.Errorf("summary after a model failure = %q by %s (%q)", h.Packet.Summary, h.Packet.SummaryBy, h.Packet.SummaryError)
	}
	for _, c := range h.Packet.Conversations {
		if c.SummaryBy != "heuristic" || !strings.Contains(c.Summary, "messages") {
			t.Errorf("conversation %s summary after a model failure = %q by %s", c.ID, c.Summary, c.SummaryBy)
		}
	}
}

func TestCancelledContextChangesNothing(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	h, err := v.e.CreateHandoff(bg, HandoffRequest{Task: "t1", FromAgent: "inv"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := v.e.AcceptHandoff(ctx, AcceptRequest{Handoff: h.ID, Agent: "b"}); !errors.Is(err, context.Canceled) {
		t.Errorf("accept with a cancelled context: %v", err)
	}
	if _, err := v.e.JoinTask(ctx, JoinRequest{Task: "t1", Agent: "b"}); !errors.Is(err, context.Canceled) {
		t.Errorf("join with a cancelled context: %v", err)
	}
	got, _ := v.e.GetHandoff(bg, h.ID)
	if got.Status != StatusPending {
		t.Errorf("status = %s, want pending", got.Status)
	}
	if _, err := v.mem.GetBranch(bg, "task/t1/b"); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("branch created under a cancelled context: %v", err)
	}
}
