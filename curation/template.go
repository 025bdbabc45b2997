package curation

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/day1ai/day1/store"
)

// Template errors. Test with errors.Is.
var (
	// ErrTemplateExists: a template with that name exists already.
	ErrTemplateExists = errors.New("day1: template already exists")
	// ErrTemplateDeprecated: the template is deprecated and can be neither
	// instantiated nor updated; find another with FindTemplate.
	ErrTemplateDeprecated = errors.New("day1: template is deprecated")
)

// TemplateCollection is the store document collection templates are kept in. Each
// template is one document, its id the template's name, with the keys
// "status" and "task_type:<type>" for queries.
const TemplateCollection = "template"

// Limits on templates.
const (
	MaxTemplateName  = 80
	MaxTaskTypes     = 16
	MaxTaskTypeLen   = 50
	templateRetries  = 16
	templateSnapshot = "template."
)

// TemplateStatus is the life-cycle state of a template.
type TemplateStatus string

// Template statuses.
const (
	TemplateActive     TemplateStatus = "active"
	TemplateDeprecated TemplateStatus = "deprecated"
)

// Template is a reusable starting point for a kind of task: a frozen version of a
// branch's memory that new branches fork from.
//
// Each version is a snapshot of its source branch, named "template.<name>.v<N>"; the
// snapshot pins the source branch (it cannot be deleted while the snapshot exists).
type Template struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	TaskTypes   []string `json:"task_types"` // lower-case, sorted
	// Version counts from 1 and grows with every UpdateTemplate.
	Version      int            `json:"version"`
	Status       TemplateStatus `json:"status"`
	SourceBranch string         `json:"source_branch"` // the current version's source
	Snapshot     string         `json:"snapshot"`      // the current version's snapshot
	// VersionAt is when the current version was made; FindTemplate prefers the most
	// recent.
	VersionAt         time.Time         `json:"version_at"`
	DeprecationReason string            `json:"deprecation_reason,omitempty"`
	Uses              int               `json:"uses"` // instantiations counted (best effort)
	CreatedBy         string            `json:"created_by,omitempty"`
	Metadata          map[string]string `json:"metadata,omitempty"`
	History           []TemplateVersion `json:"history"` // every version, oldest first
	// CreatedAt and UpdatedAt are the document's times; DocVersion its version.
	CreatedAt  time.Time `json:"-"`
	UpdatedAt  time.Time `json:"-"`
	DocVersion uint64    `json:"-"`
}

// TemplateVersion is one version of a template.
type TemplateVersion struct {
	Version      int       `json:"version"`
	SourceBranch string    `json:"source_branch"`
	Snapshot     string    `json:"snapshot"`
	At           time.Time `json:"at"`
	Note         string    `json:"note,omitempty"`
}

// TemplateSpec describes a template to create.
type TemplateSpec struct {
	// Name identifies the template: 1 to 80 letters, digits and . _ - (the rules of
	// ids without : and @). Required.
	Name string
	// SourceBranch is the branch whose current memory becomes version 1. Required.
	SourceBranch string
	// TaskTypes are the kinds of task the template is for, like "bug_fix": 1 to 16,
	// each 1 to 50 letters, digits and _ . -, folded to lower case. Required.
	TaskTypes []string
	// Description says what the template holds.
	Description string
	// CreatedBy names who made it.
	CreatedBy string
	// Metadata is kept with the template.
	Metadata map[string]string
}

// TemplateFilter narrows ListTemplates. Zero fields match everything.
type TemplateFilter struct {
	TaskType string
	Status   TemplateStatus
}

// TemplateUpdate describes a new version of a template.
type TemplateUpdate struct {
	// SourceBranch is the branch whose current memory becomes the new version.
	// Required; it may be the same branch as before.
	SourceBranch string
	// Description replaces the description when not empty.
	Description string
	// TaskTypes replace the task types when not empty.
	TaskTypes []string
	// Note is kept in the version history.
	Note string
}

// InstantiateRequest describes the branch to create from a template.
type InstantiateRequest struct {
	// Branch is the new branch's name. Required.
	Branch string
	// Description of the new branch. Default: "from template <name> v<N>".
	Description string
	// Metadata of the new branch; the keys "template" and "template_version" are set.
	Metadata map[string]string
}

// Instance is a branch made from a template.
type Instance struct {
	Branch   store.Branch
	Template Template
}

var (
	templateName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	taskType     = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
)

