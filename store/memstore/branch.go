package memstore

import (
	"context"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/day1ai/day1/store"
)

// branch is one line of memory. Its records are the parent's as of forkSeq plus its own
// versions; nothing is copied at creation.
type branch struct {
	info    store.Branch
	parent  *branch
	forkSeq uint64
	own     versionLists[key] // this branch's versions of each key, oldest first
	log     []*version        // this branch's versions in commit order
	stats   map[store.Kind][]stat
	bit     uint64 // one bit chosen by the name's hash: see kindIndex.masks
	id      uint32 // unique in the process, never 0: see docFast
	slot    uint16 // unique among the store's branches but for overflowSlot, never 0: see posting
	// convs lists, by conversation id, the ids of the messages this branch has ever
	// written a version of in that conversation, each once: the candidates of a
	// search window, which reads their versions through a view.
	convs map[string][]string
	// sessions lists, by session id, the ids of the facts this branch has written a
	// version of in that session, each once (but for a fact moved out of a session
	// and back): the facts whose places a search's fact context reads.
	sessions map[string][]string
}

// branchIDs numbers the branches of the process (docFast.tag holds 31 bits of it).
var branchIDs atomic.Uint32

// stat is the running count and total token length of a kind's live documents on a
// branch, relative to its fork, after the version with sequence number seq.
type stat struct {
	seq    uint64
	n      int
	sumLen int
}

func (s *state) newBranch(info store.Branch, parent *branch, forkSeq, head uint64) *branch {
	info.Head = head
	return &branch{info: info, parent: parent, forkSeq: forkSeq, own: newVersionLists[key](0), stats: map[store.Kind][]stat{},
		bit: 1 << (maphash.String(branchSeed, info.Name) % 64), id: nextBranchID(), slot: s.slots.take()}
}

// slots hands out the slots of a store's branches (branch.slot), the short number
// postings hold. A deleted branch's slot is handed out again, once the index has
// dropped the branch's versions. When more branches live than there are slots, the
// others share overflowSlot, whose postings a search checks against each version's
// full tag.
type slots struct {
	next uint16
	free []uint16
}

// overflowSlot is the slot that branches share once every other one is taken.
const overflowSlot = postingHistory - 1

func (a *slots) take() uint16 {
	if n := len(a.free); n > 0 {
		slot := a.free[n-1]
		a.free = a.free[:n-1]
		return slot
	}
	if a.next < overflowSlot-1 {
		a.next++
		return a.next
	}
	return overflowSlot
}

// give takes back the slot of a branch whose versions the index no longer holds.
func (a *slots) give(slot uint16) {
	if slot != overflowSlot {
		a.free = append(a.free, slot)
	}
}

var branchSeed = maphash.MakeSeed()

// nextBranchID returns a branch id: 1 and up, within the 31 bits of docFast.tag.
func nextBranchID() uint32 {
	for {
		if id := branchIDs.Add(1) &^ historyBit; id != 0 {
			return id
		}
	}
}

// versionAt returns the last of the branch's versions of k written at or before cut,
// or nil.
func (b *branch) versionAt(k key, cut uint64) *version {
	first := b.own.first[k]
	if first == nil || first.seq > cut {
		return nil
	}
	if first.next > cut {
		return first // the common case: no later version by the cut, none read
	}
	more := b.own.more[k]
	i := sort.Search(len(more), func(i int) bool { return more[i].seq > cut }) - 1
	if i < 0 {
		return first
	}
	return more[i]
}

func (b *branch) statAt(kind store.Kind, seq uint64) stat {
	st := b.stats[kind]
	i := sort.Search(len(st), func(i int) bool { return st[i].seq > seq }) - 1
	if i < 0 {
		return stat{}
	}
	return st[i]
}

// addStat records the change of a kind's live documents made by the version with
// sequence number seq. batch, when not 0, is the first sequence number of the write
// seq belongs to: views are cut between writes, never within one, so the entries of
// one write make one, a batch adding one entry rather than one per version.
func (b *branch) addStat(kind store.Kind, seq, batch uint64, dn, dLen int) {
	st := b.stats[kind]
	if n := len(st); n > 0 && batch != 0 && st[n-1].seq >= batch {
		last := &st[n-1]
		last.seq, last.n, last.sumLen = seq, last.n+dn, last.sumLen+dLen
		return
	}
	last := b.statAt(kind, never)
	b.stats[kind] = append(st, stat{seq: seq, n: last.n + dn, sumLen: last.sumLen + dLen})
}

func (b *branch) snapshotInfo() store.Branch {
	info := b.info
	info.Metadata = maps.Clone(info.Metadata)
	return info
}

