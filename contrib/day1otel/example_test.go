package day1otel_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/contrib/day1otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A Client whose operations are traced: each write and search is a span, a child of
// the caller's span.
func Example() {
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(ctx)

	obs, err := day1otel.New(day1otel.WithTracerProvider(tp))
	if err != nil {
		log.Fatal(err)
	}
	client, err := day1.Open(ctx, day1.Config{Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	ctx, span := tp.Tracer("agent").Start(ctx, "agent turn")
	if _, err := client.WriteFact(ctx, day1.Fact{Text: "The gateway terminates TLS"}); err != nil {
		log.Fatal(err)
	}
	if _, err := client.Search(ctx, day1.SearchQuery{Text: "who terminates TLS"}); err != nil {
		log.Fatal(err)
	}
	span.End()

	for _, s := range spans.Ended() {
		fmt.Println(s.Name())
	}
	// Output:
	// create_memory memstore
	// search_memory memstore
	// agent turn
}
