package bundle

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// sample returns a small set of records of every kind, sorted, facts with 4-dim
// embeddings.
func sample() []store.Record {
	return []store.Record{
		store.Fact{ID: "f1", Text: "Tokens are signed with RS256", Embedding: []float32{1, 0, 0.5, -0.25}, Category: "architecture",
			Confidence: 0.9, Status: store.FactVerified, TaskID: "fix-auth", AgentID: "investigator",
			Metadata: map[string]string{"b": "2", "a": "1"}, Verify: store.Verification{Status: store.Verified, Score: 0.8, By: "heuristic", At: t0},
			CreatedAt: t0, UpdatedAt: t0},
		store.Fact{ID: "f2", Text: "The refresh handler needs clock leeway <60s>", Embedding: []float32{0, 1, 0, 0}, Confidence: 1,
			Status: store.FactActive, CreatedAt: t0.Add(time.Second), UpdatedAt: t0.Add(time.Second)},
		store.Relation{ID: "r1", Source: "AuthService", Target: "JWT", Type: "issues", Confidence: 1, ValidFrom: t0, CreatedAt: t0},
		store.Conversation{ID: "c1", Title: "Why are users logged out?", Verify: store.Verification{Status: store.Verified, Score: 0.7, At: t0},
			CreatedAt: t0, UpdatedAt: t0},
		store.Message{ID: "c1-m1", ConversationID: "c1", Seq: 1, Role: store.RoleUser, Content: "Users get logged out", CreatedAt: t0},
		store.Message{ID: "c1-m2", ConversationID: "c1", Seq: 2, Role: store.RoleAssistant, Content: "The expiry check has no leeway", CreatedAt: t0},
	}
}

func sampleManifest(recs []store.Record) Manifest {
	m := Manifest{Producer: "day1 test", CreatedAt: t0,
		Bundle:   Info{ID: "b1", Name: "auth fix", Type: TaskExport, SourceTask: "fix-auth", SourceBranch: "task/fix-auth", Version: "1.0", Status: Draft, CreatedAt: t0},
		Embedder: EmbedderInfo{Name: "test-4", Dimensions: 4}}
	for _, r := range recs {
		m.Counts.add(r.RecordKind(), 1)
	}
	return m
}

func encodeSample(t *testing.T, compress bool) []byte {
	t.Helper()
	recs := sample()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, sampleManifest(recs), compress)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readAll(b []byte, max int64) (Manifest, []store.Record, error) {
	r, err := NewReader(bytes.NewReader(b), max)
	if err != nil {
		return Manifest{}, nil, err
	}
	var out []store.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.Manifest(), out, nil
		}
		if err != nil {
			return r.Manifest(), out, err
		}
		out = append(out, rec)
	}
}

// The encoding is pinned: a change to it is a new format version.
func TestGoldenFile(t *testing.T) {
	got := encodeSample(t, false)
	path := filepath.Join("testdata", "sample.bundle")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./bundle -run TestGoldenFile -update to write it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("encoding changed (-golden +now):\n%s", d)
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, compress := range []bool{false, true} {
		b := encodeSample(t, compress)
		if compress && (b[0] != 0x1f || b[1] != 0x8b) {
			t.Fatal("a compressed file does not start with the gzip header")
		}
		m, recs, err := readAll(b, 0)
		if err != nil {
			t.Fatalf("compress %v: %v", compress, err)
		}
		if d := cmp.Diff(sample(), recs); d != "" {
			t.Errorf("compress %v: records (-wrote +read):\n%s", compress, d)
		}
		want := sampleManifest(sample())
		want.Format, want.FormatVersion = FormatName, FormatVersion
		if d := cmp.Diff(want, m); d != "" {
			t.Errorf("manifest (-wrote +read):\n%s", d)
		}
	}
}

func TestWriterRefusesWhatTheFormatForbids(t *testing.T) {
	t.Parallel()
	recs := sample()
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, sampleManifest(recs), false)
	if err := w.Write(recs[1]); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(recs[0]); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("a record out of order: %v; want ErrInvalidArgument", err)
	}
	w, _ = NewWriter(&buf, sampleManifest(recs), false)
	short := recs[0].(store.Fact)
	short.Embedding = []float32{1}
	if err := w.Write(short); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("an embedding of the wrong length: %v; want ErrInvalidArgument", err)
	}
	w, _ = NewWriter(&buf, sampleManifest(recs), false)
	if err := w.Close(); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("fewer records than the manifest announced: %v; want ErrInvalidArgument", err)
	}
}