// CreateTemplate makes version 1 of a template from a branch's current memory: it
// takes a snapshot of SourceBranch and records the template as a document.
//
// Errors: a *store.ValidationError for a bad spec; ErrTemplateExists when the name is
// taken (also when a concurrent CreateTemplate wins); store.ErrBranchNotFound; ctx's
// error.
func (e *Engine) CreateTemplate(ctx context.Context, spec TemplateSpec) (Template, error) {
	if err := e.check(); err != nil {
		return Template{}, err
	}
	if err := validTemplateName("TemplateSpec.Name", spec.Name); err != nil {
		return Template{}, err
	}
	if err := store.ValidateBranchName("TemplateSpec.SourceBranch", spec.SourceBranch); err != nil {
		return Template{}, err
	}
	types, err := taskTypes("TemplateSpec.TaskTypes", spec.TaskTypes, true)
	if err != nil {
		return Template{}, err
	}
	if len(spec.Metadata) > store.MaxMetadataPairs {
		return Template{}, store.Invalid("TemplateSpec.Metadata", fmt.Sprintf("holds at most %d pairs", store.MaxMetadataPairs), len(spec.Metadata))
	}
	if _, err := e.Store.GetBranch(ctx, spec.SourceBranch); err != nil {
		return Template{}, err
	}
	if _, err := e.Store.GetDoc(ctx, TemplateCollection, spec.Name); err == nil {
		return Template{}, fmt.Errorf("%w: %q", ErrTemplateExists, spec.Name)
	} else if !errors.Is(err, store.ErrNotFound) {
		return Template{}, err
	}
	snap := snapshotName(spec.Name, 1)
	sn, err := e.Store.CreateSnapshot(ctx, spec.SourceBranch, snap, "template "+spec.Name+" version 1")
	if errors.Is(err, store.ErrSnapshotExists) {
		return Template{}, fmt.Errorf("%w: %q (its snapshot %s is taken; if no template uses it, delete it)", ErrTemplateExists, spec.Name, snap)
	}
	if err != nil {
		return Template{}, err
	}
	t := Template{
		Name:         spec.Name,
		Description:  spec.Description,
		TaskTypes:    types,
		Version:      1,
		Status:       TemplateActive,
		SourceBranch: spec.SourceBranch,
		Snapshot:     snap,
		VersionAt:    sn.At.UTC(),
		CreatedBy:    spec.CreatedBy,
		Metadata:     maps.Clone(spec.Metadata),
		History:      []TemplateVersion{{Version: 1, SourceBranch: spec.SourceBranch, Snapshot: snap, At: sn.At.UTC()}},
	}
	out, err := e.writeTemplate(ctx, t, store.DocCreate, 0)
	if err != nil {
		// Leave nothing behind: the snapshot belongs to no template.
		_ = e.Store.DeleteSnapshot(context.WithoutCancel(ctx), snap)
		var dc *store.DocConflictError
		if errors.As(err, &dc) {
			return Template{}, fmt.Errorf("%w: %q", ErrTemplateExists, spec.Name)
		}
		return Template{}, err
	}
	return out, nil
}

// GetTemplate returns a template by name, or an error matching store.ErrNotFound.
func (e *Engine) GetTemplate(ctx context.Context, name string) (Template, error) {
	if err := e.check(); err != nil {
		return Template{}, err
	}
	if err := validTemplateName("name", name); err != nil {
		return Template{}, err
	}
	return e.readTemplate(ctx, name)
}

// ListTemplates returns the templates the filter matches, sorted by name.
// Errors: a *store.ValidationError for a bad task type or status; ctx's error.
func (e *Engine) ListTemplates(ctx context.Context, f TemplateFilter) ([]Template, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	where := map[string]string{}
	if f.TaskType != "" {
		tt, err := taskTypes("TemplateFilter.TaskType", []string{f.TaskType}, true)
		if err != nil {
			return nil, err
		}
		where["task_type:"+tt[0]] = "1"
	}
	switch f.Status {
	case "":
	case TemplateActive, TemplateDeprecated:
		where["status"] = string(f.Status)
	default:
		return nil, store.Invalid("TemplateFilter.Status", "must be active or deprecated", f.Status)
	}
	docs, err := e.Store.ListDocs(ctx, store.DocQuery{Collection: TemplateCollection, Where: where})
	if err != nil {
		return nil, err
	}
	out := make([]Template, 0, len(docs))
	for _, d := range docs {
		t, err := decodeTemplate(d)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Template) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// FindTemplate returns the best active template for a task type: the one whose
// current version is the most recent, then the most used, then the first by name.
// Errors: a *store.ValidationError for a bad task type; an error matching
// store.ErrNotFound when no active template has the task type; ctx's error.
func (e *Engine) FindTemplate(ctx context.Context, taskType string) (Template, error) {
	ts, err := e.ListTemplates(ctx, TemplateFilter{TaskType: taskType, Status: TemplateActive})
	if err != nil {
		return Template{}, err
	}
	if len(ts) == 0 {
		return Template{}, fmt.Errorf("%w: no active template for task type %q", store.ErrNotFound, taskType)
	}
	return slices.MinFunc(ts, func(a, b Template) int {
		if c := b.VersionAt.Compare(a.VersionAt); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Uses, a.Uses); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	}), nil
}

