package day1otel

import (
	"context"
	"errors"
	"time"

	"github.com/day1ai/day1"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans and metrics: this module's path.
const ScopeName = "github.com/day1ai/day1/contrib/day1otel"

// Attribute keys, as the package documentation lists them.
const (
	KeyOperation = attribute.Key("gen_ai.operation.name")
	KeyStoreID   = attribute.Key("gen_ai.memory.store.id")
	KeyRecordID  = attribute.Key("gen_ai.memory.record.id")
	KeyQueryText = attribute.Key("gen_ai.memory.query.text")
	KeyRecords   = attribute.Key("gen_ai.memory.records")
	KeyMethod    = attribute.Key("day1.method")
	KeyBranch    = attribute.Key("day1.branch")
	KeyTarget    = attribute.Key("day1.target")
	KeyConflicts = attribute.Key("day1.merge.conflicts")
	KeyLockWait  = attribute.Key("day1.lock.wait") // seconds an operation waited for other writers
	KeyErrorType = attribute.Key("error.type")
)

// Option configures New.
type Option func(*config)

type config struct {
	tp        trace.TracerProvider
	mp        metric.MeterProvider
	storeID   string
	queryText bool
}

// WithTracerProvider makes the spans with tp instead of the global TracerProvider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider records the metrics with mp instead of the global MeterProvider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithStoreID names the memory in gen_ai.memory.store.id (a tenant, a path, a
// database): by default the store's name, as day1.Capabilities.Store gives it.
func WithStoreID(id string) Option {
	return func(c *config) { c.storeID = id }
}

// WithQueryText records each search's text in gen_ai.memory.query.text. Off by
// default: queries may hold what users said.
func WithQueryText(on bool) Option {
	return func(c *config) { c.queryText = on }
}

// Observer is a day1.Observer that traces and measures every operation of the
// Clients it is given to. It is safe for concurrent use, and one Observer may serve
// several Clients.
type Observer struct {
	tracer    trace.Tracer
	duration  metric.Float64Histogram
	records   metric.Int64Counter
	conflicts metric.Int64Counter
	lockWait  metric.Float64Histogram
	meter     metric.Meter
	storeID   string
	queryText bool
}

var _ day1.Observer = (*Observer)(nil)

// New returns an Observer over the providers the options name, the global ones by
// default. It fails only when the MeterProvider refuses an instrument.
func New(opts ...Option) (*Observer, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	meter := cfg.mp.Meter(ScopeName)
	o := &Observer{tracer: cfg.tp.Tracer(ScopeName), meter: meter, storeID: cfg.storeID, queryText: cfg.queryText}
	var err, e error
	o.duration, e = meter.Float64Histogram("gen_ai.memory.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("How long a day1 memory operation took."))
	err = errors.Join(err, e)
	o.records, e = meter.Int64Counter("day1.records", metric.WithUnit("{record}"),
		metric.WithDescription("Records that day1 operations wrote, returned, merged or imported."))
	err = errors.Join(err, e)
	o.conflicts, e = meter.Int64Counter("day1.merge.conflicts", metric.WithUnit("{conflict}"),
		metric.WithDescription("Conflicts that day1 merges met."))
	err = errors.Join(err, e)
	o.lockWait, e = meter.Float64Histogram("day1.lock.wait", metric.WithUnit("s"),
		metric.WithDescription("How long day1 operations that waited for the writes of other Clients and processes waited."))
	err = errors.Join(err, e)
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Start begins the span of an operation; the function it returns ends it and records
// the operation's metrics.
func (o *Observer) Start(ctx context.Context, op day1.Operation) (context.Context, func(day1.OperationEnd)) {
	store := o.storeID
	if store == "" {
		store = op.Store
	}
	common := []attribute.KeyValue{KeyOperation.String(op.Name), KeyStoreID.String(store), KeyMethod.String(op.Method)}
	attrs := append(make([]attribute.KeyValue, 0, len(common)+4), common...)
	if op.Branch != "" {
		attrs = append(attrs, KeyBranch.String(op.Branch))
	}
	if op.Target != "" {
		attrs = append(attrs, KeyTarget.String(op.Target))
	}
	if op.RecordID != "" {
		attrs = append(attrs, KeyRecordID.String(op.RecordID))
	}
	if o.queryText && op.Query != "" {
		attrs = append(attrs, KeyQueryText.String(op.Query))
	}
	name := op.Name
	if store != "" {
		name += " " + store
	}
	ctx, span := o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	began := time.Now()
	return ctx, func(end day1.OperationEnd) {
		took := time.Since(began).Seconds()
		span.SetAttributes(KeyRecords.Int(end.Records))
		if op.Name == day1.OpMerge || op.Name == day1.OpBundleImport {
			span.SetAttributes(KeyConflicts.Int(end.Conflicts))
		}
		if end.LockWait > 0 {
			span.SetAttributes(KeyLockWait.Float64(end.LockWait.Seconds()))
		}
		mattrs := common
		if end.Err != nil {
			kind := ErrorType(end.Err)
			span.RecordError(end.Err)
			span.SetStatus(codes.Error, end.Err.Error())
			span.SetAttributes(KeyErrorType.String(kind))
			mattrs = append(mattrs[:len(mattrs):len(mattrs)], KeyErrorType.String(kind))
		}
		span.End()
		set := metric.WithAttributeSet(attribute.NewSet(mattrs...))
		o.duration.Record(ctx, took, set)
		if end.Records > 0 {
			o.records.Add(ctx, int64(end.Records), set)
		}
		if end.Conflicts > 0 {
			o.conflicts.Add(ctx, int64(end.Conflicts), set)
		}
		if end.LockWait > 0 {
			o.lockWait.Record(ctx, end.LockWait.Seconds(), set)
		}
	}
}

// ErrorType classifies an operation's error as the error.type attribute names it: a
// day1 sentinel the error matches, the context's end, or "_OTHER".
func ErrorType(err error) string {
	for _, c := range []struct {
		err  error
		name string
	}{
		{day1.ErrNotFound, "not_found"},
		{day1.ErrConflict, "conflict"},
		{day1.ErrMergeBlocked, "merge_blocked"},
		{day1.ErrStale, "stale"},
		{day1.ErrInvalidArgument, "invalid"},
		{day1.ErrClosed, "closed"},
		{context.Canceled, "canceled"},
		{context.DeadlineExceeded, "deadline_exceeded"},
	} {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	return "_OTHER"
}

// ObserveDiskSize reports the bytes the durable embedded store of c takes on disk
// (day1.Client.DiskSize) as the gauge day1.store.size, read at each collection, until
// the returned function is called (or c is closed: a closed or in-memory Client
// reports nothing). The gauge's attribute is the store's id.
func (o *Observer) ObserveDiskSize(c *day1.Client) (stop func() error, err error) {
	if c == nil {
		return nil, errors.New("day1otel: ObserveDiskSize of a nil Client")
	}
	id := o.storeID
	if id == "" {
		id = c.Capabilities().Store
	}
	set := metric.WithAttributeSet(attribute.NewSet(KeyStoreID.String(id)))
	gauge, err := o.meter.Int64ObservableGauge("day1.store.size", metric.WithUnit("By"),
		metric.WithDescription("Bytes the durable embedded store takes on disk."))
	if err != nil {
		return nil, err
	}
	reg, err := o.meter.RegisterCallback(func(ctx context.Context, obs metric.Observer) error {
		if n, err := c.DiskSize(ctx); err == nil {
			obs.ObserveInt64(gauge, n, set)
		}
		return nil
	}, gauge)
	if err != nil {
		return nil, err
	}
	return reg.Unregister, nil
}
