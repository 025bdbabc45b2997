package handoff

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/testkit"

	"github.com/day1ai/day1/internal/ids"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/memstore"
)

// faultStore wraps a store and fails chosen calls: fail returns the error for the
// n-th call (from 1) of a method, or nil to let it through.
type faultStore struct {
	store.Store
	mu    sync.Mutex
	calls map[string]int
	fail  func(method string, n int) error
}

var errInjected = errors.New("injected failure")

func (f *faultStore) hit(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[method]++
	if f.fail == nil {
		return nil
	}
	return f.fail(method, f.calls[method])
}

// arm sets the failure function and resets the call counts.
func (f *faultStore) arm(fail func(method string, n int) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.fail = map[string]int{}, fail
}

func (f *faultStore) WriteDocs(ctx context.Context, ws []store.DocWrite) ([]store.Doc, error) {
	if err := f.hit("WriteDocs"); err != nil {
		return nil, err
	}
	return f.Store.WriteDocs(ctx, ws)
}

func (f *faultStore) CreateBranch(ctx context.Context, spec store.BranchSpec) (store.Branch, error) {
	if err := f.hit("CreateBranch"); err != nil {
		return store.Branch{}, err
	}
	return f.Store.CreateBranch(ctx, spec)
}

func (f *faultStore) DeleteBranch(ctx context.Context, name string) error {
	if err := f.hit("DeleteBranch"); err != nil {
		return err
	}
	return f.Store.DeleteBranch(ctx, name)
}

// env is an Engine on a fresh in-memory store behind a faultStore, with the test
// clock and sequential ids.
type env struct {
	e   *Engine
	st  *faultStore
	mem *memstore.Store
	clk *testkit.Clock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := testkit.NewClock(time.Millisecond)
	mem := testkit.Store(t, clk.Now)
	fs := &faultStore{Store: mem}
	return &env{e: &Engine{Store: fs, Now: clk.Now, NewID: ids.Sequential("id")}, st: fs, mem: mem, clk: clk}
}

var bg = context.Background()

// task creates a task with objectives and joins agents to it; each agent is assigned
// the objective of its position (1, 2...) when there is one.
func (v *env) task(t *testing.T, name string, objectives []string, agents ...string) Task {
	t.Helper()
	tk, err := v.e.CreateTask(bg, TaskSpec{Name: name, Objectives: objectives, Type: "bug_fix"})
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	for i, a := range agents {
		var objs []int
		if i < len(objectives) {
			objs = []int{i + 1}
		}
		if _, err := v.e.JoinTask(bg, JoinRequest{Task: name, Agent: a, Role: "role-" + a, Objectives: objs}); err != nil {
			t.Fatalf("JoinTask %s: %v", a, err)
		}
	}
	return tk
}

// put writes records to a branch.
func (v *env) put(t *testing.T, branch string, recs ...store.Record) {
	t.Helper()
	testkit.Put(t, v.mem, branch, recs...)
}

func verifiedFact(id, text string) store.Fact {
	return store.Fact{ID: id, Text: text, Status: store.FactVerified, Confidence: 0.9,
		Verify: store.Verification{Status: store.Verified, Score: 0.9, By: "test"}}
}

func fact(id, text string) store.Fact {
	return store.Fact{ID: id, Text: text, Confidence: 0.7}
}

func conversation(id, title string, msgs ...string) []store.Record {
	recs := []store.Record{store.Conversation{ID: id, Title: title}}
	for i, c := range msgs {
		role := store.RoleAssistant
		if i%2 == 0 {
			role = store.RoleUser
		}
		recs = append(recs, store.Message{ID: fmt.Sprintf("%s-m%d", id, i+1), ConversationID: id, Seq: i + 1, Role: role, Content: c})
	}
	return recs
}

func factIDs(fs []store.Fact) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

func wantField(t *testing.T, err error, field string) {
	t.Helper()
	var ve *store.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error = %v, want a *store.ValidationError on %s", err, field)
	}
	if ve.Field != field {
		t.Fatalf("ValidationError.Field = %q, want %q (%v)", ve.Field, field, err)
	}
}
