package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// Provenance: the metadata keys (Properties for a relation) every imported record
// carries. They do not count against store.MaxMetadataPairs.
const (
	MetaBundleID     = store.MetaBundleID     // the bundle's id
	MetaBundleSource = store.MetaBundleSource // the bundle's source: task/<name> or the branch
	MetaOriginID     = store.MetaOriginID     // the record's id in the bundle
)

// ConflictPolicy says what an import does with a record whose id the target branch
// holds with other content.
type ConflictPolicy string

// Conflict policies.
const (
	// KeepTarget leaves the target's version; the record counts as skipped and
	// conflicting. The default.
	KeepTarget ConflictPolicy = "keep_target"
	// TakeBundle writes the bundle's version over the target's (Updated).
	TakeBundle ConflictPolicy = "take_bundle"
	// FailOnConflict fails the import with a *ConflictError and writes nothing.
	FailOnConflict ConflictPolicy = "fail"
)

// ImportRequest asks for a bundle to be imported into a branch. Exactly one of From,
// Bundle and ShareToken names the bundle.
type ImportRequest struct {
	// From reads a bundle file (plain or gzip-compressed).
	From io.Reader
	// Bundle is the id of a stored bundle.
	Bundle string
	// ShareToken resolves a shared bundle (see Engine.Shared).
	ShareToken string
	// Branch receives the records. Empty means store.DefaultBranch.
	Branch string
	// CreateBranch creates Branch from Parent when it does not exist (and deletes it
	// again if the import fails). Default false: a missing branch is an error.
	CreateBranch bool
	// Parent is where a created Branch forks from. Empty means store.DefaultBranch.
	Parent string
	// Policy settles records the branch holds with other content. Empty means
	// KeepTarget.
	Policy ConflictPolicy
	// MaxBytes bounds the bundle's size after decompression. 0 means
	// DefaultMaxBytes.
	MaxBytes int64
}

// ImportResult is what an import did. Every record of the bundle is counted once, in
// Created, Deduplicated, Superseded, Updated or Skipped.
type ImportResult struct {
	// Bundle describes the bundle, as its manifest says.
	Bundle Info
	// Hash is the bundle's seal, checked.
	Hash string
	// Branch received the records; BranchCreated says whether the import made it.
	Branch        string
	BranchCreated bool
	// Created records were new; Deduplicated ones were there already (the same id
	// and content, or a live fact of the same text); Superseded facts replaced a
	// near-duplicate; Updated records replaced the branch's version (TakeBundle);
	// Skipped records were left out in favour of the branch's (KeepTarget).
	Created, Deduplicated, Superseded, Updated, Skipped int
	// Conflicts counts the records the branch held with other content; Conflicting
	// names them.
	Conflicts   int
	Conflicting []store.Ref
	// Embedded counts the records embedded again because the bundle's embeddings came
	// from another embedder than the importer's (or none).
	Embedded int
	// Merge is the id of the merge that landed a bundle larger than one store batch
	// (store.MaxBatch records), written first to a staging branch; empty otherwise.
	Merge string
}

// ConflictError lists the records an import with FailOnConflict met on the branch
// with other content. Nothing was written. It matches store.ErrConflict.
type ConflictError struct {
	Branch      string
	Conflicting []store.Ref
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("day1: importing into %q: %d records exist there with other content (first %s); choose a conflict policy",
		e.Branch, len(e.Conflicting), e.Conflicting[0])
}

// Is makes errors.Is(err, store.ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == store.ErrConflict }

