package bundle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
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
	// Progress, when set, is called as the import goes: after every ImportBatch
	// records checked, then read and settled for writing, and once before the final
	// merge. Calls never
	// overlap; Progress must not block for long, since the import waits for it.
	Progress func(ImportProgress)
}

// ImportBatch is how many records an import decodes, embeds and compares with the
// branch at a time, and writes at a time to the staging branch of a bundle larger
// than one store batch. Until the final merge, the memory an import holds beyond
// the store's grows with store.MaxBatch at most, not with the bundle; the merge of a
// staged bundle lists its records, without their embeddings.
const ImportBatch = 1000

// oneBatch is the most records an import writes in one store batch, without a
// staging branch: store.MaxBatch, less in this package's tests, so that they cross it
// with small bundles.
var oneBatch = store.MaxBatch

// ImportPhase names a step of an import.
type ImportPhase string

// Import phases, in order.
const (
	// PhaseCheck: the whole bundle is read once and checked (format, every record,
	// the seal) before anything is written.
	PhaseCheck ImportPhase = "check"
	// PhaseWrite: the records are written, a batch at a time.
	PhaseWrite ImportPhase = "write"
	// PhaseMerge: a bundle larger than one store batch (store.MaxBatch) lands on the
	// branch in one merge.
	PhaseMerge ImportPhase = "merge"
)

// ImportProgress says how far an import has come.
type ImportProgress struct {
	Phase ImportPhase
	// Done counts the records of the bundle checked (PhaseCheck) or settled and
	// written (PhaseWrite, PhaseMerge) so far; Total is the bundle's record count.
	Done, Total int
}

// ImportResult is what an import did. Every record of the bundle is counted once, in
// Created, Deduplicated, Superseded, Updated or Skipped.
type ImportResult struct {
	// Bundle describes the bundle, as its manifest says.
	Bundle Info `json:"bundle"`
	// Hash is the bundle's seal, checked.
	Hash string `json:"hash"`
	// Branch received the records; BranchCreated says whether the import made it.
	Branch        string `json:"branch"`
	BranchCreated bool   `json:"branch_created"`
	// Created records were new; Deduplicated ones were there already (the same id
	// and content, or a live fact of the same text); Superseded facts replaced a
	// near-duplicate; Updated records replaced the branch's version (TakeBundle);
	// Skipped records were left out in favour of the branch's (KeepTarget).
	Created      int `json:"created"`
	Deduplicated int `json:"deduplicated"`
	Superseded   int `json:"superseded"`
	Updated      int `json:"updated"`
	Skipped      int `json:"skipped"`
	// Conflicts counts the records the branch held with other content; Conflicting
	// names them.
	Conflicts   int         `json:"conflicts"`
	Conflicting []store.Ref `json:"conflicting,omitempty"`
	// Embedded counts the records embedded again because the bundle's embeddings came
	// from another embedder than the importer's (or none).
	Embedded int `json:"embedded"`
	// Merge is the id of the merge that landed a bundle larger than one store batch
	// (store.MaxBatch records), written first to a staging branch; empty otherwise.
	Merge string `json:"merge,omitempty"`
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
// written; it is then read again, ImportBatch records at a time, and lands in one
// store batch or, beyond store.MaxBatch records, through a staging branch, written
// ImportBatch records at a time, and one merge (see ImportBatch for the memory this
// holds). A From
// that is an io.ReadSeeker (a file, a bytes.Reader) is read twice from where it
// stood; any other reader is copied to a temporary file (os.TempDir) as it is
// checked, and the file is removed when the import returns. Importing the same bundle
// again changes nothing. Records keep their ids and gain the provenance keys
// MetaBundleID, MetaBundleSource and MetaOriginID; they go through the store's
// deduplication (a live fact of the same text is not added again; a near-duplicate is
// superseded). Embeddings travel when the bundle's embedder is the engine's; otherwise
// the engine's embedder embeds the records again. ctx is checked between batches and
// every few hundred records read.
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
	src, err := e.importSource(ctx, req)
	if err != nil {
		return ImportResult{}, err
	}
	defer src.close()
	progress := req.Progress
	if progress == nil {
		progress = func(ImportProgress) {}
	}

	// The first reading checks the whole bundle and writes nothing.
	r, err := NewReader(src.first, req.MaxBytes)
	if err != nil {
		return ImportResult{}, err
	}
	total := r.Manifest().Counts.Total()
	for n := 0; ; n++ {
		if _, err := r.Next(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return ImportResult{}, err
		}
		if (n+1)%256 == 0 {
			if err := ctx.Err(); err != nil {
				return ImportResult{}, err
			}
		}
		if (n+1)%ImportBatch == 0 && n+1 < total {
			progress(ImportProgress{Phase: PhaseCheck, Done: n + 1, Total: total})
		}
	}
	progress(ImportProgress{Phase: PhaseCheck, Done: total, Total: total})
	hash := r.Hash()

	second, err := src.again()
	if err != nil {
		return ImportResult{}, err
	}
	r, err = NewReader(second, req.MaxBytes)
	if err != nil {
		return ImportResult{}, err
	}
	if m := r.Manifest(); m.Counts.Total() != total {
		return ImportResult{}, formatErr(ErrTampered, 1, nil, "the bundle changed between its two readings")
	}
	w, err := e.newLanding(ctx, req, r.Manifest(), hash, total)
	if err != nil {
		return ImportResult{}, err
	}
	if err := w.run(ctx, r, progress); err != nil {
		return ImportResult{}, w.abort(ctx, err)
	}
	return w.res, nil
}

