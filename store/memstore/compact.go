package memstore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/day1ai/day1/store"
)

// The steps of a compaction, in order, as Options.compactHook sees them. A crash at any
// of them loses nothing acknowledged and doubles nothing.
const (
	stepLogCreated        = "log-created"        // the next generation's log exists, empty
	stepSwitched          = "switched"           // the switch entry is in; writes go to the new log
	stepCheckpointHalf    = "checkpoint-half"    // half the versions are in the temporary checkpoint
	stepCheckpointWritten = "checkpoint-written" // the temporary checkpoint is complete, not flushed
	stepCheckpointSynced  = "checkpoint-synced"  // flushed, not yet renamed
	stepRenamed           = "renamed"            // the checkpoint has its name; the directory not yet flushed
	stepDirSynced         = "dir-synced"         // the new generation is durable
	stepRemovedOne        = "removed-one"        // one file of an older generation removed
	stepReloaded          = "reloaded"           // the writer's memory holds what the checkpoint does
	stepDone              = "done"
)

// Defaults of automatic compaction.
const (
	// DefaultCompactRatio is Options.CompactRatio when it is zero.
	DefaultCompactRatio = 2
	// DefaultCompactMinBytes is Options.CompactMinBytes when it is zero.
	DefaultCompactMinBytes = 64 << 20
)

// CompactStats reports a compaction; it is store.CompactStats.
type CompactStats = store.CompactStats

// Compact writes a checkpoint of the store and starts a new log after it, then removes
// the files the checkpoint replaces, so that the next open reads the checkpoint and
// the short log after it instead of every entry ever written. Versions older than the
// retention horizon (Options.Retention before now) are left out of the checkpoint,
// but for those a branch, a snapshot or a merge base still reads. Writers wait only
// while a consistent view is taken and the log switched; the checkpoint is written
// without the lock. One compaction runs at a time: a second call waits for the first.
//
// It fails with store.ErrNotSupported on an in-memory store, store.ErrReadOnly on a
// read-only one and store.ErrClosed after Close. A failed compaction leaves the store
// as it was, working on its log.
func (s *Store) Compact(ctx context.Context) (CompactStats, error) {
	s.mu.RLock()
	err := s.canWrite(ctx)
	closing := s.closing
	s.mu.RUnlock()
	if err != nil {
		return CompactStats{}, err
	}
	if closing {
		return CompactStats{}, store.ErrClosed
	}
	if s.log == nil && !s.opts.ReadOnly {
		return CompactStats{}, fmt.Errorf("%w: an in-memory store has no log to compact", store.ErrNotSupported)
	}
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	st, err := s.compact(ctx, false)
	s.logCompaction(st, err, false)
	return st, err
}

// logCompaction logs a compaction's outcome: Info with its figures, Warn when it
// failed. A compaction an automatic one found not due any more logs nothing.
func (s *Store) logCompaction(st CompactStats, err error, auto bool) {
	l := store.Logger(s.opts.Logger)
	switch {
	case err != nil:
		l.Warn("day1: memstore: compaction failed", "path", s.opts.Path, "auto", auto, "err", err)
	case st.Generation != 0:
		l.Info("day1: memstore: compacted", "path", s.opts.Path, "auto", auto, "generation", st.Generation,
			"bytes_before", st.BytesBefore, "bytes_after", st.BytesAfter, "versions", st.Versions,
			"dropped", st.Dropped, "superseded", st.Superseded, "pause", st.Pause, "duration", st.Duration)
	}
}

