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
// operation may be retried.
func (e *Error) Retryable() bool { return transient(e.Err) }

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

// retryPolicy is how idempotent operations retry transient failures: exponential
// backoff from 20 ms, at most 6 attempts and 5 seconds in all.
func retryPolicy(ctx context.Context) backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 20 * time.Millisecond
	b.MaxInterval = time.Second
	b.MaxElapsedTime = 5 * time.Second
	return backoff.WithContext(backoff.WithMaxRetries(b, 5), ctx)
}

// retry runs an idempotent operation, again after a transient failure.
func retry[T any](ctx context.Context, op func() (T, error)) (T, error) {
	return backoff.RetryWithData(func() (T, error) {
		v, err := op()
		if err != nil && !store.IsRetryable(err) {
			return v, backoff.Permanent(err)
		}
		return v, err
	}, retryPolicy(ctx))
}
