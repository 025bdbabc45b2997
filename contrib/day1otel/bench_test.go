package day1otel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/contrib/day1otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkOverhead measures what observing costs a write and a search on the
// embedded store: with no Observer, and with a day1otel Observer over no-op
// providers (the cost of the instrumentation itself, whatever is installed). Each
// Client starts with the same 2,000 facts; run it with a fixed count, such as
// -benchtime 2000x, so that both arms search memories of the same size.
func BenchmarkOverhead(b *testing.B) {
	noop, err := day1otel.New(day1otel.WithTracerProvider(tracenoop.NewTracerProvider()), day1otel.WithMeterProvider(metricnoop.NewMeterProvider()))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		obs  day1.Observer
	}{{"none", nil}, {"noop", noop}} {
		ctx := context.Background()
		client, err := day1.Open(ctx, day1.Config{Observer: c.obs})
		if err != nil {
			b.Fatal(err)
		}
		preload := make([]day1.Fact, 2000)
		for i := range preload {
			preload[i] = day1.Fact{Text: fmt.Sprintf("worker %d drains queue %d every %d minutes", i, i%37, i%90)}
		}
		if _, err := client.WriteFacts(ctx, preload); err != nil {
			b.Fatal(err)
		}
		b.Run("write/"+c.name, func(b *testing.B) {
			for i := range b.N {
				if _, err := client.WriteFact(ctx, day1.Fact{Text: fmt.Sprintf("service %d keeps its cache for %d hours", i, i%48)}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("search/"+c.name, func(b *testing.B) {
			for i := range b.N {
				if _, err := client.Search(ctx, day1.SearchQuery{Text: fmt.Sprintf("cache hours service %d", i%1000)}); err != nil {
					b.Fatal(err)
				}
			}
		})
		client.Close()
	}
}

// BenchmarkStart measures one operation's observing alone (Start and its end) over
// no-op providers, to set beside the cost of the operations in BenchmarkOverhead.
func BenchmarkStart(b *testing.B) {
	obs, err := day1otel.New(day1otel.WithTracerProvider(tracenoop.NewTracerProvider()), day1otel.WithMeterProvider(metricnoop.NewMeterProvider()))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	op := day1.Operation{Name: day1.OpSearchMemory, Method: "Search", Store: "memstore", Branch: "main", Query: "cache"}
	b.ReportAllocs()
	for range b.N {
		_, end := obs.Start(ctx, op)
		end(day1.OperationEnd{Records: 10})
	}
}
