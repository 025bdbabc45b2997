package day1

import (
	"context"
	"errors"
	"testing"

	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

func TestTaskMethodsAfterClose(t *testing.T) {
	t.Parallel()
	c, _ := open(t, nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["CreateTask"] = c.CreateTask(ctx, TaskSpec{Name: "t"})
	_, checks["Handoff"] = c.Handoff(ctx, HandoffRequest{Task: "t"})
	_, checks["AcceptHandoff"] = c.AcceptHandoff(ctx, AcceptRequest{Handoff: "h", Agent: "a"})
	_, checks["StalledTasks"] = c.StalledTasks(ctx, StallQuery{Idle: 1})
	_, checks["Collab.Send"] = c.Collab().Send(ctx, CollabMessage{})
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func TestCompleteTaskHonoursMergeGate(t *testing.T) {
	t.Parallel()
	gate := merge.GateFunc("refuse", func(_ context.Context, p *store.MergePlan) ([]store.Offense, error) {
		var out []store.Offense
		for _, r := range p.Puts {
			out = append(out, store.Offense{Ref: store.RefOf(r), Reason: "refused"})
		}
		return out, nil
	})
	c, _ := open(t, func(cfg *Config) { cfg.MergeGate = gate })
	ctx := context.Background()
	if _, err := c.CreateTask(ctx, TaskSpec{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, Fact{Branch: "task/t", Text: "verified knowledge", Status: FactVerified}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CompleteTask(ctx, CompleteRequest{Task: "t", Merge: true})
	var blocked *MergeBlockedError
	if !errors.As(err, &blocked) || blocked.Gate != "refuse" {
		t.Fatalf("err = %v, want the gate's *MergeBlockedError", err)
	}
	tk, err := c.GetTask(ctx, "t")
	if err != nil || tk.Status != TaskActive {
		t.Errorf("task after a refused merge: %s, %v", tk.Status, err)
	}
	if _, err := c.CompleteTask(ctx, CompleteRequest{Task: "t"}); err != nil {
		t.Errorf("completing without a merge: %v", err)
	}
}