// CreateBranch forks a branch in constant time.
func (s *Store) CreateBranch(ctx context.Context, spec store.BranchSpec) (store.Branch, error) {
	if err := store.ValidateBranchSpec(spec); err != nil {
		return store.Branch{}, err
	}
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return store.Branch{}, err
	}
	defer unlock()
	if _, ok := s.branches[spec.Name]; ok {
		return store.Branch{}, fmt.Errorf("%w: %q", store.ErrBranchExists, spec.Name)
	}
	from := spec.From
	if from == "" && spec.At.Snapshot != "" {
		if sn, ok := s.snaps[spec.At.Snapshot]; ok {
			from = sn.info.Branch
		}
	}
	if from == "" {
		from = store.DefaultBranch
	}
	v, err := s.resolveView(store.View{Branch: from, At: spec.At})
	if err != nil {
		return store.Branch{}, err
	}
	now := s.commitNow()
	forkedAt := now
	if spec.At.Snapshot != "" {
		forkedAt = s.snaps[spec.At.Snapshot].info.At
	} else if !spec.At.Time.IsZero() {
		forkedAt = spec.At.Time.UTC()
	}
	info := store.Branch{
		Name: spec.Name, Parent: from, ForkedAt: forkedAt, FromSnap: spec.At.Snapshot,
		Status: store.BranchActive, Description: spec.Description,
		Metadata: maps.Clone(spec.Metadata), CreatedAt: now,
	}
	forkSeq := v.head()
	if err := s.commit(now, op{Type: opBranch, Branch: &info, ForkSeq: forkSeq}); err != nil {
		return store.Branch{}, err
	}
	b := s.newBranch(info, s.branches[from], forkSeq, s.seq)
	s.branches[spec.Name] = b
	s.hist.AddBranch(spec.Name, from, forkSeq)
	return b.snapshotInfo(), nil
}

// GetBranch returns a branch.
func (s *Store) GetBranch(ctx context.Context, name string) (store.Branch, error) {
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return store.Branch{}, err
	}
	b, err := s.branch(name)
	if err != nil {
		return store.Branch{}, err
	}
	return b.snapshotInfo(), nil
}

// ListBranches returns branches sorted by name.
func (s *Store) ListBranches(ctx context.Context, f store.BranchFilter) ([]store.Branch, error) {
	if f.Status != "" && !f.Status.Valid() {
		return nil, store.Invalid("BranchFilter.Status", "must be active, merged or archived", f.Status)
	}
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var out []store.Branch
	for _, b := range s.branches {
		if f.Status != "" && b.info.Status != f.Status ||
			f.Parent != "" && b.info.Parent != f.Parent ||
			!strings.HasPrefix(b.info.Name, f.Prefix) {
			continue
		}
		out = append(out, b.snapshotInfo())
	}
	slices.SortFunc(out, func(a, b store.Branch) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// SetBranchStatus changes a branch's status.
func (s *Store) SetBranchStatus(ctx context.Context, name string, status store.BranchStatus) (store.Branch, error) {
	if err := store.ValidateBranchStatus(name, status); err != nil {
		return store.Branch{}, err
	}
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return store.Branch{}, err
	}
	defer unlock()
	b, err := s.branch(name)
	if err != nil {
		return store.Branch{}, err
	}
	if b.info.Status == status {
		return b.snapshotInfo(), nil
	}
	now := s.commitNow()
	if err := s.commit(now, op{Type: opBranchStatus, Name: name, Status: status}); err != nil {
		return store.Branch{}, err
	}
	s.applyStatus(b, status, "", now)
	return b.snapshotInfo(), nil
}

func (s *Store) applyStatus(b *branch, status store.BranchStatus, into string, at time.Time) {
	b.info.Status = status
	if status == store.BranchMerged {
		b.info.MergedInto = into
		b.info.MergedAt = at
	}
}

// DeleteBranch removes a branch and its records.
func (s *Store) DeleteBranch(ctx context.Context, name string) error {
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	b, err := s.branch(name)
	if err != nil {
		return err
	}
	if name == store.DefaultBranch {
		return store.Invalid("name", "the default branch cannot be deleted", name)
	}
	for _, c := range s.branches {
		if c.parent == b {
			return store.Invalid("name", fmt.Sprintf("branch has child %q; delete or keep its children first", c.info.Name), name)
		}
	}
	for _, sn := range s.snaps {
		if sn.info.Branch == name {
			return store.Invalid("name", fmt.Sprintf("branch has snapshot %q; delete it first", sn.info.Name), name)
		}
	}
	if err := s.commit(s.commitNow(), op{Type: opBranchDelete, Name: name}); err != nil {
		return err
	}
	s.dropBranch(b)
	return nil
}

func (s *Store) dropBranch(b *branch) {
	delete(s.branches, b.info.Name)
	s.hist.DropBranch(b.info.Name)
	for _, ix := range s.index {
		ix.purge(b)
	}
	s.slots.give(b.slot)
}

// CreateSnapshot names the head of a branch.
func (s *Store) CreateSnapshot(ctx context.Context, branchName, name, description string) (store.Snapshot, error) {
	if err := store.ValidateID("name", name); err != nil {
		return store.Snapshot{}, err
	}
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return store.Snapshot{}, err
	}
	defer unlock()
	if _, err := s.branch(branchName); err != nil {
		return store.Snapshot{}, err
	}
	if _, ok := s.snaps[name]; ok {
		return store.Snapshot{}, fmt.Errorf("%w: %q", store.ErrSnapshotExists, name)
	}
	now := s.commitNow()
	info := store.Snapshot{Name: name, Branch: branchName, At: now, Description: description, CreatedAt: now}
	if err := s.commit(now, op{Type: opSnapshot, Snapshot: &info, ForkSeq: s.seq}); err != nil {
		return store.Snapshot{}, err
	}
	s.snaps[name] = snapshot{info: info, seq: s.seq}
	return info, nil
}