// importSource gives the bytes of the bundle an import names, twice.
type importSource struct {
	first io.Reader                 // the first reading
	again func() (io.Reader, error) // the second reading, from the start
	close func()                    // releases what the readings hold
}

// importSource returns the readings of req's bundle: a stored or shared bundle is
// read from the store twice; a From that can seek is read again from where it
// stood; any other From is copied to a temporary file during the first reading.
func (e *Engine) importSource(ctx context.Context, req ImportRequest) (importSource, error) {
	nothing := func() {}
	if req.From == nil {
		var s stored
		var err error
		if req.Bundle != "" {
			s, _, err = e.read(ctx, req.Bundle)
		} else {
			s, err = e.shared(ctx, req.ShareToken)
		}
		if err != nil {
			return importSource{}, err
		}
		return importSource{first: e.parts(ctx, s), again: func() (io.Reader, error) { return e.parts(ctx, s), nil }, close: nothing}, nil
	}
	if rs, ok := req.From.(io.ReadSeeker); ok {
		if start, err := rs.Seek(0, io.SeekCurrent); err == nil {
			again := func() (io.Reader, error) {
				if _, err := rs.Seek(start, io.SeekStart); err != nil {
					return nil, fmt.Errorf("day1: reading the bundle again: %w", err)
				}
				return rs, nil
			}
			return importSource{first: rs, again: again, close: nothing}, nil
		}
	}
	spool, err := os.CreateTemp("", "day1-import-*.bundle")
	if err != nil {
		return importSource{}, fmt.Errorf("day1: a temporary file for the bundle: %w", err)
	}
	release := func() {
		spool.Close()
		os.Remove(spool.Name())
	}
	again := func() (io.Reader, error) {
		if _, err := spool.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("day1: reading the bundle again from %s: %w", spool.Name(), err)
		}
		return bufio.NewReaderSize(spool, 64<<10), nil
	}
	return importSource{first: io.TeeReader(req.From, &spoolWriter{f: spool}), again: again, close: release}, nil
}

// spoolWriter writes to the spool file, turning its errors (a full disk) into errors
// that say what failed.
type spoolWriter struct{ f *os.File }

