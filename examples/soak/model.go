package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/day1ai/day1"
)

// model is what memory must hold, built from acknowledged writes and merges alone.
//
// Every branch the soak touches has an expected set of records (ref to content) and
// the set of versions in its history: every version written on it, on the branch it
// forked from up to the fork, and on the branches merged into it up to each merge.
// Versions are unique (every write's content differs from every other's), so a
// version in a branch's history marks a common ancestor, as in git. A merge of src
// into dst with the accept-source policy carries exactly the records whose version on
// src differs from dst's and is not in dst's history (dst took it in already and may
// have changed it since), with src's content, whatever dst did meanwhile. A merge is
// a point in time: a write to src that races the merge may or may not be in it (its
// plan says which); a write it missed is not in dst's history and is expected in the
// next merge.
//
// Main is kept with its whole past (each record's versions by main's revision, one
// revision per merge), so that a branch forked from main is main at a revision plus
// what changed on it, and a fork copies nothing of main. Every other branch descends
// from main through one fork: a task's branch forks from main, its members' branches
// from the task's.
type model struct {
	mu       sync.Mutex
	main     mainHistory
	branches map[string]*branchModel
	// shared are the refs written to main before the agents started: any agent may
	// change them, so their content on main follows merge order (merges into main run
	// under mainMu, one at a time, so that order is known).
	shared map[day1.Ref]bool
	// seedFacts are the ids of the shared facts, which every branch holds.
	seedFacts []string
	// mismatches are the differences found while running; verify adds those of the
	// final read.
	mismatches []string
	nmismatch  int
	// verified and verifiedRecords count the branches and records compared with memory.
	verified, verifiedRecords int
}

// mainHistory is main at every revision.
type mainHistory struct {
	rev  int
	recs map[day1.Ref][]revContent // each record's versions, oldest first
	seen map[string]int            // version key -> the revision it entered main's history
}

type revContent struct {
	rev     int
	content string // "" for a record not on main at that revision
}

// at returns a record's content on main at revision rev, or "".
func (h *mainHistory) at(ref day1.Ref, rev int) string {
	vs := h.recs[ref]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].rev > rev })
	if i == 0 {
		return ""
	}
	return vs[i-1].content
}

func (h *mainHistory) set(ref day1.Ref, c string) {
	h.recs[ref] = append(h.recs[ref], revContent{rev: h.rev, content: c})
}

func (h *mainHistory) saw(key string) {
	if _, ok := h.seen[key]; !ok {
		h.seen[key] = h.rev
	}
}

// branchModel is the expected state of one branch other than main: main at
// revision base, and what changed on it since.
type branchModel struct {
	name string
	base int                 // main's revision the branch (or its task's) forked from
	recs map[day1.Ref]string // records written or merged here since: ref -> content
	seen map[string]bool     // versions that entered its history since, by versionKey
	// uncertain are refs whose write failed: present or not, both are accepted.
	uncertain map[day1.Ref]bool
	facts     []string // fact ids, for updates and searches
	convs     []string // conversation ids, for appends
	seq       map[string]int
}

func newModel() *model {
	return &model{branches: map[string]*branchModel{}, shared: map[day1.Ref]bool{},
		main: mainHistory{recs: map[day1.Ref][]revContent{}, seen: map[string]int{}}}
}

const maxMismatches = 50

// mismatch records one difference between memory and the model.
func (m *model) mismatch(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mismatchLocked(format, args...)
}

func (m *model) mismatchLocked(format string, args ...any) {
	m.nmismatch++
	if len(m.mismatches) < maxMismatches {
		m.mismatches = append(m.mismatches, fmt.Sprintf(format, args...))
	}
}

// seed records facts and observations written to main before the agents start; the
// facts are shared.
func (m *model) seed(recs []day1.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.main.rev++
	for _, r := range recs {
		ref, c := refOf(r), content(r)
		m.main.set(ref, c)
		m.main.saw(versionKey(ref, c))
		if ref.Kind == day1.KindFact {
			m.shared[ref] = true
			m.seedFacts = append(m.seedFacts, ref.ID)
		}
	}
}

// fork adds child as a copy of parent: main at its current revision, or another
// branch with what changed on it.
func (m *model) fork(child, parent string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if parent == day1.DefaultBranch {
		m.branches[child] = &branchModel{name: child, base: m.main.rev, recs: map[day1.Ref]string{}, seen: map[string]bool{},
			uncertain: map[day1.Ref]bool{}, facts: slices.Clone(m.seedFacts), seq: map[string]int{}}
		return
	}
	p := m.branches[parent]
	m.branches[child] = &branchModel{name: child, base: p.base, recs: maps.Clone(p.recs), seen: maps.Clone(p.seen),
		uncertain: maps.Clone(p.uncertain), facts: slices.Clone(p.facts), convs: slices.Clone(p.convs), seq: maps.Clone(p.seq)}
}

