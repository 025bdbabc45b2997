package matrixone

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1/store"
)

// MySQL and MatrixOne error numbers the store recognises.
const (
	errDupEntry        = 1062 // ER_DUP_ENTRY
	errLockWaitTimeout = 1205 // ER_LOCK_WAIT_TIMEOUT
	errDeadlock        = 1213 // ER_LOCK_DEADLOCK
	errTooManyConns    = 1040 // ER_CON_COUNT_ERROR
	errServerShutdown  = 1053 // ER_SERVER_SHUTDOWN
	errGoneAway        = 2006 // CR_SERVER_GONE_ERROR
	errLostConn        = 2013 // CR_SERVER_LOST
	errQueryKilled     = 1317 // ER_QUERY_INTERRUPTED
	errNoSuchTable     = 1146 // ER_NO_SUCH_TABLE
	errMOTxnNeedRetry  = 20620
	errMOTxnWWConflict = 20621
)

// Error is a failure reported by the MatrixOne server or the connection to it. It
// wraps a store sentinel (when one applies) and the driver's error, so both
// errors.Is(err, store.ErrBranchExists) and errors.As(err, new(*mysql.MySQLError)) work.
// Retryable reports whether the failure is transient.
type Error struct {
	Op       string // the store operation, e.g. "Put"
	Sentinel error  // a store sentinel, or nil
	Err      error  // the driver's error
}

// Error returns "day1: matrixone: <op>: <cause>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("day1: matrixone: ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	if e.Sentinel != nil {
		b.WriteString(strings.TrimPrefix(e.Sentinel.Error(), "day1: "))
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the sentinel and the driver's error.
func (e *Error) Unwrap() []error {
	if e.Sentinel == nil {
		return []error{e.Err}
	}
	return []error{e.Sentinel, e.Err}
}

// Retryable reports whether the failure is transient (a lost connection, a deadlock, a
// lock wait timeout, a busy server, a transaction conflict) so that an idempotent
// operation may be retried. ErrCommitUnknown is not: the write may have applied.
func (e *Error) Retryable() bool {
	return !errors.Is(e.Sentinel, ErrCommitUnknown) && transient(e.Err)
}

// transient classifies driver and server errors.
func transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) {
		return true
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case errLockWaitTimeout, errDeadlock, errTooManyConns, errServerShutdown, errGoneAway, errLostConn,
			errMOTxnNeedRetry, errMOTxnWWConflict:
			return true
		}
		msg := strings.ToLower(me.Message)
		return strings.Contains(msg, "txn need retry") || strings.Contains(msg, "w-w conflict") ||
			strings.Contains(msg, "server is busy") || strings.Contains(msg, "backend") && strings.Contains(msg, "unavailable")
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "connection reset") || strings.Contains(msg, "broken pipe") ||
		strings.Contains(msg, "connection refused") || strings.Contains(msg, "unexpected eof")
}

// isDup reports a duplicate-key error.
func isDup(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == errDupEntry
}

// wrap turns a driver error into an *Error, or returns ctx's error when the context
// ended (the driver then reports a closed connection or an interrupted query). Errors
// that are already the store's own (sentinels, validation errors, *Error) pass through.
func wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if ctx != nil && ctx.Err() != nil {
		return fmt.Errorf("day1: matrixone: %s: %w", op, ctx.Err())
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || own(err) {
		return err
	}
	return &Error{Op: op, Err: err}
}

// own reports whether err was made by this package or the store package.
func own(err error) bool {
	var e *Error
	var ve *store.ValidationError
	if errors.As(err, &e) || errors.As(err, &ve) {
		return true
	}
	for _, s := range []error{store.ErrNotFound, store.ErrBranchExists, store.ErrSnapshotExists, store.ErrBranchArchived,
		store.ErrInvalidArgument, store.ErrConflict, store.ErrStale, store.ErrClosed, store.ErrNotSupported, store.ErrTooOld} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// withSentinel wraps a driver error and marks it with a store sentinel.
func withSentinel(op string, sentinel, err error) error {
	return &Error{Op: op, Sentinel: sentinel, Err: err}
}

// ErrCommitUnknown is the error of a write whose COMMIT was sent but whose answer was
// lost (the connection dropped, the server died or the context ended), when the store
// could not learn within Options.RetryTimeout whether the transaction committed. The
// write is then either wholly applied or not at all; read it back to know. It is
// wrapped in an *Error, with the driver's (or the context's) error.
var ErrCommitUnknown = errors.New("day1: matrixone: the outcome of a commit is unknown: the connection was lost after COMMIT was sent and the store could not check it; read the data back to learn whether it applied")

// ambiguous reports whether a COMMIT that failed with err may still have committed: the
// connection failed (or the context ended) rather than the server answering with an
// error.
func ambiguous(err error) bool {
	var me *mysql.MySQLError
	return err != nil && !errors.As(err, &me)
}

// minRetryInterval and maxRetryInterval bound the pause between two attempts.
const (
	minRetryInterval = 20 * time.Millisecond
	maxRetryInterval = time.Second
)

// retryPolicy is how operations retry transient failures: exponential backoff from 20
// ms to at most a second between attempts, for at most total in all, stopped by ctx.
func retryPolicy(ctx context.Context, total time.Duration) backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = minRetryInterval
	b.MaxInterval = maxRetryInterval
	b.MaxElapsedTime = total
	return backoff.WithContext(b, ctx)
}

// retry runs an idempotent operation, again after a transient failure (see the package
// documentation, "Errors and retries").
func (s *Store) retry(ctx context.Context, op string, fn func() error) error {
	attempt := 0
	err := backoff.RetryNotify(func() error {
		attempt++
		err := fn()
		if err != nil && !store.IsRetryable(err) {
			return backoff.Permanent(err)
		}
		return err
	}, retryPolicy(ctx, s.opts.RetryTimeout), func(err error, wait time.Duration) {
		store.Logger(s.opts.Logger).Warn("day1: matrixone: retrying after a transient failure", "op", op,
			"attempt", attempt, "wait", wait, "err", err)
	})
	if err != nil && ctx.Err() != nil && !own(err) {
		return fmt.Errorf("day1: matrixone: %s: %w", op, ctx.Err())
	}
	return err
}

// retryIdempotent runs an idempotent operation (a read, an upsert), again after a transient failure.
func retryIdempotent[T any](ctx context.Context, s *Store, op string, fn func() (T, error)) (T, error) {
	var v T
	err := s.retry(ctx, op, func() error {
		var err error
		v, err = fn()
		return err
	})
	return v, err
}