// InstantiateTemplate creates a branch from the current version of a template: a fork
// of the version's snapshot (constant time on the embedded store, a copy of the
// snapshot's rows on MatrixOne). The
// template's Uses count grows by one (best effort: a count lost to concurrent writers
// does not fail the call).
//
// Errors: a *store.ValidationError for a bad name or branch; store.ErrNotFound for an
// unknown template; ErrTemplateDeprecated; store.ErrBranchExists; ctx's error.
func (e *Engine) InstantiateTemplate(ctx context.Context, name string, req InstantiateRequest) (Instance, error) {
	if err := e.check(); err != nil {
		return Instance{}, err
	}
	if err := validTemplateName("name", name); err != nil {
		return Instance{}, err
	}
	if err := store.ValidateBranchName("InstantiateRequest.Branch", req.Branch); err != nil {
		return Instance{}, err
	}
	t, err := e.readTemplate(ctx, name)
	if err != nil {
		return Instance{}, err
	}
	if t.Status == TemplateDeprecated {
		return Instance{}, fmt.Errorf("%w: %q (%s)", ErrTemplateDeprecated, name, t.DeprecationReason)
	}
	desc := req.Description
	if desc == "" {
		desc = fmt.Sprintf("from template %s v%d", t.Name, t.Version)
	}
	meta := maps.Clone(req.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	meta["template"], meta["template_version"] = t.Name, strconv.Itoa(t.Version)
	b, err := e.Store.CreateBranch(ctx, store.BranchSpec{
		Name:        req.Branch,
		At:          store.Point{Snapshot: t.Snapshot},
		Description: desc,
		Metadata:    meta,
	})
	if err != nil {
		return Instance{}, err
	}
	if counted, err := e.changeTemplate(ctx, name, func(t *Template) error { t.Uses++; return nil }); err == nil {
		t = counted
	}
	return Instance{Branch: b, Template: t}, nil
}

// UpdateTemplate makes a new version of a template from a branch's current memory:
// a new snapshot, Version plus one, and an entry in History. Branches made from
// earlier versions are unaffected.
//
// Errors: a *store.ValidationError for bad input; store.ErrNotFound for an unknown
// template; ErrTemplateDeprecated; store.ErrBranchNotFound; store.ErrStale when
// another update made the same version first (read the template again); ctx's error.
func (e *Engine) UpdateTemplate(ctx context.Context, name string, u TemplateUpdate) (Template, error) {
	if err := e.check(); err != nil {
		return Template{}, err
	}
	if err := validTemplateName("name", name); err != nil {
		return Template{}, err
	}
	if err := store.ValidateBranchName("TemplateUpdate.SourceBranch", u.SourceBranch); err != nil {
		return Template{}, err
	}
	types, err := taskTypes("TemplateUpdate.TaskTypes", u.TaskTypes, false)
	if err != nil {
		return Template{}, err
	}
	t, err := e.readTemplate(ctx, name)
	if err != nil {
		return Template{}, err
	}
	if t.Status == TemplateDeprecated {
		return Template{}, fmt.Errorf("%w: %q; create a new template instead", ErrTemplateDeprecated, name)
	}
	if _, err := e.Store.GetBranch(ctx, u.SourceBranch); err != nil {
		return Template{}, err
	}
	next := t.Version + 1
	snap := snapshotName(name, next)
	sn, err := e.Store.CreateSnapshot(ctx, u.SourceBranch, snap, fmt.Sprintf("template %s version %d", name, next))
	if errors.Is(err, store.ErrSnapshotExists) {
		return Template{}, fmt.Errorf("%w: template %q version %d was made by another update; read the template again", store.ErrStale, name, next)
	}
	if err != nil {
		return Template{}, err
	}
	// Write with retries: a concurrent instantiation only counts a use, which must
	// not make the update fail. Another version appearing meanwhile does.
	out, err := e.changeTemplate(ctx, name, func(t *Template) error {
		switch {
		case t.Version != next-1:
			return fmt.Errorf("%w: template %q is at version %d now; read it again", store.ErrStale, name, t.Version)
		case t.Status == TemplateDeprecated:
			return fmt.Errorf("%w: %q; create a new template instead", ErrTemplateDeprecated, name)
		}
		t.Version, t.SourceBranch, t.Snapshot, t.VersionAt = next, u.SourceBranch, snap, sn.At.UTC()
		t.History = append(t.History, TemplateVersion{Version: next, SourceBranch: u.SourceBranch, Snapshot: snap, At: sn.At.UTC(), Note: u.Note})
		if u.Description != "" {
			t.Description = u.Description
		}
		if len(types) > 0 {
			t.TaskTypes = types
		}
		return nil
	})
	if err != nil {
		// The snapshot belongs to no version.
		_ = e.Store.DeleteSnapshot(context.WithoutCancel(ctx), snap)
		return Template{}, err
	}
	return out, nil
}

// DeprecateTemplate marks a template deprecated: FindTemplate no longer returns it and
// it can no longer be instantiated or updated. Branches made from it are unaffected,
// and its snapshots are kept. Deprecating a deprecated template changes nothing.
// Errors: a *store.ValidationError for a bad name; store.ErrNotFound; ctx's error.
func (e *Engine) DeprecateTemplate(ctx context.Context, name, reason string) (Template, error) {
	if err := e.check(); err != nil {
		return Template{}, err
	}
	if err := validTemplateName("name", name); err != nil {
		return Template{}, err
	}
	return e.changeTemplate(ctx, name, func(t *Template) error {
		if t.Status == TemplateDeprecated {
			return errUnchanged
		}
		t.Status, t.DeprecationReason = TemplateDeprecated, reason
		return nil
	})
}

var errUnchanged = errors.New("unchanged")

// changeTemplate reads, changes and writes a template with optimistic concurrency,
// retrying when another writer got there first. A change returning errUnchanged
// leaves the template as it is.
func (e *Engine) changeTemplate(ctx context.Context, name string, change func(*Template) error) (Template, error) {
	var err error
	for range templateRetries {
		var t Template
		if t, err = e.readTemplate(ctx, name); err != nil {
			return Template{}, err
		}
		if cerr := change(&t); cerr == errUnchanged {
			return t, nil
		} else if cerr != nil {
			return Template{}, cerr
		}
		var out Template
		if out, err = e.writeTemplate(ctx, t, store.DocMatch, t.DocVersion); err == nil {
			return out, nil
		}
		if !errors.Is(err, store.ErrStale) {
			return Template{}, err
		}
	}
	return Template{}, err
}

func (e *Engine) readTemplate(ctx context.Context, name string) (Template, error) {
	d, err := e.Store.GetDoc(ctx, TemplateCollection, name)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Template{}, fmt.Errorf("day1: template %q: %w", name, store.ErrNotFound)
		}
		return Template{}, err
	}
	return decodeTemplate(d)
}

