package replay

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/store"
)

// TaskReplay rebuilds the run of the task named task from memory: the task, every step
// in order (see Event), each agent's contribution, the verified facts and
// conversations, and the outcome. Records are read from the task's branch and its
// members' branches: those written there since the branch forked, and those whose
// TaskID names the task. opts.AsOf replays the task as it stood at a snapshot or an
// instant.
//
// Finding the commit instant of a step whose record carries an earlier time (a
// verification, a merge, a record stamped by an engine's clock) costs a few
// time-travel reads; see Event.At.
//
// Errors: a *store.ValidationError for an empty task name or a bad opts.AsOf; an
// error matching store.ErrNotFound for an unknown task (or snapshot); store.ErrTooOld
// when opts.AsOf is before the task was created; the store's and ctx's errors.
func (e *Engine) TaskReplay(ctx context.Context, task string, opts Options) (TaskReplay, error) {
	r, err := e.collect(ctx, task, opts.AsOf)
	if err != nil {
		return TaskReplay{}, err
	}
	timeline, err := e.timeline(ctx, r, opts)
	if err != nil {
		return TaskReplay{}, err
	}
	out := TaskReplay{Task: r.task, AsOf: r.cutoff, Timeline: timeline}
	out.Agents = contributions(r)
	out.KeyFacts, out.KeyConversations = keyRecords(r)
	if !opts.ExcludeConversations {
		out.Decisions = decisions(r)
		if opts.VerifiedOnly {
			verified := map[string]bool{}
			for _, c := range out.KeyConversations {
				verified[c.ID] = true
			}
			out.Decisions = slices.DeleteFunc(out.Decisions, func(d Decision) bool { return !verified[d.Conversation] })
		}
	}
	out.Outcome = outcome(r, timeline)
	return out, nil
}

// timeline builds and orders the steps of a run.
func (e *Engine) timeline(ctx context.Context, r *run, opts Options) ([]Event, error) {
	evs, err := e.recordEvents(ctx, r, opts)
	if err != nil {
		return nil, err
	}
	evs = append(evs, r.auditEvents()...)
	ms, err := e.mergeEvents(ctx, r)
	if err != nil {
		return nil, err
	}
	evs = append(evs, ms...)
	evs = slices.DeleteFunc(evs, func(ev Event) bool { return !r.within(ev.At) })
	SortEvents(evs)
	return evs, nil
}

// SortEvents orders events as a timeline lists them: by At, then by the order of
// EventKinds, then by Seq, then by ID.
func SortEvents(evs []Event) {
	slices.SortStableFunc(evs, func(a, b Event) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		if c := slices.Index(EventKinds, a.Kind) - slices.Index(EventKinds, b.Kind); c != 0 {
			return c
		}
		if a.Seq != b.Seq {
			return a.Seq - b.Seq
		}
		return strings.Compare(a.ID, b.ID)
	})
}

var recordKinds = map[store.Kind]EventKind{
	store.KindFact: EventFact, store.KindObservation: EventObservation, store.KindRelation: EventRelation,
	store.KindConversation: EventConversation, store.KindMessage: EventMessage,
}

// keep says whether a record's steps belong in the timeline under opts.
func (r *run) keep(en *entry, opts Options) bool {
	switch en.ref.Kind {
	case store.KindObservation:
		return opts.IncludeObservations
	case store.KindConversation:
		return !opts.ExcludeConversations && (!opts.VerifiedOnly || verified(en.latest()))
	case store.KindMessage:
		if opts.ExcludeConversations {
			return false
		}
		if !opts.VerifiedOnly {
			return true
		}
		m := en.first().(store.Message)
		conv := r.entries[store.ConversationRef(m.ConversationID)]
		return conv != nil && verified(conv.latest())
	case store.KindFact:
		return !opts.VerifiedOnly || verified(en.latest())
	}
	return true
}

// recordEvents returns the creation step of each record and the verification step of
// each judged fact and conversation.
func (e *Engine) recordEvents(ctx context.Context, r *run, opts Options) ([]Event, error) {
	var evs []Event
	for _, k := range store.Kinds {
		for _, en := range r.sortedEntries(k) {
			if !r.keep(en, opts) {
				continue
			}
			rec := en.first()
			branch := r.branches[en.branches[en.origin]]
			at, _, err := e.commitInstant(ctx, branch, en.ref, rec.RecordTime().UTC(), r.limit, anyVersion)
			if err != nil {
				return nil, err
			}
			agent := r.agent(en)
			evs = append(evs, Event{Kind: recordKinds[k], At: at, Time: rec.RecordTime(), Branch: branch,
				Agent: agent, ID: en.ref.ID, Seq: seqOf(rec), Summary: recordSummary(rec), Record: en.latest()})
			ev, ok, err := e.verificationEvent(ctx, r, en, agent)
			if err != nil {
				return nil, err
			}
			if ok {
				evs = append(evs, ev)
			}
		}
	}
	return evs, nil
}

