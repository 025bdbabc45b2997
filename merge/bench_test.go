package merge

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
)

// BenchmarkPlan plans a Native merge of 100 source changes, half updates of facts and
// half new facts with 384-dimension embeddings, as a dry run on a scripted store: the
// engine's own cost, without the store's diff and apply.
func BenchmarkPlan(b *testing.B) {
	const changes, dims = 100, 384
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	d := &store.Diff{Source: "src", Target: "main", Base: "main", TargetHead: 7}
	for i := range changes {
		emb := make([]float32, dims)
		emb[i%dims] = 1
		after := store.Fact{ID: fmt.Sprintf("f%03d", i), Text: fmt.Sprintf("fact %d", i), Embedding: emb,
			Status: store.FactActive, Confidence: 1, CreatedAt: at, UpdatedAt: at}
		ch := store.Change{Ref: store.RefOf(after), Op: store.OpAdded, After: after}
		if i%2 == 0 {
			before := after
			before.Text = "old " + after.Text
			ch.Op, ch.Before = store.OpUpdated, before
		}
		d.SourceChanges = append(d.SourceChanges, ch)
	}
	e := &Engine{Store: newFake(d), NewID: func() string { return "m1" }, Now: func() time.Time { return at }}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.Merge(ctx, Request{Source: "src", Target: "main", DryRun: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Plan.Puts) != changes {
			b.Fatalf("%d puts, want %d", len(res.Plan.Puts), changes)
		}
	}
}
