package bundle

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/day1ai/day1/store"
)

// The file format's name and the one version this package writes and reads.
const (
	FormatName    = "day1.bundle"
	FormatVersion = 1
)

// Limits on bundle files.
const (
	// DefaultMaxBytes is the default limit on the bytes of a bundle read for import,
	// counted after decompression: 1 GiB.
	DefaultMaxBytes = 1 << 30
	// MaxLineBytes is the longest line a bundle file may hold: a record with a text
	// of store.MaxTextLen and an embedding of store.MaxEmbeddingDims fits in it.
	MaxLineBytes = 8 << 20
)

// Manifest is the first line of a bundle file: what the bundle is and holds.
type Manifest struct {
	// Format is FormatName.
	Format string `json:"format"`
	// FormatVersion is the version of the file format, FormatVersion for this package.
	FormatVersion int `json:"format_version"`
	// Producer names the program that wrote the file.
	Producer string `json:"producer"`
	// CreatedAt is when the file was written.
	CreatedAt time.Time `json:"created_at"`
	// Bundle describes the bundle: its id, name, type, sources and verification.
	Bundle Info `json:"bundle"`
	// Counts are the records the file holds, by kind.
	Counts Counts `json:"counts"`
	// Embedder names the embedder of the records' embeddings and their length; empty
	// when the records carry none.
	Embedder EmbedderInfo `json:"embedder,omitzero"`
}

// EmbedderInfo names an embedder (llm.Embedder.Name) and its vectors' length.
type EmbedderInfo struct {
	Name       string `json:"name"`
	Dimensions int    `json:"dimensions"`
}

// Counts are the records of a bundle, by kind.
type Counts struct {
	Facts         int `json:"facts"`
	Observations  int `json:"observations,omitempty"`
	Relations     int `json:"relations"`
	Conversations int `json:"conversations"`
	Messages      int `json:"messages"`
}

// Total returns the number of records.
func (c Counts) Total() int {
	return c.Facts + c.Observations + c.Relations + c.Conversations + c.Messages
}

func (c *Counts) add(k store.Kind, n int) {
	switch k {
	case store.KindFact:
		c.Facts += n
	case store.KindObservation:
		c.Observations += n
	case store.KindRelation:
		c.Relations += n
	case store.KindConversation:
		c.Conversations += n
	case store.KindMessage:
		c.Messages += n
	}
}

// line is one line of a bundle file after the manifest: a record, or the seal.
type line struct {
	Kind      store.Kind      `json:"kind,omitempty"`
	Record    json.RawMessage `json:"record,omitempty"`
	Embedding string          `json:"embedding,omitempty"` // little-endian float32s, base64
	Seal      string          `json:"seal,omitempty"`      // "sha256"
	Hash      string          `json:"hash,omitempty"`      // hex
	Records   int             `json:"records,omitempty"`
}

// Errors of bundle files. Each reading error is a *FormatError that matches one of
// them; all match ErrFormat, and ErrFormat matches store.ErrInvalidArgument.
var (
	// ErrFormat: the input is not a well-formed bundle file.
	ErrFormat = store.NewSentinel("day1: not a valid bundle", store.ErrInvalidArgument)
	// ErrVersion: the bundle's format version is not one this package reads.
	ErrVersion = store.NewSentinel("day1: unsupported bundle format version", ErrFormat)
	// ErrTampered: the records do not match the bundle's seal (its SHA-256).
	ErrTampered = store.NewSentinel("day1: bundle content does not match its seal", ErrFormat)
	// ErrTruncated: the bundle ends before its seal.
	ErrTruncated = store.NewSentinel("day1: bundle is truncated", ErrFormat)
	// ErrTooLarge: the bundle is larger than the reader's limit.
	ErrTooLarge = store.NewSentinel("day1: bundle exceeds the size limit", ErrFormat)
)

// FormatError says where a bundle file is wrong and why. It matches its Kind (one of
// ErrFormat, ErrVersion, ErrTampered, ErrTruncated, ErrTooLarge) and, when there is
// one, the Cause (a *store.ValidationError for an invalid record).
type FormatError struct {
	Line   int // 1-based; 0 when the error is not about one line
	Reason string
	Kind   error
	Cause  error
}