// compact runs one compaction; an automatic one (auto) only when it is still due once
// the commits of other stores are read in. Callers hold s.compactMu.
func (s *Store) compact(ctx context.Context, auto bool) (CompactStats, error) {
	start := time.Now()
	hook := s.opts.compactHook
	if hook == nil {
		hook = func(string) {}
	}
	dir := s.opts.Path
	before, _ := storeBytes(dir)
	// The switch is made under the commit lock, with every other store's commits read
	// in: no store appends meanwhile, and the new generation is above every file
	// there.
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return CompactStats{}, err
	}
	locked := time.Now()
	if auto && !s.auto.due(s) {
		// Another store compacted since this one decided to.
		unlock()
		return CompactStats{}, nil
	}
	files, err := listFiles(dir)
	if err != nil {
		unlock()
		return CompactStats{}, fmt.Errorf("day1: memstore: compact: %w", err)
	}
	// Logs past the one in use are left by compactions that stopped before their
	// switch: no entry leads to them.
	for _, g := range files.logs {
		if g > s.log.gen {
			os.Remove(logPath(dir, g))
		}
	}
	gen := max(files.maxGen(), s.log.gen, s.auto.maxGen) + 1
	nf, err := os.OpenFile(logPath(dir, gen), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		unlock()
		return CompactStats{}, fmt.Errorf("day1: memstore: compact: %w", err)
	}
	if err := syncDir(dir); err != nil {
		unlock()
		nf.Close()
		os.Remove(logPath(dir, gen))
		return CompactStats{}, fmt.Errorf("day1: memstore: compact: %w", err)
	}
	hook(stepLogCreated)
	c := s.capture()
	old := s.log.f
	if err := s.log.append(entry{Seq: s.seq, At: c.at, Ops: []op{{Type: opSwitch, Gen: gen}}}); err != nil {
		// The old log may now end in a torn frame: like a failed commit, the store
		// refuses further work until it is opened again.
		s.failed = err
		unlock()
		nf.Close()
		return CompactStats{}, err
	}
	s.log.f, s.log.gen, s.log.size, s.log.seen = nf, gen, 0, 0
	s.auto.maxGen = gen
	s.auto.logBytes = 0
	pause := time.Since(locked)
	unlock()
	old.Close()
	hook(stepSwitched)

	p := s.plan(c, gen)
	tmp := ckptPath(dir, gen) + tmpExt
	// Another store may compact past this generation while the checkpoint is
	// written (and remove its temporary file as left over): this one is then
	// superseded, and its checkpoint left out.
	supersededStats := func() (CompactStats, error) {
		os.Remove(tmp)
		after, _ := storeBytes(dir)
		return CompactStats{Generation: gen, Seq: c.seq, BytesBefore: before, BytesAfter: after,
			Pause: pause, Superseded: true, Duration: time.Since(start)}, nil
	}
	n, err := writeCheckpoint(ctx, tmp, p, hook)
	if err != nil {
		if superseded(dir, gen) {
			return supersededStats()
		}
		return CompactStats{}, err
	}
	hook(stepCheckpointSynced)
	if err := os.Rename(tmp, ckptPath(dir, gen)); err != nil {
		if superseded(dir, gen) {
			return supersededStats()
		}
		os.Remove(tmp)
		return CompactStats{}, fmt.Errorf("day1: memstore: compact: %w", err)
	}
	hook(stepRenamed)
	if err := syncDir(dir); err != nil {
		return CompactStats{}, fmt.Errorf("day1: memstore: compact: %w", err)
	}
	hook(stepDirSynced)
	s.mu.Lock()
	s.auto.ckptBytes = n
	if p.horizon.After(s.horizon) {
		s.horizon = p.horizon
	}
	s.mu.Unlock()
	if files, err := listFiles(dir); err == nil {
		removed := 0
		for _, t := range files.tmps {
			if g, ok := tmpGen(t); ok && g < gen {
				os.Remove(t)
			}
		}
		for _, g := range files.ckpts {
			if g < gen {
				os.Remove(ckptPath(dir, g))
				removed++
				if removed == 1 {
					hook(stepRemovedOne)
				}
			}
		}
		for _, g := range files.logs {
			if g < gen {
				os.Remove(logPath(dir, g))
				removed++
				if removed == 1 {
					hook(stepRemovedOne)
				}
			}
		}
		syncDir(dir)
	}
	st := CompactStats{
		Generation: gen, Seq: c.seq, Horizon: p.horizon,
		BytesBefore: before, BytesAfter: n, CheckpointBytes: n,
		Versions: len(p.versions), Dropped: p.dropped, Pause: pause,
	}
	if p.dropped > 0 && !superseded(dir, gen) {
		held, err := s.reload(ctx, gen)
		switch {
		case err != nil && superseded(dir, gen):
			st.Superseded = true
		case err != nil:
			return CompactStats{}, fmt.Errorf("day1: memstore: compact: the checkpoint is written, but the store's memory was not rebuilt from it: %w", err)
		default:
			st.Pause, st.Reloaded = max(st.Pause, held), true
			hook(stepReloaded)
		}
	} else if p.dropped > 0 {
		st.Superseded = true
	}
	hook(stepDone)
	st.BytesAfter, _ = storeBytes(dir)
	st.Duration = time.Since(start)
	return st, nil
}

