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
type model struct {
	mu       sync.Mutex
	branches map[string]*branchModel
	// shared are the refs written to main before the agents forked: any agent may
	// change them, so their content on main follows merge order (merges into main run
	// under mainMu, one at a time, so that order is known).
	shared map[day1.Ref]bool
	// mismatches are the differences found while running; final adds those of the
	// final read.
	mismatches []string
	nmismatch  int
	// verified and verifiedRecords count the branches and records compared with memory.
	verified, verifiedRecords int
}

// branchModel is the expected state of one branch.
type branchModel struct {
	name string
	recs map[day1.Ref]string // ref -> content
	// seen are the versions in the branch's history, by versionKey.
	seen map[string]bool
	// uncertain are refs whose write failed: present or not, both are accepted.
	uncertain map[day1.Ref]bool
	facts     []string // fact ids, for updates and searches
	convs     []string // conversation ids, for appends
	seq       map[string]int
}

func newModel() *model {
	return &model{branches: map[string]*branchModel{}, shared: map[day1.Ref]bool{}}
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

// root adds a branch with no parent in the model: main.
func (m *model) root(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.branches[name] = &branchModel{name: name, recs: map[day1.Ref]string{}, seen: map[string]bool{},
		uncertain: map[day1.Ref]bool{}, seq: map[string]int{}}
}

// fork adds child as a copy of parent: the same records and the same history.
func (m *model) fork(child, parent string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.branches[parent]
	m.branches[child] = &branchModel{name: child, recs: maps.Clone(p.recs), seen: maps.Clone(p.seen),
		uncertain: maps.Clone(p.uncertain), facts: slices.Clone(p.facts), convs: slices.Clone(p.convs), seq: maps.Clone(p.seq)}
}

// versionKey names one version of a record.
func versionKey(ref day1.Ref, content string) string {
	return string(ref.Kind) + "\x00" + ref.ID + "\x00" + content
}

func (m *model) has(branch string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.branches[branch] != nil
}

// wrote records an acknowledged write of rec to branch.
func (m *model) wrote(branch string, rec day1.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.branches[branch]
	ref := day1.Ref{Kind: rec.RecordKind(), ID: rec.RecordID()}
	if _, ok := b.recs[ref]; !ok {
		switch r := rec.(type) {
		case day1.Fact:
			b.facts = append(b.facts, ref.ID)
		case day1.Conversation:
			b.convs = append(b.convs, ref.ID)
		case day1.Message:
			b.seq[r.ConversationID] = r.Seq
		}
	}
	c := content(rec)
	b.recs[ref] = c
	b.seen[versionKey(ref, c)] = true
}

// failed records a write whose outcome is unknown.
func (m *model) failed(branch string, rec day1.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.branches[branch].uncertain[day1.Ref{Kind: rec.RecordKind(), ID: rec.RecordID()}] = true
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
	return m.branches[branch].recs[ref]
}

// expectedChanges returns what a diff of src against dst lists on src's side: the
// records whose version on src differs from dst's and is not in dst's history. Shared
// refs are left out unless withShared: other merges into main change them
// concurrently.
func (m *model) expectedChanges(src, dst string, withShared bool) map[day1.Ref]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, d := m.branches[src], m.branches[dst]
	out := map[day1.Ref]string{}
	for ref, c := range s.recs {
		if (m.shared[ref] && !withShared) || s.uncertain[ref] {
			continue
		}
		if d.recs[ref] != c && !d.seen[versionKey(ref, c)] {
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
		puts[day1.Ref{Kind: r.RecordKind(), ID: r.RecordID()}] = content(r)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ref := range res.Plan.Deletes {
		m.mismatchLocked("merge %s into %s deletes %s %s; the soak deletes nothing", src, dst, ref.Kind, ref.ID)
	}
	s, d := m.branches[src], m.branches[dst]
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
		m.mismatchLocked("merge %s into %s carries %s %s (%q), which the target holds or took in already (phantom)", src, dst, ref.Kind, ref.ID, g)
	}
	// The merge took src in as it was when its diff was read: every version of src's
	// history but the racing writes it missed.
	missed := map[string]bool{}
	for ref, c := range raced {
		if puts[ref] != c {
			missed[versionKey(ref, c)] = true
		}
	}
	for k := range s.seen {
		if !missed[k] {
			d.seen[k] = true
		}
	}
	for ref, g := range puts {
		if _, ok := d.recs[ref]; !ok {
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
	// Message sequence numbers on dst follow its messages.
	for _, r := range res.Plan.Puts {
		if msg, ok := r.(day1.Message); ok && msg.Seq > d.seq[msg.ConversationID] {
			d.seq[msg.ConversationID] = msg.Seq
		}
	}
}

// checkHits compares search hits on branch with the model: every hit must be a record
// the branch holds, with its content.
func (m *model) checkHits(branch, query string, hits []day1.Hit) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.branches[branch]
	for _, h := range hits {
		ref := day1.Ref{Kind: h.Record.RecordKind(), ID: h.Record.RecordID()}
		if b.uncertain[ref] {
			continue
		}
		c, ok := b.recs[ref]
		switch {
		case !ok:
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
	var branches []*branchModel
	for name, b := range m.branches {
		if name == "task/"+task || strings.HasPrefix(name, "task/"+task+"/") {
			branches = append(branches, b)
		}
	}
	for _, f := range p.Facts {
		ref, c := day1.Ref{Kind: day1.KindFact, ID: f.ID}, content(f)
		if !slices.ContainsFunc(branches, func(b *branchModel) bool { return b.recs[ref] == c || b.uncertain[ref] }) {
			m.mismatchLocked("handoff packet of task %s holds fact %s %q, which none of the task's branches holds", task, f.ID, f.Text)
		}
	}
}

// taskBranches returns the branches of a task in the model.
func (m *model) taskBranches(task string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for name := range m.branches {
		if name == "task/"+task || strings.HasPrefix(name, "task/"+task+"/") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// retire compares branches that will not change again with memory and forgets them,
// so that the model of a long run stays the size of its live branches.
func (m *model) retire(ctx context.Context, c *day1.Client, names []string) error {
	for _, name := range names {
		if err := m.verifyBranch(ctx, c, name, "retired"); err != nil {
			return err
		}
		m.mu.Lock()
		delete(m.branches, name)
		m.mu.Unlock()
	}
	return nil
}

// verify reads every branch of the model whole and compares it with the expected
// records.
func (m *model) verify(ctx context.Context, c *day1.Client, label string) error {
	m.mu.Lock()
	names := slices.Sorted(maps.Keys(m.branches))
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
	b := m.branches[name]
	lost, phantom := 0, 0
	for ref, want := range b.recs {
		if b.uncertain[ref] {
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
		if _, ok := b.recs[ref]; !ok && !b.uncertain[ref] {
			phantom++
			m.mismatchLocked("%s: %s: %s %s %q was never written there (phantom)", label, name, ref.Kind, ref.ID, g)
		}
	}
	if n, k := countKinds(b.recs), countKinds(got); !maps.Equal(n, k) && lost+phantom == 0 {
		m.mismatchLocked("%s: %s: counts per kind %v, want %v", label, name, k, n)
	}
	m.verified++
	m.verifiedRecords += len(got)
	return nil
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
