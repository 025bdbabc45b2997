package memstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/day1ai/day1/internal/filelock"

	"github.com/day1ai/day1/store"
)

// A durable store is shared: any number of stores, in any number of processes, open
// one directory and write it. Each holds the whole store in memory and follows the
// log that all of them append to. A commit takes the directory's commit lock
// (filelock.Lock), reads in what the others appended since it last looked (catchUp),
// decides and applies its batch against that, appends it, and lets the lock go, so
// that every commit decides on every commit before it: dedupe, supersede, aliases,
// merge conflicts and document preconditions hold across processes as within one.
// Reads do not lock the file: before each read the store looks whether the log has
// grown (at most once every followEvery) and reads in the entries that have.

// DefaultLockTimeout is Options.LockTimeout when it is zero: how long a commit waits
// for the commits of other processes (and of other stores in this process) on the
// same directory before it fails with store.ErrLocked.
const DefaultLockTimeout = 30 * time.Second

// followEvery is the least time between two looks at the log before reads.
const followEvery = time.Millisecond

// staleWait is how long an open waits for the commit lock to remove the files a
// crashed compaction left, before it leaves them for later.
const staleWait = 50 * time.Millisecond

// openShared opens the durable store in dir for reading and writing beside the other
// stores that have it open: it loads the files without taking the commit lock, and
// takes it only to make the first log of a new directory, to add the main branch, or
// to remove what a crashed compaction left behind.
func (s *Store) openShared(ctx context.Context, dir string) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return store.Invalid("Options.Path", "is a file; a memory is a folder: name a new or empty folder, or the folder of a memory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("day1: memstore: %w", err)
	}
	if err := checkMemoryDir(dir); err != nil {
		return err
	}
	lock, err := filelock.Open(dir, lockName)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		lock.Close()
		return err
	}
	files, err := listFiles(dir)
	if err != nil {
		return fail(err)
	}
	if len(files.logs) == 0 && len(files.ckpts) == 0 {
		if err := s.createLog(ctx, lock, dir); err != nil {
			return fail(err)
		}
	}
	c, err := s.loadFollowing(dir, false)
	if err != nil {
		return fail(err)
	}
	s.log = &wal{dir: dir, f: c.f, gen: c.gen, size: c.off, seen: c.off, lock: lock, sync: s.opts.Sync}
	s.auto.maxGen, s.auto.ckptBytes, s.auto.logBytes = c.maxGen, c.ckptBytes, c.logBytes
	if _, ok := s.branches[store.DefaultBranch]; !ok {
		unlock, err := s.lockWrite(ctx)
		if err != nil {
			s.log.close()
			return err
		}
		err = s.addMain()
		unlock()
		if err != nil {
			s.log.close()
			return err
		}
	}
	if len(c.stale) > 0 {
		// Files of generations before the newest checkpoint: a load no longer reads
		// them, and a compaction still writing one of them is superseded. They go
		// under the lock when it is free at once; else a later open or compaction
		// removes them.
		tctx, cancel := context.WithTimeout(ctx, staleWait)
		if unlock, err := s.lockWrite(tctx); err == nil {
			removeStale(c.stale)
			unlock()
		}
		cancel()
	}
	s.auto.ctx, s.auto.cancel = context.WithCancel(context.Background())
	return nil
}

// checkMemoryDir refuses a folder that holds files but none of a memory's: a
// mistyped path, which the store would otherwise fill with its files. Hidden files
// do not count.
func checkMemoryDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("day1: memstore: %w", err)
	}
	others := 0
	for _, e := range ents {
		switch name := e.Name(); {
		case isMemoryFile(name):
			return nil
		case !strings.HasPrefix(name, "."):
			others++ // hidden files (.DS_Store, .git) do not count
		}
	}
	if others > 0 {
		return store.Invalid("Options.Path", fmt.Sprintf("holds %d other files and no memory (no %s, no checkpoint): name a new or empty folder, or the folder of a memory", others, logName), dir)
	}
	return nil
}

