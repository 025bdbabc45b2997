// Package portable is a store.Store over any driver (package store/driver). It does
// every rule of the store contract once: validation, defaults, deduplication by id and
// by text, supersede of near-duplicate facts, aliases of deduplicated facts, branch
// chains read at a commit, time travel, snapshots, sessions, documents, diffs and
// merges. A backend then keeps versioned rows, branch rows and items, and commits
// atomically; nothing more. The drivers are package store/sqlite (a file many
// processes share) and package store/memdriver (the process's memory).
//
// A branch sees its own rows and, for what it has not written, its parent's rows as
// they were at the fork, and so on up the chain: a fork writes one branch row, in
// constant time. A read at a point in the past reads every link of the chain at the
// latest commit before that point.
//
// Searches and the near-duplicate check of writes read an index the store keeps in
// memory: a few numbers per row and the sign-bit code of its embedding. Keyword search
// ranks by BM25 over the rows the view sees, from postings the driver keeps; vector
// search orders codes by Hamming distance and scores the nearest exactly; a write
// finds facts with its text by a hash, and near-duplicates through the band index of
// internal/simhash. The index is built from the driver's row metadata, saved from time
// to time as a file in the memory's folder (a driver.Folder; indexfile.go gives the
// format), and caught up before each read with what any process committed since. A
// new process maps the latest saved index and reads its columns in place: it opens
// a memory of any size without reading it, and reads from disk only the pages its
// searches touch. Postings, embeddings and records read once are kept:
// rows never change, only end. The branches read at a commit are shared by every read
// of that commit, and merge records, which are only ever added, are read once. Lists
// and diffs read the rows of the branches they name.
//
// History is kept whole unless Options.Retention bounds it: then Compact deletes the
// rows replaced before the retention horizon that no branch, snapshot or merge base
// still reads (the rule of store.History.Pins), and reads before the horizon fail
// with store.ErrTooOld.
package portable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// Options configure a portable store.
type Options struct {
	// Name is what the store's Name method reports ("portable" when empty).
	Name string
	// Dimensions is the length of embeddings; 0 takes the length of the first one
	// written.
	Dimensions int
	// Now is the clock commits are dated by, and records without a time of their own
	// stamped with (the driver's clock when nil).
	Now func() time.Time
	// ReadOnly refuses every write with store.ErrReadOnly.
	ReadOnly bool
	// Retention is how much history Compact keeps: rows replaced more than
	// Retention before it are deleted, unless a branch, a snapshot or a merge base
	// still reads them, and reads at an instant more than Retention ago fail with
	// store.ErrTooOld. 0 keeps all history.
	Retention time.Duration
}

// Store is a store.Store over a driver. It is safe for concurrent use, in one process
// or, where the driver allows, in many.
type Store struct {
	d      driver.Driver
	opts   Options
	closed atomic.Bool
	ix     index
	// branches are the branches of the latest state loaded (loadState), shared by the
	// reads of the same commit.
	branches branchCache
	// mergeLog keeps the merge items read so far: they are only ever added, and a
	// read fetches only those after the last it holds.
	mergeLog mergeLog
	// dimsSeen is the length of the embeddings the store holds, once read.
	dimsSeen atomic.Int64
	// saving is set while a save of the index runs in the background (saveIndexSoon),
	// which Close waits for.
	saving    atomic.Bool
	saveAfter atomic.Int64 // Unix nanoseconds before which no read starts a save
	// bgMu orders the start of a background save and of each call (enter) with
	// Close, which waits for both: the index may be a view of a mapped file, which
	// Close unmaps.
	bgMu      sync.Mutex
	calls     int       // calls running (enter)
	callsDone sync.Cond // signalled when calls drops to 0 after Close
	bg        sync.WaitGroup
	bgCtx     context.Context // cancelled by Close, after closeGrace, for a save still running
	bgCancel  context.CancelFunc
}

var (
	_ store.Store            = (*Store)(nil)
	_ store.Namer            = (*Store)(nil)
	_ store.ReadOnlyReporter = (*Store)(nil)
	_ store.Durabler         = (*Store)(nil)
	_ store.DiskSizer        = (*Store)(nil)
)

// collections of the driver's items.
const (
	collSnapshot = "snapshot"
	collSession  = "session"
	collMerge    = "merge"
	collMeta     = "meta"
	docPrefix    = "doc/"
)

