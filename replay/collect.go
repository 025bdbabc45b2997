package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/store"
)

// run is everything a replay is built from: the task, its records on every branch of
// the task, its merges and its task documents.
type run struct {
	task     handoff.Task
	cutoff   time.Time // zero: the head
	limit    time.Time // the latest instant a commit can have
	snapshot store.Snapshot
	branches []string          // the task's branch first, then its members', existing ones only
	owner    map[string]string // branch -> agent
	entries  map[store.Ref]*entry
	merges   []store.MergeRecord
	audit    []auditDoc
	joined   map[string]time.Time // agent -> commit instant of its membership
	handoffs map[string]handoff.Handoff
	checks   map[string]handoff.Checkpoint
}

// entry is one record of the task: its version on each branch that holds it.
type entry struct {
	ref      store.Ref
	versions []store.Record // one per branch, in the run's branch order
	branches []int          // index into run.branches, per version
	origin   int            // index into versions of the branch it was written on
}

// auditDoc is an audit event with the instant its document was stored.
type auditDoc struct {
	ev handoff.Event
	at time.Time
}

// first is the version on the branch the record was written on.
func (en *entry) first() store.Record { return en.versions[en.origin] }

// latest is the newest version on any branch; the origin's on a tie.
func (en *entry) latest() store.Record {
	best := en.first()
	for _, v := range en.versions {
		if stamp(v).After(stamp(best)) {
			best = v
		}
	}
	return best
}

// collect reads everything a replay of task needs, at opts.AsOf.
func (e *Engine) collect(ctx context.Context, name string, asOf store.Point) (*run, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if name == "" {
		return nil, store.Invalid("task", "must name a task", nil)
	}
	if strings.Contains(name, "/") {
		return nil, store.Invalid("task", "is a task's name, not a branch: drop the task/ prefix", name)
	}
	r := &run{entries: map[store.Ref]*entry{}, owner: map[string]string{}, joined: map[string]time.Time{}}
	if err := e.resolvePoint(ctx, r, asOf); err != nil {
		return nil, err
	}
	t, err := e.tasks().GetTask(ctx, name)
	if err != nil {
		return nil, err
	}
	r.task = t
	if !r.cutoff.IsZero() && r.cutoff.Before(t.CreatedAt) {
		return nil, fmt.Errorf("day1: task %q was created at %s, after the replay's point %s: %w",
			name, t.CreatedAt.Format(time.RFC3339Nano), r.cutoff.Format(time.RFC3339Nano), store.ErrTooOld)
	}
	for _, read := range []func(context.Context, *run) error{e.readDocs, e.readRecords, e.readMerges} {
		if err := read(ctx, r); err != nil {
			return nil, err
		}
	}
	rewind(r)
	return r, nil
}

// resolvePoint sets the run's cutoff and the limit of commit instants.
func (e *Engine) resolvePoint(ctx context.Context, r *run, p store.Point) error {
	switch {
	case p.Snapshot != "" && !p.Time.IsZero():
		return store.Invalid("Options.AsOf", "set Snapshot or Time, not both", nil)
	case p.Snapshot != "":
		sn, err := e.Store.GetSnapshot(ctx, p.Snapshot)
		if err != nil {
			return err
		}
		r.snapshot, r.cutoff = sn, sn.At.UTC()
	case !p.Time.IsZero():
		r.cutoff = p.Time.UTC()
	}
	r.limit = r.cutoff
	if r.limit.IsZero() {
		r.limit = e.now()
	}
	return nil
}

// within reports whether an instant is at or before the run's cutoff.
func (r *run) within(t time.Time) bool { return r.cutoff.IsZero() || !t.After(r.cutoff) }

// view is how the run reads branch: at the head, at the snapshot or at the cutoff.
func (r *run) view(branch string) store.View {
	switch {
	case r.cutoff.IsZero():
		return store.View{Branch: branch}
	case r.snapshot.Name != "" && r.snapshot.Branch == branch:
		return store.View{Branch: branch, At: store.Point{Snapshot: r.snapshot.Name}}
	}
	return store.View{Branch: branch, At: store.Point{Time: r.cutoff}}
}

