package bundle

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/internal/ids"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// Document collections of stored bundles: one document per bundle, and its file in
// parts of at most partBytes.
const (
	Collection     = "bundle"
	PartCollection = "bundle_part"
	partBytes      = 2 << 20
)

// Share tokens: TokenPrefix and random characters, TokenLen in all.
const (
	TokenPrefix = "kb_"
	TokenLen    = 64
)

// DefaultVersion is a bundle's Version when its request leaves it empty.
const DefaultVersion = "1.0"

// DefaultProducer is the manifest's Producer when Engine.Producer is empty.
const DefaultProducer = "day1"

// Store is what the engine needs of a store: what the curation engine needs to
// verify a bundle and the handoff engine to read a task (curation.Store,
// handoff.Store), which between them hold the records, branches, merges, snapshots
// and the documents bundles are kept in. Every store.Store is one.
type Store interface {
	curation.Store
	handoff.Store
}

// Engine creates, stores, shares, verifies, exports and imports bundles on one store.
// Its zero value is not usable: Store is required. It holds no state and is safe for
// concurrent use when its fields are.
type Engine struct {
	// Store holds the records bundled and the bundles. Required.
	Store Store
	// Embedder names the embeddings that bundles carry, and embeds imported records
	// whose bundle was made with another embedder (or none). Nil: bundles carry no
	// embeddings and imports write none.
	Embedder llm.Embedder
	// Curator judges bundles (Verify) and verifies task branches before an export
	// (CreateRequest.Verify). Nil means a curation.Engine on Store with its defaults.
	Curator *curation.Engine
	// Tasks reads the tasks that task exports come from. Nil means a handoff.Engine on
	// Store.
	Tasks *handoff.Engine
	// Merger lands imports larger than one store batch. Nil means a merge.Engine on
	// Store.
	Merger *merge.Engine
	// DedupeThreshold is the near-duplicate threshold of imported facts
	// (store.PutOptions.DedupeThreshold); 0 leaves only exact-text deduplication.
	DedupeThreshold float64
	// Producer is written in every manifest. Empty means DefaultProducer.
	Producer string
	// NewID returns bundle ids. Nil means a random time-ordered id.
	NewID func() string
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// Random is the source of share tokens. Nil means crypto/rand.
	Random io.Reader
}

// CreateRequest asks for a bundle of one source: exactly one of Task, Branch and
// Template.
type CreateRequest struct {
	// Name names the bundle. Required, at most 200 bytes.
	Name string
	// Description says what it is for.
	Description string
	// Task makes a task export: what the task's branch added since it was forked.
	Task string
	// Branch makes a curated bundle: the branch's records as it reads now.
	Branch string
	// Template makes a template bundle: the records of the template's current
	// version.
	Template string
	// IncludeUnverified takes every live fact and every conversation. Default false:
	// verified facts only (store.Fact.IsVerified) and conversations that are verified
	// or were cherry-picked, with their messages. Relations always travel;
	// superseded and invalidated facts never do.
	IncludeUnverified bool
	// IncludeObservations adds the source's observations. Default false.
	IncludeObservations bool
	// Verify runs the curator's batch verification on a task's branch before the
	// export (task exports only), so that what the judge accepts is bundled.
	Verify bool
	// Visibility is the bundle's visibility. Empty means Private.
	Visibility Visibility
	// Version is the bundle's own version label. Empty means DefaultVersion.
	Version string
	// Tags help find it (List); Metadata is carried along; Owner names who made it.
	Tags     []string
	Metadata map[string]string
	Owner    string
}

// Filter selects bundles for List. Zero fields match everything.
type Filter struct {
	Type       Type
	SourceTask string
	Visibility Visibility
	Owner      string
	// Tags keeps bundles that carry every one of them.
	Tags []string
}

// ExportOptions configure Export.
type ExportOptions struct {
	// Compress gzip-compresses the file. Default false: plain lines.
	Compress bool
}

// stored is a bundle's document: the bundle and how its file is kept.
type stored struct {
	Bundle
	Parts int `json:"parts"`
}

