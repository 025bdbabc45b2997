package day1

import (
	"context"
	"strings"
	"time"

	"github.com/day1ai/day1/store"
)

// Observer watches the public operations of a Client (Config.Observer): it is told as
// each starts and again as it ends. It is the hook that tracing and metrics plug into;
// the module github.com/day1ai/day1/contrib/day1otel gives one that makes an OpenTelemetry
// span per operation and records its duration, records and conflicts, so that the core
// module depends on no telemetry library.
//
// Start runs before the operation and returns the context the operation runs in (a
// tracer puts its span there, so that what the operation calls with it, an embedder, a
// model or a merge resolver of one's own, finds that span as its parent) and the
// function the operation calls once, as it returns. The methods of the same Client
// that an operation runs on its way (the search of a write's contradiction check, the
// read and write of a correction) are part of it and are not reported on their own. Both run on the caller's goroutine and must
// be quick; an Observer is called from every goroutine that uses the Client, so it must
// be safe for concurrent use. A nil Config.Observer costs nothing.
type Observer interface {
	Start(ctx context.Context, op Operation) (context.Context, func(OperationEnd))
}

// Operation names one call of a public method, as an Observer sees it.
type Operation struct {
	// Name is what the call does: one of the Op constants.
	Name string
	// Method is the Client method called, such as "WriteFacts".
	Method string
	// Store names the store, as Capabilities.Store does ("memstore", "sqlite",
	// "matrixone", ...).
	Store string
	// Branch is the branch the call reads or writes; for a merge or a diff, its source.
	Branch string
	// Target is the other branch of a merge or a diff.
	Target string
	// RecordID is the record a call names or writes, when it is one.
	RecordID string
	// Query is a search's text. It may hold what users said: an Observer should report
	// it only when asked to.
	Query string
}

// OperationEnd is how an operation ended.
type OperationEnd struct {
	// Err is the error the call returned; nil when it succeeded.
	Err error
	// Records counts the records the call wrote, returned, merged or imported.
	Records int
	// Conflicts counts the conflicts a merge met (MergeResult.Diff.Conflicts).
	Conflicts int
	// LockWait is how long the call waited for the writes of other Clients and
	// processes on the same durable embedded memory (their turn on its write lock);
	// 0 when it did not wait, and on stores without such a lock.
	LockWait time.Duration
}

// The names of operations (Operation.Name). The first five are those of the
// OpenTelemetry semantic conventions for generative-AI memory; the others are day1's
// own.
const (
	OpCreateMemory = "create_memory" // a write of facts, observations, relations, conversations or messages
	OpSearchMemory = "search_memory" // Search
	OpGetMemory    = "get_memory"    // a Get or List read
	OpUpdateMemory = "update_memory" // CorrectFact
	OpDeleteMemory = "delete_memory" // Delete

	OpBranch       = "day1.branch"        // Branch, DeleteBranch
	OpDiff         = "day1.diff"          // Diff
	OpMerge        = "day1.merge"         // Merge
	OpSnapshot     = "day1.snapshot"      // Snapshot
	OpHandoff      = "day1.handoff"       // Handoff, AcceptHandoff
	OpBundleExport = "day1.bundle.export" // CreateBundle, WriteBundle
	OpBundleImport = "day1.bundle.import" // ImportBundle
	OpVerify       = "day1.verify"        // VerifyFact, VerifyBranch
	OpCompact      = "day1.compact"       // Compact
	OpExtract      = "day1.extract"       // ExtractFacts
	OpCherryPick   = "day1.cherry_pick"   // the CherryPick methods
	OpReplay       = "day1.replay"        // TaskReplay
)

// noEnd is the end of an operation nobody observes.
func noEnd(OperationEnd) {}

// observing marks the context of an operation the Client reports, with the Client.
type observing struct{}

// start tells Config.Observer that an operation starts and returns the context it
// runs in and the function to call as it ends. An operation that another one of the
// same Client runs (the GetFact and WriteFacts of a CorrectFact, the search of a
// write's contradiction check) is part of it and not reported on its own, so that
// counts of operations and records count what callers asked for.
func (c *Client) start(ctx context.Context, op Operation) (context.Context, func(OperationEnd)) {
	o := c.cfg.Observer
	if o == nil || ctx.Value(observing{}) == c {
		return ctx, noEnd
	}
	op.Store = c.name
	wait := new(store.LockWait)
	ctx, end := o.Start(store.WithLockWait(context.WithValue(ctx, observing{}, c), wait), op)
	if end == nil {
		return ctx, noEnd
	}
	return ctx, func(e OperationEnd) {
		e.LockWait = wait.Total()
		end(e)
	}
}

// writeOp is the operation of a write of records.
func writeOp[T store.Record](method string, in []T) Operation {
	op := Operation{Name: OpCreateMemory, Method: method, Branch: DefaultBranch}
	if len(in) > 0 {
		op.Branch = branchOrMain(in[0].RecordBranch())
		if len(in) == 1 {
			op.RecordID = in[0].RecordID()
		}
	}
	return op
}

// succeeded returns n, or 0 when err is not nil: the records of a call that acts on
// all of them or none.
func succeeded(err error, n int) int {
	if err != nil {
		return 0
	}
	return n
}

// kindName is a kind as it appears in method names: "Fact" for KindFact.
func kindName(k Kind) string {
	if k == "" {
		return ""
	}
	return strings.ToUpper(string(k[:1])) + string(k[1:])
}

// diffSize counts the changes of a diff, nil for none.
func diffSize(d *Diff) int {
	if d == nil {
		return 0
	}
	return len(d.SourceChanges) + len(d.TargetChanges)
}

// correctOp is the operation of a correction: a delete deletes, the others update.
func correctOp(fc FactCorrection) Operation {
	op := Operation{Name: OpUpdateMemory, Method: "CorrectFact", Branch: branchOrMain(fc.Branch), RecordID: fc.ID}
	if fc.Action == CorrectDelete {
		op.Name = OpDeleteMemory
	}
	return op
}