// versionKey names one version of a record.
func versionKey(ref day1.Ref, content string) string {
	return string(ref.Kind) + "\x00" + ref.ID + "\x00" + content
}

func refOf(r day1.Record) day1.Ref { return day1.Ref{Kind: r.RecordKind(), ID: r.RecordID()} }

// rec returns a record's content on branch, or "".
func (m *model) rec(branch string, ref day1.Ref) string {
	if branch == day1.DefaultBranch {
		return m.main.at(ref, m.main.rev)
	}
	b := m.branches[branch]
	if c, ok := b.recs[ref]; ok {
		return c
	}
	return m.main.at(ref, b.base)
}

// inHistory reports whether a version is in branch's history.
func (m *model) inHistory(branch, key string) bool {
	if branch == day1.DefaultBranch {
		_, ok := m.main.seen[key]
		return ok
	}
	b := m.branches[branch]
	if b.seen[key] {
		return true
	}
	r, ok := m.main.seen[key]
	return ok && r <= b.base
}

func (m *model) has(branch string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.branches[branch] != nil
}

// wrote records an acknowledged write of rec to branch (not main: agents write to
// main by merges only).
func (m *model) wrote(branch string, rec day1.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.branches[branch]
	ref, c := refOf(rec), content(rec)
	if m.rec(branch, ref) == "" {
		switch r := rec.(type) {
		case day1.Fact:
			b.facts = append(b.facts, ref.ID)
		case day1.Conversation:
			b.convs = append(b.convs, ref.ID)
		case day1.Message:
			b.seq[r.ConversationID] = r.Seq
		}
	}
	b.recs[ref] = c
	b.seen[versionKey(ref, c)] = true
}

// failed records a write whose outcome is unknown.
func (m *model) failed(branch string, rec day1.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.branches[branch].uncertain[refOf(rec)] = true
}

// pickFact returns the n-th (modulo their number) fact id of branch, for an update:
// the agent's own facts and the shared ones.
func (m *model) pickFact(branch string, n int) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.branches[branch]
	if len(b.facts) == 0 {
		return "", false
	}
	return b.facts[n%len(b.facts)], true
}

// pickConv returns the n-th (modulo their number) conversation id of branch and the
// Seq of its last message.
func (m *model) pickConv(branch string, n int) (string, int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.branches[branch]
	if len(b.convs) == 0 {
		return "", 0, false
	}
	id := b.convs[n%len(b.convs)]
	return id, b.seq[id], true
}

// content returns the expected content of a record on branch, or "".
func (m *model) content(branch string, ref day1.Ref) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rec(branch, ref)
}

// expectedChanges returns what a diff of src against dst lists on src's side: the
// records whose version on src differs from dst's and is not in dst's history. Shared
// refs are left out unless withShared: other merges into main change them
// concurrently. dst is main or a branch of src's task; either holds src's past, so
// only what changed on src since its fork can differ.
func (m *model) expectedChanges(src, dst string, withShared bool) map[day1.Ref]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.branches[src]
	out := map[day1.Ref]string{}
	for ref, c := range s.recs {
		if (m.shared[ref] && !withShared) || s.uncertain[ref] {
			continue
		}
		if m.rec(dst, ref) != c && !m.inHistory(dst, versionKey(ref, c)) {
			out[ref] = c
		}
	}
	return out
}