type part struct {
	Bytes string `json:"bytes"` // base64 of a slice of the gzip-compressed file
}

func (e *Engine) check() error {
	if e == nil || e.Store == nil {
		return store.Invalid("Engine.Store", "must be set to the store that holds the bundles", nil)
	}
	return nil
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}

func (e *Engine) newID() string {
	if e.NewID != nil {
		return e.NewID()
	}
	return ids.New()
}

func (e *Engine) curator() *curation.Engine {
	if e.Curator != nil {
		return e.Curator
	}
	return &curation.Engine{Store: e.Store, Embedder: e.Embedder, NewID: e.NewID, Now: e.Now}
}

func (e *Engine) tasks() *handoff.Engine {
	if e.Tasks != nil {
		return e.Tasks
	}
	return &handoff.Engine{Store: e.Store, NewID: e.NewID, Now: e.Now}
}

func (e *Engine) producer() string {
	if e.Producer != "" {
		return e.Producer
	}
	return DefaultProducer
}

// Create gathers a bundle from its source and stores it, file and description, in one
// atomic batch of documents.
//
// Errors: a *store.ValidationError for a bad request; an error matching
// store.ErrNotFound for an unknown task, branch or template; the store's, the
// curator's and ctx's errors.
func (e *Engine) Create(ctx context.Context, req CreateRequest) (Bundle, error) {
	if err := e.check(); err != nil {
		return Bundle{}, err
	}
	if req.Visibility == "" {
		req.Visibility = Private
	}
	if !req.Visibility.Valid() {
		return Bundle{}, store.Invalid("CreateRequest.Visibility", "must be private, team or public", req.Visibility)
	}
	info, recs, err := e.gather(ctx, req)
	if err != nil {
		return Bundle{}, err
	}
	var file bytes.Buffer
	m, hash, err := e.encode(ctx, &file, info, recs, true)
	if err != nil {
		return Bundle{}, err
	}
	b := Bundle{Info: info, Counts: m.Counts, Embedder: m.Embedder, Hash: hash, Size: int64(file.Len()),
		Visibility: req.Visibility, UpdatedAt: info.CreatedAt}
	if req.Visibility != Private {
		if b.ShareToken, err = e.token(); err != nil {
			return Bundle{}, err
		}
	}
	parts := splitParts(file.Bytes())
	doc, err := bundleDoc(stored{Bundle: b, Parts: len(parts)})
	if err != nil {
		return Bundle{}, err
	}
	ws := []store.DocWrite{{Doc: doc, Cond: store.DocCreate}}
	for i, p := range parts {
		data, err := json.Marshal(part{Bytes: base64.StdEncoding.EncodeToString(p)})
		if err != nil {
			return Bundle{}, err
		}
		ws = append(ws, store.DocWrite{Cond: store.DocCreate, Doc: store.Doc{
			Collection: PartCollection, ID: partID(b.ID, i), Data: data, Keys: map[string]string{"bundle": b.ID}}})
	}
	if len(ws) > store.MaxDocBatch {
		return Bundle{}, store.Invalid("CreateRequest", fmt.Sprintf("the bundle's file is %d bytes; a stored bundle holds at most %d", file.Len(), (store.MaxDocBatch-1)*partBytes), nil)
	}
	if _, err := e.Store.WriteDocs(ctx, ws); err != nil {
		return Bundle{}, fmt.Errorf("day1: storing bundle %q: %w", b.Name, err)
	}
	return b, nil
}

// WriteFile gathers a bundle from its source, as Create does, and writes it to w as a
// bundle file without storing it: the export of a task, branch or template to a file.
// With compress the file is gzip-compressed. The returned manifest describes it.
func (e *Engine) WriteFile(ctx context.Context, w io.Writer, req CreateRequest, compress bool) (Manifest, error) {
	if err := e.check(); err != nil {
		return Manifest{}, err
	}
	info, recs, err := e.gather(ctx, req)
	if err != nil {
		return Manifest{}, err
	}
	m, _, err := e.encode(ctx, w, info, recs, compress)
	return m, err
}

