package day1

import (
	"context"

	"github.com/day1ai/day1/curation"
)

// Template types. They are the curation package's.
type (
	// Template is a named, versioned snapshot of a branch for a kind of task, that new
	// branches fork from.
	Template = curation.Template
	// TemplateVersion is one version of a template.
	TemplateVersion = curation.TemplateVersion
	// TemplateSpec describes a template to create.
	TemplateSpec = curation.TemplateSpec
	// TemplateFilter narrows Templates.
	TemplateFilter = curation.TemplateFilter
	// TemplateUpdate describes a new version of a template.
	TemplateUpdate = curation.TemplateUpdate
	// InstantiateRequest describes the branch InstantiateTemplate creates.
	InstantiateRequest = curation.InstantiateRequest
	// TemplateInstance is a branch made from a template, and the template.
	TemplateInstance = curation.Instance
	// TemplateStatus is the life-cycle state of a template.
	TemplateStatus = curation.TemplateStatus
)

// Template statuses.
const (
	TemplateActive     = curation.TemplateActive
	TemplateDeprecated = curation.TemplateDeprecated
)

// Template errors. Test with errors.Is.
var (
	// ErrTemplateExists: a template with that name exists already.
	ErrTemplateExists = curation.ErrTemplateExists
	// ErrTemplateDeprecated: the template is deprecated; it can be neither
	// instantiated nor updated.
	ErrTemplateDeprecated = curation.ErrTemplateDeprecated
)

// CreateTemplate makes version 1 of a template from the current memory of
// spec.SourceBranch (a snapshot named "template.<name>.v1") for the task types it
// names. Errors: *ValidationError for a bad spec, ErrTemplateExists,
// ErrBranchNotFound, ErrClosed, ctx's error.
func (c *Client) CreateTemplate(ctx context.Context, spec TemplateSpec) (Template, error) {
	if err := c.use(ctx); err != nil {
		return Template{}, err
	}
	return c.curator().CreateTemplate(ctx, spec)
}

// GetTemplate returns a template by name, or an error matching ErrNotFound.
func (c *Client) GetTemplate(ctx context.Context, name string) (Template, error) {
	if err := c.use(ctx); err != nil {
		return Template{}, err
	}
	return c.curator().GetTemplate(ctx, name)
}

// Templates returns the templates the filter matches (a task type, a status), sorted
// by name. The zero filter matches every template.
func (c *Client) Templates(ctx context.Context, f TemplateFilter) ([]Template, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.curator().ListTemplates(ctx, f)
}

// FindTemplate returns the best active template for a task type: the most recent
// version, then the most used. Errors: an error matching ErrNotFound when none
// fits, *ValidationError, ErrClosed, ctx's error.
func (c *Client) FindTemplate(ctx context.Context, taskType string) (Template, error) {
	if err := c.use(ctx); err != nil {
		return Template{}, err
	}
	return c.curator().FindTemplate(ctx, taskType)
}

// InstantiateTemplate creates the branch req.Branch from the current version of a
// template: a fork from the version's snapshot, in constant time on the embedded store
// and a copy of the snapshot's rows on MatrixOne; the branch's metadata
// names the template and version. Errors: ErrNotFound, ErrTemplateDeprecated,
// ErrBranchExists, *ValidationError, ErrClosed, ctx's error.
func (c *Client) InstantiateTemplate(ctx context.Context, name string, req InstantiateRequest) (TemplateInstance, error) {
	if err := c.use(ctx); err != nil {
		return TemplateInstance{}, err
	}
	return c.curator().InstantiateTemplate(ctx, name, req)
}

// UpdateTemplate makes a new version of a template from the current memory of
// u.SourceBranch. Branches made from earlier versions are unaffected. Errors:
// ErrNotFound, ErrTemplateDeprecated, ErrBranchNotFound, ErrStale when another update
// made that version first, *ValidationError, ErrClosed, ctx's error.
func (c *Client) UpdateTemplate(ctx context.Context, name string, u TemplateUpdate) (Template, error) {
	if err := c.use(ctx); err != nil {
		return Template{}, err
	}
	return c.curator().UpdateTemplate(ctx, name, u)
}

// DeprecateTemplate marks a template deprecated, with a reason: FindTemplate skips it
// and it can no longer be instantiated or updated. Errors: ErrNotFound,
// *ValidationError, ErrClosed, ctx's error.
func (c *Client) DeprecateTemplate(ctx context.Context, name, reason string) (Template, error) {
	if err := c.use(ctx); err != nil {
		return Template{}, err
	}
	return c.curator().DeprecateTemplate(ctx, name, reason)
}
