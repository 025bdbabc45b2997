package store

import "context"

// A ProgressFunc hears how far a long store call has come: done steps of total (0
// while the total is unknown). What a step is depends on the call: a compaction
// counts the versions it has written to a checkpoint or dropped.
type ProgressFunc func(done, total int)

type progressKey struct{}

// WithProgress returns a context whose long store calls report their progress to fn.
// Stores call fn now and then from the goroutine of the call, never after it returns.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress tells the ProgressFunc of ctx, if it has one, that done steps of
// total are done.
func ReportProgress(ctx context.Context, done, total int) {
	if fn, ok := ctx.Value(progressKey{}).(ProgressFunc); ok && fn != nil {
		fn(done, total)
	}
}
