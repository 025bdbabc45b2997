package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/day1ai/day1"
)

// Change is one event of the /events stream. Type is "branch" (a branch was
// created, written to or changed status), "branch_deleted", "merge" or "snapshot".
type Change struct {
	Type     string            `json:"type"`
	Branch   *day1.Branch      `json:"branch,omitempty"`
	Name     string            `json:"name,omitempty"`
	Merge    *day1.MergeRecord `json:"merge,omitempty"`
	Snapshot *day1.Snapshot    `json:"snapshot,omitempty"`
}

// watch is what the stream last saw of the memory: cheap to read, and enough to tell
// that something changed.
type watch struct {
	branches  map[string]day1.Branch
	merges    map[string]bool
	snapshots map[string]bool
}

func (s *Server) look(ctx context.Context) (watch, error) {
	w := watch{branches: map[string]day1.Branch{}, merges: map[string]bool{}, snapshots: map[string]bool{}}
	bs, err := s.c.Branches(ctx, day1.BranchFilter{})
	if err != nil {
		return w, err
	}
	for _, b := range bs {
		w.branches[b.Name] = b
	}
	ms, err := s.c.Merges(ctx, day1.MergeFilter{})
	if err != nil {
		return w, err
	}
	for _, m := range ms {
		w.merges[m.ID] = true
	}
	snaps, err := s.c.Snapshots(ctx, "")
	if err != nil {
		return w, err
	}
	for _, sn := range snaps {
		w.snapshots[sn.Name] = true
	}
	return w, nil
}

// changes lists what differs from prev to cur, reading the new merges and snapshots.
func (s *Server) changes(ctx context.Context, prev, cur watch) []Change {
	var out []Change
	for name, b := range cur.branches {
		if p, ok := prev.branches[name]; !ok || p.Head != b.Head || p.Status != b.Status {
			out = append(out, Change{Type: "branch", Branch: &b})
		}
	}
	for name := range prev.branches {
		if _, ok := cur.branches[name]; !ok {
			out = append(out, Change{Type: "branch_deleted", Name: name})
		}
	}
	if len(cur.merges) != len(prev.merges) {
		ms, _ := s.c.Merges(ctx, day1.MergeFilter{})
		for _, m := range ms {
			if !prev.merges[m.ID] {
				out = append(out, Change{Type: "merge", Merge: &m})
			}
		}
	}
	for name := range cur.snapshots {
		if !prev.snapshots[name] {
			if sn, err := s.c.GetSnapshot(ctx, name); err == nil {
				out = append(out, Change{Type: "snapshot", Snapshot: &sn})
			}
		}
	}
	return out
}

// events streams the memory's changes as server-sent events, looking every
// Options.Poll: the heads of the branches, the merges and the snapshots.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{}) // the stream outlives the server's write timeout
	ctx := r.Context()
	prev, err := s.look(ctx)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 2000\nevent: ready\ndata: {\"branches\":%d}\n\n", len(prev.branches))
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	idle := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cur, err := s.look(ctx)
		if err != nil {
			continue
		}
		chs := s.changes(ctx, prev, cur)
		prev = cur
		for _, c := range chs {
			data, _ := json.Marshal(c)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", c.Type, data)
		}
		if len(chs) == 0 {
			// A comment now and then keeps proxies from closing an idle stream.
			if idle++; time.Duration(idle)*s.opts.Poll < 15*time.Second {
				continue
			}
			fmt.Fprint(w, ": keep-alive\n\n")
		}
		idle = 0
		if rc.Flush() != nil {
			return
		}
	}
}
