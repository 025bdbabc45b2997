package agenttool

import (
	"context"
	"fmt"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

// SnapshotIn is the input of memory_snapshot.
type SnapshotIn struct {
	Label  string `json:"label" jsonschema:"the snapshot's name, e.g. before-refactor"`
	Branch string `json:"branch,omitempty" jsonschema:"the branch to snapshot (default: this session's current branch, else main)"`
}

// SnapshotView is the output of memory_snapshot.
type SnapshotView struct {
	Label       string    `json:"label"`
	Branch      string    `json:"branch"`
	At          time.Time `json:"at" jsonschema:"the instant the snapshot captures"`
	Description string    `json:"description,omitempty"`
}

// SnapshotListIn is the input of memory_snapshot_list.
type SnapshotListIn struct {
	Branch string `json:"branch,omitempty" jsonschema:"list the snapshots of this branch (default: every branch)"`
}

// SnapshotListOut is the output of memory_snapshot_list.
type SnapshotListOut struct {
	Snapshots []SnapshotView `json:"snapshots"`
}

// TimeTravelIn is the input of memory_time_travel.
type TimeTravelIn struct {
	Timestamp string `json:"timestamp,omitempty" jsonschema:"the RFC 3339 instant to read memory at, e.g. 2025-01-31T09:30:00Z (give this or snapshot)"`
	Snapshot  string `json:"snapshot,omitempty" jsonschema:"the snapshot to read memory at (give this or timestamp)"`
	Query     string `json:"query" jsonschema:"the search to run against memory as it was then"`
	Branch    string `json:"branch,omitempty" jsonschema:"branch to read (default: the snapshot's branch, else this session's current branch, else main)"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most hits to return (default 10)"`
}

// TimeTravelOut is the output of memory_time_travel.
type TimeTravelOut struct {
	Timestamp string    `json:"timestamp,omitempty"`
	Snapshot  string    `json:"snapshot,omitempty"`
	Hits      []HitView `json:"hits"`
}

func snapshotTools() []Tool {
	return []Tool{
		tool("memory_snapshot",
			"Name the current state of a branch, e.g. before a risky change, so that memory_time_travel can read it later.",
			(*caller).snapshot),
		tool("memory_snapshot_list",
			"List the snapshots of a branch, or of every branch, oldest first.",
			(*caller).snapshotList),
		tool("memory_time_travel",
			"Search memory as it was at a past instant or snapshot, without changing anything: what did we know then?",
			(*caller).timeTravel)}
}

func viewSnapshot(s day1.Snapshot) SnapshotView {
	return SnapshotView{Label: s.Name, Branch: s.Branch, At: s.At, Description: s.Description}
}

func (m *caller) snapshot(ctx context.Context, in SnapshotIn) (SnapshotView, string, error) {
	s, err := m.c.Snapshot(ctx, m.branch(in.Branch), in.Label, day1.SnapshotOptions{})
	if err != nil {
		return SnapshotView{}, "", err
	}
	return viewSnapshot(s), fmt.Sprintf("snapshot %s of %s at %s", s.Name, s.Branch, s.At.Format(time.RFC3339)), nil
}

func (m *caller) snapshotList(ctx context.Context, in SnapshotListIn) (SnapshotListOut, string, error) {
	snaps, err := m.c.Snapshots(ctx, in.Branch)
	if err != nil {
		return SnapshotListOut{}, "", err
	}
	out := SnapshotListOut{Snapshots: make([]SnapshotView, len(snaps))}
	for i, s := range snaps {
		out.Snapshots[i] = viewSnapshot(s)
	}
	return out, fmt.Sprintf("%d snapshots", len(snaps)), nil
}

func (m *caller) timeTravel(ctx context.Context, in TimeTravelIn) (TimeTravelOut, string, error) {
	var at day1.At
	q, err := m.searchQuery(SearchIn{Query: in.Query, Branch: in.Branch, Limit: in.Limit})
	if err != nil {
		return TimeTravelOut{}, "", err
	}
	switch {
	case in.Snapshot != "" && in.Timestamp != "":
		return TimeTravelOut{}, "", store.Invalid("timestamp", "give timestamp or snapshot, not both", in.Timestamp)
	case in.Snapshot != "":
		at = day1.AtSnapshot(in.Snapshot)
		// A view at a snapshot reads the snapshot's branch unless told otherwise.
		q.Branch = in.Branch
	case in.Timestamp != "":
		t, err := parseTime("timestamp", in.Timestamp)
		if err != nil {
			return TimeTravelOut{}, "", err
		}
		at = day1.AtTime(t)
	default:
		return TimeTravelOut{}, "", store.Invalid("timestamp", "give timestamp (RFC 3339) or snapshot", nil)
	}
	hits, err := m.c.TimeTravel(at).Search(ctx, q)
	if err != nil {
		return TimeTravelOut{}, "", err
	}
	out := TimeTravelOut{Timestamp: in.Timestamp, Snapshot: in.Snapshot, Hits: viewHits(hits)}
	when := in.Timestamp
	if in.Snapshot != "" {
		when = "snapshot " + in.Snapshot
	}
	return out, fmt.Sprintf("%d hits as of %s", len(out.Hits), when), nil
}