func (e *Engine) writeTemplate(ctx context.Context, t Template, cond store.DocCond, version uint64) (Template, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return Template{}, err
	}
	keys := map[string]string{"status": string(t.Status)}
	for _, tt := range t.TaskTypes {
		keys["task_type:"+tt] = "1"
	}
	docs, err := e.Store.WriteDocs(ctx, []store.DocWrite{{
		Doc:     store.Doc{Collection: TemplateCollection, ID: t.Name, Data: data, Keys: keys},
		Cond:    cond,
		Version: version,
	}})
	if err != nil {
		return Template{}, err
	}
	if len(docs) != 1 {
		return Template{}, fmt.Errorf("day1: the store returned %d documents for 1 write", len(docs))
	}
	return decodeTemplate(docs[0])
}

func decodeTemplate(d store.Doc) (Template, error) {
	var t Template
	if err := json.Unmarshal(d.Data, &t); err != nil {
		return Template{}, fmt.Errorf("day1: template document %q is not a template: %w", d.ID, err)
	}
	t.CreatedAt, t.UpdatedAt, t.DocVersion = d.CreatedAt, d.UpdatedAt, d.Version
	return t, nil
}

func snapshotName(name string, version int) string {
	return templateSnapshot + name + ".v" + strconv.Itoa(version)
}

func validTemplateName(field, name string) error {
	if name == "" {
		return store.Invalid(field, "must name the template", nil)
	}
	if len(name) > MaxTemplateName || !templateName.MatchString(name) {
		return store.Invalid(field, fmt.Sprintf("must be 1 to %d letters, digits and . _ -, starting with a letter or digit", MaxTemplateName), name)
	}
	return nil
}

// taskTypes folds, checks, sorts and deduplicates task types.
func taskTypes(field string, in []string, required bool) ([]string, error) {
	if len(in) == 0 {
		if required {
			return nil, store.Invalid(field, "must name at least one task type, like bug_fix", nil)
		}
		return nil, nil
	}
	var out []string
	for _, t := range in {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || len(t) > MaxTaskTypeLen || !taskType.MatchString(t) {
			return nil, store.Invalid(field, fmt.Sprintf("task types are 1 to %d letters, digits and _ . -", MaxTaskTypeLen), t)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) > MaxTaskTypes {
		return nil, store.Invalid(field, fmt.Sprintf("names %d task types; at most %d are allowed", len(out), MaxTaskTypes), nil)
	}
	slices.Sort(out)
	return out, nil
}
