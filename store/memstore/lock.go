package memstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/day1ai/day1/store"
)

// DefaultLockTimeout is Options.LockTimeout when it is zero: how long a commit waits
// for the commits of other processes (and of other stores in this process) on the
// same directory before it fails with store.ErrLocked.
const DefaultLockTimeout = 30 * time.Second

// commitLock serialises the commits of every store open on one directory: those of
// this process, through a semaphore shared by the stores that opened the directory
// here, and those of other processes, through an exclusive lock on the directory's
// LOCK file. It is held only while one commit reads in what others committed, decides
// and appends; a process that dies holding it loses it to the system at once.
type commitLock struct {
	sem  *dirSem
	f    *os.File // the LOCK file, locked only while held
	mu   sync.Mutex
	shut bool
}

// dirSem is the semaphore of one directory in this process.
type dirSem struct {
	c    chan struct{}
	refs int
}

// dirSems holds the semaphores of the directories open in this process, by absolute
// path: the file locks of some systems do not tell two opens of one process apart.
var dirSems = struct {
	sync.Mutex
	m map[string]*dirSem
}{m: map[string]*dirSem{}}

// dirKey returns the key of dir in dirSems: its absolute path, links resolved.
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

// openCommitLock opens the commit lock of dir, creating its LOCK file if needed. It
// takes no lock.
func openCommitLock(dir string) (*commitLock, error) {
	key, err := dirKey(dir)
	if err != nil {
		return nil, fmt.Errorf("day1: memstore: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return nil, fmt.Errorf("day1: memstore: %s cannot be written (%w): open it with ReadOnly to read it", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("day1: memstore: opening the lock file: %w", err)
	}
	dirSems.Lock()
	defer dirSems.Unlock()
	sem := dirSems.m[key]
	if sem == nil {
		sem = &dirSem{c: make(chan struct{}, 1)}
		dirSems.m[key] = sem
	}
	sem.refs++
	return &commitLock{sem: sem, f: f}, nil
}

// acquire takes the lock, waiting up to timeout and while ctx is not done. A wait that
// ends unfulfilled wraps store.ErrLocked and, when ctx ended it, ctx's error.
func (l *commitLock) acquire(ctx context.Context, timeout time.Duration, dir string) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	refused := func(cause error) error {
		if cause != nil {
			return fmt.Errorf("%w: %s: stopped waiting for another commit: %w", store.ErrLocked, dir, cause)
		}
		return fmt.Errorf("%w: %s: another commit held the lock for longer than %v (LockTimeout)", store.ErrLocked, dir, timeout)
	}
	select {
	case l.sem.c <- struct{}{}:
	case <-ctx.Done():
		return refused(ctx.Err())
	case <-timer.C:
		return refused(nil)
	}
	wait := 100 * time.Microsecond
	for {
		l.mu.Lock()
		if l.shut {
			l.mu.Unlock()
			<-l.sem.c
			return store.ErrClosed
		}
		err := lockFile(l.f)
		l.mu.Unlock()
		if err == nil {
			return nil
		}
		if !errors.Is(err, errLockHeld) {
			<-l.sem.c
			return fmt.Errorf("day1: memstore: locking %s: %w", dir, err)
		}
		pause := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			pause.Stop()
			<-l.sem.c
			return refused(ctx.Err())
		case <-timer.C:
			pause.Stop()
			<-l.sem.c
			return refused(nil)
		case <-pause.C:
		}
		wait = min(2*wait, 5*time.Millisecond)
	}
}

// release lets the lock go: the file lock first, then this process's semaphore.
func (l *commitLock) release() {
	unlockFile(l.f)
	<-l.sem.c
}

// close closes the lock file; later acquires fail with store.ErrClosed. The lock must
// not be held.
func (l *commitLock) close(dir string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shut {
		return
	}
	l.shut = true
	l.f.Close()
	dirSems.Lock()
	defer dirSems.Unlock()
	if key, err := dirKey(dir); err == nil && dirSems.m[key] == l.sem {
		if l.sem.refs--; l.sem.refs == 0 {
			delete(dirSems.m, key)
		}
	}
}

// errLockHeld is what lockFile returns when another process holds the lock.
var errLockHeld = errors.New("lock held elsewhere")
