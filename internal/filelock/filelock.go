// Package filelock serialises the commits of every process that writes one folder:
// an exclusive lock on a file in the folder (flock, fcntl or LockFileEx, as the
// system has), taken with a timeout and the caller's context, and a semaphore per
// process and folder, so that the stores of one process queue without polling the
// file. A process that dies holding the lock loses it to the system at once. The
// embedded stores (store/memstore, store/sqlite) take it around each commit.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/day1ai/day1/store"
)

// Lock serialises the commits of every store open on one directory: those of
// this process, through a semaphore shared by the stores that opened the directory
// here, and those of other processes, through an exclusive lock on the directory's
// lock file (flock, fcntl or LockFileEx, as the system has). The LOCK file is open
// once per process and directory, shared by those stores: fcntl locks belong to the
// process and end when any of its descriptors of the file closes. The lock is held
// only while one commit reads in what others committed, decides and appends; a
// process that dies holding it loses it to the system at once. On systems without
// file locks (plan9, js, wasip1) only the semaphore applies: there, one process at
// a time may write a directory.
type Lock struct {
	dir  *lockDir
	key  string
	mu   sync.Mutex
	shut bool
}

// lockDir is what this process holds of one directory: the semaphore and the open
// LOCK file.
type lockDir struct {
	sem  chan struct{}
	f    *os.File
	refs int
}

// lockDirs holds the directories open in this process, by absolute path.
var lockDirs = struct {
	sync.Mutex
	m map[string]*lockDir
}{m: map[string]*lockDir{}}

// dirKey returns the key of dir in lockDirs: its absolute path, links resolved.
func dirKey(dir string) (string, error) {
	key, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(key); err == nil {
		key = real
	}
	return key, nil
}

// Open opens the commit lock of dir, creating its lock file (name) if needed. It
// takes no lock.
func Open(dir, name string) (*Lock, error) {
	key, err := dirKey(dir)
	if err != nil {
		return nil, fmt.Errorf("day1: %w", err)
	}
	lockDirs.Lock()
	defer lockDirs.Unlock()
	d := lockDirs.m[key]
	if d == nil {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_RDWR, 0o644)
		if errors.Is(err, fs.ErrPermission) || ReadOnlyFS(err) {
			return nil, fmt.Errorf("day1: %s cannot be written (%w): open it with ReadOnly to read it", dir, err)
		}
		if err != nil {
			return nil, fmt.Errorf("day1: opening the lock file: %w", err)
		}
		d = &lockDir{sem: make(chan struct{}, 1), f: f}
		lockDirs.m[key] = d
	}
	d.refs++
	return &Lock{dir: d, key: key}, nil
}

// Acquire takes the lock, waiting up to timeout and while ctx is not done. A wait that
// ends unfulfilled wraps store.ErrLocked and, when ctx ended it, ctx's error. A wait
// for another holder, in this process or another, is added to ctx's store.LockWait.
func (l *Lock) Acquire(ctx context.Context, timeout time.Duration, dir string) (err error) {
	var began time.Time // set when the lock was not free at once
	defer func() {
		if !began.IsZero() {
			store.NoteLockWait(ctx, time.Since(began))
		}
	}()
	l.mu.Lock()
	shut := l.shut
	l.mu.Unlock()
	if shut {
		return store.ErrClosed
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	refused := func(cause error) error {
		if cause != nil {
			return fmt.Errorf("%w: %s: stopped waiting for another commit: %w", store.ErrLocked, dir, cause)
		}
		return fmt.Errorf("%w: %s: another commit held the lock for longer than %v (LockTimeout)", store.ErrLocked, dir, timeout)
	}
	select {
	case l.dir.sem <- struct{}{}:
	default:
		began = time.Now()
		select {
		case l.dir.sem <- struct{}{}:
		case <-ctx.Done():
			return refused(ctx.Err())
		case <-timer.C:
			return refused(nil)
		}
	}
	// The file is locked and unlocked only by the holder of the semaphore, and
	// closed only when no store of this process has the directory open.
	wait := 100 * time.Microsecond
	for {
		l.mu.Lock()
		shut := l.shut
		l.mu.Unlock()
		if shut {
			<-l.dir.sem
			return store.ErrClosed
		}
		err := LockFile(l.dir.f)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrHeld) {
			<-l.dir.sem
			return fmt.Errorf("day1: locking %s: %w", dir, err)
		}
		if began.IsZero() {
			began = time.Now()
		}
		pause := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			pause.Stop()
			<-l.dir.sem
			return refused(ctx.Err())
		case <-timer.C:
			pause.Stop()
			<-l.dir.sem
			return refused(nil)
		case <-pause.C:
		}
		wait = min(2*wait, 5*time.Millisecond)
	}
}

// Release lets the lock go: the file lock first, then this process's semaphore.
func (l *Lock) Release() {
	UnlockFile(l.dir.f)
	<-l.dir.sem
}

// Close lets the directory go; the last store of this process to close it closes the
// LOCK file. Later acquires fail with store.ErrClosed. The lock must not be held.
func (l *Lock) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shut {
		return
	}
	l.shut = true
	lockDirs.Lock()
	defer lockDirs.Unlock()
	if l.dir.refs--; l.dir.refs == 0 {
		l.dir.f.Close()
		if lockDirs.m[l.key] == l.dir {
			delete(lockDirs.m, l.key)
		}
	}
}

// ErrHeld is what LockFile returns when another process holds the lock.
var ErrHeld = errors.New("lock held elsewhere")
