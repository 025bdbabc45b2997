// Package memstore is day1's embedded store: an in-process, multi-version store with
// copy-on-write branches, keyword and vector indexes, and an optional append-only log
// that makes it durable.
//
// # Model
//
// Every change gets a sequence number. A record's versions are kept per branch; a branch
// is a parent pointer plus the parent's sequence number at the fork, so creating one
// copies nothing. A read resolves a record by walking from the branch to its ancestors,
// each cut at its fork point, and takes the newest version at or before the read's
// sequence number. Reads at a snapshot or an instant are the same walk with an older
// sequence number, so time travel costs what a read at head costs.
//
// # Memory
//
// Records are kept without their embeddings. Each version holds its embedding packed
// in large arrays that hold no pointers, which the garbage collector does not scan:
// dense, or, when most coordinates are zero (as they are for short texts embedded by
// the local lexical embedders), as a mask of the coordinates held followed by those
// coordinates alone. When every coordinate is a bfloat16 value (a float32 whose low 16
// bits are zero, as the local embedders give), either form holds two coordinates per
// float32. Every form gives the embedding back bit for bit. Facts are kept in a compact
// form, their rarer fields (sources, session, task, agent, metadata, verification)
// behind a pointer that is nil when they are all empty. A million short facts from
// the local embedder take about 1.3 GB of live heap, index included.
//
// Go lets the heap grow to about twice what is live before it collects
// (GOGC=100), so a process holding a large store peaks well above its live heap. A
// service that holds a large store in memory should set a soft memory limit
// (the GOMEMLIMIT environment variable, or runtime/debug.SetMemoryLimit) a little
// above what it needs: the collector then runs more often instead of letting the heap
// double. The bench shows both figures for a million facts.
//
// # Durability
//
// With Options.Path set, each committed batch is appended to a log file as one framed,
// checksummed entry before the call returns. Options.Sync says when the file is flushed
// to stable storage. On open the log is replayed. A torn last entry (a crash in the
// middle of an append, never acknowledged) is detected by its frame and checksum and
// cut off by the next commit. Damage no torn append explains (a bad entry with whole
// entries after it, a whole entry that does not decode, a damaged checkpoint) fails
// the open with ErrCorrupt, naming the file, and nothing is cut.
//
// # Several processes
//
// Any number of stores, in any number of processes, open one durable directory and
// write it. Each holds the whole store in memory and follows the log they all append
// to. A write reads in the entries the others appended since it last looked, takes
// the directory's commit lock (a file lock on LOCK: flock, fcntl or LockFileEx, as
// the system has; and a semaphore among the stores of one process), reads in what
// came meanwhile, decides and applies its batch on that, appends it and lets the lock
// go: each write decides on every commit before it, so dedupe, supersede, aliases,
// merge conflicts and document preconditions hold across processes as within one. A
// write that waits longer than Options.LockTimeout (30 s by default) for the lock, or
// whose context ends first, fails with store.ErrLocked. The system drops the file lock
// of a process that dies, so a crash in the middle of a commit holds up the others
// for no longer than it takes them to see it: the next writer cuts off the torn frame
// the dead one left and goes on. Where the system has no file lock this package uses
// (plan9, js, wasip1), only the semaphore applies: one process at a time may write a
// directory there.
//
// Reads take no lock on the files. Before a read the store looks whether the log has
// grown (at most once a millisecond: one fstat) and reads in what has: a read sees
// another process's commit a millisecond or two after it is acknowledged, or at once
// after Store.Refresh. Each entry is a whole batch, so a read never sees part of one.
// Options.ReadOnly opens a store that refuses every write with store.ErrReadOnly and
// follows the others' commits the same way.
//
// Opening loads the store (the newest checkpoint and the log after it) without the
// lock: its cost grows with the store, about 0.3 s for 5,000 observations.
//
// # Compaction
//
// Store.Compact replaces the log by a checkpoint of the store and a new, empty log
// after it, so that an open loads the checkpoint and replays only what was written
// since, instead of every entry ever written. It holds writers for one short step:
// under the commit lock it notes the length of every branch's list of versions (versions
// never change, and the lists only grow, so this is a consistent view that copies no
// record) and switches the writes to the new log; the checkpoint is written after, beside
// the writers. When it dropped versions, the store's memory is then rebuilt from the
// checkpoint and the log after it, beside the writers too, and swapped in under the
// lock once the log entries committed meanwhile are in: a long-running process holds
// what a reopen would. A compaction starts by itself when the log outgrows the last
// checkpoint (Options.CompactRatio, Options.CompactMinBytes).
//
// Options.Retention bounds the history kept. A checkpoint leaves out the versions
// replaced more than Retention before it, except those some point still reads: a
// snapshot, the fork point of a branch, either side of a merge point (merge bases are
// made of these). Reads at an instant more than Retention ago fail with
// store.ErrTooOld, before a compaction as after it, and so do reads before the horizon
// of the checkpoint a store was loaded from, whatever its own Retention: a store never
// answers for a past it no longer holds. The default, 0, keeps all history: the store
// kept it all before compaction existed, and dropping history must be asked for.
// Sequence numbers, branch heads and merge points survive a compaction, so a diff
// taken before it merges after it.
//
// # Files
//
// A durable store's directory holds:
//
//	LOCK          locked by the store that is committing, for that commit only
//	day1.log      the log of generation 0, which every store starts with
//	day1.G.ckpt   the checkpoint of generation G (G = 1, 2, ...)
//	day1.G.log    the log of generation G: the entries committed after day1.G.ckpt
//	day1.G.ckpt.tmp  a checkpoint being written; never read
//
// Logs and checkpoints are sequences of frames: a 4-byte little-endian payload length,
// a 4-byte CRC-32C of the payload, and the payload, one JSON entry. A compaction of
// generation G creates day1.G.log, appends to the current log a switch entry naming
// G, and appends to day1.G.log from then on; it writes day1.G.ckpt.tmp, flushes it,
// renames it to day1.G.ckpt, flushes the directory and removes the files of older
// generations. A store opens from its newest checkpoint (a renamed checkpoint is
// complete, and its last frame counts its versions) and the logs after it, each
// leading to the next by its switch entry; without a checkpoint, from day1.log. A
// crash at any step leaves either the old checkpoint with the logs that follow it or
// the new one with its log, and the next open or compaction removes what is left
// over. The switch is made under the commit lock; the checkpoint is written after it,
// while the others read and write. The other stores follow the switch entries from
// log to log; one that finds the next log gone (it fell two compactions behind) loads
// the store again from the newest checkpoint, and a read-only one does so once a
// newer checkpoint is written.
package memstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/day1ai/day1/store"
)