// reload rebuilds the store's memory from the checkpoint of generation gen and the
// log after it, which the store is appending to, and swaps it in: most of the log is
// read without the lock, and what was committed meanwhile under it. It returns how
// long it held the lock. Callers hold s.compactMu.
func (s *Store) reload(ctx context.Context, gen uint64) (time.Duration, error) {
	dir := s.opts.Path
	fresh := newStore(s.opts)
	if err := fresh.loadCheckpoint(ckptPath(dir, gen), &chain{}); err != nil {
		return 0, err
	}
	f, err := os.Open(logPath(dir, gen))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := &logReader{dir: dir, f: f, gen: gen, ckptGen: gen}
	if _, err := r.read(fresh.replay); err != nil {
		return 0, err
	}
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	locked := time.Now()
	// Every append happens under the commit lock: the log is whole up to its end now,
	// and the store has read in all of it.
	if _, err := r.read(fresh.replay); err != nil {
		return 0, err
	}
	if r.off != s.log.size || fresh.seq != s.seq || len(fresh.branches) != len(s.branches) {
		return 0, fmt.Errorf("the rebuilt memory (sequence %d, %d branches, %d log bytes) is not the store's (%d, %d, %d)",
			fresh.seq, len(fresh.branches), r.off, s.seq, len(s.branches), s.log.size)
	}
	if s.horizon.After(fresh.horizon) {
		fresh.horizon = s.horizon
	}
	s.state = fresh.state
	return time.Since(locked), nil
}