// checkDiff compares the source side of a diff with the model.
func (m *model) checkDiff(src, dst string, want map[day1.Ref]string, d *day1.Diff) {
	got := map[day1.Ref]string{}
	for _, ch := range d.SourceChanges {
		if ch.After == nil {
			m.mismatch("diff %s..%s lists %s %s as deleted; the soak deletes nothing", src, dst, ch.Ref.Kind, ch.Ref.ID)
			continue
		}
		got[ch.Ref] = content(ch.After)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.branches[src]
	for ref, c := range want {
		g, ok := got[ref]
		switch {
		case !ok:
			m.mismatchLocked("diff %s..%s: %s %s changed on the source since the last merge and is not listed", src, dst, ref.Kind, ref.ID)
		case g != c:
			m.mismatchLocked("diff %s..%s: %s %s is listed as %q, the source wrote %q", src, dst, ref.Kind, ref.ID, g, c)
		}
	}
	for ref := range got {
		if _, ok := want[ref]; !ok && !m.shared[ref] && !s.uncertain[ref] {
			m.mismatchLocked("diff %s..%s lists %s %s, which the target holds or took in already", src, dst, ref.Kind, ref.ID)
		}
	}
}

// merged applies a merge of src into dst to the model. want is expectedChanges(src,
// dst, true) taken before the merge started (dst does not change meanwhile: merges
// into one branch run one at a time); raced are the records written to src while the
// merge ran, which it may or may not carry.
func (m *model) merged(src, dst string, want map[day1.Ref]string, raced map[day1.Ref]string, res day1.MergeResult) {
	puts := map[day1.Ref]string{}
	for _, r := range res.Plan.Puts {
		puts[refOf(r)] = content(r)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ref := range res.Plan.Deletes {
		m.mismatchLocked("merge %s into %s deletes %s %s; the soak deletes nothing", src, dst, ref.Kind, ref.ID)
	}
	s := m.branches[src]
	for ref, c := range want {
		g, ok := puts[ref]
		switch {
		case !ok:
			m.mismatchLocked("merge %s into %s: %s %s changed on the source before the merge and is not in it (lost)", src, dst, ref.Kind, ref.ID)
		case g != c:
			m.mismatchLocked("merge %s into %s: %s %s carried as %q, the source held %q", src, dst, ref.Kind, ref.ID, g, c)
		}
	}
	for ref, g := range puts {
		if _, ok := want[ref]; ok {
			continue
		}
		if c, ok := raced[ref]; ok && c == g {
			continue
		}
		if s.uncertain[ref] {
			continue
		}
		m.mismatchLocked("merge %s into %s (diff base %s) carries %s %s (%q), which the target holds or took in already (phantom)",
			src, dst, baseOf(res.Diff), ref.Kind, ref.ID, g)
	}
	// The merge took src in as it was when its diff was read: every version of src's
	// history but the racing writes it missed. What src holds from its fork is in
	// dst's history already.
	missed := map[string]bool{}
	for ref, c := range raced {
		if puts[ref] != c {
			missed[versionKey(ref, c)] = true
		}
	}
	if dst == day1.DefaultBranch {
		m.main.rev++
		for k := range s.seen {
			if !missed[k] {
				m.main.saw(k)
			}
		}
		for ref, g := range puts {
			m.main.set(ref, g)
			m.main.saw(versionKey(ref, g))
		}
		return
	}
	d := m.branches[dst]
	for k := range s.seen {
		if !missed[k] {
			d.seen[k] = true
		}
	}
	for ref, g := range puts {
		if m.rec(dst, ref) == "" {
			switch ref.Kind {
			case day1.KindFact:
				d.facts = append(d.facts, ref.ID)
			case day1.KindConversation:
				d.convs = append(d.convs, ref.ID)
			}
		}
		d.recs[ref] = g
		d.seen[versionKey(ref, g)] = true
	}
	for _, r := range res.Plan.Puts {
		if msg, ok := r.(day1.Message); ok && msg.Seq > d.seq[msg.ConversationID] {
			d.seq[msg.ConversationID] = msg.Seq
		}
	}
}

// baseOf names a diff's merge base.
func baseOf(d *day1.Diff) string {
	if d == nil {
		return "none"
	}
	return fmt.Sprintf("%s at %s", d.Base, d.BaseAt.Format("15:04:05.000000"))
}

// checkHits compares search hits on branch with the model: every hit must be a record
// the branch holds, with its content.
func (m *model) checkHits(branch, query string, hits []day1.Hit) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.branches[branch]
	for _, h := range hits {
		ref := refOf(h.Record)
		if b.uncertain[ref] {
			continue
		}
		c := m.rec(branch, ref)
		switch {
		case c == "":
			m.mismatchLocked("search %q on %s found %s %s, which the branch should not hold (phantom)", query, branch, ref.Kind, ref.ID)
		case c != content(h.Record):
			m.mismatchLocked("search %q on %s found %s %s as %q, want %q", query, branch, ref.Kind, ref.ID, content(h.Record), c)
		}
	}
}

// checkPacket checks that every fact of a task's handoff packet is held, with its
// content, by one of the task's branches: task/<task> or a member's.
func (m *model) checkPacket(task string, p day1.ContextPacket) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var branches []string
	for name := range m.branches {
		if name == "task/"+task || strings.HasPrefix(name, "task/"+task+"/") {
			branches = append(branches, name)
		}
	}
	for _, f := range p.Facts {
		ref, c := day1.Ref{Kind: day1.KindFact, ID: f.ID}, content(f)
		if !slices.ContainsFunc(branches, func(b string) bool { return m.rec(b, ref) == c || m.branches[b].uncertain[ref] }) {
			m.mismatchLocked("handoff packet of task %s holds fact %s %q, which none of the task's branches holds", task, f.ID, f.Text)
		}
	}
}