// Import reads a bundle and writes its records to a branch, atomically: the bundle is
// read and checked whole (format version, every record, the seal) before anything is
// written, and then lands in one store batch, or, beyond store.MaxBatch records,
// through a staging branch and one merge. Importing the same bundle again changes
// nothing. Records keep their ids and gain the provenance keys MetaBundleID,
// MetaBundleSource and MetaOriginID; they go through the store's deduplication (a
// live fact of the same text is not added again; a near-duplicate is superseded).
// Embeddings travel when the bundle's embedder is the engine's; otherwise the engine's
// embedder embeds the records again.
//
// Errors: a *store.ValidationError for a bad request; a *FormatError (ErrFormat,
// ErrVersion, ErrTampered, ErrTruncated, ErrTooLarge) for a bad bundle; store.ErrNotFound
// for an unknown bundle id or token or a missing branch; a *ConflictError with
// FailOnConflict; the store's and ctx's errors. On any error nothing was written.
func (e *Engine) Import(ctx context.Context, req ImportRequest) (ImportResult, error) {
	if err := e.check(); err != nil {
		return ImportResult{}, err
	}
	req, err := normalizeImport(req)
	if err != nil {
		return ImportResult{}, err
	}
	src := req.From
	if src == nil {
		var s stored
		if req.Bundle != "" {
			s, _, err = e.read(ctx, req.Bundle)
		} else {
			s, err = e.shared(ctx, req.ShareToken)
		}
		if err != nil {
			return ImportResult{}, err
		}
		src = e.parts(ctx, s)
	}
	r, err := NewReader(src, req.MaxBytes)
	if err != nil {
		return ImportResult{}, err
	}
	var recs []store.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ImportResult{}, err
		}
		recs = append(recs, rec)
		if len(recs)%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return ImportResult{}, err
			}
		}
	}
	m := r.Manifest()
	res := ImportResult{Bundle: m.Bundle, Hash: r.Hash(), Branch: req.Branch}
	if res.Embedded, err = e.importEmbeddings(ctx, recs, m.Embedder); err != nil {
		return ImportResult{}, err
	}
	source := m.Bundle.SourceBranch
	if m.Bundle.SourceTask != "" {
		source = "task/" + m.Bundle.SourceTask
	}
	for i, rec := range recs {
		recs[i] = withProvenance(rec, m.Bundle.ID, source)
	}
	exists := true
	if _, err := e.Store.GetBranch(ctx, req.Branch); errors.Is(err, store.ErrBranchNotFound) && req.CreateBranch {
		exists = false
	} else if err != nil {
		return ImportResult{}, err
	}
	batch := recs
	if exists {
		if batch, err = e.settle(ctx, req, recs, &res); err != nil {
			return ImportResult{}, err
		}
	}
	recs = nil // batch holds what is left to write; land lets each part go once written
	if len(batch) == 0 {
		return res, nil
	}
	if !exists {
		if _, err := e.Store.CreateBranch(ctx, store.BranchSpec{Name: req.Branch, From: req.Parent,
			Description: "imported bundle " + m.Bundle.Name}); err != nil {
			return ImportResult{}, err
		}
		res.BranchCreated = true
	}
	if err := e.land(ctx, req, m.Bundle, batch, &res); err != nil {
		if res.BranchCreated {
			err = errors.Join(err, e.Store.DeleteBranch(context.WithoutCancel(ctx), req.Branch))
		}
		return ImportResult{}, err
	}
	return res, nil
}

func normalizeImport(req ImportRequest) (ImportRequest, error) {
	n := 0
	if req.From != nil {
		n++
	}
	if req.Bundle != "" {
		n++
	}
	if req.ShareToken != "" {
		n++
	}
	if n != 1 {
		return req, store.Invalid("ImportRequest", "must name the bundle exactly once: From, Bundle or ShareToken", nil)
	}
	if req.Branch == "" {
		req.Branch = store.DefaultBranch
	}
	if err := store.ValidateBranchName("ImportRequest.Branch", req.Branch); err != nil {
		return req, err
	}
	if req.Parent == "" {
		req.Parent = store.DefaultBranch
	}
	if err := store.ValidateBranchName("ImportRequest.Parent", req.Parent); err != nil {
		return req, err
	}
	if req.Policy == "" {
		req.Policy = KeepTarget
	}
	if req.Policy != KeepTarget && req.Policy != TakeBundle && req.Policy != FailOnConflict {
		return req, store.Invalid("ImportRequest.Policy", "must be keep_target, take_bundle or fail", req.Policy)
	}
	if req.MaxBytes < 0 {
		return req, store.Invalid("ImportRequest.MaxBytes", "must be positive, or 0 for DefaultMaxBytes", req.MaxBytes)
	}
	return req, nil
}

