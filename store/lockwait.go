package store

import (
	"context"
	"sync/atomic"
	"time"
)

// LockWait adds up how long the store calls made with one context waited for the
// writes of others: for the write lock a durable embedded store shares between its
// Clients and processes. The Client reports it to its Observer
// (day1.OperationEnd.LockWait).
type LockWait struct{ ns atomic.Int64 }

type lockWaitKey struct{}

// WithLockWait returns a context whose store calls add their waits to w.
func WithLockWait(ctx context.Context, w *LockWait) context.Context {
	return context.WithValue(ctx, lockWaitKey{}, w)
}

// NoteLockWait adds d to the LockWait of ctx, if it has one. Stores call it after
// a wait for another writer, whether or not the wait ended with the lock.
func NoteLockWait(ctx context.Context, d time.Duration) {
	if w, ok := ctx.Value(lockWaitKey{}).(*LockWait); ok && d > 0 {
		w.ns.Add(int64(d))
	}
}

// Total is how long the calls waited, all together.
func (w *LockWait) Total() time.Duration { return time.Duration(w.ns.Load()) }