// readDocs reads the task's audit trail, memberships, handoffs and checkpoints.
func (e *Engine) readDocs(ctx context.Context, r *run) error {
	docs, err := e.Store.ListDocs(ctx, store.DocQuery{Collection: handoff.EventCollection, Where: map[string]string{"task": r.task.Name}})
	if err != nil {
		return err
	}
	for _, d := range docs {
		var ev handoff.Event
		if err := json.Unmarshal(d.Data, &ev); err != nil {
			return fmt.Errorf("day1: the audit event %s is malformed: %w", d.ID, err)
		}
		if r.within(d.CreatedAt) {
			r.audit = append(r.audit, auditDoc{ev: ev, at: d.CreatedAt.UTC()})
		}
	}
	members, err := e.Store.ListDocs(ctx, store.DocQuery{Collection: handoff.MemberCollection, Where: map[string]string{"task": r.task.Name}})
	if err != nil {
		return err
	}
	for _, d := range members {
		var m handoff.Member
		if err := json.Unmarshal(d.Data, &m); err != nil {
			return fmt.Errorf("day1: the membership %s is malformed: %w", d.ID, err)
		}
		r.joined[m.Agent] = d.CreatedAt.UTC()
	}
	hs, err := e.tasks().ListHandoffs(ctx, handoff.HandoffFilter{Task: r.task.Name})
	if err != nil {
		return err
	}
	r.handoffs = make(map[string]handoff.Handoff, len(hs))
	for _, h := range hs {
		r.handoffs[h.ID] = h
	}
	cs, err := e.tasks().ListCheckpoints(ctx, handoff.CheckpointFilter{Task: r.task.Name})
	if err != nil {
		return err
	}
	r.checks = make(map[string]handoff.Checkpoint, len(cs))
	for _, c := range cs {
		r.checks[c.ID] = c
	}
	return nil
}

