package merge

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/day1ai/day1/store"
)

const (
	src = "task/auth/agent-a"
	tgt = "task/auth"
)

var (
	t0  = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	t1  = t0.Add(time.Hour)
	now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

	// ignoreReasons leaves the free-text reasons out of a comparison.
	ignoreReasons = cmp.Options{
		cmpopts.IgnoreFields(store.MergeItem{}, "Reason"),
		cmpopts.IgnoreFields(store.Resolution{}, "Reason"),
	}
)

// testEngine returns an engine over fs with a fixed clock and ids id1, id2, ...: the
// merge record takes id1.
func testEngine(fs *fakeStore) *Engine {
	var n atomic.Int64
	return &Engine{
		Store: fs,
		NewID: func() string { return fmt.Sprintf("id%d", n.Add(1)) },
		Now:   func() time.Time { return now },
	}
}

func fact(id, text string) store.Fact {
	return store.Fact{ID: id, Text: text, Confidence: 0.8, Status: store.FactActive, CreatedAt: t0, UpdatedAt: t0}
}

func child(f store.Fact, parent string) store.Fact {
	f.ParentID = parent
	return f
}

func superseded(f store.Fact) store.Fact {
	f.Status = store.FactSuperseded
	return f
}

// supersededNow is f as the engine marks it superseded.
func supersededNow(f store.Fact) store.Fact {
	f.Status = store.FactSuperseded
	f.UpdatedAt = now
	return f
}

func withText(f store.Fact, text string) store.Fact {
	f.Text = text
	return f
}

func ref(r store.Record) store.Ref { return store.RefOf(r) }

func factRef(id string) store.Ref { return store.Ref{Kind: store.KindFact, ID: id} }

func added(r store.Record) store.Change {
	return store.Change{Ref: store.RefOf(r), Op: store.OpAdded, After: r}
}

func updated(before, after store.Record) store.Change {
	return store.Change{Ref: store.RefOf(after), Op: store.OpUpdated, Before: before, After: after}
}

func deleted(before store.Record) store.Change {
	return store.Change{Ref: store.RefOf(before), Op: store.OpDeleted, Before: before}
}

func bothChanged(s, t store.Change) store.Conflict {
	return store.Conflict{Ref: s.Ref, Reason: store.BothChanged, Source: s, Target: t}
}

func bothSuperseded(parent string, s, t store.Change) store.Conflict {
	return store.Conflict{Ref: factRef(parent), Reason: store.BothSuperseded, Source: s, Target: t}
}

// diffOf builds a diff of src into tgt at target head 7.
func diffOf(source, target []store.Change, conflicts ...store.Conflict) *store.Diff {
	return &store.Diff{Source: src, Target: tgt, Base: tgt, SourceChanges: source, TargetChanges: target, Conflicts: conflicts, TargetHead: 7}
}

// wantRecord is the merge record the test engine writes for a strategy, before items.
func wantRecord(s store.Strategy) store.MergeRecord {
	return store.MergeRecord{ID: "id1", Source: src, Target: tgt, Strategy: s, MergedBy: DefaultMergedBy, CreatedAt: now}
}

// wantPlan is the plan the test engine hands to ApplyMerge for a strategy, before writes.
func wantPlan(s store.Strategy) store.MergePlan {
	return store.MergePlan{Source: src, Target: tgt, ExpectHead: 7, Record: wantRecord(s)}
}