// storeBytes returns the total size of the store files in dir.
func storeBytes(dir string) (int64, error) {
	files, err := listFiles(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	add := func(path string) {
		if fi, err := os.Stat(path); err == nil {
			total += fi.Size()
		}
	}
	for _, g := range files.ckpts {
		add(ckptPath(dir, g))
	}
	for _, g := range files.logs {
		add(logPath(dir, g))
	}
	return total, nil
}

// capture is a consistent view of the store taken under its lock, cheaply: the
// versions are immutable and a branch's log only grows, so the view holds the length
// of each log rather than a copy of it. What later writes change in place (branch
// infos, the history, the maps) is copied.
type capture struct {
	seq      uint64
	at       time.Time
	dims     int
	horizon  time.Time // the store's horizon so far
	branches []capBranch
	names    map[*branch]string
	snaps    []snapshot
	sessions []store.Session
	merges   []store.MergeRecord
	points   []store.MergePoint
	docs     []*store.Doc
	commits  []commit
}

type capBranch struct {
	info    store.Branch
	forkSeq uint64
	log     []*version
}

// capture takes the view. Callers hold s.mu for writing.
func (s *Store) capture() *capture {
	c := &capture{
		seq: s.seq, at: s.now().UTC(), dims: s.dims, horizon: s.horizon,
		names:   make(map[*branch]string, len(s.branches)),
		merges:  s.merges[:len(s.merges):len(s.merges)],
		points:  s.hist.MergePoints(),
		commits: s.commits[:len(s.commits):len(s.commits)],
	}
	// Parents before children, so that a load finds each branch's parent.
	var visit func(b *branch)
	visit = func(b *branch) {
		if _, ok := c.names[b]; ok {
			return
		}
		if b.parent != nil {
			visit(b.parent)
		}
		c.names[b] = b.info.Name
		c.branches = append(c.branches, capBranch{info: b.snapshotInfo(), forkSeq: b.forkSeq, log: b.log[:len(b.log):len(b.log)]})
	}
	names := make([]string, 0, len(s.branches))
	for name := range s.branches {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		visit(s.branches[name])
	}
	for _, sn := range s.snaps {
		c.snaps = append(c.snaps, sn)
	}
	slices.SortFunc(c.snaps, func(a, b snapshot) int { return cmpU64(a.seq, b.seq) })
	for _, sess := range s.sessions {
		c.sessions = append(c.sessions, sess)
	}
	for _, d := range s.docs {
		c.docs = append(c.docs, d)
	}
	return c
}

// plan is what a checkpoint holds: the captured view less what the retention drops.
type plan struct {
	c        *capture
	gen      uint64
	horizon  time.Time
	versions []*version // kept, in sequence order
	dropped  int
	commits  []commitAt
}

// plan decides what the checkpoint of c keeps. A version is kept when it was written
// after the horizon, or when some point a read may still ask for sees it: the horizon
// itself, a snapshot, the fork point of a child branch, the branch as a merge took it. It reads only what c holds, without the store's lock.
func (s *Store) plan(c *capture, gen uint64) *plan {
	p := &plan{c: c, gen: gen, horizon: c.horizon}
	if r := s.opts.Retention; r > 0 {
		if h := c.at.Add(-r); h.After(p.horizon) {
			p.horizon = h
		}
	}
	// hseq: the last commit at or before the horizon. Reads at or after the horizon
	// read at it or later.
	hi := -1
	if !p.horizon.IsZero() {
		hi = sort.Search(len(c.commits), func(i int) bool { return c.commits[i].at.After(p.horizon) }) - 1
	}
	var hseq uint64
	if hi >= 0 {
		hseq = c.commits[hi].seq
	}
	// The points up to the horizon that reads may still ask for, by branch
	// (store.History.Pins).
	var h store.History
	for _, b := range c.branches {
		h.AddBranch(b.info.Name, b.info.Parent, b.forkSeq)
	}
	for _, mp := range c.points {
		h.AddMerge(mp)
	}
	snaps := make([]store.BranchRev, 0, len(c.snaps))
	for _, sn := range c.snaps {
		snaps = append(snaps, store.BranchRev{Branch: sn.info.Branch, Rev: sn.seq})
	}
	pins := h.Pins(hseq, snaps)
	var all []uint64
	for _, ps := range pins {
		all = append(all, ps...)
	}
	all = sortedUnique(all)
	// Commits: every one from the horizon's on, and for each older pin the commit
	// holding it, so that its instant (a merge base's) stays known.
	keep := map[int]bool{}
	for i := max(hi, 0); i < len(c.commits); i++ {
		keep[i] = true
	}
	for _, r := range all {
		if r >= hseq {
			break
		}
		if i := sort.Search(len(c.commits), func(i int) bool { return c.commits[i].seq >= r }); i < len(c.commits) {
			keep[i] = true
		}
	}
	for i, cm := range c.commits {
		if keep[i] {
			p.commits = append(p.commits, commitAt{Seq: cm.seq, At: cm.at})
		}
	}
	total := 0
	for _, b := range c.branches {
		total += len(b.log)
		bpins := pins[b.info.Name]
		// The next version of each key on the branch, as of the capture: a version's
		// own next field may be changing under a writer.
		next := map[key]uint64{}
		for i := len(b.log) - 1; i >= 0; i-- {
			v := b.log[i]
			n, ok := next[v.key]
			if !ok {
				n = never
			}
			next[v.key] = v.seq
			if store.Retained(bpins, hseq, v.seq, n) {
				p.versions = append(p.versions, v)
			}
		}
	}
	slices.SortFunc(p.versions, func(a, b *version) int { return cmpU64(a.seq, b.seq) })
	p.dropped = total - len(p.versions)
	return p
}

// autoCompact starts compactions by itself as the log grows. Its fields are guarded
// by Store.mu.
type autoCompact struct {
	maxGen    uint64 // the highest generation of the store's files
	ckptBytes int64  // the size of the last checkpoint, 0 for none
	logBytes  int64  // bytes logged since the last checkpoint
	retryAt   int64  // after a failed compaction, logBytes at which to try again
	running   bool
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// logged counts n bytes appended to the log and starts a compaction in the
// background when the log has grown past its threshold. Callers hold s.mu for writing.
func (a *autoCompact) logged(s *Store, n int64) {
	a.logBytes += n
	if s.opts.CompactRatio < 0 || a.running || s.closing || a.ctx == nil {
		return
	}
	if !a.due(s) {
		return
	}
	a.running = true
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		s.compactMu.Lock()
		st, err := s.compact(a.ctx, true)
		s.compactMu.Unlock()
		if a.ctx.Err() == nil {
			s.logCompaction(st, err, true)
		}
		s.mu.Lock()
		a.running = false
		a.retryAt = 0
		if err != nil {
			// Try again once the log has grown by as much again.
			a.retryAt = a.logBytes + s.compactMinBytes()
		}
		s.mu.Unlock()
	}()
}

// compactMinBytes returns Options.CompactMinBytes, or its default.
func (s *Store) compactMinBytes() int64 {
	if s.opts.CompactMinBytes == 0 {
		return DefaultCompactMinBytes
	}
	return s.opts.CompactMinBytes
}

// due reports whether the log has grown past the threshold of an automatic
// compaction. Callers hold s.mu.
func (a *autoCompact) due(s *Store) bool {
	ratio, least := s.opts.CompactRatio, s.compactMinBytes()
	if ratio < 0 {
		return false
	}
	if ratio == 0 {
		ratio = DefaultCompactRatio
	}
	return a.logBytes >= least && float64(a.logBytes) >= ratio*float64(a.ckptBytes) && a.logBytes >= a.retryAt
}

// superseded reports whether dir holds a checkpoint of a generation after gen:
// another store compacted past gen.
func superseded(dir string, gen uint64) bool {
	files, err := listFiles(dir)
	return err == nil && len(files.ckpts) > 0 && files.ckpts[len(files.ckpts)-1] > gen
}
