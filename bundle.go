package day1

import (
	"context"
	"io"

	"github.com/day1ai/day1/bundle"
)

// Bundle types. They are the bundle package's.
type (
	// Bundle is a stored knowledge bundle: its description (BundleInfo), counts,
	// seal, visibility and share token.
	Bundle = bundle.Bundle
	// BundleInfo describes a bundle: id, name, type, sources, version, verification,
	// tags, metadata, owner. It travels in every bundle file's manifest.
	BundleInfo = bundle.Info
	// BundleManifest is the first line of a bundle file.
	BundleManifest = bundle.Manifest
	// BundleCounts are a bundle's records by kind.
	BundleCounts = bundle.Counts
	// BundleType is task_export, curated or template.
	BundleType = bundle.Type
	// BundleStatus is draft, verified or published.
	BundleStatus = bundle.Status
	// BundleVisibility is private, team or public.
	BundleVisibility = bundle.Visibility
	// CreateBundleRequest asks for a bundle of a task, a branch or a template.
	CreateBundleRequest = bundle.CreateRequest
	// BundleFilter selects bundles for Bundles.
	BundleFilter = bundle.Filter
	// ExportBundleOptions configure ExportBundle.
	ExportBundleOptions = bundle.ExportOptions
	// ImportBundleRequest asks for a bundle (a file, a stored bundle or a share
	// token) to be imported into a branch.
	ImportBundleRequest = bundle.ImportRequest
	// ImportBundleResult counts what an import created, deduplicated, superseded,
	// updated and skipped.
	ImportBundleResult = bundle.ImportResult
	// BundleConflictPolicy settles imported records the branch holds with other
	// content.
	BundleConflictPolicy = bundle.ConflictPolicy
	// ImportBundleProgress says how far an import has come
	// (ImportBundleRequest.Progress).
	ImportBundleProgress = bundle.ImportProgress
	// ImportBundlePhase names a step of an import: check, write, merge.
	ImportBundlePhase = bundle.ImportPhase
	// BundleFormatError says where a bundle file is wrong; it matches
	// ErrInvalidArgument, ErrBundleFormat and the more specific of the bundle errors
	// below (ErrBundleTampered, ErrBundleVersion, ...).
	BundleFormatError = bundle.FormatError
	// BundleConflictError lists the records an import with BundleFailOnConflict met
	// with other content; it matches ErrConflict.
	BundleConflictError = bundle.ConflictError
)

// Bundle values.
const (
	BundleTaskExport = bundle.TaskExport
	BundleCurated    = bundle.Curated
	BundleTemplate   = bundle.TemplateExport

	BundleDraft     = bundle.Draft
	BundleVerified  = bundle.Verified
	BundlePublished = bundle.Published

	BundlePrivate = bundle.Private
	BundleTeam    = bundle.Team
	BundlePublic  = bundle.Public

	ImportBundleCheck = bundle.PhaseCheck
	ImportBundleWrite = bundle.PhaseWrite
	ImportBundleMerge = bundle.PhaseMerge

	BundleKeepTarget     = bundle.KeepTarget
	BundleTakeBundle     = bundle.TakeBundle
	BundleFailOnConflict = bundle.FailOnConflict
)

// Bundle errors: what is wrong with a bundle file. Each matches ErrBundleFormat,
// which matches ErrInvalidArgument; a *BundleFormatError carries the line.
var (
	// ErrBundleFormat: the input is not a valid day1 bundle.
	ErrBundleFormat = bundle.ErrFormat
	// ErrBundleVersion: the bundle's format version is not one this reader takes.
	ErrBundleVersion = bundle.ErrVersion
	// ErrBundleTampered: the bundle's content does not match its seal.
	ErrBundleTampered = bundle.ErrTampered
	// ErrBundleTruncated: the bundle ends before its seal.
	ErrBundleTruncated = bundle.ErrTruncated
	// ErrBundleTooLarge: the bundle exceeds ImportBundleRequest.MaxBytes.
	ErrBundleTooLarge = bundle.ErrTooLarge
)

// The provenance keys an imported record carries in its Metadata (a relation in its
// Properties): the bundle's id, its source, and the record's id in the bundle.
const (
	BundleMetaID       = bundle.MetaBundleID
	BundleMetaSource   = bundle.MetaBundleSource
	BundleMetaOriginID = bundle.MetaOriginID
)

// bundles returns the bundle engine over the Client's store, embedder, curator, tasks
// and merge engine.
func (c *Client) bundles() *bundle.Engine {
	return &bundle.Engine{
		Store:           c.st,
		Embedder:        c.emb,
		Curator:         c.curator(),
		Tasks:           c.handoffs(),
		Merger:          c.engine,
		DedupeThreshold: c.dedupe,
		NewID:           c.cfg.Test.NewID,
		Now:             c.cfg.Test.Now,
	}
}