func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Cause != nil {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

// Unwrap returns the kind and the cause.
func (e *FormatError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Cause}
}

func formatErr(kind error, line int, cause error, reason string, args ...any) *FormatError {
	return &FormatError{Line: line, Reason: fmt.Sprintf(reason, args...), Kind: kind, Cause: cause}
}

// Writer writes a bundle file: the manifest, then one record per line in canonical
// order, then the seal. Create it with NewWriter, write every record, then Close.
type Writer struct {
	out  io.Writer
	gz   *gzip.Writer
	bw   *bufio.Writer
	h    hash.Hash
	want Counts
	got  Counts
	dims int
	prev store.Ref
	n    int
	sum  string
	buf  []byte // the record line being built
	err  error
}

// NewWriter writes m's line to w and returns a Writer for the records. With compress
// the file is gzip-compressed. m.Format, m.FormatVersion and a zero m.CreatedAt are
// filled in; m.Counts must be the counts of the records that follow, which Close
// checks. When m.Embedder.Dimensions is set, every fact and observation must carry an
// embedding of that length, or none when its text has no words to embed; otherwise
// no record may carry one.
func NewWriter(w io.Writer, m Manifest, compress bool) (*Writer, error) {
	m.Format, m.FormatVersion = FormatName, FormatVersion
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now()
	}
	m.CreatedAt = m.CreatedAt.UTC()
	if m.Embedder.Dimensions < 0 || m.Embedder.Dimensions > store.MaxEmbeddingDims {
		return nil, store.Invalid("Manifest.Embedder.Dimensions", fmt.Sprintf("must be between 0 and %d", store.MaxEmbeddingDims), m.Embedder.Dimensions)
	}
	bw := &Writer{out: w, h: sha256.New(), want: m.Counts, dims: m.Embedder.Dimensions}
	sink := w
	if compress {
		// The fastest level: embeddings hardly compress, and a bundle is written
		// more often than it is shipped far.
		bw.gz, _ = gzip.NewWriterLevel(w, gzip.BestSpeed)
		sink = bw.gz
	}
	bw.bw = bufio.NewWriterSize(sink, 64<<10)
	head, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if err := bw.line(head, false); err != nil {
		return nil, err
	}
	return bw, nil
}

// line writes one line; hashed lines count toward the seal.
func (w *Writer) line(b []byte, hashed bool) error {
	if hashed {
		w.h.Write(b)
		w.h.Write([]byte{'\n'})
	}
	if _, err := w.bw.Write(b); err != nil {
		return err
	}
	return w.bw.WriteByte('\n')
}

// Write adds a record. Records must come in canonical order: by kind in the order of
// store.Kinds, then by id, each once. The record's Branch is left out of the file.
func (w *Writer) Write(r store.Record) error {
	if w.err != nil {
		return w.err
	}
	w.err = w.write(r)
	return w.err
}

func (w *Writer) write(r store.Record) error {
	if r == nil {
		return store.Invalid("record", "must not be nil", nil)
	}
	ref := store.RefOf(r)
	if w.n > 0 && compareRefs(w.prev, ref) >= 0 {
		return store.Invalid("record", fmt.Sprintf("%s comes after %s; records must be sorted by kind, then id, each once", ref, w.prev), ref)
	}
	emb := store.EmbeddingOf(r)
	if ref.Kind == store.KindMessage && len(emb) > 0 {
		// The format carries the embeddings of facts and observations only: a
		// message's is left out, and the message is keyword-searchable where it lands.
		r, emb = store.WithEmbedding(r, nil), nil
	}
	switch {
	case w.dims == 0 && len(emb) > 0:
		return store.Invalid("record", fmt.Sprintf("%s carries an embedding, but the manifest names no embedder", ref), ref)
	case w.dims > 0 && len(emb) > 0 && len(emb) != w.dims:
		return store.Invalid("record", fmt.Sprintf("%s carries an embedding of %d values; the manifest says %d", ref, len(emb), w.dims), ref)
	}
	r = store.WithBranch(r, "")
	if len(emb) > 0 {
		r = store.WithEmbedding(r, nil)
	}
	rec, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// The line as encoding/json writes a line value, without compacting the record
	// again: {"kind":...,"record":...,"embedding":...}.
	b := w.buf[:0]
	b = append(b, `{"kind":"`...)
	b = append(b, ref.Kind...)
	b = append(b, `","record":`...)
	b = append(b, rec...)
	if len(emb) > 0 {
		b = append(b, `,"embedding":"`...)
		b = appendEmbedding(b, emb)
		b = append(b, '"')
	}
	b = append(b, '}')
	w.buf = b
	if err := w.line(b, true); err != nil {
		return err
	}
	w.prev = ref
	w.n++
	w.got.add(ref.Kind, 1)
	return nil
}