func (w *spoolWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = fmt.Errorf("day1: copying the bundle to %s: %w", w.f.Name(), err)
	}
	return n, err
}

// landing writes the records of a checked bundle: straight to the branch when the
// bundle fits one store batch (store.MaxBatch), else to a staging branch that one
// merge lands.
type landing struct {
	e        *Engine
	req      ImportRequest
	info     Info
	embedder EmbedderInfo
	source   string // the provenance source
	total    int
	exists   bool   // whether req.Branch existed before the import
	staging  string // the staging branch, once made
	res      ImportResult
}

func (e *Engine) newLanding(ctx context.Context, req ImportRequest, m Manifest, hash string, total int) (*landing, error) {
	w := &landing{e: e, req: req, info: m.Bundle, embedder: m.Embedder, total: total, exists: true,
		res: ImportResult{Bundle: m.Bundle, Hash: hash, Branch: req.Branch}}
	w.source = m.Bundle.SourceBranch
	if m.Bundle.SourceTask != "" {
		w.source = "task/" + m.Bundle.SourceTask
	}
	if _, err := e.Store.GetBranch(ctx, req.Branch); errors.Is(err, store.ErrBranchNotFound) && req.CreateBranch {
		w.exists = false
	} else if err != nil {
		return nil, err
	}
	return w, nil
}

// run reads the records a batch at a time, settles each with the branch and writes
// what is left, then lands the staging branch.
func (w *landing) run(ctx context.Context, r *Reader, progress func(ImportProgress)) error {
	done := 0
	var pending []store.Record // a bundle of one store batch is written whole at the end
	for {
		batch, err := readBatch(r, ImportBatch)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		embedded, err := w.e.importEmbeddings(ctx, batch, w.embedder)
		if err != nil {
			return err
		}
		w.res.Embedded += embedded
		for i, rec := range batch {
			batch[i] = withProvenance(rec, w.info.ID, w.source)
		}
		if w.exists {
			if batch, err = w.e.settle(ctx, w.req, batch, &w.res); err != nil {
				return err
			}
		}
		done += ImportBatch
		switch {
		case w.req.Policy == FailOnConflict && w.res.Conflicts > 0:
			// The import fails: read on only to name every conflicting record.
		case w.total <= oneBatch:
			pending = append(pending, batch...)
		default:
			if err := w.stage(ctx, batch); err != nil {
				return err
			}
		}
		progress(ImportProgress{Phase: PhaseWrite, Done: min(done, w.total), Total: w.total})
	}
	if r.Hash() != w.res.Hash {
		return formatErr(ErrTampered, 0, nil, "the bundle changed between its two readings")
	}
	if w.req.Policy == FailOnConflict && w.res.Conflicts > 0 {
		return &ConflictError{Branch: w.req.Branch, Conflicting: w.res.Conflicting}
	}
	if w.total <= oneBatch {
		if len(pending) == 0 {
			return nil
		}
		if err := w.ensureBranch(ctx); err != nil {
			return err
		}
		results, err := w.e.Store.Put(ctx, w.req.Branch, pending, store.PutOptions{DedupeThreshold: w.e.DedupeThreshold})
		if err != nil {
			return err
		}
		count(results, &w.res)
		return nil
	}
	if w.staging == "" {
		return nil // everything was on the branch already, or skipped
	}
	progress(ImportProgress{Phase: PhaseMerge, Done: w.total, Total: w.total})
	return w.merge(ctx)
}

