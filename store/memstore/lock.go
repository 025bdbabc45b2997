package memstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/day1ai/day1/store"
)

// openDirs holds the directories this process has open, so that a second open in
// the same process is told so: the file lock of some systems does not see it.
var openDirs = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

// dirLock is the exclusive hold of one store directory.
type dirLock struct {
	f   *os.File
	key string
}

// lockDir takes the store directory for this process: an exclusive lock on its LOCK
// file, which another process holding it refuses at once. Both refusals wrap
// store.ErrLocked and say which case it is.
func lockDir(dir string) (*dirLock, error) {
	key, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("day1: memstore: %w", err)
	}
	if real, err := filepath.EvalSymlinks(key); err == nil {
		key = real
	}
	openDirs.Lock()
	defer openDirs.Unlock()
	if openDirs.m[key] {
		return nil, fmt.Errorf("%w: %s is already open in this process; share one Store (or Client) instead of opening it twice", store.ErrLocked, dir)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("day1: memstore: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLockHeld) {
			return nil, fmt.Errorf("%w: %s is open in another process; close it there first", store.ErrLocked, dir)
		}
		return nil, fmt.Errorf("day1: memstore: locking %s: %w", dir, err)
	}
	openDirs.m[key] = true
	return &dirLock{f: f, key: key}, nil
}

// lockDirWait is lockDir, retried while the directory is held elsewhere until timeout
// has passed or ctx is done. A timeout of 0 tries once.
func lockDirWait(ctx context.Context, dir string, timeout time.Duration) (*dirLock, error) {
	deadline := time.Now().Add(timeout)
	wait := 5 * time.Millisecond
	for {
		l, err := lockDir(dir)
		if err == nil || timeout <= 0 || !errors.Is(err, store.ErrLocked) {
			return l, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("%w (gave up after waiting %v)", err, timeout)
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (stopped waiting: %w)", err, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// release lets the directory go. The lock is undone before the descriptor is closed:
// a child process forked at that moment by another goroutine holds a copy of the
// descriptor until it starts its program, and the lock would last as long.
func (l *dirLock) release() {
	openDirs.Lock()
	delete(openDirs.m, l.key)
	openDirs.Unlock()
	unlockFile(l.f)
	l.f.Close()
}

// errLockHeld is what lockFile returns when another process holds the lock.
var errLockHeld = errors.New("lock held elsewhere")