// verificationEvent returns the step of the latest verdict on a fact or conversation.
func (e *Engine) verificationEvent(ctx context.Context, r *run, en *entry, agent string) (Event, bool, error) {
	best := -1
	for i, v := range en.versions {
		at := verifiedAt(v)
		if at.IsZero() {
			continue
		}
		if best < 0 || at.After(verifiedAt(en.versions[best])) || (at.Equal(verifiedAt(en.versions[best])) && i == en.origin) {
			best = i
		}
	}
	if best < 0 {
		return Event{}, false, nil
	}
	rec := en.versions[best]
	judged := verifiedAt(rec).UTC()
	branch := r.branches[en.branches[best]]
	at, _, err := e.commitInstant(ctx, branch, en.ref, judged, r.limit, judgedSince(judged))
	if err != nil {
		return Event{}, false, err
	}
	var v store.Verification
	switch x := rec.(type) {
	case store.Fact:
		v = x.Verify
	case store.Conversation:
		v = x.Verify
	}
	status := string(v.Status)
	if status == "" {
		status = "unverified"
	}
	by := ""
	if v.By != "" {
		by = " by " + v.By
	}
	sum := fmt.Sprintf("%s %s judged %s (%.2f)%s", en.ref.Kind, en.ref.ID, status, v.Score, by)
	return Event{Kind: EventVerification, At: at, Time: judged, Branch: branch, Agent: agent,
		ID: en.ref.ID, Summary: sum, Record: rec}, true, nil
}

// auditEvents turns the task's audit trail into steps, and adds a join step for each
// member that joined without an audit event of its own (by accepting a handoff).
func (r *run) auditEvents() []Event {
	var evs []Event
	joinedBy := map[string]bool{}
	members := map[string]*handoff.Member{}
	for i := range r.task.Members {
		members[r.task.Members[i].Agent] = &r.task.Members[i]
	}
	for i := range r.audit {
		a := &r.audit[i]
		ev := Event{At: a.at, Time: a.ev.At, Branch: r.task.Branch, Agent: a.ev.Actor, ID: a.ev.ID, Audit: &a.ev}
		switch a.ev.Kind {
		case handoff.EventTaskCreated:
			ev.Kind, ev.Summary = EventTaskCreated, "task "+r.task.Name+" created"
			if a.ev.Note != "" {
				ev.Summary += ": " + oneLine(a.ev.Note)
			}
		case handoff.EventAgentJoined:
			joinedBy[a.ev.Actor] = true
			ev.Kind, ev.Member = EventAgentJoined, members[a.ev.Actor]
			ev.Summary = a.ev.Actor + " joined"
			if a.ev.Note != "" {
				ev.Summary += " as " + a.ev.Note
			}
		case handoff.EventAgentLeft:
			ev.Kind, ev.Member = EventAgentLeft, members[a.ev.Actor]
			ev.Summary = a.ev.Actor + " left"
			if a.ev.Note != "" {
				ev.Summary += ": " + oneLine(a.ev.Note)
			}
		case handoff.EventObjectiveUpdated:
			ev.Kind = EventObjectiveUpdated
			ev.Summary = fmt.Sprintf("%s -> %s", a.ev.From, a.ev.To)
			if a.ev.Note != "" {
				ev.Summary = oneLine(a.ev.Note) + ": " + ev.Summary
			}
		case handoff.EventHandoffCreated, handoff.EventHandoffStatus:
			h, ok := r.handoffs[a.ev.Handoff]
			if ok {
				ev.Handoff = &h
			}
			ev.ID = a.ev.Handoff
			ev.Kind, ev.Summary = handoffSummary(a.ev, ev.Handoff)
		case handoff.EventCheckpoint, handoff.EventCheckpointUsed:
			id := a.ev.To
			ev.Kind, ev.Summary = EventCheckpoint, a.ev.Actor+" saved checkpoint "+id
			if a.ev.Kind == handoff.EventCheckpointUsed {
				id = a.ev.Note
				ev.Kind, ev.Summary = EventCheckpointResumed, a.ev.Actor+" resumed from checkpoint "+id
			}
			if c, ok := r.checks[id]; ok {
				ev.Checkpoint = &c
			}
			ev.ID = id
		case handoff.EventTaskCompleted:
			ev.Kind, ev.Summary = EventTaskCompleted, "task completed"
			if a.ev.Note != "" {
				ev.Summary += ": " + oneLine(a.ev.Note)
			}
		default:
			continue
		}
		evs = append(evs, ev)
	}
	for _, m := range r.task.Members {
		at, ok := r.joined[m.Agent]
		if joinedBy[m.Agent] || !ok {
			continue
		}
		evs = append(evs, Event{Kind: EventAgentJoined, At: at, Time: m.JoinedAt, Branch: r.task.Branch,
			Agent: m.Agent, ID: handoff.MemberCollection + ":" + r.task.Name + ":" + m.Agent,
			Summary: m.Agent + " joined as " + m.Role, Member: members[m.Agent]})
	}
	return evs
}