// CreateBundle packages the verified knowledge of a task (what its branch added), a
// branch or a template as a bundle and stores it. With Visibility team or public it
// gets a share token. See bundle.Engine.Create.
func (c *Client) CreateBundle(ctx context.Context, req CreateBundleRequest) (_ Bundle, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpBundleExport, Method: "CreateBundle", Branch: req.Branch})
	defer func() { end(OperationEnd{Err: err}) }()
	if err := c.use(ctx); err != nil {
		return Bundle{}, err
	}
	return c.bundles().Create(ctx, req)
}

// GetBundle returns a stored bundle, or an error matching ErrNotFound.
func (c *Client) GetBundle(ctx context.Context, id string) (Bundle, error) {
	if err := c.use(ctx); err != nil {
		return Bundle{}, err
	}
	return c.bundles().Get(ctx, id)
}

// Bundles returns the stored bundles the filter selects (type, source task,
// visibility, owner, tags), newest first.
func (c *Client) Bundles(ctx context.Context, f BundleFilter) ([]Bundle, error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	return c.bundles().List(ctx, f)
}

// SharedBundle returns the bundle a share token resolves. A revoked or unknown token
// matches ErrNotFound.
func (c *Client) SharedBundle(ctx context.Context, token string) (Bundle, error) {
	if err := c.use(ctx); err != nil {
		return Bundle{}, err
	}
	return c.bundles().Shared(ctx, token)
}

// SetBundleVisibility makes a bundle private (revoking its token at once), team or
// public (issuing a token when it had none).
func (c *Client) SetBundleVisibility(ctx context.Context, id string, v BundleVisibility) (Bundle, error) {
	if err := c.use(ctx); err != nil {
		return Bundle{}, err
	}
	return c.bundles().SetVisibility(ctx, id, v)
}

// PublishBundle marks a bundle published.
func (c *Client) PublishBundle(ctx context.Context, id string) (Bundle, error) {
	if err := c.use(ctx); err != nil {
		return Bundle{}, err
	}
	return c.bundles().Publish(ctx, id)
}

// VerifyBundle judges a bundle's content with the Client's model (or the heuristic)
// and stores the mean score and the status it earns.
func (c *Client) VerifyBundle(ctx context.Context, id string) (Bundle, error) {
	if err := c.use(ctx); err != nil {
		return Bundle{}, err
	}
	return c.bundles().Verify(ctx, id)
}

// DeleteBundle removes a stored bundle; its share token stops working at once.
func (c *Client) DeleteBundle(ctx context.Context, id string) error {
	if err := c.use(ctx); err != nil {
		return err
	}
	return c.bundles().Delete(ctx, id)
}

// ExportBundle writes a stored bundle to w as a bundle file (the format is specified
// in the bundle package's documentation).
func (c *Client) ExportBundle(ctx context.Context, id string, w io.Writer, opts ExportBundleOptions) (_ Bundle, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpBundleExport, Method: "ExportBundle", RecordID: id})
	defer func() { end(OperationEnd{Err: err}) }()
	if err := c.use(ctx); err != nil {
		return Bundle{}, err
	}
	return c.bundles().Export(ctx, id, w, opts)
}

// WriteBundle gathers a bundle as CreateBundle does and writes it to w as a bundle
// file without storing it; with compress the file is gzip-compressed.
func (c *Client) WriteBundle(ctx context.Context, w io.Writer, req CreateBundleRequest, compress bool) (_ BundleManifest, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpBundleExport, Method: "WriteBundle", Branch: req.Branch})
	defer func() { end(OperationEnd{Err: err}) }()
	if err := c.use(ctx); err != nil {
		return BundleManifest{}, err
	}
	return c.bundles().WriteFile(ctx, w, req, compress)
}

// ImportBundle imports a bundle file, a stored bundle or a shared one into a branch,
// atomically and idempotently: the whole bundle is checked (format version, records,
// SHA-256 seal) before anything is written. See bundle.Engine.Import.
func (c *Client) ImportBundle(ctx context.Context, req ImportBundleRequest) (res ImportBundleResult, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpBundleImport, Method: "ImportBundle", Branch: req.Branch, RecordID: req.Bundle})
	defer func() {
		end(OperationEnd{Err: err, Records: res.Created + res.Updated + res.Superseded, Conflicts: res.Conflicts})
	}()
	if err := c.use(ctx); err != nil {
		return ImportBundleResult{}, err
	}
	return c.bundles().Import(ctx, req)
}