// Close writes the seal and flushes the file; it does not close the underlying
// writer. It fails when the records written differ from the manifest's counts.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.got != w.want {
		w.err = store.Invalid("Manifest.Counts", fmt.Sprintf("announced %+v but %+v were written", w.want, w.got), nil)
		return w.err
	}
	w.sum = hex.EncodeToString(w.h.Sum(nil))
	seal, err := json.Marshal(line{Seal: "sha256", Hash: w.sum, Records: w.n})
	if err != nil {
		return err
	}
	if err := w.line(seal, false); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if w.gz != nil {
		return w.gz.Close()
	}
	return nil
}

// Hash returns the seal's SHA-256, in hex, once Close has written it.
func (w *Writer) Hash() string { return w.sum }

// Reader reads a bundle file written by Writer, checking it as it goes: Next returns
// the records, and io.EOF only once the seal has matched every byte before it.
type Reader struct {
	m       Manifest
	br      *bufio.Reader
	limit   *limitReader
	h       hash.Hash
	n       int // lines read
	records int
	got     Counts
	prev    store.Ref
	done    bool
	sum     string
	buf     []byte
}

// NewReader reads the manifest of a bundle file from r, gzip-compressed or not, and
// returns a Reader for its records. maxBytes bounds the bytes read after
// decompression (0 means DefaultMaxBytes). A manifest that is missing, malformed or
// of another format version is a *FormatError.
func NewReader(r io.Reader, maxBytes int64) (*Reader, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	peek := bufio.NewReader(r)
	magic, err := peek.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var src io.Reader = peek
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		gz, err := gzip.NewReader(peek)
		if err != nil {
			return nil, formatErr(ErrFormat, 0, err, "a gzip header that cannot be read")
		}
		// A bundle is one gzip member: bytes after it are not the start of another
		// member cut short, but data that does not belong to the file.
		gz.Multistream(false)
		src = &damaged{r: gz, after: peek}
	case len(magic) == 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd:
		return nil, formatErr(ErrFormat, 0, nil, "zstd-compressed; this reader takes plain or gzip-compressed bundles")
	}
	lr := &limitReader{r: src, left: maxBytes, max: maxBytes}
	br := &Reader{br: bufio.NewReaderSize(lr, 64<<10), limit: lr, h: sha256.New()}
	head, err := br.readLine()
	if errors.Is(err, io.EOF) {
		return nil, formatErr(ErrFormat, 1, nil, "empty input: no manifest")
	}
	if err != nil {
		return nil, err
	}
	var probe struct {
		Format        string `json:"format"`
		FormatVersion int    `json:"format_version"`
	}
	if err := json.Unmarshal(head, &probe); err != nil || probe.Format != FormatName {
		return nil, formatErr(ErrFormat, 1, nil, "the first line is not a %s manifest", FormatName)
	}
	if probe.FormatVersion != FormatVersion {
		return nil, formatErr(ErrVersion, 1, nil, "format version %d; this reader takes version %d", probe.FormatVersion, FormatVersion)
	}
	if err := json.Unmarshal(head, &br.m); err != nil {
		return nil, formatErr(ErrFormat, 1, err, "a malformed manifest")
	}
	if d := br.m.Embedder.Dimensions; d < 0 || d > store.MaxEmbeddingDims {
		return nil, formatErr(ErrFormat, 1, nil, "embedder dimensions %d; at most %d are allowed", d, store.MaxEmbeddingDims)
	}
	if c := br.m.Counts; c.Facts < 0 || c.Observations < 0 || c.Relations < 0 || c.Conversations < 0 || c.Messages < 0 {
		return nil, formatErr(ErrFormat, 1, nil, "negative counts %+v", c)
	}
	return br, nil
}