// importEmbeddings keeps the bundle's embeddings when they come from the engine's
// embedder, and otherwise embeds the facts and observations again (or strips them
// without an embedder). It returns how many it embedded.
func (e *Engine) importEmbeddings(ctx context.Context, recs []store.Record, from EmbedderInfo) (int, error) {
	if e.Embedder != nil && from.Name == e.Embedder.Name() && from.Dimensions == e.Embedder.Dimensions() {
		return 0, nil
	}
	var need []int
	for i, r := range recs {
		if store.EmbeddingOf(r) != nil {
			recs[i] = store.WithEmbedding(r, nil)
		}
		if k := r.RecordKind(); e.Embedder != nil && (k == store.KindFact || k == store.KindObservation) {
			need = append(need, i)
		}
	}
	if e.Embedder == nil {
		return 0, nil
	}
	return len(need), embedInto(ctx, e.Embedder, recs, need)
}

// withProvenance returns a copy of r that names the bundle it came from.
func withProvenance(r store.Record, bundleID, source string) store.Record {
	mark := func(m map[string]string, id string) map[string]string {
		m = maps.Clone(m)
		if m == nil {
			m = map[string]string{}
		}
		m[MetaBundleID], m[MetaOriginID] = bundleID, id
		if source != "" {
			m[MetaBundleSource] = source
		}
		return m
	}
	switch v := r.(type) {
	case store.Fact:
		v.Metadata = mark(v.Metadata, v.ID)
		return v
	case store.Observation:
		v.Metadata = mark(v.Metadata, v.ID)
		return v
	case store.Relation:
		v.Properties = mark(v.Properties, v.ID)
		return v
	case store.Conversation:
		v.Metadata = mark(v.Metadata, v.ID)
		return v
	case store.Message:
		v.Metadata = mark(v.Metadata, v.ID)
		return v
	}
	return r
}

// settle compares the records with the branch's versions of the same ids: equal
// content is deduplicated, other content follows the policy. It returns the records
// left to write.
func (e *Engine) settle(ctx context.Context, req ImportRequest, recs []store.Record, res *ImportResult) ([]store.Record, error) {
	byKind := map[store.Kind][]string{}
	for _, r := range recs {
		byKind[r.RecordKind()] = append(byKind[r.RecordKind()], r.RecordID())
	}
	have := map[store.Ref]store.Record{}
	for k, list := range byKind {
		for lo := 0; lo < len(list); lo += store.MaxLimit {
			ids := list[lo:min(lo+store.MaxLimit, len(list))]
			got, err := e.Store.List(ctx, store.View{Branch: req.Branch}, store.ListQuery{Kind: k, Filter: store.Filter{IDs: ids}})
			if err != nil {
				return nil, err
			}
			for _, g := range got {
				have[store.RefOf(g)] = g
			}
		}
	}
	out := recs[:0:0]
	for _, r := range recs {
		cur, ok := have[store.RefOf(r)]
		switch {
		case !ok:
			out = append(out, r)
		case sameKnowledge(cur, r):
			res.Deduplicated++
		default:
			res.Conflicts++
			res.Conflicting = append(res.Conflicting, store.RefOf(r))
			switch req.Policy {
			case KeepTarget:
				res.Skipped++
			case TakeBundle:
				out = append(out, r)
			}
		}
	}
	if req.Policy == FailOnConflict && res.Conflicts > 0 {
		return nil, &ConflictError{Branch: req.Branch, Conflicting: res.Conflicting}
	}
	return out, nil
}