// readBatch returns the next n records of r, fewer at its end, none after it.
func readBatch(r *Reader, n int) ([]store.Record, error) {
	var out []store.Record
	for len(out) < n {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// ensureBranch creates the import's branch when the request asks for it.
func (w *landing) ensureBranch(ctx context.Context) error {
	if w.exists || w.res.BranchCreated {
		return nil
	}
	if _, err := w.e.Store.CreateBranch(ctx, store.BranchSpec{Name: w.req.Branch, From: w.req.Parent,
		Description: "imported bundle " + w.info.Name}); err != nil {
		return err
	}
	w.res.BranchCreated = true
	return nil
}

// stage writes a batch to the staging branch, making it (and the import's branch)
// first.
func (w *landing) stage(ctx context.Context, batch []store.Record) error {
	if len(batch) == 0 {
		return nil
	}
	if w.staging == "" {
		if err := w.ensureBranch(ctx); err != nil {
			return err
		}
		name := "import/" + w.e.newID()
		if _, err := w.e.Store.CreateBranch(ctx, store.BranchSpec{Name: name, From: w.req.Branch,
			Description: "staging of an import of bundle " + w.info.Name}); err != nil {
			return err
		}
		w.staging = name
	}
	var counted ImportResult
	results, err := w.e.Store.Put(ctx, w.staging, batch, store.PutOptions{DedupeThreshold: w.e.DedupeThreshold})
	if err != nil {
		return err
	}
	count(results, &counted)
	w.res.Created += counted.Created
	w.res.Deduplicated += counted.Deduplicated
	w.res.Superseded += counted.Superseded
	w.res.Updated += counted.Updated
	return nil
}

// merge lands the staging branch on the import's branch and removes it.
func (w *landing) merge(ctx context.Context) error {
	policy := store.ConflictSkip
	switch w.req.Policy {
	case TakeBundle:
		policy = store.ConflictAccept
	case FailOnConflict:
		policy = store.ConflictFail
	}
	merger := w.e.Merger
	if merger == nil {
		merger = &merge.Engine{Store: w.e.Store, NewID: w.e.NewID, Now: w.e.Now}
	}
	message := fmt.Sprintf("import bundle %s (%s)", w.info.Name, w.info.ID)
	// A branch nobody wrote to while the bundle was staged takes the staging branch
	// as it is, a chunk at a time, where the store can (store.Lander): no diff of the
	// whole bundle is held. A merge gate must see the records, so it merges.
	if l, ok := w.e.Store.(store.Lander); ok && merger.Gate == nil {
		rec, err := l.Land(ctx, w.staging, w.req.Branch, store.MergeRecord{ID: w.e.newID(), Strategy: store.Native,
			MergedBy: "bundle import", Message: message, CreatedAt: w.e.now()})
		switch {
		case err == nil:
			w.res.Merge = rec.ID
			if err := w.e.Store.DeleteBranch(context.WithoutCancel(ctx), w.staging); err == nil {
				w.staging = ""
			}
			return nil
		case !errors.Is(err, store.ErrStale):
			return err
		}
	}
	mr, err := merger.Merge(ctx, merge.Request{Source: w.staging, Target: w.req.Branch, Policy: policy,
		MergedBy: "bundle import", Message: message})
	if err != nil {
		var mc *store.MergeConflictError
		if errors.As(err, &mc) {
			refs := make([]store.Ref, len(mc.Conflicts))
			for i, c := range mc.Conflicts {
				refs[i] = c.Ref
			}
			return &ConflictError{Branch: w.req.Branch, Conflicting: refs}
		}
		return err
	}
	w.res.Merge = mr.Record.ID
	if err := w.e.Store.DeleteBranch(context.WithoutCancel(ctx), w.staging); err == nil {
		w.staging = ""
	}
	return nil
}

// abort removes what a failed import made (the staging branch, a branch it created)
// and returns err, joined with any failure to remove them.
func (w *landing) abort(ctx context.Context, err error) error {
	ctx = context.WithoutCancel(ctx)
	if w.staging != "" {
		err = errors.Join(err, w.e.Store.DeleteBranch(ctx, w.staging))
	}
	if w.res.BranchCreated {
		err = errors.Join(err, w.e.Store.DeleteBranch(ctx, w.req.Branch))
	}
	return err
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
	return out, nil
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