// GetSnapshot returns a snapshot.
func (s *Store) GetSnapshot(ctx context.Context, name string) (store.Snapshot, error) {
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return store.Snapshot{}, err
	}
	sn, ok := s.snaps[name]
	if !ok {
		return store.Snapshot{}, fmt.Errorf("%w: %q", store.ErrSnapshotNotFound, name)
	}
	return sn.info, nil
}

// ListSnapshots returns the snapshots of a branch, or all, oldest first.
func (s *Store) ListSnapshots(ctx context.Context, branchName string) ([]store.Snapshot, error) {
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var all []snapshot
	for _, sn := range s.snaps {
		if branchName == "" || sn.info.Branch == branchName {
			all = append(all, sn)
		}
	}
	slices.SortFunc(all, func(a, b snapshot) int {
		if c := a.info.At.Compare(b.info.At); c != 0 {
			return c
		}
		if a.seq != b.seq {
			return cmpU64(a.seq, b.seq)
		}
		return strings.Compare(a.info.Name, b.info.Name)
	})
	out := make([]store.Snapshot, len(all))
	for i, sn := range all {
		out[i] = sn.info
	}
	return out, nil
}

// DeleteSnapshot removes a snapshot.
func (s *Store) DeleteSnapshot(ctx context.Context, name string) error {
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok := s.snaps[name]; !ok {
		return fmt.Errorf("%w: %q", store.ErrSnapshotNotFound, name)
	}
	if err := s.commit(s.commitNow(), op{Type: opSnapshotDelete, Name: name}); err != nil {
		return err
	}
	delete(s.snaps, name)
	return nil
}

// PutSession creates or replaces a session.
func (s *Store) PutSession(ctx context.Context, sess store.Session) (store.Session, error) {
	sess, err := store.NormalizeSession(sess)
	if err != nil {
		return store.Session{}, err
	}
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return store.Session{}, err
	}
	defer unlock()
	now := s.commitNow()
	if sess.StartedAt.IsZero() {
		sess.StartedAt = now
	}
	sess.StartedAt = sess.StartedAt.UTC()
	sess.Metadata = maps.Clone(sess.Metadata)
	if err := s.commit(now, op{Type: opSession, Session: &sess}); err != nil {
		return store.Session{}, err
	}
	s.sessions[sess.ID] = sess
	return sess, nil
}

// GetSession returns a session.
func (s *Store) GetSession(ctx context.Context, id string) (store.Session, error) {
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return store.Session{}, err
	}
	sess, ok := s.sessions[id]
	if !ok {
		return store.Session{}, fmt.Errorf("%w: session %q", store.ErrNotFound, id)
	}
	sess.Metadata = maps.Clone(sess.Metadata)
	return sess, nil
}

// ListSessions returns sessions, oldest first.
func (s *Store) ListSessions(ctx context.Context, f store.SessionFilter) ([]store.Session, error) {
	s.rlock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var out []store.Session
	for _, sess := range s.sessions {
		if f.Branch != "" && sess.Branch != f.Branch || f.AgentID != "" && sess.AgentID != f.AgentID ||
			f.TaskID != "" && sess.TaskID != f.TaskID || f.Status != "" && sess.Status != f.Status {
			continue
		}
		sess.Metadata = maps.Clone(sess.Metadata)
		out = append(out, sess)
	}
	slices.SortFunc(out, func(a, b store.Session) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// addToSession lists fact f under its session.
func (b *branch) addToSession(f store.Fact) {
	if b.sessions == nil {
		b.sessions = map[string][]string{}
	}
	b.sessions[f.SessionID] = append(b.sessions[f.SessionID], f.ID)
}

// addToConv lists message m under its conversation, unless it is there already.
func (b *branch) addToConv(m store.Message) {
	if b.convs == nil {
		b.convs = map[string][]string{}
	}
	ids := b.convs[m.ConversationID]
	if !slices.Contains(ids, m.ID) {
		b.convs[m.ConversationID] = append(ids, m.ID)
	}
}