// encode writes a bundle file of recs (sorted) to w, embedding what lacks an
// embedding of the engine's embedder.
func (e *Engine) encode(ctx context.Context, w io.Writer, info Info, recs []store.Record, compress bool) (Manifest, string, error) {
	m := Manifest{Producer: e.producer(), CreatedAt: info.CreatedAt, Bundle: info}
	for _, r := range recs {
		m.Counts.add(r.RecordKind(), 1)
	}
	var err error
	if recs, m.Embedder, err = e.withEmbeddings(ctx, recs); err != nil {
		return Manifest{}, "", err
	}
	bw, err := NewWriter(w, m, compress)
	if err != nil {
		return Manifest{}, "", err
	}
	for i, r := range recs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return Manifest{}, "", err
			}
		}
		if err := bw.Write(r); err != nil {
			return Manifest{}, "", err
		}
	}
	if err := bw.Close(); err != nil {
		return Manifest{}, "", err
	}
	m.Format, m.FormatVersion, m.CreatedAt = FormatName, FormatVersion, m.CreatedAt.UTC()
	return m, bw.Hash(), nil
}

// withEmbeddings gives every fact and observation an embedding of the engine's
// embedder, keeping the ones they have of its length, or strips them all when the
// engine has no embedder.
func (e *Engine) withEmbeddings(ctx context.Context, recs []store.Record) ([]store.Record, EmbedderInfo, error) {
	if e.Embedder == nil {
		for i, r := range recs {
			if store.EmbeddingOf(r) != nil {
				recs[i] = store.WithEmbedding(r, nil)
			}
		}
		return recs, EmbedderInfo{}, nil
	}
	info := EmbedderInfo{Name: e.Embedder.Name(), Dimensions: e.Embedder.Dimensions()}
	var need []int
	for i, r := range recs {
		k := r.RecordKind()
		if (k == store.KindFact || k == store.KindObservation) && len(store.EmbeddingOf(r)) != info.Dimensions {
			need = append(need, i)
		}
	}
	if err := embedInto(ctx, e.Embedder, recs, need); err != nil {
		return nil, EmbedderInfo{}, err
	}
	return recs, info, nil
}

// embedInto embeds the search text of recs[i] for every i of need, in batches. A
// record whose text has nothing to embed (llm.ErrEmptyText: no words, only symbols)
// is left without an embedding, as the store keeps it; any other failure names the
// record it met.
func embedInto(ctx context.Context, emb llm.Embedder, recs []store.Record, need []int) error {
	const batch = 512
	for lo := 0; lo < len(need); lo += batch {
		part := need[lo:min(lo+batch, len(need))]
		texts := make([]string, len(part))
		for j, i := range part {
			texts[j] = store.SearchText(recs[i])
		}
		vs, err := emb.Embed(ctx, texts)
		if errors.Is(err, llm.ErrEmptyText) && ctx.Err() == nil {
			// An embedder fails a batch as a whole: embed one by one, so that only the
			// texts without words go without a vector.
			vs, err = make([][]float32, len(part)), nil
			for j, t := range texts {
				v, e := emb.Embed(ctx, []string{t})
				switch {
				case errors.Is(e, llm.ErrEmptyText):
					continue
				case e == nil && len(v) != 1:
					e = fmt.Errorf("the embedder returned %d vectors for 1 text", len(v))
				}
				if e != nil {
					return fmt.Errorf("day1: embedding bundle record %s: %w", store.RefOf(recs[part[j]]), e)
				}
				vs[j] = v[0]
			}
		}
		if err != nil {
			return fmt.Errorf("day1: embedding bundle records %s to %s: %w", store.RefOf(recs[part[0]]), store.RefOf(recs[part[len(part)-1]]), err)
		}
		if len(vs) != len(part) {
			return fmt.Errorf("day1: embedding bundle records: the embedder returned %d vectors for %d texts", len(vs), len(part))
		}
		for j, i := range part {
			if vs[j] != nil {
				recs[i] = store.WithEmbedding(recs[i], vs[j])
			}
		}
	}
	return nil
}

