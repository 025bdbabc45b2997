package day1

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/day1ai/day1/store"
)

// DefaultTimelineLimit is the most events a Timeline returns when TimelineQuery.Limit
// is zero.
const DefaultTimelineLimit = 1000

// maxTimelineOffset bounds TimelineQuery.Offset, far beyond any memory's events.
const maxTimelineOffset = 1 << 40

// TimelineQuery selects the events of a Timeline. Zero fields match everything.
type TimelineQuery struct {
	// Branch to read. Empty means DefaultBranch (the snapshot's branch in a View at a
	// snapshot).
	Branch string
	// SessionID, TaskID and AgentID keep the records of that session, task or agent.
	SessionID string
	TaskID    string
	AgentID   string
	// Since keeps records created at or after it; Until keeps those created before it.
	// With ByUpdate they bound the time of each record's current version instead.
	Since time.Time
	Until time.Time
	// Kinds of record to include. Empty means all five.
	Kinds []Kind
	// Limit is the most events returned, 1 to store.MaxLimit: the earliest ones, or
	// with Newest the latest. Default DefaultTimelineLimit.
	Limit int
	// Offset skips that many events of the order before the Limit it returns: the
	// next page of a long timeline starts where the last one ended. Default 0. Each
	// page reads the events before it again, so deep pages cost more.
	Offset int
	// Newest lists the latest events first, as git log does: the Limit latest.
	// Default false: the earliest first.
	Newest bool
	// ByUpdate places each record at the time its current version was written
	// (Fact.UpdatedAt, Conversation.UpdatedAt; the other kinds are not updated in
	// place and keep their CreatedAt), so a correction or a rename shows as a new
	// event, as a commit does in git log. Event.At is then that time. Default false:
	// every record stands at its creation.
	ByUpdate bool
	// IncludeExpired keeps facts that have expired (Fact.ExpiresAt) by the instant
	// the timeline reads, as ListOptions.IncludeExpired does. Default false: a
	// timeline, like a list, leaves them out.
	IncludeExpired bool
}

// Event is one record on a timeline.
type Event struct {
	// At is when the record was created, or with TimelineQuery.ByUpdate when its
	// current version was written.
	At time.Time
	// Ref names the record.
	Ref Ref
	// Record is the record itself.
	Record Record
	// Summary is one line of text describing the record: a fact's text, an
	// observation's type and summary, "source -type-> target" for a relation, a
	// conversation's title, a message's role and content. Long text is cut.
	Summary string
}

// Timeline returns the records of a branch that the query selects, as events ordered by
// creation time, then kind (fact, observation, relation, conversation, message), then
// Seq for messages, then id: a conversation comes before its messages and the messages
// of a conversation come in Seq order. With ByUpdate a fact or a conversation stands
// at the time of its current version instead, so a conversation that gained messages
// after it began comes after them.
func (r reader) Timeline(ctx context.Context, q TimelineQuery) ([]Event, error) {
	if err := r.c.use(ctx); err != nil {
		return nil, err
	}
	if q.Limit == 0 {
		q.Limit = DefaultTimelineLimit
	}
	if q.Limit < 1 || q.Limit > store.MaxLimit {
		return nil, store.Invalid("TimelineQuery.Limit", fmt.Sprintf("must be between 1 and %d (0 means %d)", store.MaxLimit, DefaultTimelineLimit), q.Limit)
	}
	if q.Offset < 0 || q.Offset > maxTimelineOffset {
		return nil, store.Invalid("TimelineQuery.Offset", fmt.Sprintf("must be between 0 and %d", maxTimelineOffset), q.Offset)
	}
	// Each kind's first Offset+Limit records in the order hold the page's events.
	perKind := q.Offset + q.Limit
	if perKind > store.MaxLimit {
		perKind = 0 // every record of the kind
	}
	kinds := q.Kinds
	if len(kinds) == 0 {
		kinds = store.Kinds
	}
	for _, k := range kinds {
		if !k.Valid() {
			return nil, store.Invalid("TimelineQuery.Kinds", "may hold fact, observation, relation, conversation and message", k)
		}
	}
	kinds = slices.Compact(slices.Sorted(slices.Values(kinds)))
	v, err := r.view(ctx, q.Branch)
	if err != nil {
		return nil, err
	}
	f := Filter{SessionID: q.SessionID, TaskID: q.TaskID, AgentID: q.AgentID, Since: q.Since, Until: q.Until}
	var events []Event
	for _, k := range kinds {
		kf, lq := f, store.ListQuery{Kind: k, Order: OrderCreated, Desc: q.Newest, Limit: perKind}
		at := Record.RecordTime
		if q.ByUpdate && store.Updatable(k) {
			// Since and Until bound the update time, which no filter holds: the
			// kind's records are bounded here instead, before the limit.
			at, lq.Order = store.UpdateTime, OrderUpdated
			if !q.Since.IsZero() || !q.Until.IsZero() {
				kf.Since, kf.Until, lq.Limit = time.Time{}, time.Time{}, 0
			}
		}
		if k == KindFact {
			if kf, err = r.unexpired(ctx, kf, q.IncludeExpired); err != nil {
				return nil, err
			}
		}
		lq.Filter = kf
		recs, err := r.c.st.List(ctx, v, lq)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			t := at(rec)
			if !q.Since.IsZero() && t.Before(q.Since) || !q.Until.IsZero() && !t.Before(q.Until) {
				continue
			}
			events = append(events, Event{At: t, Ref: store.RefOf(rec), Record: rec, Summary: summarize(rec)})
		}
	}
	slices.SortFunc(events, compareEvents)
	if q.Newest {
		slices.Reverse(events)
	}
	return store.Page(events, q.Offset, q.Limit), nil
}

func compareEvents(a, b Event) int {
	if c := a.At.Compare(b.At); c != 0 {
		return c
	}
	if c := kindOrder(a.Ref.Kind) - kindOrder(b.Ref.Kind); c != 0 {
		return c
	}
	ma, oka := a.Record.(Message)
	mb, okb := b.Record.(Message)
	if oka && okb && ma.Seq != mb.Seq {
		return ma.Seq - mb.Seq
	}
	return strings.Compare(a.Ref.ID, b.Ref.ID)
}

func kindOrder(k Kind) int { return slices.Index(store.Kinds, k) }

// maxSummary is the most runes of record text an Event.Summary keeps.
const maxSummary = 160

// summarize describes a record in one line.
func summarize(r Record) string {
	var s string
	switch r := r.(type) {
	case Fact:
		s = r.Text
	case Observation:
		s = string(r.Type)
		if r.Tool != "" {
			s += " (" + r.Tool + ")"
		}
		s += ": " + r.Summary
	case Relation:
		s = r.Source + " -" + r.Type + "-> " + r.Target
	case Conversation:
		s = "conversation"
		if r.Title != "" {
			s += ": " + r.Title
		}
	case Message:
		s = fmt.Sprintf("#%d %s: %s", r.Seq, r.Role, r.Content)
	}
	s = strings.Join(strings.Fields(s), " ")
	if rs := []rune(s); len(rs) > maxSummary {
		s = string(rs[:maxSummary-1]) + "…"
	}
	return s
}
