package api

import (
	"net/http"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
)

func (s *Server) listBranches(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	bs, err := s.c.Branches(r.Context(), day1.BranchFilter{
		Status: day1.BranchStatus(qq.str("status")), Parent: qq.str("parent"), Prefix: qq.str("prefix"),
	})
	if err != nil {
		return nil, err
	}
	return paged(w, r, bs)
}

// Deleted is the answer to a delete of a branch or a snapshot: the name of what is
// gone.
type Deleted struct {
	Deleted string `json:"deleted"`
}

// BranchRequest is the body of POST /api/v1/branches.
type BranchRequest struct {
	Name        string            `json:"name"`
	From        string            `json:"from,omitempty"`
	At          string            `json:"at,omitempty"`
	Description string            `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

func (s *Server) createBranch(w http.ResponseWriter, r *http.Request) (any, error) {
	var br BranchRequest
	if err := decode(r, &br); err != nil {
		return nil, err
	}
	b, err := s.c.Branch(r.Context(), br.Name, day1.BranchOptions{
		From: br.From, At: memview.ParseAt(br.At), Description: br.Description, Metadata: br.Metadata,
	})
	if err != nil {
		return nil, err
	}
	return created{b}, nil
}

func (s *Server) getBranch(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.c.GetBranch(r.Context(), r.PathValue("name"))
}

func (s *Server) deleteBranch(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.c.DeleteBranch(r.Context(), r.PathValue("name")); err != nil {
		return nil, err
	}
	return Deleted{Deleted: r.PathValue("name")}, nil
}

func (s *Server) archiveBranch(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.c.ArchiveBranch(r.Context(), r.PathValue("name"))
}

func (s *Server) reactivateBranch(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.c.ReactivateBranch(r.Context(), r.PathValue("name"))
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	target := qq.str("target")
	if target == "" {
		target = day1.DefaultBranch
	}
	d, err := s.c.Diff(r.Context(), qq.str("source"), target)
	if err != nil {
		return nil, err
	}
	return memview.DiffView(d), nil
}

func (s *Server) listMerges(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	f := day1.MergeFilter{Source: qq.str("source"), Target: qq.str("target"), Branch: qq.str("branch")}
	ms, err := s.c.Merges(r.Context(), f)
	if err != nil {
		return nil, err
	}
	return paged(w, r, ms)
}

// MergeRequest is the body of POST /api/v1/merges.
type MergeRequest struct {
	Source     string   `json:"source"`
	Target     string   `json:"target,omitempty"`
	Strategy   string   `json:"strategy,omitempty"`
	Policy     string   `json:"policy,omitempty"`
	Pick       []string `json:"pick,omitempty"`
	MarkMerged bool     `json:"mark_merged,omitempty"`
	MergedBy   string   `json:"merged_by,omitempty"`
	Message    string   `json:"message,omitempty"`
	DryRun     bool     `json:"dry_run,omitempty"`
}

func (s *Server) merge(w http.ResponseWriter, r *http.Request) (any, error) {
	var mr MergeRequest
	if err := decode(r, &mr); err != nil {
		return nil, err
	}
	req, err := mergeRequest(mr)
	if err != nil {
		return nil, err
	}
	res, err := s.c.Merge(r.Context(), req)
	if err != nil {
		return nil, err
	}
	if res.Applied {
		return created{memview.MergeView(res)}, nil
	}
	return memview.MergeView(res), nil
}

func mergeRequest(mr MergeRequest) (day1.MergeRequest, error) {
	st, err := memview.ParseStrategy("strategy", mr.Strategy)
	if err != nil {
		return day1.MergeRequest{}, err
	}
	pol, err := memview.ParsePolicy("policy", mr.Policy)
	if err != nil {
		return day1.MergeRequest{}, err
	}
	req := day1.MergeRequest{
		Source: mr.Source, Target: mr.Target, Strategy: st, Policy: pol, MarkMerged: mr.MarkMerged,
		MergedBy: mr.MergedBy, Message: mr.Message, DryRun: mr.DryRun,
	}
	if req.Target == "" {
		req.Target = day1.DefaultBranch
	}
	for _, p := range mr.Pick {
		ref, err := memview.ParseRef("pick", p)
		if err != nil {
			return day1.MergeRequest{}, err
		}
		req.Pick = append(req.Pick, ref)
	}
	return req, nil
}

func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request) (any, error) {
	snaps, err := s.c.Snapshots(r.Context(), q(r).str("branch"))
	if err != nil {
		return nil, err
	}
	return paged(w, r, snaps)
}

// SnapshotRequest is the body of POST /api/v1/snapshots.
type SnapshotRequest struct {
	Branch      string `json:"branch,omitempty"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request) (any, error) {
	var sr SnapshotRequest
	if err := decode(r, &sr); err != nil {
		return nil, err
	}
	if sr.Branch == "" {
		sr.Branch = day1.DefaultBranch
	}
	snap, err := s.c.Snapshot(r.Context(), sr.Branch, sr.Name, day1.SnapshotOptions{Description: sr.Description})
	if err != nil {
		return nil, err
	}
	return created{snap}, nil
}

func (s *Server) getSnapshot(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.c.GetSnapshot(r.Context(), r.PathValue("name"))
}

func (s *Server) deleteSnapshot(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.c.DeleteSnapshot(r.Context(), r.PathValue("name")); err != nil {
		return nil, err
	}
	return Deleted{Deleted: r.PathValue("name")}, nil
}