func TestReaderRejectsBadInput(t *testing.T) {
	t.Parallel()
	good := string(encodeSample(t, false))
	lines := strings.SplitAfter(good, "\n")
	gz := encodeSample(t, true)
	cases := []struct {
		name  string
		input []byte
		max   int64
		kind  error
	}{
		{"empty", nil, 0, ErrFormat},
		{"not a bundle", []byte("hello\n"), 0, ErrFormat},
		{"another format version", []byte(strings.Replace(good, `"format_version":1`, `"format_version":2`, 1)), 0, ErrVersion},
		{"a changed record", []byte(strings.Replace(good, "RS256", "HS256", 1)), 0, ErrTampered},
		{"a dropped record", []byte(strings.Join(append(lines[:2:2], lines[3:]...), "")), 0, ErrFormat},
		{"no seal", []byte(strings.Join(lines[:len(lines)-2], "")), 0, ErrTruncated},
		{"cut mid-line", []byte(good[:len(good)-20]), 0, ErrTruncated},
		{"data after the seal", []byte(good + "{}\n"), 0, ErrFormat},
		{"a compressed file cut short", gz[:len(gz)/2], 0, ErrTruncated},
		{"larger than the limit", []byte(good), 200, ErrTooLarge},
		{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0}, 0, ErrFormat},
		{"an unknown kind", []byte(strings.Replace(good, `"kind":"relation"`, `"kind":"secret"`, 1)), 0, ErrFormat},
		{"an invalid record", []byte(strings.Replace(good, `"confidence":0.9`, `"confidence":9`, 1)), 0, ErrFormat},
		{"a record naming a branch", []byte(strings.Replace(good, `{"id":"r1",`, `{"id":"r1","branch":"main",`, 1)), 0, ErrFormat},
		{"a bad embedding", []byte(strings.Replace(good, `"embedding":"`, `"embedding":"!!`, 1)), 0, ErrFormat},
		{"a line that is not JSON", []byte(strings.Join(append(append(lines[:2:2], "not json\n"), lines[2:]...), "")), 0, ErrFormat},
		{"8 bytes after a compressed file", append(bytes.Clone(gz), "garbage!"...), 0, ErrFormat},
		{"64 bytes after a compressed file", append(bytes.Clone(gz), bytes.Repeat([]byte("x"), 64)...), 0, ErrFormat},
		{"a second compressed file after the first", append(bytes.Clone(gz), gz...), 0, ErrFormat},
	}
	for _, c := range cases {
		_, _, err := readAll(c.input, c.max)
		var fe *FormatError
		if !errors.As(err, &fe) || !errors.Is(err, c.kind) || !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("%s: %v; want a *FormatError matching %v", c.name, err, c.kind)
		}
		if c.kind == ErrFormat && errors.Is(err, ErrTruncated) {
			t.Errorf("%s: %v; the file is not truncated", c.name, err)
		}
	}
}

func TestReaderLimitsTheDecompressedSize(t *testing.T) {
	t.Parallel()
	// A small compressed file of many zeros must stop at the limit.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(bytes.Repeat([]byte{'0'}, 4<<20))
	zw.Close()
	_, _, err := readAll(buf.Bytes(), 1<<20)
	if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrFormat) {
		t.Errorf("a gzip bomb: %v; want ErrTooLarge or ErrFormat", err)
	}
}

// FuzzReader feeds arbitrary bytes to the reader: it must return records or a typed
// error, never panic, and never accept a file whose seal does not match.
func FuzzReader(f *testing.F) {
	good := encodeSample(&testing.T{}, false)
	f.Add(good)
	f.Add(encodeSample(&testing.T{}, true))
	f.Add([]byte(`{"format":"day1.bundle","format_version":1}` + "\n" + `{"seal":"sha256","hash":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","records":0}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, recs, err := readAll(b, 1<<20)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("an untyped error: %v", err)
			}
			return
		}
		for _, r := range recs {
			if err := store.ValidateRecord(r, 0); err != nil {
				t.Fatalf("accepted an invalid record: %v", err)
			}
		}
	})
}

// A message's embedding stays out of a bundle, which carries those of facts and
// observations only: the bundle is the one written without it.
func TestWriterLeavesMessageEmbeddingsOut(t *testing.T) {
	recs := sample()
	for i, r := range recs {
		if m, ok := r.(store.Message); ok {
			m.Embedding = []float32{0, 0, 1, 0}
			recs[i] = m
		}
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, sampleManifest(recs), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), encodeSample(t, false)) {
		t.Errorf("a bundle of messages with embeddings differs from the one without")
	}
	_, got, err := readAll(buf.Bytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if m, ok := r.(store.Message); ok && m.Embedding != nil {
			t.Errorf("message %s read back with an embedding", m.ID)
		}
	}
}