// handoffSummary describes a handoff step.
func handoffSummary(ev handoff.Event, h *handoff.Handoff) (EventKind, string) {
	typ := "handoff"
	if h != nil {
		typ = string(h.Type) + " handoff"
	}
	if ev.Kind == handoff.EventHandoffCreated {
		s := fmt.Sprintf("%s %s offered", typ, ev.Handoff)
		if h != nil && h.FromAgent != "" {
			s += " by " + h.FromAgent
		}
		if h != nil && h.ToAgent != "" {
			s += " to " + h.ToAgent
		}
		return EventHandoffCreated, s
	}
	s := fmt.Sprintf("%s %s: %s -> %s", typ, ev.Handoff, ev.From, ev.To)
	if ev.Actor != "" {
		s += " by " + ev.Actor
	}
	return EventHandoffStatus, s
}

// mergeEvents returns a step for each merge of the run's branches. Its instant is
// when the target first shows a record the merge adopted.
func (e *Engine) mergeEvents(ctx context.Context, r *run) ([]Event, error) {
	var evs []Event
	for i := range r.merges {
		m := &r.merges[i]
		at, err := e.mergeInstant(ctx, r, m)
		if err != nil {
			return nil, err
		}
		sum := fmt.Sprintf("merged %d records of %s into %s (%s)", len(m.Merged), m.Source, m.Target, m.Strategy)
		if len(m.Rejected) > 0 {
			sum += fmt.Sprintf(", %d left out", len(m.Rejected))
		}
		evs = append(evs, Event{Kind: EventMerge, At: at, Time: m.CreatedAt, Branch: m.Target,
			Agent: m.MergedBy, ID: m.ID, Summary: sum, Merge: m})
	}
	return evs, nil
}

// mergeInstant finds the commit instant of a merge from the first record it adopted:
// the instant the target first shows the version the source held when the merge was
// planned. A merge that adopted nothing keeps its own time.
func (e *Engine) mergeInstant(ctx context.Context, r *run, m *store.MergeRecord) (time.Time, error) {
	from := m.CreatedAt.UTC()
	for _, it := range m.Merged {
		if it.Action != store.ActionAdopt {
			continue
		}
		src, err := e.Store.Get(ctx, store.View{Branch: m.Source, At: store.Point{Time: from}}, it.Ref)
		if missing(err) {
			continue
		}
		if err != nil {
			return time.Time{}, err
		}
		limit := r.limit
		at, found, err := e.commitInstant(ctx, m.Target, it.Ref, from, limit, stampedSince(stamp(src)))
		if err != nil || found {
			return at, err
		}
	}
	return from, nil
}

// maxSummary bounds the text of a one-line summary, in bytes.
const maxSummary = 120

// oneLine folds white space and cuts s to maxSummary bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxSummary {
		return s
	}
	cut := maxSummary - 3
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// recordSummary describes a record in one line.
func recordSummary(rec store.Record) string {
	switch v := rec.(type) {
	case store.Fact:
		return oneLine(v.Text)
	case store.Observation:
		if v.Tool != "" {
			return oneLine(fmt.Sprintf("%s (%s): %s", v.Type, v.Tool, v.Summary))
		}
		return oneLine(fmt.Sprintf("%s: %s", v.Type, v.Summary))
	case store.Relation:
		return oneLine(fmt.Sprintf("%s -%s-> %s", v.Source, v.Type, v.Target))
	case store.Conversation:
		if v.Title == "" {
			return "conversation " + v.ID
		}
		return oneLine(v.Title)
	case store.Message:
		if v.Tool != "" {
			return oneLine(fmt.Sprintf("#%d %s %s: %s", v.Seq, v.Role, v.Tool, v.Content))
		}
		return oneLine(fmt.Sprintf("#%d %s: %s", v.Seq, v.Role, v.Content))
	}
	return ""
}