// SyncPolicy says when the log is flushed to stable storage.
type SyncPolicy int

const (
	// SyncAlways flushes (fsync) every commit before it is acknowledged: an acknowledged
	// write survives a process crash and a power loss. The default.
	SyncAlways SyncPolicy = iota
	// SyncNever leaves flushing to the operating system: an acknowledged write survives a
	// crash of the process (the kernel holds it) but not a power loss.
	SyncNever
)

// Options configure a Store.
type Options struct {
	// Path is a directory for the log. Empty keeps everything in memory only.
	Path string
	// Sync is the flush policy of the log. Default SyncAlways.
	Sync SyncPolicy
	// Dimensions fixes the embedding length. 0 means the first embedding written sets it.
	Dimensions int
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives what a durable store does on its own or waits for: automatic
	// and explicit compactions (Info; Warn when one fails), commits that waited more
	// than SlowLockWait for the commit lock (Info), and torn log tails cut off (Warn),
	// with the path and the figures, never record texts. Nil logs nothing.
	Logger *slog.Logger
	// LockTimeout is how long a commit waits for the commits of other stores open on
	// the same Path, in this process or another, before it fails with store.ErrLocked
	// (or when its context is done first). Commits on one Path take turns; each holds
	// the directory only while it reads in what the others committed, decides and
	// appends. 0 means DefaultLockTimeout. It does not apply to ReadOnly.
	LockTimeout time.Duration
	// ReadOnly opens the durable store at Path for reading only, beside the process
	// that writes it and any number of other readers: it takes no lock, replays the log
	// without cutting a torn tail, refuses every write with store.ErrReadOnly, and sees
	// the store as of the open or the last Refresh. The log must exist: a writer creates
	// it on its first open (until its first entry is in, the reader has no branch). A
	// Path that holds no memory, or does not exist, is an error matching
	// store.ErrNotFound: a reader never creates one.
	ReadOnly bool
	// Retention is how much history a compaction keeps: versions replaced more than
	// Retention before it are left out of the checkpoint, unless a branch, a snapshot or
	// a merge base still reads them, and reads at an instant more than Retention ago
	// fail with store.ErrTooOld, compacted or not. Snapshots stay readable for as long
	// as they exist. Default 0: all history is kept and every instant since the store
	// began can be read, as before compactions existed; a compaction then only leaves
	// out the versions of deleted branches, and saves the replay of a long log. It
	// must not be negative.
	Retention time.Duration
	// CompactRatio starts a compaction in the background when the log written since the
	// last checkpoint holds more than CompactRatio times the checkpoint's bytes (and at
	// least CompactMinBytes). Default 0 means DefaultCompactRatio (2); a negative value
	// turns automatic compaction off (Store.Compact still compacts).
	CompactRatio float64
	// CompactMinBytes is the size the log must reach before an automatic compaction.
	// Default 0 means DefaultCompactMinBytes (64 MiB). It must not be negative.
	CompactMinBytes int64

	// compactHook, when set, is called at each step of a compaction (the Step
	// constants): the crash tests stop the process there.
	compactHook func(step string)
}

