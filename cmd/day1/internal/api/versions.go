package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
)

// Version is one version of a record on a branch: the record as it was from At on,
// or Deleted when it was gone then.
type Version struct {
	At      time.Time       `json:"at"`
	Source  string          `json:"source"`
	Deleted bool            `json:"deleted,omitempty"`
	Record  *memview.Record `json:"record,omitempty"`
}

// versions lists the versions of a record on a branch. The library keeps no list of
// versions, so they are derived with time travel: the record is read as it was at
// each instant of the branch's timeline that touched it (its timeline events) and at
// each merge into the branch, then at the head; consecutive reads that return the
// same record collapse into one version. An instant from before the branch began
// (an event it inherited from its parent) is read on the parent. Changes that leave no timeline event and
// come from no merge show up in the next version read; the head's version is dated
// by the record's updated_at.
func (s *Server) versions(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	kind, err := memview.ParseKind("kind", r.PathValue("kind"))
	if err != nil {
		return nil, err
	}
	ref := day1.Ref{Kind: kind, ID: r.PathValue("id")}
	branch := qq.str("branch")
	if branch == "" {
		branch = day1.DefaultBranch
	}
	ctx := r.Context()
	evs, err := s.c.Timeline(ctx, day1.TimelineQuery{Branch: branch, Kinds: []day1.Kind{kind}, Limit: 10000})
	if err != nil {
		return nil, err
	}
	type instant struct {
		at     time.Time
		source string
	}
	var at []instant
	for _, e := range evs {
		if e.Ref == ref {
			at = append(at, instant{e.At, "timeline"})
		}
	}
	merges, err := s.c.Merges(ctx, day1.MergeFilter{Target: branch})
	if err != nil {
		return nil, err
	}
	for _, m := range merges {
		at = append(at, instant{m.CreatedAt, "merge " + m.Source})
	}
	slices.SortStableFunc(at, func(a, b instant) int { return a.at.Compare(b.at) })

	out := []Version{}
	var last []byte
	add := func(when time.Time, source string, rec day1.Record, err error) error {
		v := Version{At: when, Source: source}
		switch {
		case errors.Is(err, day1.ErrNotFound):
			if len(out) == 0 {
				return nil // not there yet
			}
			v.Deleted = true
		case err != nil:
			return err
		default:
			v.Record = memview.View(rec)
		}
		data, _ := json.Marshal(v.Record)
		if len(out) > 0 && bytes.Equal(data, last) {
			return nil
		}
		last = data
		out = append(out, v)
		return nil
	}
	for _, in := range at {
		// A read at an instant sees what was written up to and at it. An instant
		// before the branch began (an event it inherited) is read on the parent.
		tt := s.c.TimeTravel(day1.At{Time: in.at.Add(time.Nanosecond)})
		rec, err := getRef(ctx, tt, branch, ref)
		if errors.Is(err, day1.ErrTooOld) {
			b, berr := s.c.GetBranch(ctx, branch)
			if berr != nil {
				return nil, berr
			}
			if b.Parent == "" {
				continue
			}
			rec, err = getRef(ctx, tt, b.Parent, ref)
			if errors.Is(err, day1.ErrTooOld) {
				continue
			}
			in.source += " on " + b.Parent
		}
		if err := add(in.at, in.source, rec, err); err != nil {
			return nil, err
		}
	}
	rec, err := getRef(ctx, s.c, branch, ref)
	if len(out) == 0 && err != nil {
		return nil, err
	}
	when := time.Time{}
	if rec != nil {
		when = changedAt(rec)
	}
	if err := add(when, "head", rec, err); err != nil {
		return nil, err
	}
	return out, nil
}

// changedAt returns when rec last changed: its updated_at when it has one, else its
// creation time.
func changedAt(rec day1.Record) time.Time {
	var f struct {
		UpdatedAt time.Time `json:"updated_at"`
	}
	if data, err := json.Marshal(rec); err == nil && json.Unmarshal(data, &f) == nil && !f.UpdatedAt.IsZero() {
		return f.UpdatedAt
	}
	return rec.RecordTime()
}

// getRef reads one record of any kind.
func getRef(ctx context.Context, r day1.Reader, branch string, ref day1.Ref) (day1.Record, error) {
	var rec day1.Record
	var err error
	switch ref.Kind {
	case day1.KindFact:
		rec, err = r.GetFact(ctx, branch, ref.ID)
	case day1.KindObservation:
		rec, err = r.GetObservation(ctx, branch, ref.ID)
	case day1.KindRelation:
		rec, err = r.GetRelation(ctx, branch, ref.ID)
	case day1.KindConversation:
		rec, err = r.GetConversation(ctx, branch, ref.ID)
	default:
		rec, err = r.GetMessage(ctx, branch, ref.ID)
	}
	if err != nil {
		return nil, err
	}
	return rec, nil
}
