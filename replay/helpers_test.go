package replay_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/testkit"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/replay"
	"github.com/day1ai/day1/store"
)

// env is a store with the engines of a task's life on one clock.
type env struct {
	st     store.Store
	clock  *testkit.Clock
	tasks  *handoff.Engine
	curate *curation.Engine
	merger *merge.Engine
	replay *replay.Engine
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clock := testkit.NewClock(time.Millisecond)
	st := testkit.Store(t, clock.Now)
	var mu sync.Mutex
	n := 0
	newID := func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("id-%03d", n)
	}
	m := &merge.Engine{Store: st, NewID: newID, Now: clock.Now}
	return &env{
		st:     st,
		clock:  clock,
		tasks:  &handoff.Engine{Store: st, Merger: m, Decisions: nil, NewID: newID, Now: clock.Now},
		curate: &curation.Engine{Store: st, NewID: newID, Now: clock.Now},
		merger: m,
		replay: &replay.Engine{Store: st, NewID: newID, Now: clock.Now},
	}
}

func (e *env) put(t *testing.T, branch string, recs ...store.Record) {
	t.Helper()
	testkit.Put(t, e.st, branch, recs...)
}

// conversation writes a conversation and its messages, one write each.
func (e *env) conversation(t *testing.T, branch, id, task, agent, title string, msgs ...store.Message) {
	t.Helper()
	e.put(t, branch, store.Conversation{ID: id, TaskID: task, AgentID: agent, Title: title})
	for i, m := range msgs {
		m.ID = fmt.Sprintf("%s-m%d", id, i+1)
		m.ConversationID, m.Seq, m.TaskID, m.AgentID = id, i+1, task, agent
		e.put(t, branch, m)
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runScenario plays the three-agent bug fix of the design on task name: an
// investigator finds the cause and escalates, an expert accepts and fixes it (its
// fix verified and merged into the task), a tester adds a test, and the task is
// completed with its verified knowledge merged into main. fix is the text of the
// expert's fact, so that two runs can differ.
func runScenario(t *testing.T, e *env, name, fix string) {
	t.Helper()
	ctx := context.Background()
	task, err := e.tasks.CreateTask(ctx, handoff.TaskSpec{Name: name, Type: "bug_fix",
		Objectives: []string{"Identify the root cause", "Implement the fix", "Add regression tests"}})
	check(t, err)
	inv, err := e.tasks.JoinTask(ctx, handoff.JoinRequest{Task: name, Agent: "investigator", Role: "investigator", Objectives: []int{1}})
	check(t, err)
	e.conversation(t, inv.Branch, name+"-c-inv", name, "investigator", "Investigate the refresh failure",
		store.Message{Role: store.RoleUser, Content: "Token refresh fails after one hour"},
		store.Message{Role: store.RoleAssistant, Content: "I'll grep the token service for the refresh path"},
		store.Message{Role: store.RoleToolCall, Tool: "grep", Content: "grep -n refresh token_service.py"},
		store.Message{Role: store.RoleToolResult, Tool: "grep", Content: "142: def refresh(token):"},
		store.Message{Role: store.RoleAssistant, Content: "The refresh handler drops the token on failure"},
	)
	e.put(t, inv.Branch, store.Fact{ID: name + "-f-root", Text: "token_service.py line 142 drops the refresh token when the refresh call fails",
		Category: "bug_fix", Confidence: 0.9, TaskID: name, AgentID: "investigator"})
	e.put(t, inv.Branch, store.Observation{ID: name + "-o-err", Type: store.ObsError, Tool: "pytest",
		Summary: "test_refresh fails with KeyError refresh_token", TaskID: name, AgentID: "investigator"})
	_, err = e.tasks.UpdateObjective(ctx, handoff.ObjectiveUpdate{Task: name, Objective: 1, Status: handoff.ObjectiveDone, By: "investigator", Note: "cause found"})
	check(t, err)
	h, err := e.tasks.CreateHandoff(ctx, handoff.HandoffRequest{Task: name, Type: handoff.TypeEscalation, FromAgent: "investigator",
		ToAgent: "expert", Instructions: "The fix needs the OAuth2 state machine", Blockers: []string{"unclear state after a failed refresh"}})
	check(t, err)
	acc, err := e.tasks.AcceptHandoff(ctx, handoff.AcceptRequest{Handoff: h.ID, Agent: "expert", Role: "oauth-expert"})
	check(t, err)
	e.put(t, acc.Branch, store.Fact{ID: name + "-f-fix", Text: fix, Category: "bug_fix", Confidence: 0.95, TaskID: name, AgentID: "expert"})
	_, err = e.curate.VerifyFact(ctx, acc.Branch, name+"-f-fix")
	check(t, err)
	_, err = e.merger.Merge(ctx, merge.Request{Source: acc.Branch, Target: task.Branch, Strategy: store.Native, MergedBy: "expert"})
	check(t, err)
	tester, err := e.tasks.JoinTask(ctx, handoff.JoinRequest{Task: name, Agent: "tester", Role: "tester", Objectives: []int{3}})
	check(t, err)
	e.put(t, tester.Branch, store.Fact{ID: name + "-f-test", Text: "A regression test covers a refresh that fails once and then succeeds",
		Category: "testing", Confidence: 0.4, TaskID: name, AgentID: "tester"})
	_, err = e.tasks.CompleteTask(ctx, handoff.CompleteRequest{Task: name, By: "expert", ResultSummary: "refresh retried with backoff", Merge: true})
	check(t, err)
}