// Get returns a stored bundle, or an error matching store.ErrNotFound.
func (e *Engine) Get(ctx context.Context, id string) (Bundle, error) {
	s, _, err := e.read(ctx, id)
	return s.Bundle, err
}

// read returns a bundle's document and its version.
func (e *Engine) read(ctx context.Context, id string) (stored, uint64, error) {
	if err := e.check(); err != nil {
		return stored{}, 0, err
	}
	if err := store.ValidateID("id", id); err != nil {
		return stored{}, 0, err
	}
	d, err := e.Store.GetDoc(ctx, Collection, id)
	if errors.Is(err, store.ErrNotFound) {
		return stored{}, 0, fmt.Errorf("%w: bundle %q", store.ErrNotFound, id)
	}
	if err != nil {
		return stored{}, 0, err
	}
	s, err := decodeStored(d)
	return s, d.Version, err
}

func decodeStored(d store.Doc) (stored, error) {
	var s stored
	if err := json.Unmarshal(d.Data, &s); err != nil {
		return stored{}, fmt.Errorf("day1: decoding bundle %q: %w", d.ID, err)
	}
	return s, nil
}

// List returns the stored bundles the filter selects, newest first.
func (e *Engine) List(ctx context.Context, f Filter) ([]Bundle, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if f.Type != "" && !f.Type.Valid() {
		return nil, store.Invalid("Filter.Type", "must be task_export, curated or template", f.Type)
	}
	if f.Visibility != "" && !f.Visibility.Valid() {
		return nil, store.Invalid("Filter.Visibility", "must be private, team or public", f.Visibility)
	}
	where := map[string]string{}
	for k, v := range map[string]string{"type": string(f.Type), "source_task": f.SourceTask, "visibility": string(f.Visibility), "owner": f.Owner} {
		if v != "" {
			where[k] = v
		}
	}
	docs, err := e.Store.ListDocs(ctx, store.DocQuery{Collection: Collection, Where: where, Desc: true})
	if err != nil {
		return nil, err
	}
	out := []Bundle{}
	for _, d := range docs {
		s, err := decodeStored(d)
		if err != nil {
			return nil, err
		}
		if s.HasTags(f.Tags) {
			out = append(out, s.Bundle)
		}
	}
	return out, nil
}

// Shared returns the bundle a share token resolves: one whose visibility is team or
// public and whose current token it is. A malformed token is a
// *store.ValidationError; an unknown or revoked one matches store.ErrNotFound.
func (e *Engine) Shared(ctx context.Context, token string) (Bundle, error) {
	s, err := e.shared(ctx, token)
	return s.Bundle, err
}

func (e *Engine) shared(ctx context.Context, token string) (stored, error) {
	if err := e.check(); err != nil {
		return stored{}, err
	}
	if err := validToken(token); err != nil {
		return stored{}, err
	}
	docs, err := e.Store.ListDocs(ctx, store.DocQuery{Collection: Collection, Where: map[string]string{"share_token": token}, Limit: 2})
	if err != nil {
		return stored{}, err
	}
	for _, d := range docs {
		s, err := decodeStored(d)
		if err != nil {
			return stored{}, err
		}
		if s.ShareToken == token && s.Visibility != Private {
			return s, nil
		}
	}
	return stored{}, fmt.Errorf("%w: no bundle is shared with that token (it may have been revoked)", store.ErrNotFound)
}

func validToken(token string) error {
	if len(token) != TokenLen || !strings.HasPrefix(token, TokenPrefix) {
		return store.Invalid("token", fmt.Sprintf("must be a share token: %q and %d more characters", TokenPrefix, TokenLen-len(TokenPrefix)), nil)
	}
	for _, c := range token[len(TokenPrefix):] {
		if !strings.ContainsRune(tokenAlphabet, c) {
			return store.Invalid("token", "holds a character that is not a letter or a digit", nil)
		}
	}
	return nil
}

const tokenAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// token returns a new share token: TokenPrefix and letters and digits drawn uniformly
// from the random source.
func (e *Engine) token() (string, error) {
	src := e.Random
	if src == nil {
		src = rand.Reader
	}
	out := make([]byte, 0, TokenLen)
	out = append(out, TokenPrefix...)
	buf := make([]byte, 64)
	for len(out) < TokenLen {
		if _, err := io.ReadFull(src, buf); err != nil {
			return "", fmt.Errorf("day1: drawing a share token: %w", err)
		}
		for _, c := range buf {
			// 62*4 = 248: rejecting the bytes above keeps the letters uniform.
			if c < 248 && len(out) < TokenLen {
				out = append(out, tokenAlphabet[c%62])
			}
		}
	}
	return string(out), nil
}

// SetVisibility changes who may resolve a bundle by token. Private revokes its token
// at once; team or public from private issues a new one; between team and public the
// token stays.
func (e *Engine) SetVisibility(ctx context.Context, id string, v Visibility) (Bundle, error) {
	if !v.Valid() {
		return Bundle{}, store.Invalid("visibility", "must be private, team or public", v)
	}
	return e.change(ctx, id, func(s *stored) error {
		switch {
		case v == Private:
			s.ShareToken = ""
		case s.Visibility == Private:
			t, err := e.token()
			if err != nil {
				return err
			}
			s.ShareToken = t
		}
		s.Visibility = v
		return nil
	})
}

// Publish marks a bundle published: ready for others to use. It does not change who
// can reach it (see SetVisibility).
func (e *Engine) Publish(ctx context.Context, id string) (Bundle, error) {
	return e.change(ctx, id, func(s *stored) error {
		s.Status = Published
		return nil
	})
}

// change applies fn to a bundle's document and writes it back, with a precondition on
// its version.
func (e *Engine) change(ctx context.Context, id string, fn func(*stored) error) (Bundle, error) {
	s, ver, err := e.read(ctx, id)
	if err != nil {
		return Bundle{}, err
	}
	if err := fn(&s); err != nil {
		return Bundle{}, err
	}
	s.UpdatedAt = e.now()
	doc, err := bundleDoc(s)
	if err != nil {
		return Bundle{}, err
	}
	if _, err := e.Store.WriteDocs(ctx, []store.DocWrite{{Doc: doc, Cond: store.DocMatch, Version: ver}}); err != nil {
		return Bundle{}, fmt.Errorf("day1: updating bundle %q: %w", id, err)
	}
	return s.Bundle, nil
}

// Delete removes a stored bundle and its file at once; its token stops working.
func (e *Engine) Delete(ctx context.Context, id string) error {
	s, ver, err := e.read(ctx, id)
	if err != nil {
		return err
	}
	ws := []store.DocWrite{{Doc: store.Doc{Collection: Collection, ID: id}, Cond: store.DocDelete, Version: ver}}
	for i := range s.Parts {
		ws = append(ws, store.DocWrite{Doc: store.Doc{Collection: PartCollection, ID: partID(id, i)}, Cond: store.DocDelete})
	}
	if _, err := e.Store.WriteDocs(ctx, ws); err != nil {
		return fmt.Errorf("day1: deleting bundle %q: %w", id, err)
	}
	return nil
}

// Export writes a stored bundle as a bundle file, its manifest describing the bundle
// as it is now (its status and score after Verify, say) and its records and seal as
// they were stored.
func (e *Engine) Export(ctx context.Context, id string, w io.Writer, opts ExportOptions) (Bundle, error) {
	s, _, err := e.read(ctx, id)
	if err != nil {
		return Bundle{}, err
	}
	return s.Bundle, e.export(ctx, s, w, opts)
}