// createLog makes the first log of a new store directory, under the commit lock.
func (s *Store) createLog(ctx context.Context, lock *filelock.Lock, dir string) error {
	if err := lock.Acquire(ctx, s.lockTimeout(), dir); err != nil {
		return err
	}
	defer lock.Release()
	files, err := listFiles(dir)
	if err != nil {
		return err
	}
	if len(files.logs) > 0 || len(files.ckpts) > 0 {
		return nil // another store made it meanwhile
	}
	f, err := os.OpenFile(logPath(dir, 0), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("day1: memstore: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("day1: memstore: %w", err)
	}
	return syncDir(dir)
}

// addMain adds the main branch when the store has none yet: it is new. Callers hold
// the write lock (lockWrite).
func (s *Store) addMain() error {
	if _, ok := s.branches[store.DefaultBranch]; ok {
		return nil
	}
	now := s.now().UTC()
	e := entry{Seq: s.seq, At: now, Ops: []op{{Type: opBranch, Branch: &store.Branch{
		Name: store.DefaultBranch, Status: store.BranchActive, CreatedAt: now, ForkedAt: now}}}}
	if err := s.log.append(e); err != nil {
		s.failed = err
		return err
	}
	s.addRootBranch(now)
	s.commits = append(s.commits, commit{seq: s.seq, at: now})
	return nil
}

// loadFollowing loads the store in dir into s, empty, without a lock, opening its last
// log for reading only (readOnly) or for appending too. A file that a compaction
// removes while it is read starts the load again.
func (s *Store) loadFollowing(dir string, readOnly bool) (*chain, error) {
	for try := 0; ; try++ {
		c, err := s.load(dir, readOnly)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, errVanished) || try == 20 {
			return nil, err
		}
		s.state = newState(s.opts.Dimensions)
	}
}

// lockTimeout returns how long a commit waits for the commit lock.
func (s *Store) lockTimeout() time.Duration {
	if s.opts.LockTimeout > 0 {
		return s.opts.LockTimeout
	}
	return DefaultLockTimeout
}

// SlowLockWait is how long a commit may wait for the commit lock, held by the commits
// of other stores on the same path, before the wait is logged (Options.Logger).
const SlowLockWait = 100 * time.Millisecond