// New returns a store over d, which it closes on Close. A new backend gets the main
// branch.
func New(ctx context.Context, d driver.Driver, opts Options) (*Store, error) {
	if opts.Dimensions < 0 {
		return nil, store.Invalid("Options.Dimensions", "must not be negative", opts.Dimensions)
	}
	if opts.Retention < 0 {
		return nil, store.Invalid("Options.Retention", "must be 0 (keep all history) or more", opts.Retention.String())
	}
	s := &Store{d: d, opts: opts}
	s.callsDone.L = &s.bgMu
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	if f, ok := d.(driver.Folder); ok && s.Durable() && mappable {
		s.ix.dir = f.Folder()
	}
	var has bool
	err := d.Read(ctx, func(r driver.Reader) error {
		bs, err := r.Branches(ctx)
		for _, b := range bs {
			has = has || b.Name == store.DefaultBranch
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !has && !opts.ReadOnly {
		err = d.Update(ctx, func(w driver.Writer) error {
			if opts.Now != nil {
				w.SetInstant(opts.Now())
			}
			st, err := loadState(ctx, w)
			if err != nil || st.byName[store.DefaultBranch] != nil {
				return err // another process made it
			}
			at := w.Pending().At
			info := store.Branch{Name: store.DefaultBranch, Status: store.BranchActive, ForkedAt: at, CreatedAt: at}
			_, err = putBranch(ctx, w, &branch{info: info})
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Name reports the store's name.
func (s *Store) Name() string {
	if s.opts.Name == "" {
		return "portable"
	}
	return s.opts.Name
}

// ReadOnly reports whether the store refuses writes.
func (s *Store) ReadOnly() bool { return s.opts.ReadOnly }

// Durable reports whether what the store acknowledges survives a restart of the
// process: whether its driver says so (a Durable() bool method).
func (s *Store) Durable() bool {
	d, ok := s.d.(store.Durabler)
	return ok && d.Durable()
}

// DiskSize returns the bytes the driver's files take on disk, when it says (a
// Size() (int64, error) method), and the saved index's; otherwise it fails with
// store.ErrNotSupported.
func (s *Store) DiskSize(ctx context.Context) (int64, error) {
	if err := s.usable(ctx); err != nil {
		return 0, err
	}
	d, ok := s.d.(interface{ Size() (int64, error) })
	if !ok {
		return 0, fmt.Errorf("%w: the driver does not say its size", store.ErrNotSupported)
	}
	n, err := d.Size()
	if err != nil || s.ix.dir == "" {
		return n, err
	}
	paths, _ := indexFiles(s.ix.dir)
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n, nil
}

// Driver returns the driver the store reads and writes.
func (s *Store) Driver() driver.Driver { return s.d }

// Close closes the store and its driver. Later calls fail with store.ErrClosed.
func (s *Store) Close() error {
	s.bgMu.Lock()
	closed := s.closed.Swap(true)
	s.bgMu.Unlock()
	if closed {
		return store.ErrClosed
	}
	done := make(chan struct{})
	go func() {
		s.bg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeGrace):
		s.bgCancel()
		<-done
	}
	s.bgCancel()
	s.bgMu.Lock()
	for s.calls > 0 {
		s.callsDone.Wait()
	}
	s.bgMu.Unlock()
	s.ix.release()
	return s.d.Close()
}

func (s *Store) usable(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return ctx.Err()
}

// enter counts a call that reads or writes, which Close waits for; exit ends it.
func (s *Store) enter(ctx context.Context) error {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if err := s.usable(ctx); err != nil {
		return err
	}
	s.calls++
	return nil
}

func (s *Store) exit() {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.calls--; s.calls == 0 {
		s.callsDone.Broadcast()
	}
}

// read runs fn on the latest state.
func (s *Store) read(ctx context.Context, fn func(st *state) error) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.exit()
	err := s.d.Read(ctx, func(r driver.Reader) error {
		st, err := s.branches.state(ctx, r, false)
		if err != nil {
			return err
		}
		st.retention, st.now, st.mergeLog = s.opts.Retention, s.now, &s.mergeLog
		return fn(st)
	})
	if s.ix.stale.Load() {
		s.saveIndexSoon()
	}
	return err
}

// saveIndexTimeout bounds a save of the index that a read started; saveIndexRetry is
// how long reads wait before another after one failed; closeGrace is how long Close
// waits for one before it cancels it.
const (
	saveIndexTimeout = time.Minute
	saveIndexRetry   = time.Minute
	closeGrace       = 5 * time.Second
)

// saveIndexSoon saves the index to a file of the memory's folder, in the background,
// when reads or writes caught it up far past its saved copy: the next process to
// open the memory then maps it rather than building it from every row. A store
// opened read-only leaves it to the writers. Close waits for the save.
func (s *Store) saveIndexSoon() {
	if s.opts.ReadOnly || s.ix.dir == "" || time.Now().UnixNano() < s.saveAfter.Load() || !s.saving.CompareAndSwap(false, true) {
		return
	}
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.closed.Load() {
		s.saving.Store(false)
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.saving.Store(false)
		if err := s.ix.save(s.ix.dir); err != nil {
			// Left to a later read, not the next one: the folder may not be
			// writable, or the disk full.
			s.saveAfter.Store(time.Now().Add(saveIndexRetry).UnixNano())
			return
		}
		ctx, cancel := context.WithTimeout(s.bgCtx, saveIndexTimeout)
		defer cancel()
		// The driver directly: Close, which waits for this, has already marked the
		// store closed.
		s.dropIndexItems(ctx)
	}()
}

// collIndex is the collection of the items an index was saved as before it was
// saved as a file: dropIndexItems removes them.
const collIndex = "index"

// dropIndexItems removes the items of an index saved by an older format, once the
// index is saved as a file.
func (s *Store) dropIndexItems(ctx context.Context) {
	var any bool
	err := s.d.Read(ctx, func(r driver.Reader) error {
		return r.Items(ctx, collIndex, "", func(string, []byte) error {
			any = true
			return errStop
		})
	})
	if err != nil && !errors.Is(err, errStop) || !any {
		return
	}
	s.d.Update(ctx, func(w driver.Writer) error {
		var ids []string
		err := w.Items(ctx, collIndex, "", func(id string, _ []byte) error {
			ids = append(ids, id)
			return nil
		})
		for _, id := range ids {
			if err == nil {
				err = w.DeleteItem(ctx, collIndex, id)
			}
		}
		return err
	})
}

var errStop = errors.New("stop")

// update runs fn in one commit.
func (s *Store) update(ctx context.Context, fn func(st *state, w driver.Writer) error) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.exit()
	if s.opts.ReadOnly {
		return fmt.Errorf("%w: the store was opened read-only", store.ErrReadOnly)
	}
	defer func() {
		if s.ix.stale.Load() {
			s.saveIndexSoon()
		}
	}()
	return s.d.Update(ctx, func(w driver.Writer) error {
		if s.opts.Now != nil {
			w.SetInstant(s.opts.Now())
		}
		st, err := s.branches.state(ctx, w, true)
		if err != nil {
			return err
		}
		st.retention, st.now, st.mergeLog, st.writer = s.opts.Retention, s.now, &s.mergeLog, true
		return fn(st, w)
	})
}

// now reads the store's clock: Options.Now, or the system's.
func (s *Store) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

// stamp is the instant records of a commit are stamped with: the commit's, which
// follows Options.Now when it is set.
func (s *Store) stamp(w driver.Writer) time.Time { return w.Pending().At }

// branch is a branch as the portable store sees it.
type branch struct {
	id      int64
	parent  *branch
	forkSeq int64
	info    store.Branch
}

// public returns the branch's info for a caller, who may change it: its metadata is
// a copy, since reads share the branch (branchCache).
func (b *branch) public() store.Branch {
	info := b.info
	info.Metadata = maps.Clone(info.Metadata)
	return info
}

// state is what one read or write of the store starts from: the branches.
type state struct {
	r         driver.Reader
	byName    map[string]*branch
	byID      map[int64]*branch
	retention time.Duration    // Options.Retention
	now       func() time.Time // the store's clock (Store.now)
	mergeLog  *mergeLog        // the merge items read so far (Store.mergeLog)
	writer    bool             // whether r is a writer, whose reads may see its own writes
}

func loadState(ctx context.Context, r driver.Reader) (*state, error) {
	rows, err := r.Branches(ctx)
	if err != nil {
		return nil, err
	}
	st := &state{r: r, byName: make(map[string]*branch, len(rows)), byID: make(map[int64]*branch, len(rows))}
	for _, row := range rows {
		b := &branch{id: row.ID, forkSeq: row.ForkSeq}
		info, err := branchInfos.decode(row.Data)
		if err != nil {
			return nil, fmt.Errorf("%w: branch %q: %v", store.ErrCorrupt, row.Name, err)
		}
		b.info = info
		b.info.Metadata = maps.Clone(info.Metadata)
		b.info.Name = row.Name
		st.byName[row.Name] = b
		st.byID[row.ID] = b
	}
	for _, row := range rows {
		if row.Parent != 0 {
			st.byID[row.ID].parent = st.byID[row.Parent]
		}
	}
	return st, nil
}

// branchCache keeps the branches of one commit. Branch rows change only in commits,
// so every reader at that commit sees the same ones: reads share them instead of
// reading and decoding every branch row each time, which in a memory of thousands of
// branches was most of a small read's time.
type branchCache struct {
	mu     sync.Mutex
	seq    int64 // the commit they were read at; 0 for none
	byName map[string]*branch
	byID   map[int64]*branch
}

// state returns the state of r: the cached branches when r reads the commit they were
// read at, else those loadState reads, which become the cache. A writer (own) gets
// copies, which it may change; readers share the cache and must not.
func (c *branchCache) state(ctx context.Context, r driver.Reader, own bool) (*state, error) {
	seq := r.Head().Seq
	c.mu.Lock()
	hit := seq != 0 && c.seq == seq
	byName, byID := c.byName, c.byID
	c.mu.Unlock()
	if !hit {
		st, err := loadState(ctx, r)
		if err != nil || seq == 0 {
			return st, err
		}
		c.mu.Lock()
		if seq > c.seq {
			c.seq, c.byName, c.byID = seq, st.byName, st.byID
		}
		c.mu.Unlock()
		if !own {
			return st, nil
		}
		byName, byID = st.byName, st.byID
	}
	if !own {
		return &state{r: r, byName: byName, byID: byID}, nil
	}
	return copyBranches(r, byID), nil
}

// copyBranches returns a state of r holding copies of the branches of byID.
func copyBranches(r driver.Reader, byID map[int64]*branch) *state {
	st := &state{r: r, byName: make(map[string]*branch, len(byID)), byID: make(map[int64]*branch, len(byID))}
	for id, b := range byID {
		c := *b
		c.info.Metadata = maps.Clone(b.info.Metadata)
		st.byID[id], st.byName[c.info.Name] = &c, &c
	}
	for _, b := range st.byID {
		if b.parent != nil {
			b.parent = st.byID[b.parent.id]
		}
	}
	return st
}

// infoCache keeps the branches' infos decoded, by their encoded bytes: a read of a
// store with many branches decodes only those that changed since the last.
type infoCache struct {
	mu sync.Mutex
	m  map[string]store.Branch
}

var branchInfos infoCache

// maxCachedInfos bounds infoCache; when full it starts again.
const maxCachedInfos = 1 << 14

func (c *infoCache) decode(data []byte) (store.Branch, error) {
	c.mu.Lock()
	info, ok := c.m[string(data)]
	c.mu.Unlock()
	if ok {
		return info, nil
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return store.Branch{}, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedInfos {
		c.m = map[string]store.Branch{}
	}
	c.m[string(data)] = info
	c.mu.Unlock()
	return info, nil
}

// putBranch writes a branch row and returns its id.
func putBranch(ctx context.Context, w driver.Writer, b *branch) (int64, error) {
	data, err := json.Marshal(b.info)
	if err != nil {
		return 0, err
	}
	row := driver.BranchRow{ID: b.id, Name: b.info.Name, ForkSeq: b.forkSeq, Data: data}
	if b.parent != nil {
		row.Parent = b.parent.id
	}
	id, err := w.PutBranch(ctx, row)
	b.id = id
	return id, err
}

func (st *state) branch(name string) (*branch, error) {
	if b, ok := st.byName[name]; ok {
		return b, nil
	}
	if err := store.ValidateBranchName("Branch", name); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: %q", store.ErrBranchNotFound, name)
}

func (st *state) writable(name string) (*branch, error) {
	b, err := st.branch(name)
	if err != nil {
		return nil, err
	}
	if b.info.Status == store.BranchArchived {
		return nil, fmt.Errorf("%w: %q", store.ErrBranchArchived, name)
	}
	return b, nil
}

// snapshotItem is a snapshot as an item: its info and the commit it names.
type snapshotItem struct {
	Info store.Snapshot `json:"info"`
	Seq  int64          `json:"seq"`
}

func (st *state) snapshot(ctx context.Context, name string) (snapshotItem, error) {
	data, ok, err := st.r.Item(ctx, collSnapshot, name)
	if err != nil {
		return snapshotItem{}, err
	}
	if !ok {
		return snapshotItem{}, fmt.Errorf("%w: %q", store.ErrSnapshotNotFound, name)
	}
	sn, err := decodeSnapshot(data)
	if err != nil {
		return snapshotItem{}, fmt.Errorf("%q: %w", name, err)
	}
	return sn, nil
}

// decodeSnapshot decodes a snapshot item.
func decodeSnapshot(data []byte) (snapshotItem, error) {
	var sn snapshotItem
	if err := json.Unmarshal(data, &sn); err != nil {
		return snapshotItem{}, fmt.Errorf("%w: snapshot: %v", store.ErrCorrupt, err)
	}
	return sn, nil
}