// Store is the embedded store. It is safe for concurrent use.
type Store struct {
	opts Options
	now  func() time.Time

	mu      sync.RWMutex
	closed  bool
	closing bool  // Close has begun: no compaction starts
	failed  error // a log write failed: the store refuses further work
	// batch is the first sequence number of the Put under way, 0 outside one: its
	// versions' document statistics make one entry (branch.addStat).
	batch uint64
	state
	log *wal
	ro  *logReader // the log a read-only store follows

	opened time.Time    // when the store was opened: the origin of looked
	looked atomic.Int64 // when follow last looked at the log, since opened

	compactMu sync.Mutex // one compaction at a time
	auto      autoCompact
}

// state is what the store holds in memory: everything a read sees. A read-only store
// that reloads from a new checkpoint builds a new state and swaps it in whole.
type state struct {
	seq      uint64
	commits  []commit
	dims     int
	branches map[string]*branch
	snaps    map[string]snapshot
	sessions map[string]store.Session
	merges   []store.MergeRecord
	hist     store.History // forks and merge points: where diffs start
	docs     map[docKey]*store.Doc
	arena    arena // the packed embeddings of versions
	index    map[store.Kind]*kindIndex
	dup      dupScratch // near-duplicate searches made under the write lock
	slots    slots      // of the branches
	// horizon is the oldest instant a read may ask for: the retention horizon of the
	// checkpoint the state was loaded from or last written (zero: none).
	horizon time.Time
}

var (
	_ store.Store            = (*Store)(nil)
	_ store.ReadOnlyReporter = (*Store)(nil)
	_ store.Namer            = (*Store)(nil)
	_ store.Durabler         = (*Store)(nil)
	_ store.DiskSizer        = (*Store)(nil)
	_ store.Refresher        = (*Store)(nil)
	_ store.Compacter        = (*Store)(nil)
)

// commit maps a sequence number to the instant it was committed at.
type commit struct {
	seq uint64 // the last sequence number of the commit
	at  time.Time
}

type key struct {
	kind store.Kind
	id   string
}

const never = math.MaxUint64

// version is one state of one record on one branch. rec is nil for a deletion.
type version struct {
	key key
	seq uint64
	br  *branch
	// rec is the record without its embedding, which is emb (record returns both): a
	// *factRec for a fact, the store.Record itself for another kind, nil for a
	// deletion. plain returns it as a store.Record.
	rec    any
	next   uint64 // seq of the next version of the key on the same branch, never if none
	emb    packed // the record's embedding, nil without one
	docLen int32
	inv    float32 // 1/|embedding|, 0 without one
	ord    int32   // position in the kind index's docs, -1 when not indexed
	vi     int32   // the kind index's vector slot holding the embedding, -1 without one
	// sameVec is the next version sharing the vector slot, in no particular order: a
	// merge's copy of a record shares the embedding, code and band links of the
	// source's version.
	sameVec *version
	// terms is the analysis of the search text while the version is among the last
	// recentTerms indexed, nil after: a merge that adopts the version soon after it was
	// written indexes the adopted copy without analysing the text again.
	terms *docTerms
}