func (e *Engine) export(ctx context.Context, s stored, w io.Writer, opts ExportOptions) error {
	gz, err := gzip.NewReader(e.parts(ctx, s))
	if err != nil {
		return fmt.Errorf("day1: reading bundle %q: %w", s.ID, err)
	}
	br := bufio.NewReaderSize(gz, 64<<10)
	if _, err := br.ReadSlice('\n'); err != nil && !errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("day1: reading bundle %q: %w", s.ID, err)
	}
	m := Manifest{Format: FormatName, FormatVersion: FormatVersion, Producer: e.producer(), CreatedAt: s.CreatedAt,
		Bundle: s.Info, Counts: s.Counts, Embedder: s.Embedder}
	head, err := json.Marshal(m)
	if err != nil {
		return err
	}
	out := w
	var zw *gzip.Writer
	if opts.Compress {
		zw = gzip.NewWriter(w)
		out = zw
	}
	if _, err := out.Write(append(head, '\n')); err != nil {
		return err
	}
	if _, err := io.Copy(out, br); err != nil {
		return fmt.Errorf("day1: exporting bundle %q: %w", s.ID, err)
	}
	if zw != nil {
		return zw.Close()
	}
	return nil
}

// parts returns a reader of a stored bundle's file, reading one part at a time.
func (e *Engine) parts(ctx context.Context, s stored) io.Reader {
	return &partReader{ctx: ctx, st: e.Store, id: s.ID, n: s.Parts}
}

type partReader struct {
	ctx  context.Context
	st   store.Docs
	id   string
	n, i int
	cur  []byte
}

func (r *partReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.i == r.n {
			return 0, io.EOF
		}
		d, err := r.st.GetDoc(r.ctx, PartCollection, partID(r.id, r.i))
		if err != nil {
			return 0, fmt.Errorf("day1: reading part %d of bundle %q: %w", r.i, r.id, err)
		}
		var pt part
		if err := json.Unmarshal(d.Data, &pt); err != nil {
			return 0, fmt.Errorf("day1: decoding part %d of bundle %q: %w", r.i, r.id, err)
		}
		if r.cur, err = base64.StdEncoding.DecodeString(pt.Bytes); err != nil {
			return 0, fmt.Errorf("day1: decoding part %d of bundle %q: %w", r.i, r.id, err)
		}
		r.i++
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

func partID(id string, i int) string { return fmt.Sprintf("%s.%06d", id, i) }

func splitParts(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := min(partBytes, len(b))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// bundleDoc returns the document of a stored bundle, with the keys List and Shared
// select by.
func bundleDoc(s stored) (store.Doc, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return store.Doc{}, err
	}
	keys := map[string]string{"type": string(s.Type), "visibility": string(s.Visibility)}
	for k, v := range map[string]string{"source_task": s.SourceTask, "owner": s.Owner, "share_token": s.ShareToken} {
		if v != "" {
			keys[k] = v
		}
	}
	return store.Doc{Collection: Collection, ID: s.ID, Data: data, Keys: keys}, nil
}

// validInfo checks the fields of a request that a bundle's Info takes.
func validInfo(req CreateRequest) error {
	if strings.TrimSpace(req.Name) == "" || len(req.Name) > 200 {
		return store.Invalid("CreateRequest.Name", "must be 1 to 200 bytes, not blank", req.Name)
	}
	if len(req.Description) > 10000 {
		return store.Invalid("CreateRequest.Description", "must be at most 10000 bytes", nil)
	}
	if len(req.Version) > 20 {
		return store.Invalid("CreateRequest.Version", "must be at most 20 bytes", req.Version)
	}
	if len(req.Owner) > 128 {
		return store.Invalid("CreateRequest.Owner", "must be at most 128 bytes", req.Owner)
	}
	if len(req.Tags) > 32 || slices.ContainsFunc(req.Tags, func(t string) bool { return t == "" || len(t) > 64 }) {
		return store.Invalid("CreateRequest.Tags", "must hold at most 32 tags of 1 to 64 bytes", nil)
	}
	if len(req.Metadata) > 64 {
		return store.Invalid("CreateRequest.Metadata", "must hold at most 64 keys", nil)
	}
	return nil
}
