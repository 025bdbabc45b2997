package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
)

// Version is one version of a record on a branch: the record as it was from At on,
// or Deleted when it was gone then.
type Version struct {
	At      time.Time       `json:"at"`
	Source  string          `json:"source" jsonschema:"The instant that dates the version: timeline (the record's timeline event), merge <source> (a merge into the branch) or updated (the record's updated_at); ' on <parent>' follows an instant the branch inherited from its parent; head when nothing else dates it."`
	Deleted bool            `json:"deleted,omitempty"`
	Record  *memview.Record `json:"record,omitempty"`
}

// versions lists the versions of a record on a branch. The library keeps no list of
// versions, so they are derived with time travel over the instants that may have
// changed the record: its timeline events on the branch (inherited ones included),
// the merges into the branch, and the record's own updated_at. The version of an
// instant is the record as read just before the next instant (the head for the last
// one): a merge's writes land after the merge record is dated, and a change that
// leaves no instant of its own shows up in the version before it. An instant from
// before the branch began is an inherited one, named so ("timeline on main"), and
// read on the parent when the branch's history does not reach it. Consecutive reads that return the
// same record collapse into one version; a read that finds no record is a deletion
// once the record has existed.
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
	b, err := s.c.GetBranch(ctx, branch)
	if err != nil {
		return nil, err
	}
	head, headErr := getRef(ctx, s.c, branch, ref)
	if headErr != nil && !errors.Is(headErr, day1.ErrNotFound) {
		return nil, headErr
	}
	type instant struct {
		at     time.Time
		source string
	}
	var at []instant
	evs, err := s.c.Timeline(ctx, day1.TimelineQuery{Branch: branch, Kinds: []day1.Kind{kind}, Limit: 10000})
	if err != nil {
		return nil, err
	}
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
	if head != nil {
		at = append(at, instant{changedAt(head), "updated"})
	}
	slices.SortStableFunc(at, func(a, b instant) int { return a.at.Compare(b.at) })
	if len(at) == 0 {
		if headErr != nil {
			return nil, headErr
		}
		at = append(at, instant{changedAt(head), "head"})
	}

	out := []Version{}
	var last []byte
	for i, in := range at {
		var rec day1.Record
		var err error
		if i+1 < len(at) {
			next := at[i+1].at
			if !next.After(in.at) {
				continue // the later instant of the same moment reads it
			}
			tt := s.c.TimeTravel(day1.At{Time: next.Add(-time.Nanosecond)})
			rec, err = getRef(ctx, tt, branch, ref)
			if errors.Is(err, day1.ErrTooOld) {
				if b.Parent == "" {
					continue
				}
				rec, err = getRef(ctx, tt, b.Parent, ref)
				if errors.Is(err, day1.ErrTooOld) {
					continue
				}
				in.source += " on " + b.Parent
			}
		} else {
			rec, err = head, headErr
		}
		if b.Parent != "" && in.at.Before(b.ForkedAt) && !strings.HasSuffix(in.source, " on "+b.Parent) {
			in.source += " on " + b.Parent // an event the branch inherited
		}
		v := Version{At: in.at, Source: in.source}
		switch {
		case errors.Is(err, day1.ErrNotFound):
			if len(out) == 0 {
				continue // not there yet
			}
			v.Deleted = true
		case err != nil:
			return nil, err
		default:
			v.Record = memview.View(rec)
		}
		data, _ := json.Marshal(v.Record)
		if len(out) > 0 && bytes.Equal(data, last) {
			continue
		}
		last = data
		out = append(out, v)
	}
	if len(out) == 0 && headErr != nil {
		return nil, headErr
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