// Manifest returns the bundle's manifest.
func (r *Reader) Manifest() Manifest { return r.m }

// Hash returns the seal's SHA-256, in hex, once Next has returned io.EOF.
func (r *Reader) Hash() string { return r.sum }

// Next returns the next record, with its embedding when it has one. After the last
// record it checks the seal and the counts and returns io.EOF; a file that ends before
// its seal, carries records the seal does not match, or holds a malformed or invalid
// record is a *FormatError.
func (r *Reader) Next() (store.Record, error) {
	if r.done {
		return nil, io.EOF
	}
	b, err := r.readLine()
	if errors.Is(err, io.EOF) {
		return nil, formatErr(ErrTruncated, r.n+1, nil, "the file ends after %d records without its seal", r.records)
	}
	if err != nil {
		return nil, err
	}
	l, err := parseLine(b)
	if err != nil {
		return nil, formatErr(ErrFormat, r.n, nil, "not a JSON record line")
	}
	if l.Seal != "" {
		return nil, r.checkSeal(l)
	}
	rec, err := r.decode(l)
	if err != nil {
		return nil, err
	}
	r.hashLine(b)
	return rec, nil
}

// embeddingKey precedes the embedding as Writer writes it: the line's last member.
var embeddingKey = []byte(`,"embedding":`)

// parseLine decodes one line after the manifest. A line that ends as Writer ends
// them, with the embedding's base64 as its last member, is decoded without running
// the JSON decoder over the embedding (base64 has no quote or backslash, and
// decodeEmbedding checks its characters); any other line is decoded whole.
func parseLine(b []byte) (line, error) {
	var l line
	if bytes.HasSuffix(b, []byte(`"}`)) {
		body := b[:len(b)-2]
		if q := bytes.LastIndexByte(body, '"'); q > 0 && bytes.HasSuffix(body[:q], embeddingKey) && bytes.IndexByte(body[q+1:], '\\') < 0 {
			i := q - len(embeddingKey)
			head := make([]byte, 0, i+1)
			head = append(append(head, b[:i]...), '}')
			if err := json.Unmarshal(head, &l); err != nil {
				return line{}, err
			}
			l.Embedding = string(body[q+1:])
			return l, nil
		}
	}
	err := json.Unmarshal(b, &l)
	return l, err
}

// decode turns a record line into a checked record.
func (r *Reader) decode(l line) (store.Record, error) {
	var rec store.Record
	var err error
	switch l.Kind {
	case store.KindFact:
		rec, err = decodeAs[store.Fact](l.Record)
	case store.KindObservation:
		rec, err = decodeAs[store.Observation](l.Record)
	case store.KindRelation:
		rec, err = decodeAs[store.Relation](l.Record)
	case store.KindConversation:
		rec, err = decodeAs[store.Conversation](l.Record)
	case store.KindMessage:
		rec, err = decodeAs[store.Message](l.Record)
	default:
		return nil, formatErr(ErrFormat, r.n, nil, "unknown record kind %q", l.Kind)
	}
	if err != nil {
		return nil, formatErr(ErrFormat, r.n, nil, "a malformed %s record", l.Kind)
	}
	if rec.RecordBranch() != "" {
		return nil, formatErr(ErrFormat, r.n, nil, "a record that names a branch; bundle records belong to none")
	}
	if store.EmbeddingOf(rec) != nil {
		return nil, formatErr(ErrFormat, r.n, nil, "an embedding inside the record; it belongs in the line's embedding field")
	}
	if l.Embedding != "" {
		emb, err := decodeEmbedding(l.Embedding)
		if err != nil {
			return nil, formatErr(ErrFormat, r.n, err, "an embedding that cannot be decoded")
		}
		if l.Kind != store.KindFact && l.Kind != store.KindObservation {
			return nil, formatErr(ErrFormat, r.n, nil, "an embedding on a %s", l.Kind)
		}
		if len(emb) != r.m.Embedder.Dimensions {
			return nil, formatErr(ErrFormat, r.n, nil, "an embedding of %d values; the manifest says %d", len(emb), r.m.Embedder.Dimensions)
		}
		rec = store.WithEmbedding(rec, emb)
	}
	if err := store.ValidateRecord(rec, 0); err != nil {
		return nil, formatErr(ErrFormat, r.n, err, "an invalid %s", l.Kind)
	}
	ref := store.RefOf(rec)
	if r.records > 0 && compareRefs(r.prev, ref) >= 0 {
		return nil, formatErr(ErrFormat, r.n, nil, "%s after %s; records must be sorted by kind, then id, each once", ref, r.prev)
	}
	r.prev = ref
	r.records++
	r.got.add(ref.Kind, 1)
	return rec, nil
}

