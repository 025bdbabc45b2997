package api

import (
	"net/http"

	"github.com/day1ai/day1"
)

func (s *Server) listBundles(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	bs, err := s.c.Bundles(r.Context(), day1.BundleFilter{
		Type: day1.BundleType(qq.str("type")), SourceTask: qq.str("task"),
		Visibility: day1.BundleVisibility(qq.str("visibility")), Owner: qq.str("owner"),
	})
	if err != nil {
		return nil, err
	}
	return paged(w, r, bs)
}

// BundleRequest is the body of POST /api/v1/bundles.
type BundleRequest struct {
	Name                string            `json:"name"`
	Description         string            `json:"description,omitempty"`
	Task                string            `json:"task,omitempty"`
	Branch              string            `json:"branch,omitempty"`
	Template            string            `json:"template,omitempty"`
	IncludeUnverified   bool              `json:"include_unverified,omitempty"`
	IncludeObservations bool              `json:"include_observations,omitempty"`
	Visibility          string            `json:"visibility,omitempty"`
	Version             string            `json:"version,omitempty"`
	Tags                []string          `json:"tags,omitempty"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	Owner               string            `json:"owner,omitempty"`
}

func (s *Server) createBundle(w http.ResponseWriter, r *http.Request) (any, error) {
	var br BundleRequest
	if err := decode(r, &br); err != nil {
		return nil, err
	}
	b, err := s.c.CreateBundle(r.Context(), day1.CreateBundleRequest{
		Name: br.Name, Description: br.Description, Task: br.Task, Branch: br.Branch, Template: br.Template,
		IncludeUnverified: br.IncludeUnverified, IncludeObservations: br.IncludeObservations,
		Visibility: day1.BundleVisibility(br.Visibility), Version: br.Version, Tags: br.Tags,
		Metadata: br.Metadata, Owner: br.Owner,
	})
	if err != nil {
		return nil, err
	}
	return created{b}, nil
}

func (s *Server) getBundle(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.c.GetBundle(r.Context(), r.PathValue("id"))
}

func (s *Server) sharedBundle(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.c.SharedBundle(r.Context(), r.PathValue("token"))
}

// exportBundle streams the bundle file. The bundle is looked up first so that a
// missing one is a problem, not a truncated download.
func (s *Server) exportBundle(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	if _, err := s.c.GetBundle(r.Context(), id); err != nil {
		return nil, err
	}
	gz := q(r).str("compress") != "false"
	ctype, ext := "application/x-ndjson", ".day1bundle"
	if gz {
		ctype, ext = "application/gzip", ".day1bundle.gz"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="`+id+ext+`"`)
	if _, err := s.c.ExportBundle(r.Context(), id, w, day1.ExportBundleOptions{Compress: gz}); err != nil {
		// Headers are gone; all that is left is to cut the stream short.
		panic(http.ErrAbortHandler)
	}
	return nil, nil
}

// importBundle reads a bundle file from the body (plain or gzip-compressed) into a
// branch; ?bundle= or ?share_token= import a stored or shared bundle instead.
func (s *Server) importBundle(w http.ResponseWriter, r *http.Request) (any, error) {
	qq := q(r)
	req := day1.ImportBundleRequest{
		Bundle: qq.str("bundle"), ShareToken: qq.str("share_token"),
		Branch: qq.str("branch"), CreateBranch: qq.bool("create_branch"), Parent: qq.str("parent"),
		Policy: day1.BundleConflictPolicy(qq.str("policy")), MaxBytes: s.opts.MaxImport,
	}
	if qq.err != nil {
		return nil, qq.err
	}
	if req.Bundle == "" && req.ShareToken == "" {
		req.From = http.MaxBytesReader(w, r.Body, s.opts.MaxImport)
	}
	res, err := s.c.ImportBundle(r.Context(), req)
	if err != nil {
		return nil, err
	}
	return res, nil
}