// readRecords reads the records of the task's branch and its members' branches: those
// written since each branch forked, and those that name the task. A record several
// branches hold (merged, say) is one entry.
func (e *Engine) readRecords(ctx context.Context, r *run) error {
	names := []string{r.task.Branch}
	for _, m := range r.task.Members {
		if !slices.Contains(names, m.Branch) && m.Branch != "" {
			names = append(names, m.Branch)
			r.owner[m.Branch] = m.Agent
		}
	}
	for _, name := range names {
		b, err := e.Store.GetBranch(ctx, name)
		if errors.Is(err, store.ErrBranchNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if !r.cutoff.IsZero() && r.cutoff.Before(b.ForkedAt) {
			continue // the branch did not exist yet
		}
		bi := len(r.branches)
		r.branches = append(r.branches, name)
		for _, k := range store.Kinds {
			seen := map[string]bool{}
			for _, f := range []store.Filter{{Since: b.ForkedAt}, {TaskID: r.task.Name}} {
				recs, err := e.Store.List(ctx, r.view(name), store.ListQuery{Kind: k, Filter: f})
				if err != nil {
					if missing(err) {
						continue
					}
					return err
				}
				for _, rec := range recs {
					if seen[rec.RecordID()] {
						continue
					}
					seen[rec.RecordID()] = true
					ref := store.RefOf(rec)
					en := r.entries[ref]
					if en == nil {
						en = &entry{ref: ref}
						r.entries[ref] = en
					}
					en.versions = append(en.versions, rec)
					en.branches = append(en.branches, bi)
				}
			}
		}
	}
	for _, en := range r.entries {
		if err := e.findOrigin(ctx, r, en); err != nil {
			return err
		}
	}
	return nil
}

// findOrigin picks the branch a record held by several branches was written on: the
// first, members' branches before the task's, that shows it at its creation time;
// else the branch of the agent that wrote it; else the first member's that holds it.
func (e *Engine) findOrigin(ctx context.Context, r *run, en *entry) error {
	if len(en.versions) == 1 {
		return nil
	}
	order := make([]int, 0, len(en.versions))
	for i, bi := range en.branches {
		if bi != 0 {
			order = append(order, i)
		}
	}
	for i, bi := range en.branches {
		if bi == 0 {
			order = append(order, i)
		}
	}
	created := en.versions[0].RecordTime()
	for _, i := range order {
		_, err := e.Store.Get(ctx, store.View{Branch: r.branches[en.branches[i]], At: store.Point{Time: created}}, en.ref)
		if err == nil {
			en.origin = i
			return nil
		}
		if !missing(err) {
			return err
		}
	}
	agent := agentOf(en.versions[0])
	for _, i := range order {
		if agent != "" && r.owner[r.branches[en.branches[i]]] == agent {
			en.origin = i
			return nil
		}
	}
	en.origin = order[0]
	return nil
}

// readMerges reads the merges into and out of the run's branches, oldest first.
func (e *Engine) readMerges(ctx context.Context, r *run) error {
	seen := map[string]bool{}
	for _, b := range r.branches {
		ms, err := e.Store.ListMerges(ctx, store.MergeFilter{Branch: b})
		if err != nil {
			return err
		}
		for _, m := range ms {
			if seen[m.ID] || !r.within(m.CreatedAt) {
				continue
			}
			seen[m.ID] = true
			r.merges = append(r.merges, m)
		}
	}
	slices.SortFunc(r.merges, func(a, b store.MergeRecord) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return nil
}

// rewind sets the task, its members and objectives back to the run's cutoff.
func rewind(r *run) {
	if r.cutoff.IsZero() {
		return
	}
	t := &r.task
	done := false
	for _, a := range r.audit {
		if a.ev.Kind == handoff.EventTaskCompleted {
			done = true
		}
	}
	if !done {
		t.Status, t.ResultSummary, t.CompletedBy, t.CompletedAt, t.MergeID = handoff.TaskActive, "", "", time.Time{}, ""
	}
	t.Members = slices.DeleteFunc(slices.Clone(t.Members), func(m handoff.Member) bool {
		at, ok := r.joined[m.Agent]
		if !ok {
			at = m.JoinedAt
		}
		return !r.within(at)
	})
	for i := range t.Members {
		m := &t.Members[i]
		if !m.LeftAt.IsZero() && !r.within(m.LeftAt) {
			m.Status, m.LeftAt, m.Summary = handoff.MemberActive, time.Time{}, ""
		}
	}
	objs := slices.Clone(t.Objectives)
	for i := range objs {
		o := &objs[i]
		hist := slices.DeleteFunc(slices.Clone(o.History), func(c handoff.ObjectiveChange) bool { return !r.within(c.At) })
		o.History = hist
		if len(hist) == 0 {
			o.Status = handoff.ObjectivePending
		} else {
			o.Status = hist[len(hist)-1].To
		}
	}
	t.Objectives = objs
}

// agentOf returns the AgentID a record carries.
func agentOf(rec store.Record) string {
	switch v := rec.(type) {
	case store.Fact:
		return v.AgentID
	case store.Observation:
		return v.AgentID
	case store.Relation:
		return v.AgentID
	case store.Conversation:
		return v.AgentID
	case store.Message:
		return v.AgentID
	}
	return ""
}

// agent returns who wrote an entry: its AgentID, else the agent whose branch it was
// written on.
func (r *run) agent(en *entry) string {
	if a := agentOf(en.first()); a != "" {
		return a
	}
	return r.owner[r.branches[en.branches[en.origin]]]
}

// sortedEntries returns the entries of one kind, oldest first, then by Seq and id.
func (r *run) sortedEntries(k store.Kind) []*entry {
	var out []*entry
	for _, en := range r.entries {
		if en.ref.Kind == k {
			out = append(out, en)
		}
	}
	slices.SortFunc(out, func(a, b *entry) int {
		if c := a.first().RecordTime().Compare(b.first().RecordTime()); c != 0 {
			return c
		}
		if c := seqOf(a.first()) - seqOf(b.first()); c != 0 {
			return c
		}
		return strings.Compare(a.ref.ID, b.ref.ID)
	})
	return out
}

func seqOf(rec store.Record) int {
	if m, ok := rec.(store.Message); ok {
		return m.Seq
	}
	return 0
}

// factVerified reports whether a fact is live and verified.
func factVerified(f store.Fact) bool {
	if !f.Status.Live() || f.Verify.Status == store.Invalidated {
		return false
	}
	return f.Status == store.FactVerified || f.Status == store.FactPromoted || f.Verify.Status == store.Verified
}

// verified reports whether a fact or conversation is verified.
func verified(rec store.Record) bool {
	switch v := rec.(type) {
	case store.Fact:
		return factVerified(v)
	case store.Conversation:
		return v.Verify.Status == store.Verified
	}
	return false
}
