// Package day1otel traces and measures a day1 memory with OpenTelemetry: an
// Observer (day1.Config.Observer) that makes a span per public operation of a
// day1.Client and records its duration, the records it wrote or returned, the
// conflicts a merge met and how long it waited for other writers; and a gauge of the
// bytes a durable memory takes on disk.
//
// It is a module of its own, github.com/day1ai/day1/contrib/day1otel, so that the
// core module and its users pull no telemetry library.
//
//	obs, err := day1otel.New() // the global TracerProvider and MeterProvider
//	client, err := day1.Open(ctx, day1.Config{Path: "memory", Observer: obs})
//
// # Spans
//
// Each operation is one span named after it and the store, such as
// "search_memory memstore", a child of the span in the caller's context. The
// operations of memory follow the OpenTelemetry semantic conventions for generative
// AI memory: create_memory (every write of records), search_memory, get_memory (gets
// and lists), update_memory (a correction), delete_memory; day1's own are
// day1.branch, day1.diff, day1.merge, day1.snapshot, day1.handoff,
// day1.bundle.export, day1.bundle.import, day1.verify, day1.compact, day1.extract,
// day1.cherry_pick and day1.replay (see the day1.Op constants).
//
// Attributes:
//
//	gen_ai.operation.name     the operation
//	gen_ai.memory.store.id    WithStoreID, or the store's name ("memstore", "sqlite", "matrixone")
//	gen_ai.memory.record.id   the record the call names or writes, when it is one
//	gen_ai.memory.query.text  a search's text, only WithQueryText(true)
//	gen_ai.memory.records     the records written, returned, merged or imported
//	day1.method               the Client method, such as "WriteFacts"
//	day1.branch               the branch read or written; a merge's or diff's source
//	day1.target               a merge's or diff's target
//	day1.merge.conflicts      the conflicts a merge met
//	day1.lock.wait            seconds the call waited for other writers, when it did
//	error.type                for a failed call: not_found, conflict, invalid,
//	                          stale, merge_blocked, closed, canceled,
//	                          deadline_exceeded or _OTHER
//
// A failed call records its error on the span and sets the span's status to Error.
//
// # Metrics
//
//	gen_ai.memory.operation.duration  histogram, seconds, by operation, store, method and error.type
//	day1.records                      counter of the records operations wrote, returned, merged or imported
//	day1.merge.conflicts              counter of the conflicts merges met
//	day1.lock.wait                    histogram, seconds, of the waits of operations that waited for other writers
//	day1.store.size                   gauge, bytes, of a durable memory on disk (Observer.ObserveDiskSize)
//
// Both providers default to the global ones (otel.GetTracerProvider,
// otel.GetMeterProvider), as the OpenTelemetry Go instrumentation libraries do.
// With no provider installed, the global ones do nothing, cheaply.
package day1otel
