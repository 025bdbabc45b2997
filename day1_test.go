package day1

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
	"github.com/day1ai/day1/store/memstore"
)

func TestOpenInvalidConfig(t *testing.T) {
	t.Parallel()
	injected, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = injected.Close() })
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"threshold above 1", Config{DedupeThreshold: 1.5}, "Config.DedupeThreshold"},
		{"threshold NaN", Config{DedupeThreshold: math.NaN()}, "Config.DedupeThreshold"},
		{"path and store", Config{Path: t.TempDir(), Store: injected}, "Config.Store"},
		{"dsn and store", Config{DSN: "root:111@tcp(127.0.0.1:6001)/day1", Store: injected}, "Config.Store"},
		{"path and dsn", Config{Path: t.TempDir(), DSN: "root:111@tcp(127.0.0.1:6001)/day1"}, "Config.DSN"},
		{"embedder and no embeddings", Config{Embedder: llm.NewLocalEmbedder(64), NoEmbeddings: true}, "Config.NoEmbeddings"},
		{"path and backend", Config{Path: t.TempDir(), Backend: memstore.Options{}}, "Config.Backend"},
		{"backend and store", Config{Backend: memstore.Options{}, Store: injected}, "Config.Store"},
		{"negative lock timeout", Config{Backend: memstore.Options{Path: t.TempDir(), LockTimeout: -time.Second}}, "Config.Backend.LockTimeout"},
		{"read-only in memory", Config{Backend: memstore.Options{ReadOnly: true}}, "Config.Backend.ReadOnly"},
		{"bad MatrixOne options", Config{Backend: matrixone.Options{DSN: "root:111@tcp(127.0.0.1:6001)/day1", MaxOpenConns: -1}}, "Config.Backend.MaxOpenConns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Open(context.Background(), tt.cfg)
			if err == nil {
				_ = c.Close()
				t.Fatal("Open succeeded, want a validation error")
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Open error = %v, want a *ValidationError", err)
			}
			if ve.Field != tt.field {
				t.Errorf("ValidationError.Field = %q, want %q (%v)", ve.Field, tt.field, err)
			}
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("errors.Is(%v, ErrInvalidArgument) = false", err)
			}
		})
	}
}

func TestOpenMalformedDSN(t *testing.T) {
	t.Parallel()
	_, err := Open(context.Background(), Config{DSN: "root:111@tcp(127.0.0.1:6001"})
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Open with a malformed DSN: err = %v, want ErrInvalidArgument", err)
	}
}

func TestOpenCanceledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, Config{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open: err = %v, want context.Canceled", err)
	}
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  func(t *testing.T) Config
		want Capabilities
	}{
		{
			name: "default",
			cfg:  func(*testing.T) Config { return Config{} },
			want: Capabilities{
				Store: "memstore", Embedder: "local-stem-384", Dimensions: 384,
				Features: []string{"keyword_search", "vector_search", "hybrid_search", "near_duplicate_detection",
					"branches", "diff", "merge:native", "merge:cherry_pick", "merge:squash", "merge:auto",
					"snapshots", "time_travel", "sessions"},
			},
		},
		{
			name: "durable without embeddings",
			cfg: func(t *testing.T) Config {
				return Config{Backend: memstore.Options{Path: t.TempDir(), Sync: memstore.SyncNever}, NoEmbeddings: true}
			},
			want: Capabilities{
				Store: "memstore", Durable: true,
				Features: []string{"keyword_search", "branches", "diff", "merge:native", "merge:cherry_pick",
					"merge:squash", "merge:auto", "snapshots", "time_travel", "sessions", "durable"},
			},
		},
		{
			name: "dedupe off",
			cfg:  func(*testing.T) Config { return Config{DedupeThreshold: -1, Embedder: llm.NewLocalEmbedder(64)} },
			want: Capabilities{
				Store: "memstore", Embedder: "local-hash-64", Dimensions: 64,
				Features: []string{"keyword_search", "vector_search", "hybrid_search",
					"branches", "diff", "merge:native", "merge:cherry_pick", "merge:squash", "merge:auto",
					"snapshots", "time_travel", "sessions"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Open(context.Background(), tt.cfg(t))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if diff := cmp.Diff(tt.want, c.Capabilities()); diff != "" {
				t.Errorf("Capabilities() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDurableReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "mem")
	c, err := Open(ctx, Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.WriteFact(ctx, Fact{ID: "f1", Text: "The cache is warmed at startup"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c, err = Open(ctx, Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.GetFact(ctx, "", "f1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w.Record, got); diff != "" {
		t.Errorf("fact after reopen mismatch (-want +got):\n%s", diff)
	}
	hits, err := c.Search(ctx, SearchQuery{Text: "cache warmed", Mode: Vector})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Record.RecordID() != "f1" {
		t.Errorf("vector search after reopen = %v, want f1", hitIDs(hits))
	}
}

// TestReadOnlyBesideWriter opens a second writing Client and a read-only one beside
// the first: the writers decide on each other's commits, and the reader reads what
// was written, refuses writes with ErrReadOnly and sees later writes after Refresh.
// memstore's tests do the same with the writers in other processes.
func TestReadOnlyBesideWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "mem")
	w, err := Open(ctx, Config{Backend: memstore.Options{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteFact(ctx, Fact{ID: "f1", Text: "The cache is warmed at startup"}); err != nil {
		t.Fatal(err)
	}
	w2, err := Open(ctx, Config{Backend: memstore.Options{Path: dir}})
	if err != nil {
		t.Fatalf("a second writer beside the first: %v", err)
	}
	defer w2.Close()
	if _, err := w2.WriteFact(ctx, Fact{ID: "f3", Text: "The cache is warmed at startup"}); err != nil {
		t.Fatal(err)
	}
	if f, err := w.GetFact(ctx, "", "f3"); err != nil || f.ID != "f1" {
		t.Fatalf("the second writer's copy of f1's text, read from the first = %v, %v; want f1 (one fact, deduplicated across writers)", f.ID, err)
	}
	r, err := Open(ctx, Config{Backend: memstore.Options{Path: dir, ReadOnly: true}})
	if err != nil {
		t.Fatalf("read-only open beside the writer: %v", err)
	}
	defer r.Close()
	if _, err := r.GetFact(ctx, "", "f1"); err != nil {
		t.Fatalf("read-only Client reading the writer's fact: %v", err)
	}
	if _, err := r.WriteFact(ctx, Fact{ID: "f9", Text: "refused"}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("WriteFact on a read-only Client = %v; want ErrReadOnly", err)
	}
	if _, err := w.WriteFact(ctx, Fact{ID: "f2", Text: "Workers read the queue in batches"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	hits, err := r.Search(ctx, SearchQuery{Text: "queue batches", Mode: Vector})
	if err != nil || len(hits) == 0 || hits[0].Record.RecordID() != "f2" {
		t.Fatalf("search after Refresh = %v, %v; want f2 first", hitIDs(hits), err)
	}
	if err := w.Refresh(ctx); err != nil {
		t.Errorf("Refresh of a writing Client = %v; want nil", err)
	}
}

// TestClose checks that Close is idempotent, that every method fails with ErrClosed
// afterwards, and that an injected store stays open.
func TestClose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	injected, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer injected.Close()
	c, err := Open(ctx, Config{Store: injected})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteConversation(ctx, Conversation{ID: "conv"}); err != nil {
		t.Fatal(err)
	}
	past := c.TimeTravel(AtTime(t0))
	if err := c.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := c.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: err = %v, want ErrClosed", err)
	}
	calls := map[string]func() error{
		"WriteFact":  func() error { _, err := c.WriteFact(ctx, Fact{Text: "x"}); return err },
		"WriteFacts": func() error { _, err := c.WriteFacts(ctx, []Fact{{Text: "x"}}); return err },
		"WriteObservation": func() error {
			_, err := c.WriteObservation(ctx, Observation{Type: ObsInsight, Summary: "x"})
			return err
		},
		"WriteObservations": func() error { _, err := c.WriteObservations(ctx, nil); return err },
		"WriteRelation": func() error {
			_, err := c.WriteRelation(ctx, Relation{Source: "a", Target: "b", Type: "t"})
			return err
		},
		"WriteConversation": func() error { _, err := c.WriteConversation(ctx, Conversation{}); return err },
		"AppendMessage": func() error {
			_, err := c.AppendMessage(ctx, Message{ConversationID: "conv", Role: RoleUser})
			return err
		},
		"Delete":            func() error { return c.Delete(ctx, "", Ref{Kind: KindFact, ID: "x"}) },
		"StartSession":      func() error { _, err := c.StartSession(ctx, Session{}); return err },
		"EndSession":        func() error { _, err := c.EndSession(ctx, "s", "", ""); return err },
		"GetSession":        func() error { _, err := c.GetSession(ctx, "s"); return err },
		"Sessions":          func() error { _, err := c.Sessions(ctx, SessionFilter{}); return err },
		"GetFact":           func() error { _, err := c.GetFact(ctx, "", "x"); return err },
		"GetObservation":    func() error { _, err := c.GetObservation(ctx, "", "x"); return err },
		"GetRelation":       func() error { _, err := c.GetRelation(ctx, "", "x"); return err },
		"GetConversation":   func() error { _, err := c.GetConversation(ctx, "", "x"); return err },
		"GetMessage":        func() error { _, err := c.GetMessage(ctx, "", "x"); return err },
		"ListFacts":         func() error { _, err := c.ListFacts(ctx, ListOptions{}); return err },
		"ListObservations":  func() error { _, err := c.ListObservations(ctx, ListOptions{}); return err },
		"ListRelations":     func() error { _, err := c.ListRelations(ctx, ListOptions{}); return err },
		"ListConversations": func() error { _, err := c.ListConversations(ctx, ListOptions{}); return err },
		"ListMessages":      func() error { _, err := c.ListMessages(ctx, ListOptions{}); return err },
		"Messages":          func() error { _, err := c.Messages(ctx, "", "conv"); return err },
		"Search":            func() error { _, err := c.Search(ctx, SearchQuery{Text: "x"}); return err },
		"Timeline":          func() error { _, err := c.Timeline(ctx, TimelineQuery{}); return err },
		"Graph":             func() error { _, err := c.Graph(ctx, GraphQuery{Entity: "x"}); return err },
		"View.Search":       func() error { _, err := past.Search(ctx, SearchQuery{Text: "x"}); return err },
		"View.GetFact":      func() error { _, err := past.GetFact(ctx, "", "x"); return err },
		"Branch":            func() error { _, err := c.Branch(ctx, "b", BranchOptions{}); return err },
		"GetBranch":         func() error { _, err := c.GetBranch(ctx, "main"); return err },
		"Branches":          func() error { _, err := c.Branches(ctx, BranchFilter{}); return err },
		"ArchiveBranch":     func() error { _, err := c.ArchiveBranch(ctx, "b"); return err },
		"ReactivateBranch":  func() error { _, err := c.ReactivateBranch(ctx, "b"); return err },
		"DeleteBranch":      func() error { return c.DeleteBranch(ctx, "b") },
		"Diff":              func() error { _, err := c.Diff(ctx, "b", "main"); return err },
		"Merge":             func() error { _, err := c.Merge(ctx, MergeRequest{Source: "b", Target: "main"}); return err },
		"Merges":            func() error { _, err := c.Merges(ctx, MergeFilter{}); return err },
		"Snapshot":          func() error { _, err := c.Snapshot(ctx, "", "s", SnapshotOptions{}); return err },
		"GetSnapshot":       func() error { _, err := c.GetSnapshot(ctx, "s"); return err },
		"Snapshots":         func() error { _, err := c.Snapshots(ctx, ""); return err },
		"DeleteSnapshot":    func() error { return c.DeleteSnapshot(ctx, "s") },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: err = %v, want ErrClosed", name, err)
		}
	}
	// The injected store belongs to the caller and is still open.
	if _, err := injected.GetBranch(ctx, "main"); err != nil {
		t.Errorf("injected store after Client.Close: %v, want it open", err)
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	c, _ := open(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.WriteFact(ctx, Fact{Text: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteFact: err = %v, want context.Canceled", err)
	}
	if _, err := c.Search(ctx, SearchQuery{Text: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Search: err = %v, want context.Canceled", err)
	}
	if _, err := c.Merge(ctx, MergeRequest{Source: "a", Target: "main"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Merge: err = %v, want context.Canceled", err)
	}
}

// namedStore is an injected store that reports a name and durability.
type namedStore struct {
	store.Store
}

func (namedStore) Name() string  { return "custom" }
func (namedStore) Durable() bool { return true }

func TestInjectedStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ms, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	c, err := Open(ctx, Config{Store: namedStore{ms}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	caps := c.Capabilities()
	if caps.Store != "custom" || !caps.Durable || caps.Features[len(caps.Features)-1] != "durable" {
		t.Errorf("Capabilities = %+v, want store custom, durable", caps)
	}
	if _, ok := c.Store().(namedStore); !ok {
		t.Errorf("Store() = %T, want the injected store", c.Store())
	}
	// Writes through the Client land in the injected store.
	w, err := c.WriteFact(ctx, Fact{Text: "Injected stores work"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Get(ctx, store.View{}, RefOf(w.Record)); err != nil {
		t.Errorf("fact not in the injected store: %v", err)
	}
}

// badEmbedder returns vectors of the wrong length.
type badEmbedder struct{}

func (badEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 2}
	}
	return out, nil
}
func (badEmbedder) Dimensions() int { return 8 }
func (badEmbedder) Name() string    { return "bad" }

func TestUnusableEmbeddingIsReported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, func(cfg *Config) { cfg.Embedder = badEmbedder{} })
	w, err := c.WriteFact(ctx, Fact{Text: "Vectors of the wrong length are not stored"})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(w.EmbedErr, ErrInvalidArgument) || len(w.Record.Embedding) != 0 {
		t.Errorf("EmbedErr %v, %d dims; want a validation error and no embedding", w.EmbedErr, len(w.Record.Embedding))
	}
	if _, err := c.Search(ctx, SearchQuery{Text: "vectors", Mode: Vector}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("vector search with an unusable query vector: err = %v, want ErrInvalidArgument", err)
	}
}

func TestAt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		at   At
		head bool
	}{
		{At{}, true},
		{AtSnapshot("s"), false},
		{AtTime(t0), false},
	}
	for _, tt := range tests {
		if got := tt.at.IsHead(); got != tt.head {
			t.Errorf("%+v.IsHead() = %v, want %v", tt.at, got, tt.head)
		}
	}
}

func TestClientAs(t *testing.T) {
	t.Parallel()
	c, _ := open(t, nil)
	var ms *memstore.Store
	if !c.As(&ms) || ms == nil || ms.Name() != "memstore" {
		t.Errorf("As(*memstore.Store) = %v, %v; want the embedded store", ms != nil, ms)
	}
	var mo *matrixone.Store
	if c.As(&mo) || mo != nil {
		t.Error("As(*matrixone.Store) on the embedded store reported true")
	}
	var n store.Namer
	if !c.As(&n) || n.Name() != "memstore" {
		t.Errorf("As(store.Namer) = %v; want the store", n)
	}
	if c.As(nil) || c.As(ms) || c.As((*store.Namer)(nil)) {
		t.Error("As accepted a target that is not a non-nil pointer")
	}
	if caps := c.Capabilities(); caps.Store != "memstore" || caps.Durable {
		t.Errorf("Capabilities = %+v", caps)
	}
}
