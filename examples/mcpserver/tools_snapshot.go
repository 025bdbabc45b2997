package main

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

type snapshotIn struct {
	Label  string `json:"label" jsonschema:"the snapshot's name, e.g. before-refactor"`
	Branch string `json:"branch,omitempty" jsonschema:"the branch to snapshot (default: this session's current branch, else main)"`
}

type snapshotView struct {
	Label       string    `json:"label"`
	Branch      string    `json:"branch"`
	At          time.Time `json:"at" jsonschema:"the instant the snapshot captures"`
	Description string    `json:"description,omitempty"`
}

type snapshotListIn struct {
	Branch string `json:"branch,omitempty" jsonschema:"list the snapshots of this branch (default: every branch)"`
}

type snapshotListOut struct {
	Snapshots []snapshotView `json:"snapshots"`
}

type timeTravelIn struct {
	Timestamp string `json:"timestamp,omitempty" jsonschema:"the RFC 3339 instant to read memory at, e.g. 2025-01-31T09:30:00Z (give this or snapshot)"`
	Snapshot  string `json:"snapshot,omitempty" jsonschema:"the snapshot to read memory at (give this or timestamp)"`
	Query     string `json:"query" jsonschema:"the search to run against memory as it was then"`
	Branch    string `json:"branch,omitempty" jsonschema:"branch to read (default: the snapshot's branch, else this session's current branch, else main)"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most hits to return (default 10)"`
}

type timeTravelOut struct {
	Timestamp string    `json:"timestamp,omitempty"`
	Snapshot  string    `json:"snapshot,omitempty"`
	Hits      []hitView `json:"hits"`
}

func (m *memServer) addSnapshotTools(s *mcp.Server) {
	addTool(s, "memory_snapshot",
		"Name the current state of a branch, e.g. before a risky change, so that memory_time_travel can read it later.",
		m.snapshot)
	addTool(s, "memory_snapshot_list",
		"List the snapshots of a branch, or of every branch, oldest first.",
		m.snapshotList)
	addTool(s, "memory_time_travel",
		"Search memory as it was at a past instant or snapshot, without changing anything: what did we know then?",
		m.timeTravel)
}

func viewSnapshot(s day1.Snapshot) snapshotView {
	return snapshotView{Label: s.Name, Branch: s.Branch, At: s.At, Description: s.Description}
}

func (m *memServer) snapshot(ctx context.Context, ss *mcp.ServerSession, in snapshotIn) (snapshotView, string, error) {
	s, err := m.c.Snapshot(ctx, m.branch(ss, in.Branch), in.Label, day1.SnapshotOptions{})
	if err != nil {
		return snapshotView{}, "", err
	}
	return viewSnapshot(s), fmt.Sprintf("snapshot %s of %s at %s", s.Name, s.Branch, s.At.Format(time.RFC3339)), nil
}

func (m *memServer) snapshotList(ctx context.Context, _ *mcp.ServerSession, in snapshotListIn) (snapshotListOut, string, error) {
	snaps, err := m.c.Snapshots(ctx, in.Branch)
	if err != nil {
		return snapshotListOut{}, "", err
	}
	out := snapshotListOut{Snapshots: make([]snapshotView, len(snaps))}
	for i, s := range snaps {
		out.Snapshots[i] = viewSnapshot(s)
	}
	return out, fmt.Sprintf("%d snapshots", len(snaps)), nil
}

func (m *memServer) timeTravel(ctx context.Context, ss *mcp.ServerSession, in timeTravelIn) (timeTravelOut, string, error) {
	var at day1.At
	q, err := m.searchQuery(ss, searchIn{Query: in.Query, Branch: in.Branch, Limit: in.Limit})
	if err != nil {
		return timeTravelOut{}, "", err
	}
	switch {
	case in.Snapshot != "" && in.Timestamp != "":
		return timeTravelOut{}, "", store.Invalid("timestamp", "give timestamp or snapshot, not both", in.Timestamp)
	case in.Snapshot != "":
		at = day1.AtSnapshot(in.Snapshot)
		// A view at a snapshot reads the snapshot's branch unless told otherwise.
		q.Branch = in.Branch
	case in.Timestamp != "":
		t, err := parseTime("timestamp", in.Timestamp)
		if err != nil {
			return timeTravelOut{}, "", err
		}
		at = day1.AtTime(t)
	default:
		return timeTravelOut{}, "", store.Invalid("timestamp", "give timestamp (RFC 3339) or snapshot", nil)
	}
	hits, err := m.c.TimeTravel(at).Search(ctx, q)
	if err != nil {
		return timeTravelOut{}, "", err
	}
	out := timeTravelOut{Timestamp: in.Timestamp, Snapshot: in.Snapshot, Hits: viewHits(hits)}
	when := in.Timestamp
	if in.Snapshot != "" {
		when = "snapshot " + in.Snapshot
	}
	return out, fmt.Sprintf("%d hits as of %s", len(out.Hits), when), nil
}