type snapshot struct {
	info store.Snapshot
	seq  uint64
}

// New opens a store: in memory, or durable when opts.Path is set (replaying its log).
// It is Open without a context.
func New(opts Options) (*Store, error) {
	return Open(context.Background(), opts)
}

// Validate checks the options as Open does, before it touches a file: a
// *store.ValidationError names the field.
func (o Options) Validate() error {
	if o.Dimensions < 0 || o.Dimensions > store.MaxEmbeddingDims {
		return store.Invalid("Options.Dimensions", fmt.Sprintf("must be between 0 (learned) and %d", store.MaxEmbeddingDims), o.Dimensions)
	}
	if o.Sync != SyncAlways && o.Sync != SyncNever {
		return store.Invalid("Options.Sync", "must be SyncAlways or SyncNever", o.Sync)
	}
	if o.LockTimeout < 0 {
		return store.Invalid("Options.LockTimeout", "must be 0 (DefaultLockTimeout) or more", o.LockTimeout.String())
	}
	if o.ReadOnly && o.Path == "" {
		return store.Invalid("Options.ReadOnly", "applies only to a durable store; set Options.Path too", nil)
	}
	if o.Retention < 0 {
		return store.Invalid("Options.Retention", "must be 0 (keep all history) or more", o.Retention.String())
	}
	if o.CompactMinBytes < 0 {
		return store.Invalid("Options.CompactMinBytes", "must be 0 (the default) or more", o.CompactMinBytes)
	}
	if o.CompactRatio != o.CompactRatio {
		return store.Invalid("Options.CompactRatio", "must be a number: 0 (the default), more, or negative (off)", o.CompactRatio)
	}
	return nil
}

// Open opens a store: in memory, or durable when opts.Path is set (replaying its log).
// ctx bounds the wait for the lock of a durable store (see Options.LockTimeout).
func Open(ctx context.Context, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := newStore(opts)
	if opts.Path == "" {
		s.addRootBranch(s.now().UTC())
		return s, nil
	}

	if opts.ReadOnly {
		files, err := listFiles(opts.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%w: %s holds no memory to read; a store opened to write creates one: %w", store.ErrNotFound, opts.Path, err)
		case err == nil && len(files.logs) == 0 && len(files.ckpts) == 0:
			return nil, fmt.Errorf("%w: %s holds no memory to read; a store opened to write creates one", store.ErrNotFound, opts.Path)
		}
		c, err := s.loadFollowing(opts.Path, true)
		if err != nil {
			return nil, err
		}
		s.ro = &logReader{dir: opts.Path, f: c.f, gen: c.gen, off: c.off, seen: c.off, ckptGen: c.ckptGen}
		return s, nil
	}
	if err := s.openShared(ctx, opts.Path); err != nil {
		return nil, err
	}
	return s, nil
}

// newStore returns an empty store, without even its main branch.
func newStore(opts Options) *Store {
	s := &Store{opts: opts, now: opts.Now, state: newState(opts.Dimensions), opened: time.Now()}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// newState returns an empty state, without even its main branch.
func newState(dims int) state {
	st := state{
		dims:     dims,
		branches: map[string]*branch{},
		snaps:    map[string]snapshot{},
		sessions: map[string]store.Session{},
		docs:     map[docKey]*store.Doc{},
		index:    map[store.Kind]*kindIndex{},
	}
	for _, k := range store.SearchKinds {
		st.index[k] = newKindIndex(k)
	}
	return st
}

func (s *Store) addRootBranch(now time.Time) {
	s.branches[store.DefaultBranch] = s.newBranch(store.Branch{
		Name: store.DefaultBranch, Status: store.BranchActive, CreatedAt: now, ForkedAt: now,
	}, nil, 0, s.seq)
}

// Close flushes and closes the log. Later calls fail with store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed || s.closing {
		s.mu.Unlock()
		return nil
	}
	// A compaction under way stops, or finishes, before the files are let go.
	s.closing = true
	cancel := s.auto.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.auto.wg.Wait()
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.ro != nil {
		return s.ro.f.Close()
	}
	if s.log != nil {
		return s.log.close()
	}
	return nil
}

