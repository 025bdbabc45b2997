package day1otel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/contrib/day1otel"
	"github.com/day1ai/day1/internal/testkit"
	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// setup opens a Client on the embedded in-memory store, observed by a day1otel
// Observer over an SDK tracer with an in-memory recorder and a meter with a manual
// reader.
func setup(t *testing.T, opts ...day1otel.Option) (*day1.Client, *tracetest.SpanRecorder, *sdktrace.TracerProvider, *sdkmetric.ManualReader) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	obs, err := day1otel.New(append([]day1otel.Option{day1otel.WithTracerProvider(tp), day1otel.WithMeterProvider(mp)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := day1.Open(context.Background(), day1.Config{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, spans, tp, reader
}

// attrs returns a span's attributes as a map of their values' strings.
func attrs(kvs []attribute.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.Emit()
	}
	return out
}

// TestSpansOfWriteSearchAndMerge checks the names, attributes and parents of the
// spans of a write, a search, a branch, a batch write and a merge under a caller's span.
func TestSpansOfWriteSearchAndMerge(t *testing.T) {
	c, spans, tp, _ := setup(t)
	// The caller's own span is the parent of day1's.
	ctx, parent := tp.Tracer("caller").Start(context.Background(), "handle request")
	if _, err := c.WriteFact(ctx, day1.Fact{ID: "ttl", Text: "The cache TTL is 12 hours"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Search(ctx, day1.SearchQuery{Text: "cache TTL"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Branch(ctx, "fix", day1.BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFacts(ctx, []day1.Fact{{Branch: "fix", Text: "Deploys run on Fridays"}, {Branch: "fix", Text: "Logs are kept 30 days"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Merge(ctx, day1.MergeRequest{Source: "fix", Target: day1.DefaultBranch}); err != nil {
		t.Fatal(err)
	}
	parent.End()

	type span struct {
		Name   string
		Parent string
		Attrs  map[string]string
		Status codes.Code
	}
	byID := map[string]string{}
	for _, s := range spans.Ended() {
		byID[s.SpanContext().SpanID().String()] = s.Name()
	}
	var got []span
	for _, s := range spans.Ended() {
		if s.Name() == "handle request" {
			continue
		}
		got = append(got, span{s.Name(), byID[s.Parent().SpanID().String()], attrs(s.Attributes()), s.Status().Code})
	}
	want := []span{
		{"create_memory memstore", "handle request", map[string]string{
			"gen_ai.operation.name": "create_memory", "gen_ai.memory.store.id": "memstore", "day1.method": "WriteFacts",
			"day1.branch": "main", "gen_ai.memory.record.id": "ttl", "gen_ai.memory.records": "1"}, codes.Unset},
		{"search_memory memstore", "handle request", map[string]string{
			"gen_ai.operation.name": "search_memory", "gen_ai.memory.store.id": "memstore", "day1.method": "Search",
			"day1.branch": "main", "gen_ai.memory.records": "1"}, codes.Unset},
		{"day1.branch memstore", "handle request", map[string]string{
			"gen_ai.operation.name": "day1.branch", "gen_ai.memory.store.id": "memstore", "day1.method": "Branch",
			"day1.branch": "fix", "gen_ai.memory.records": "0"}, codes.Unset},
		{"create_memory memstore", "handle request", map[string]string{
			"gen_ai.operation.name": "create_memory", "gen_ai.memory.store.id": "memstore", "day1.method": "WriteFacts",
			"day1.branch": "fix", "gen_ai.memory.records": "2"}, codes.Unset},
		{"day1.merge memstore", "handle request", map[string]string{
			"gen_ai.operation.name": "day1.merge", "gen_ai.memory.store.id": "memstore", "day1.method": "Merge",
			"day1.branch": "fix", "day1.target": "main", "gen_ai.memory.records": "2", "day1.merge.conflicts": "0"}, codes.Unset},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

// TestQueryTextIsOptIn checks that a search's text is recorded only when asked, and
// that WithStoreID names the store.
func TestQueryTextIsOptIn(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint(on), func(t *testing.T) {
			c, spans, _, _ := setup(t, day1otel.WithQueryText(on), day1otel.WithStoreID("team-memory"))
			if _, err := c.Search(context.Background(), day1.SearchQuery{Text: "who owns billing"}); err != nil {
				t.Fatal(err)
			}
			s := spans.Ended()[0]
			a := attrs(s.Attributes())
			if got, ok := a["gen_ai.memory.query.text"]; ok != on || on && got != "who owns billing" {
				t.Errorf("query text attribute = %q, present %v; want present %v", got, ok, on)
			}
			if s.Name() != "search_memory team-memory" || a["gen_ai.memory.store.id"] != "team-memory" {
				t.Errorf("span %q with store id %q; want the store named by WithStoreID", s.Name(), a["gen_ai.memory.store.id"])
			}
		})
	}
}

// TestFailedOperations checks the spans of a failed read and of a merge refused for a
// conflict (status, error.type, the recorded error, the conflict count) and the
// metrics recorded for every operation.
func TestFailedOperations(t *testing.T) {
	c, spans, _, reader := setup(t)
	ctx := context.Background()
	if _, err := c.GetFact(ctx, "", "missing"); !errors.Is(err, day1.ErrNotFound) {
		t.Fatalf("GetFact = %v; want ErrNotFound", err)
	}
	// A merge that meets a conflict under the fail policy.
	if _, err := c.WriteFact(ctx, day1.Fact{ID: "port", Text: "The API listens on port 8080"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Branch(ctx, "b", day1.BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []day1.Fact{{ID: "port", Branch: "b", Text: "The API listens on port 9090"}, {ID: "port", Text: "The API listens on port 7070"}} {
		if _, err := c.WriteFact(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Merge(ctx, day1.MergeRequest{Source: "b", Target: day1.DefaultBranch}); !errors.Is(err, day1.ErrConflict) {
		t.Fatalf("Merge = %v; want ErrConflict", err)
	}
	ended := spans.Ended()
	get, merge := ended[0], ended[len(ended)-1]
	if a := attrs(get.Attributes()); get.Status().Code != codes.Error || a["error.type"] != "not_found" || len(get.Events()) != 1 {
		t.Errorf("failed GetFact span: status %v, error.type %q, %d events; want Error, not_found and the error recorded",
			get.Status().Code, a["error.type"], len(get.Events()))
	}
	if a := attrs(merge.Attributes()); merge.Status().Code != codes.Error || a["error.type"] != "conflict" || a["day1.merge.conflicts"] != "1" {
		t.Errorf("conflicting merge span: status %v, attributes %v; want Error, conflict and 1 conflict", merge.Status().Code, a)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	counts := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					sums[m.Name] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if e, _ := p.Attributes.Value("error.type"); e.AsString() != "" {
						counts[m.Name+" "+e.AsString()] += p.Count
					} else {
						counts[m.Name] += p.Count
					}
				}
			}
		}
	}
	want := map[string]uint64{
		"gen_ai.memory.operation.duration":           4, // three writes and a branch
		"gen_ai.memory.operation.duration not_found": 1,
		"gen_ai.memory.operation.duration conflict":  1,
	}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("durations recorded (-want +got):\n%s", diff)
	}
	if sums["day1.records"] != 3 || sums["day1.merge.conflicts"] != 1 {
		t.Errorf("counters %v; want 3 records and 1 merge conflict", sums)
	}
}

// TestErrorType checks the classification of wrapped sentinels, a context's end and
// other errors.
func TestErrorType(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("wrapped: %w", day1.ErrStale): "stale",
		context.DeadlineExceeded:                 "deadline_exceeded",
		errors.New("disk on fire"):               "_OTHER",
	} {
		if got := day1otel.ErrorType(err); got != want {
			t.Errorf("ErrorType(%v) = %q; want %q", err, got, want)
		}
	}
}

// TestLockWaitAndDiskSize checks the metrics of a durable memory: a write held up by
// another writer records its wait in day1.lock.wait and on its span, and the gauge
// day1.store.size reports the bytes on disk until it is stopped.
func TestLockWaitAndDiskSize(t *testing.T) {
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer tp.Shutdown(ctx)
	defer mp.Shutdown(ctx)
	obs, err := day1otel.New(day1otel.WithTracerProvider(tp), day1otel.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, err := day1.Open(ctx, day1.Config{Path: dir, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stop, err := obs.ObserveDiskSize(c)
	if err != nil {
		t.Fatal(err)
	}

	testkit.HoldWriteLock(t, dir, 50*time.Millisecond)
	if _, err := c.WriteFact(ctx, day1.Fact{Text: "This write waits for another writer"}); err != nil {
		t.Fatal(err)
	}
	ended := spans.Ended()
	if a := attrs(ended[len(ended)-1].Attributes()); a["day1.lock.wait"] == "" {
		t.Errorf("the write's span has no day1.lock.wait: %v", a)
	}

	collect := func() (waits uint64, size int64, sized bool) {
		t.Helper()
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(ctx, &rm); err != nil {
			t.Fatal(err)
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case metricdata.Histogram[float64]:
					if m.Name == "day1.lock.wait" {
						for _, p := range d.DataPoints {
							waits += p.Count
						}
					}
				case metricdata.Gauge[int64]:
					if m.Name == "day1.store.size" {
						for _, p := range d.DataPoints {
							size, sized = p.Value, true
						}
					}
				}
			}
		}
		return waits, size, sized
	}
	waits, size, sized := collect()
	want, err := c.DiskSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if waits != 1 || !sized || size != want {
		t.Errorf("lock waits %d, store size %d (reported %v); want 1 wait and %d bytes", waits, size, sized, want)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, _, sized := collect(); sized {
		t.Error("the store size is still reported after stop")
	}
}