// checkSeal checks the seal line against what was read, and that nothing follows it.
func (r *Reader) checkSeal(l line) error {
	if l.Seal != "sha256" {
		return formatErr(ErrFormat, r.n, nil, "a seal of kind %q; this reader takes sha256", l.Seal)
	}
	if got := hex.EncodeToString(r.h.Sum(nil)); got != l.Hash {
		return formatErr(ErrTampered, r.n, nil, "the SHA-256 of the content is %s; the seal says %s", got, l.Hash)
	}
	if l.Records != r.records || r.got != r.m.Counts {
		return formatErr(ErrFormat, r.n, nil, "%d records %+v read; the seal says %d and the manifest %+v", r.records, r.got, l.Records, r.m.Counts)
	}
	if _, err := r.br.ReadByte(); !errors.Is(err, io.EOF) {
		if err != nil {
			return err
		}
		return formatErr(ErrFormat, r.n+1, nil, "data after the seal")
	}
	r.done, r.sum = true, l.Hash
	return io.EOF
}

// readLine reads one line, without its newline, of at most MaxLineBytes.
func (r *Reader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.buf = append(r.buf, chunk...)
		if len(r.buf) > MaxLineBytes {
			return nil, formatErr(ErrFormat, r.n+1, nil, "a line longer than %d bytes", MaxLineBytes)
		}
		switch {
		case err == nil:
			r.n++
			return r.buf[:len(r.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(r.buf) > 0 {
				return nil, formatErr(ErrTruncated, r.n+1, nil, "the last line has no newline")
			}
			return nil, io.EOF
		case errors.Is(err, errLimit):
			return nil, formatErr(ErrTooLarge, r.n+1, nil, "more than %d bytes", r.limit.max)
		default:
			var fe *FormatError
			if errors.As(err, &fe) {
				return nil, err
			}
			return nil, err
		}
	}
}

func (r *Reader) hashLine(b []byte) {
	r.h.Write(b)
	r.h.Write([]byte{'\n'})
}

func decodeAs[T store.Record](raw json.RawMessage) (store.Record, error) {
	if len(raw) == 0 {
		return nil, errors.New("no record")
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// damaged turns the errors of a gzip stream into *FormatError: a stream cut short
// is ErrTruncated, bytes after the end of the stream and any other fault ErrFormat.
type damaged struct {
	r     io.Reader     // the gzip stream
	after *bufio.Reader // what the stream is read from, to look past its end
}

func (d *damaged) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, io.EOF):
		if rest, _ := d.after.Peek(1); len(rest) > 0 {
			return n, formatErr(ErrFormat, 0, nil, "data after the end of the compressed stream")
		}
		return n, err
	case errors.Is(err, io.ErrUnexpectedEOF):
		return n, formatErr(ErrTruncated, 0, err, "the compressed stream is cut short")
	default:
		return n, formatErr(ErrFormat, 0, err, "the compressed stream is damaged")
	}
}

// errLimit is the error limitReader returns past its limit.
var errLimit = errors.New("bundle size limit reached")

// limitReader fails with errLimit once more than max bytes were read.
type limitReader struct {
	r         io.Reader
	left, max int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, errLimit
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, errLimit
	}
	return n, err
}

// appendEmbedding appends the base64 of v's little-endian float32 values to dst.
func appendEmbedding(dst []byte, v []float32) []byte {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.AppendEncode(dst, raw)
}

func decodeEmbedding(s string) ([]float32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of float32 values", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// compareRefs orders refs by kind, in the order of store.Kinds, then by id.
func compareRefs(a, b store.Ref) int {
	if c := slices.Index(store.Kinds, a.Kind) - slices.Index(store.Kinds, b.Kind); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}
