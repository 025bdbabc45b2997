package day1

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/internal/testkit"
	"github.com/day1ai/day1/store/sqlite"
)

// recorder is an Observer that keeps every operation it sees, with the operation it
// ran inside of (found through the context, as a tracer finds its parent span).
type recorder struct {
	mu  sync.Mutex
	ops []seen
}

type seen struct {
	Op     Operation
	Parent string // the Method of the enclosing operation; empty at the top
	End    OperationEnd
	Ended  int // how many times the end function was called
}

type parentKey struct{}

// Start records op under the operation found in ctx.
func (r *recorder) Start(ctx context.Context, op Operation) (context.Context, func(OperationEnd)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	parent, _ := ctx.Value(parentKey{}).(string)
	i := len(r.ops)
	r.ops = append(r.ops, seen{Op: op, Parent: parent})
	return context.WithValue(ctx, parentKey{}, op.Method), func(e OperationEnd) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ops[i].End = e
		r.ops[i].Ended++
	}
}

// take returns the operations seen so far and forgets them.
func (r *recorder) take() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.ops
	r.ops = nil
	return out
}

// TestObserverSeesEachOperation checks what an Observer is told of writes, a search,
// a branch, a merge, a failed read, a correction and a delete: one operation per call
// the caller made, ended once, with its names, branches, records and error.
func TestObserverSeesEachOperation(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	c, _ := open(t, func(cfg *Config) { cfg.Observer = rec })
	// Every op is seen once, ended once, at the top (no parent here).
	type row struct {
		Name, Method, Branch, Target, RecordID, Query, Store string
		Records, Conflicts                                   int
		Failed                                               bool
	}
	check := func(what string, want ...row) {
		t.Helper()
		var got []row
		for _, s := range rec.take() {
			if s.Ended != 1 {
				t.Errorf("%s: %s ended %d times; want once", what, s.Op.Method, s.Ended)
			}
			if s.Parent != "" {
				t.Errorf("%s: %s ran inside %s; want at the top", what, s.Op.Method, s.Parent)
			}
			got = append(got, row{s.Op.Name, s.Op.Method, s.Op.Branch, s.Op.Target, s.Op.RecordID, s.Op.Query, s.Op.Store,
				s.End.Records, s.End.Conflicts, s.End.Err != nil})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: operations seen (-want +got):\n%s", what, diff)
		}
	}

	if _, err := c.WriteFact(ctx, Fact{ID: "f1", Text: "The cache TTL is 12 hours"}); err != nil {
		t.Fatal(err)
	}
	check("WriteFact", row{Name: OpCreateMemory, Method: "WriteFacts", Branch: "main", RecordID: "f1", Store: "memstore", Records: 1})

	if _, err := c.Search(ctx, SearchQuery{Text: "cache TTL"}); err != nil {
		t.Fatal(err)
	}
	check("Search", row{Name: OpSearchMemory, Method: "Search", Branch: "main", Query: "cache TTL", Store: "memstore", Records: 1})

	if _, err := c.Branch(ctx, "b", BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFacts(ctx, []Fact{{Branch: "b", Text: "Deploys run on Fridays"}, {Branch: "b", Text: "Logs are kept for 30 days"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Merge(ctx, MergeRequest{Source: "b", Target: "main"}); err != nil {
		t.Fatal(err)
	}
	check("Branch, WriteFacts, Merge",
		row{Name: OpBranch, Method: "Branch", Branch: "b", Store: "memstore"},
		row{Name: OpCreateMemory, Method: "WriteFacts", Branch: "b", Store: "memstore", Records: 2},
		row{Name: OpMerge, Method: "Merge", Branch: "b", Target: "main", Store: "memstore", Records: 2})

	if _, err := c.GetFact(ctx, "", "nope"); err == nil {
		t.Fatal("GetFact of a missing fact succeeded")
	}
	check("a failed GetFact", row{Name: OpGetMemory, Method: "GetFact", Branch: "main", RecordID: "nope", Store: "memstore", Failed: true})

	text := "The cache TTL is 24 hours"
	if _, err := c.CorrectFact(ctx, FactCorrection{ID: "f1", Action: CorrectUpdate, Text: &text, By: "ops", Why: "changed"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "", Ref{Kind: KindFact, ID: "f1"}); err != nil {
		t.Fatal(err)
	}
	check("CorrectFact, Delete",
		row{Name: OpUpdateMemory, Method: "CorrectFact", Branch: "main", RecordID: "f1", Store: "memstore", Records: 1},
		row{Name: OpDeleteMemory, Method: "Delete", Branch: "main", RecordID: "f1", Store: "memstore", Records: 1})
}

// TestObserverParentsAndConflicts checks that an operation runs in the context its
// caller gave, and that a merge refused for conflicts reports them and its error.
func TestObserverParentsAndConflicts(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	c, _ := open(t, func(cfg *Config) { cfg.Observer = rec })
	if _, err := c.WriteFact(ctx, Fact{ID: "f", Text: "The API listens on port 8080"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Branch(ctx, "b", BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []Fact{{ID: "f", Branch: "b", Text: "The API listens on port 9090"}, {ID: "f", Text: "The API listens on port 7070"}} {
		if _, err := c.WriteFact(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	rec.take()
	// An operation started inside another (here, under a caller's own operation)
	// finds its parent in the context.
	outer, end := rec.Start(ctx, Operation{Method: "caller"})
	_, err := c.Merge(outer, MergeRequest{Source: "b", Target: "main", Policy: ConflictFail})
	end(OperationEnd{})
	var mc *MergeConflictError
	if !errors.As(err, &mc) {
		t.Fatalf("Merge = %v; want a *MergeConflictError", err)
	}
	ops := rec.take()
	if len(ops) != 2 {
		t.Fatalf("saw %d operations; want the caller's and the merge", len(ops))
	}
	m := ops[1]
	if m.Op.Method != "Merge" || m.Parent != "caller" || m.End.Conflicts != 1 || !errors.Is(m.End.Err, ErrConflict) {
		t.Errorf("merge seen as %+v; want Merge inside caller with 1 conflict and ErrConflict", m)
	}
}

// TestObserverNilEndAndNoObserver checks that an Observer may return no end function,
// and that without an Observer the context is left as it was.
func TestObserverNilEndAndNoObserver(t *testing.T) {
	ctx := context.Background()
	c, _ := open(t, func(cfg *Config) { cfg.Observer = nilEnd{} })
	if _, err := c.WriteFact(ctx, Fact{Text: "An Observer may return no end function"}); err != nil {
		t.Fatal(err)
	}
	plain, _ := open(t, nil)
	got, end := plain.start(ctx, Operation{Name: OpSearchMemory})
	if got != ctx {
		t.Error("start without an Observer changed the context")
	}
	end(OperationEnd{}) // a no-op
}

type nilEnd struct{}

// Start returns no end function.
func (nilEnd) Start(ctx context.Context, _ Operation) (context.Context, func(OperationEnd)) {
	return ctx, nil
}

// TestKindName checks the kind part of the method names of gets and lists.
func TestKindName(t *testing.T) {
	for k, want := range map[Kind]string{KindFact: "Fact", KindMessage: "Message", "": ""} {
		if got := kindName(k); got != want || strings.ToLower(got) != string(k) {
			t.Errorf("kindName(%q) = %q; want %q", k, got, want)
		}
	}
}

// TestObserverSeesLockWaits checks OperationEnd.LockWait: a write that waited for
// another writer of the same memory reports about as long as that writer held the
// lock, and one that did not wait reports none.
func TestObserverSeesLockWaits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rec := &recorder{}
	c, _ := open(t, func(cfg *Config) {
		cfg.Backend = sqlite.Options{Path: dir}
		cfg.Observer = rec
	})
	if _, err := c.WriteFact(ctx, Fact{Text: "Nobody else writes yet"}); err != nil {
		t.Fatal(err)
	}
	if ops := rec.take(); len(ops) != 1 || ops[0].End.LockWait != 0 {
		t.Fatalf("a write nobody held up: %+v; want one operation with no lock wait", ops)
	}
	const held = 80 * time.Millisecond
	testkit.HoldWriteLock(t, dir, held)
	if _, err := c.WriteFact(ctx, Fact{Text: "This write waits for the other writer"}); err != nil {
		t.Fatal(err)
	}
	ops := rec.take()
	if len(ops) != 1 || ops[0].End.LockWait < held/2 || ops[0].End.LockWait > 10*held {
		t.Fatalf("a write held up for %v: %+v; want one operation with a lock wait near it", held, ops)
	}
}