// ReadOnly reports whether the store was opened with Options.ReadOnly.
func (s *Store) ReadOnly() bool { return s.opts.ReadOnly }

// Name returns "memstore".
func (s *Store) Name() string { return "memstore" }

// Durable reports whether the store keeps its records in files (Options.Path).
func (s *Store) Durable() bool { return s.opts.Path != "" }

// DiskSize returns the bytes the store's checkpoints and logs take on disk; an
// in-memory store has none and fails with store.ErrNotSupported.
func (s *Store) DiskSize(ctx context.Context) (int64, error) {
	if s.opts.Path == "" {
		return 0, fmt.Errorf("%w: the store is kept in memory only", store.ErrNotSupported)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return storeBytes(s.opts.Path)
}

// Refresh brings the store up to date with the entries other stores have committed
// to the log since the open or the last look; reads do this by themselves, at most
// once every millisecond, so Refresh is for a caller that must see a commit it knows
// of at once. A torn last frame (an append under way) is left for later. Reads see
// either the state before a Refresh or the one after it, never a part of a batch.
//
// A read-only store follows the writers' logs into each new generation a compaction
// starts and, once the new checkpoint is written, loads the store again from it
// (without holding up reads meanwhile), which drops what the writer's retention
// dropped. If an entry cannot be replayed the store refuses further work: reopen it.
func (s *Store) Refresh(ctx context.Context) error {
	if s.log != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.usable(ctx); err != nil {
			return err
		}
		return s.catchUp(false)
	}
	s.compactMu.Lock() // one Refresh at a time
	defer s.compactMu.Unlock()
	s.mu.Lock()
	if err := s.usable(ctx); err != nil {
		s.mu.Unlock()
		return err
	}
	if s.ro == nil {
		s.mu.Unlock()
		return nil
	}
	n := 0
	reload, err := s.ro.read(func(e *entry) error {
		n++
		if err := s.replay(e); err != nil {
			s.failed = fmt.Errorf("replaying log entry %d of %s after the last refresh: %w", n, s.opts.Path, err)
			return s.failed
		}
		return nil
	})
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("day1: memstore: refresh: %w", err)
	}
	if !reload {
		return nil
	}
	fresh := newStore(s.opts)
	c, err := fresh.loadFollowing(s.opts.Path, true)
	if err != nil {
		return fmt.Errorf("day1: memstore: refresh: loading the new checkpoint: %w", err)
	}
	r := &logReader{dir: s.opts.Path, f: c.f, gen: c.gen, off: c.off, seen: c.off, ckptGen: c.ckptGen}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		r.f.Close()
		return err
	}
	s.ro.f.Close()
	s.state, s.ro = fresh.state, r
	return nil
}

// Dimensions returns the embedding length the store holds, 0 until one is known.
func (s *Store) Dimensions() int {
	s.rlock()
	defer s.mu.RUnlock()
	return s.dims
}

// usable checks ctx and the store's state. Callers hold s.mu.
func (s *Store) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed {
		return store.ErrClosed
	}
	if s.failed != nil {
		return fmt.Errorf("day1: memstore: refusing work after a failed log write: %w", s.failed)
	}
	return nil
}

// canWrite is usable for a write: a read-only store refuses it.
func (s *Store) canWrite(ctx context.Context) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	if s.ro != nil {
		return fmt.Errorf("%w: %s was opened with ReadOnly", store.ErrReadOnly, s.opts.Path)
	}
	return nil
}

// commitNow returns the commit instant, never before the previous commit's, so that
// instants order commits the way sequence numbers do.
func (s *Store) commitNow() time.Time {
	t := s.now().UTC()
	if n := len(s.commits); n > 0 && t.Before(s.commits[n-1].at) {
		t = s.commits[n-1].at
	}
	return t
}