// lockWrite takes what a write needs and returns the function that lets it go: s.mu
// for writing, and for a durable store the commit lock too, with every entry other
// stores committed read in first. It fails as canWrite does, or with store.ErrLocked
// when the commit lock is not free within the lock timeout.
func (s *Store) lockWrite(ctx context.Context) (unlock func(), err error) {
	if s.log == nil {
		s.mu.Lock()
		if err := s.canWrite(ctx); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		return s.mu.Unlock, nil
	}
	// What the others committed is read in before the commit lock is taken, so that
	// a store that fell behind (or must load the store again) does not hold up their
	// commits meanwhile; under the lock only what came since is read.
	s.mu.Lock()
	err = s.canWrite(ctx)
	if err == nil {
		err = s.catchUp(false)
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	asked := time.Now()
	if err := s.log.lock.Acquire(ctx, s.lockTimeout(), s.opts.Path); err != nil {
		return nil, err
	}
	if waited := time.Since(asked); waited >= SlowLockWait {
		store.Logger(s.opts.Logger).Info("day1: memstore: waited for the commit lock", "path", s.opts.Path, "waited", waited)
	}
	s.mu.Lock()
	unlock = func() {
		s.mu.Unlock()
		s.log.lock.Release()
	}
	if err := s.canWrite(ctx); err != nil {
		unlock()
		return nil, err
	}
	if err := s.catchUp(true); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// catchUp applies the entries that other stores have appended to the log since this
// one last read it, following switch entries into the logs of later generations. With
// the commit lock held (locked) no append is under way, so a torn last frame is what
// a writer that died in the middle of an append left: it is cut off, and the log is
// whole to its end. Without the lock a torn frame may be an append under way and is
// left for later. Callers hold s.mu for writing.
func (s *Store) catchUp(locked bool) error {
	w := s.log
	for {
		fi, err := w.f.Stat()
		if err != nil {
			return fmt.Errorf("day1: memstore: %w", err)
		}
		size := fi.Size()
		if size < w.size {
			s.failed = fmt.Errorf("%s is shorter (%d bytes) than what was read of it (%d): it was replaced; reopen the store", logPath(w.dir, w.gen), size, w.size)
			return fmt.Errorf("day1: memstore: %w", s.failed)
		}
		next, switched := uint64(0), false
		if size > w.size {
			n := 0
			good, err := readFrames(io.NewSectionReader(w.f, w.size, size-w.size), w.size, func(e *entry) error {
				if g, ok := switchOf(e); ok {
					next, switched = g, true
					return errSwitched
				}
				n++
				if err := s.replay(e); err != nil {
					s.failed = fmt.Errorf("replaying entry %d after offset %d of %s: %w", n, w.size, logPath(w.dir, w.gen), err)
					return s.failed
				}
				return nil
			})
			s.auto.logBytes += good - w.size
			w.size, w.seen = good, size
			if err != nil && !errors.Is(err, errSwitched) {
				return fmt.Errorf("day1: memstore: %w", err)
			}
			if !switched && locked && good < size {
				whole, err := checkTail(w.f, good, logPath(w.dir, w.gen))
				if err != nil {
					s.failed = err
					return err
				}
				if whole {
					// An entry completed after it was read: no append runs beside a
					// commit lock that works, but if one did, read it, never cut it.
					continue
				}
				if err := w.f.Truncate(good); err != nil {
					return fmt.Errorf("day1: memstore: cutting a torn log tail: %w", err)
				}
				store.Logger(s.opts.Logger).Warn("day1: memstore: cut a torn log tail, an append that never completed",
					"file", logPath(w.dir, w.gen), "offset", good, "bytes", size-good)
				w.seen = good
			}
		}
		if !switched {
			return nil
		}
		f, err := os.OpenFile(logPath(w.dir, next), os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			// The log it switched to is gone too: another store compacted twice since
			// this one last looked. Load the store again from the files there are.
			if err := s.rebuild(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("day1: memstore: %w", err)
		}
		w.f.Close()
		w.f, w.gen, w.size, w.seen = f, next, 0, 0
		s.auto.maxGen = max(s.auto.maxGen, next)
		s.auto.ckptBytes, s.auto.logBytes = s.auto.logBytes, 0
	}
}

// rebuild loads the store again from its files and swaps the result in. Callers hold
// s.mu for writing.
func (s *Store) rebuild() error {
	fresh := newStore(s.opts)
	c, err := fresh.loadFollowing(s.opts.Path, false)
	if err != nil {
		return fmt.Errorf("day1: memstore: loading the store again after another process compacted it: %w", err)
	}
	s.log.f.Close()
	s.log.f, s.log.gen, s.log.size, s.log.seen = c.f, c.gen, c.off, c.off
	if s.horizon.After(fresh.horizon) {
		fresh.horizon = s.horizon
	}
	s.state = fresh.state
	s.auto.maxGen, s.auto.ckptBytes, s.auto.logBytes = max(s.auto.maxGen, c.maxGen), c.ckptBytes, c.logBytes
	return nil
}

// rlock takes s.mu for reading, after reading in what other stores committed since
// the store last looked (follow).
func (s *Store) rlock() {
	s.follow()
	s.mu.RLock()
}

// follow reads in the entries other stores have appended to the log, when it has
// grown since the store last looked and followEvery has passed since then. A
// read-only store refreshes (Refresh). Errors are left for the next write or
// Refresh to report: a read goes on with what the store holds.
func (s *Store) follow() {
	if s.log == nil && !s.opts.ReadOnly {
		return
	}
	now := time.Since(s.opened)
	last := s.looked.Load()
	if int64(now)-last < int64(followEvery) || !s.looked.CompareAndSwap(last, int64(now)) {
		return
	}
	s.mu.RLock()
	var f *os.File
	var size int64
	if s.log != nil {
		f, size = s.log.f, s.log.seen
	} else {
		f, size = s.ro.f, s.ro.seen
	}
	quiet := s.closed || s.failed != nil
	s.mu.RUnlock()
	if quiet {
		return
	}
	if fi, err := f.Stat(); err == nil && fi.Size() == size {
		return
	}
	if s.opts.ReadOnly {
		s.Refresh(context.Background())
		return
	}
	s.mu.Lock()
	if !s.closed && s.failed == nil {
		s.catchUp(false)
	}
	s.mu.Unlock()
}