// land writes the records: in one batch, or through a staging branch and a merge
// beyond store.MaxBatch records.
func (e *Engine) land(ctx context.Context, req ImportRequest, info Info, recs []store.Record, res *ImportResult) error {
	opts := store.PutOptions{DedupeThreshold: e.DedupeThreshold}
	if len(recs) <= store.MaxBatch {
		results, err := e.Store.Put(ctx, req.Branch, recs, opts)
		if err != nil {
			return err
		}
		count(results, res)
		return nil
	}
	staging := "import/" + e.newID()
	if _, err := e.Store.CreateBranch(ctx, store.BranchSpec{Name: staging, From: req.Branch,
		Description: "staging of an import of bundle " + info.Name}); err != nil {
		return err
	}
	defer e.Store.DeleteBranch(context.WithoutCancel(ctx), staging)
	var counted ImportResult
	for lo := 0; lo < len(recs); lo += store.MaxBatch {
		part := recs[lo:min(lo+store.MaxBatch, len(recs))]
		results, err := e.Store.Put(ctx, staging, part, opts)
		if err != nil {
			return err
		}
		count(results, &counted)
		clear(part) // the store holds its own copies: let the decoded records go
	}
	policy := store.ConflictSkip
	switch req.Policy {
	case TakeBundle:
		policy = store.ConflictAccept
	case FailOnConflict:
		policy = store.ConflictFail
	}
	merger := e.Merger
	if merger == nil {
		merger = &merge.Engine{Store: e.Store, NewID: e.NewID, Now: e.Now}
	}
	mr, err := merger.Merge(ctx, merge.Request{Source: staging, Target: req.Branch, Policy: policy,
		MergedBy: "bundle import", Message: fmt.Sprintf("import bundle %s (%s)", info.Name, info.ID)})
	if err != nil {
		var mc *store.MergeConflictError
		if errors.As(err, &mc) {
			refs := make([]store.Ref, len(mc.Conflicts))
			for i, c := range mc.Conflicts {
				refs[i] = c.Ref
			}
			return &ConflictError{Branch: req.Branch, Conflicting: refs}
		}
		return err
	}
	res.Created += counted.Created
	res.Deduplicated += counted.Deduplicated
	res.Superseded += counted.Superseded
	res.Updated += counted.Updated
	res.Merge = mr.Record.ID
	return nil
}

// count adds the outcomes of a Put to res.
func count(results []store.PutResult, res *ImportResult) {
	for _, r := range results {
		switch r.Outcome {
		case store.Created:
			res.Created++
		case store.Deduplicated:
			res.Deduplicated++
		case store.Superseded:
			res.Superseded++
		case store.Updated:
			res.Updated++
		}
	}
}

// sameKnowledge reports whether a branch's version cur of a record already holds what
// the bundle's r holds: the same content apart from what an import or a store stamps
// on a record (the provenance keys, the times of writing and of a verdict, the
// branch, the embedding). Importing a bundle into the branch it came from, or into
// one that holds some of its records, finds them deduplicated, not in conflict.
func sameKnowledge(cur, r store.Record) bool {
	return store.SameContentExceptEmbedding(knowledgeOf(cur), knowledgeOf(r))
}

// knowledgeOf returns r without its provenance keys, its branch and the times a
// store stamps; relations' ValidFrom and ValidTo, which are content, are cut to whole
// microseconds, the precision every store keeps (MatrixOne's DATETIME(6)).
func knowledgeOf(r store.Record) store.Record {
	micros := func(t time.Time) time.Time { return t.Truncate(time.Microsecond) }
	strip := func(m map[string]string) map[string]string {
		if m[MetaBundleID] == "" && m[MetaOriginID] == "" && m[MetaBundleSource] == "" {
			return m
		}
		m = maps.Clone(m)
		delete(m, MetaBundleID)
		delete(m, MetaOriginID)
		delete(m, MetaBundleSource)
		return m
	}
	r = store.WithBranch(r, "")
	switch v := r.(type) {
	case store.Fact:
		v.CreatedAt, v.UpdatedAt, v.Verify.At, v.Metadata = time.Time{}, time.Time{}, time.Time{}, strip(v.Metadata)
		return v
	case store.Observation:
		v.CreatedAt, v.Metadata = time.Time{}, strip(v.Metadata)
		return v
	case store.Relation:
		v.CreatedAt, v.ValidFrom, v.ValidTo, v.Properties = time.Time{}, micros(v.ValidFrom), micros(v.ValidTo), strip(v.Properties)
		return v
	case store.Conversation:
		v.CreatedAt, v.UpdatedAt, v.Verify.At, v.Metadata = time.Time{}, time.Time{}, time.Time{}, strip(v.Metadata)
		return v
	case store.Message:
		v.CreatedAt, v.Metadata = time.Time{}, strip(v.Metadata)
		return v
	}
	return r
}