// seqAt returns the last sequence number committed at or before t.
func (s *Store) seqAt(t time.Time) uint64 {
	i := sort.Search(len(s.commits), func(i int) bool { return s.commits[i].at.After(t) })
	if i == 0 {
		return 0
	}
	return s.commits[i-1].seq
}

// timeOf returns the instant of the commit holding seq (zero for 0).
func (s *Store) timeOf(seq uint64) time.Time {
	i := sort.Search(len(s.commits), func(i int) bool { return s.commits[i].seq >= seq })
	if i == len(s.commits) {
		return time.Time{}
	}
	return s.commits[i].at
}

// view is a resolved read position: a branch chain, each link cut at a sequence number.
type view struct {
	chain []link
	mask  uint64 // the bits of the chain's branches: see kindIndex.masks
}

type link struct {
	br  *branch
	cut uint64
}

func (s *Store) chainOf(b *branch, seq uint64) view {
	var v view
	for b != nil {
		v.chain = append(v.chain, link{b, seq})
		v.mask |= b.bit
		seq = min(seq, b.forkSeq)
		b = b.parent
	}
	return v
}

// resolveView turns a store.View into a read position. Callers hold s.mu.
func (s *Store) resolveView(v store.View) (view, error) {
	name := v.Branch
	if v.At.Snapshot != "" {
		sn, ok := s.snaps[v.At.Snapshot]
		if !ok {
			return view{}, fmt.Errorf("%w: %q", store.ErrSnapshotNotFound, v.At.Snapshot)
		}
		if name == "" {
			name = sn.info.Branch
		}
		if name != sn.info.Branch {
			return view{}, store.Invalid("View.At.Snapshot", fmt.Sprintf("is a snapshot of branch %q, not of %q", sn.info.Branch, name), v.At.Snapshot)
		}
		b, err := s.branch(name)
		if err != nil {
			return view{}, err
		}
		return s.chainOf(b, sn.seq), nil
	}
	if name == "" {
		name = store.DefaultBranch
	}
	b, err := s.branch(name)
	if err != nil {
		return view{}, err
	}
	seq := s.seq
	if !v.At.Time.IsZero() {
		if err := s.checkRetained(v.At.Time); err != nil {
			return view{}, err
		}
		if err := store.CheckInstant(b.info, v.At.Time); err != nil {
			return view{}, err
		}
		seq = s.seqAt(v.At.Time)
	}
	return s.chainOf(b, seq), nil
}