// verify reads every branch of the model whole and compares it with the expected
// records.
func (m *model) verify(ctx context.Context, c *day1.Client, label string) error {
	m.mu.Lock()
	names := append([]string{day1.DefaultBranch}, slices.Sorted(maps.Keys(m.branches))...)
	m.mu.Unlock()
	for _, name := range names {
		if err := m.verifyBranch(ctx, c, name, label); err != nil {
			return err
		}
	}
	return nil
}

// verifyBranch reads a branch whole and compares it with the model: ids per kind (none
// lost, no phantom) and contents.
func (m *model) verifyBranch(ctx context.Context, c *day1.Client, name, label string) error {
	got, err := readBranch(ctx, c, name)
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	expected, uncertain := m.expected(name)
	lost, phantom := 0, 0
	for ref, want := range expected {
		if uncertain[ref] {
			continue
		}
		g, ok := got[ref]
		switch {
		case !ok:
			lost++
			m.mismatchLocked("%s: %s: %s %s is missing (lost); want %q", label, name, ref.Kind, ref.ID, want)
		case g != want:
			m.mismatchLocked("%s: %s: %s %s is %q, want %q", label, name, ref.Kind, ref.ID, g, want)
		}
	}
	for ref, g := range got {
		if _, ok := expected[ref]; !ok && !uncertain[ref] {
			phantom++
			m.mismatchLocked("%s: %s: %s %s %q was never written there (phantom)", label, name, ref.Kind, ref.ID, g)
		}
	}
	if n, k := countKinds(expected), countKinds(got); !maps.Equal(n, k) && lost+phantom == 0 {
		m.mismatchLocked("%s: %s: counts per kind %v, want %v", label, name, k, n)
	}
	m.verified++
	m.verifiedRecords += len(got)
	return nil
}

// expected returns every record a branch must hold, and those it may hold or not.
func (m *model) expected(branch string) (map[day1.Ref]string, map[day1.Ref]bool) {
	rev, uncertain := m.main.rev, map[day1.Ref]bool{}
	var own map[day1.Ref]string
	if b := m.branches[branch]; b != nil {
		rev, own, uncertain = b.base, b.recs, b.uncertain
	}
	out := make(map[day1.Ref]string, len(m.main.recs)+len(own))
	for ref := range m.main.recs {
		if c := m.main.at(ref, rev); c != "" {
			out[ref] = c
		}
	}
	maps.Copy(out, own)
	return out, uncertain
}

// readBranch lists every record of every kind on a branch.
func readBranch(ctx context.Context, c *day1.Client, branch string) (map[day1.Ref]string, error) {
	o := day1.ListOptions{Branch: branch}
	out := map[day1.Ref]string{}
	add := func(r day1.Record) { out[day1.Ref{Kind: r.RecordKind(), ID: r.RecordID()}] = content(r) }
	facts, err := c.ListFacts(ctx, o)
	if err != nil {
		return nil, err
	}
	for _, r := range facts {
		add(r)
	}
	obs, err := c.ListObservations(ctx, o)
	if err != nil {
		return nil, err
	}
	for _, r := range obs {
		add(r)
	}
	rels, err := c.ListRelations(ctx, o)
	if err != nil {
		return nil, err
	}
	for _, r := range rels {
		add(r)
	}
	convs, err := c.ListConversations(ctx, o)
	if err != nil {
		return nil, err
	}
	for _, r := range convs {
		add(r)
	}
	msgs, err := c.ListMessages(ctx, o)
	if err != nil {
		return nil, err
	}
	for _, r := range msgs {
		add(r)
	}
	return out, nil
}

func countKinds(recs map[day1.Ref]string) map[day1.Kind]int {
	n := map[day1.Kind]int{}
	for ref := range recs {
		n[ref.Kind]++
	}
	return n
}

// content is the part of a record the soak writes and compares: its kind's fields,
// without the store's timestamps and embeddings.
func content(r day1.Record) string {
	switch v := r.(type) {
	case day1.Fact:
		return "fact|" + v.Text + "|" + v.Category + "|" + string(v.Status) + "|" + meta(v.Metadata)
	case day1.Observation:
		return "obs|" + string(v.Type) + "|" + v.Tool + "|" + v.Summary + "|" + meta(v.Metadata)
	case day1.Relation:
		return "rel|" + v.Source + "|" + v.Target + "|" + v.Type + "|" + meta(v.Properties)
	case day1.Conversation:
		return "conv|" + v.Title + "|" + meta(v.Metadata)
	case day1.Message:
		return "msg|" + v.ConversationID + "|" + strconv.Itoa(v.Seq) + "|" + string(v.Role) + "|" + v.Content + "|" + meta(v.Metadata)
	}
	return fmt.Sprintf("%T", r)
}

func meta(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		sb.WriteString(k + "=" + m[k] + ";")
	}
	return sb.String()
}