// checkRetained fails with store.ErrTooOld for an instant before the history the store
// keeps: more than Options.Retention ago, or before the horizon of the checkpoint it
// was loaded from or last wrote.
func (s *Store) checkRetained(t time.Time) error {
	if r := s.opts.Retention; r > 0 {
		if h := s.now().Add(-r); t.Before(h) {
			return fmt.Errorf("%w: %s is more than the retention of %s ago; only snapshots reach further back",
				store.ErrTooOld, t.UTC().Format(time.RFC3339Nano), r)
		}
	}
	if !s.horizon.IsZero() && t.Before(s.horizon) {
		return fmt.Errorf("%w: %s is before %s, the oldest instant the store has kept since it was compacted; only snapshots reach further back",
			store.ErrTooOld, t.UTC().Format(time.RFC3339Nano), s.horizon.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

func (s *Store) branch(name string) (*branch, error) {
	if b, ok := s.branches[name]; ok {
		return b, nil // its name was checked when it was created
	}
	if err := store.ValidateBranchName("Branch", name); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: %q", store.ErrBranchNotFound, name)
}

// resolve returns the version of k the view sees, or nil. A deletion resolves to a
// version with a nil record.
func (v view) resolve(k key) *version {
	for _, l := range v.chain {
		if ver := l.br.versionAt(k, l.cut); ver != nil {
			return ver
		}
	}
	return nil
}

// get returns the live record of k the view sees, or nil.
func (v view) get(k key) store.Record {
	if ver := v.resolve(k); ver != nil {
		return ver.plain()
	}
	return nil
}

// has reports whether the view sees a live record of k.
func (v view) has(k key) bool {
	ver := v.resolve(k)
	return ver != nil && ver.rec != nil
}

// name is the name of the branch the view reads.
func (v view) name() string { return v.chain[0].br.info.Name }

// out returns a copy of r, a record the view sees, for a caller: with its embedding,
// naming the branch it was read from.
func (v view) out(r store.Record) store.Record {
	var emb []float32
	if ver := v.resolve(key{r.RecordKind(), r.RecordID()}); ver != nil && len(ver.emb) > 0 {
		emb = ver.emb.unpack()
	}
	// The kinds with embeddings are copied in one step, the others as any record.
	switch x := r.(type) {
	case store.Fact:
		x.Metadata, x.Branch, x.Embedding = maps.Clone(x.Metadata), v.name(), emb
		return x
	case store.Observation:
		x.Metadata, x.Branch, x.Embedding = maps.Clone(x.Metadata), v.name(), emb
		return x
	}
	r = store.WithBranch(store.Clone(r), v.name())
	if emb != nil {
		r = store.WithEmbedding(r, emb)
	}
	return r
}

// record returns a copy of the version's record with its embedding, which the caller
// may keep and change: nil for a deletion.
func (ver *version) record() store.Record {
	if ver.rec == nil {
		return nil
	}
	return store.WithEmbedding(store.Clone(ver.plain()), ver.emb.unpack())
}

// full returns the version's record with its embedding, sharing the record's
// metadata with the store: for a caller that only reads it. nil for a deletion.
func (ver *version) full() store.Record {
	if len(ver.emb) == 0 {
		return ver.plain()
	}
	return store.WithEmbedding(ver.plain(), ver.emb.unpack())
}

// holds reports whether the version holds r's content, embedding included (see
// store.SameContent).
func (ver *version) holds(r store.Record) bool {
	if ver.rec == nil || r == nil {
		return ver.rec == nil && r == nil
	}
	return ver.holdsExceptEmbedding(r) && ver.emb.equal(store.EmbeddingOf(r))
}

// visible reports whether ver is the version of its key the view sees. It avoids map
// lookups in the common case of reading the branch that owns the version.
func (v view) visible(ver *version) bool {
	i := v.owner(ver.br, ver.seq, ver.next)
	return i >= 0 && !v.shadowed(i, ver.key)
}

// owner returns the position in the chain of the link that owns a version written on br
// at seq and replaced at next, if that link sees the version, or -1.
func (v view) owner(br *branch, seq, next uint64) int {
	for i, l := range v.chain {
		if l.br != br {
			continue
		}
		if seq > l.cut || next != never && next <= l.cut {
			return -1
		}
		return i
	}
	return -1
}

// shadowed reports whether a branch before link i of the chain, between the reader and
// the owner, has a version of k of its own that the view sees.
func (v view) shadowed(i int, k key) bool {
	for _, d := range v.chain[:i] {
		if first := d.br.own.first[k]; first != nil && first.seq <= d.cut {
			return true
		}
	}
	return false
}

// visibleDoc is visible for the indexed version at ord, reading its dense copy m and
// the version itself only when a branch between the reader and the owner could have
// its own version.
func (v view) visibleDoc(ix *kindIndex, ord int32, m *docMeta) bool {
	i := v.owner(m.br, m.seq, m.next)
	return i == 0 || i > 0 && !v.shadowed(i, ix.docs[ord].key)
}

// head returns the sequence number the view reads at.
func (v view) head() uint64 { return v.chain[0].cut }

// Folder returns the folder of a durable store, "" for one in memory.
func (o Options) Folder() string { return o.Path }

// WithFolder returns the options of a durable store in the folder path.
func (o Options) WithFolder(path string) store.Opener {
	o.Path = path
	return o
}

var _ store.FolderOpener = Options{}

// OpenStore is Open for a day1.Config, whose Backend Options can be (a
// store.Opener): the dimensions and the clock come from env when o leaves them unset.
func (o Options) OpenStore(ctx context.Context, env store.OpenEnv) (store.Store, error) {
	env.Fill(&o.Dimensions, &o.Now, &o.Logger)
	return store.Opened(Open(ctx, o))
}
