package day1

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/internal/pathkind"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
	"github.com/day1ai/day1/store/memstore"
	"github.com/day1ai/day1/store/sqlite"
)

// Client is day1's entry point: a typed facade over a store.Store, an embedder and the
// merge engine. It is safe for concurrent use. Open one per store and Close it when
// done; after Close every method returns ErrClosed.
//
// The read methods (GetFact, ListFacts, Search, Timeline, Graph, ...) read each branch
// at its head; TimeTravel returns a View with the same methods frozen at a point in
// the past.
type Client struct {
	reader // reads at head

	cfg      Config
	st       store.Store
	ownStore bool
	durable  bool
	emb      llm.Embedder // nil with Config.NoEmbeddings
	dedupe   float64      // the store's PutOptions.DedupeThreshold: 0 is off
	engine   *merge.Engine
	name     string       // the store's name (Capabilities.Store), which every observed operation reports
	log      *slog.Logger // Config.Logger, or one that writes nothing

	closed   atomic.Bool
	managed  bool       // a Tenants manager owns the Client: Close refuses, the manager closes it
	appendMu sync.Mutex // serialises AppendMessage so sequence numbers never collide
}

var (
	_ Reader = (*Client)(nil)
	_ Reader = (*View)(nil)
)

// Open checks cfg, opens (or adopts) the store and returns a Client.
//
// With a zero Config the embedded store lives in memory; Config.Path makes it durable;
// Config.DSN opens the MatrixOne store (see store/matrixone); Config.Store injects any
// store.Store. An invalid Config is a *ValidationError naming the field.
func Open(ctx context.Context, cfg Config) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	defaulted := cfg.Embedder == nil && !cfg.NoEmbeddings
	defaultResolver := cfg.Resolver == nil
	cfg = cfg.withDefaults()
	c := &Client{cfg: cfg, st: cfg.Store, emb: cfg.Embedder, log: store.Logger(cfg.Logger)}
	// The stores Open makes read the clock through storeNow, which stands still while
	// Open records the embedder: that record does not advance a test clock.
	var settling atomic.Bool
	storeNow := func() time.Time {
		if settling.Load() {
			return time.Unix(0, 0).UTC()
		}
		return cfg.Test.Now()
	}
	if cfg.DedupeThreshold > 0 {
		c.dedupe = cfg.DedupeThreshold
	}
	if c.st == nil {
		backend := cfg.Backend
		switch {
		case cfg.DSN != "":
			backend = matrixone.Options{DSN: cfg.DSN}
		case backend == nil && cfg.Path != "" && pathkind.For(cfg.Path, "") == pathkind.SQLite:
			backend = sqlite.Options{Path: cfg.Path}
		case backend == nil:
			backend = memstore.Options{Path: cfg.Path}
		}
		env := store.OpenEnv{Now: storeNow, Logger: cfg.Logger}
		if c.emb != nil {
			env.Dimensions = c.emb.Dimensions()
		}
		st, err := backend.OpenStore(ctx, env)
		if err != nil {
			if cfg.Backend != nil {
				err = optionsField("Config.Backend", err)
			}
			return nil, fmt.Errorf("day1: opening the store: %w", err)
		}
		c.st, c.ownStore = st, true
	}
	if d, ok := c.st.(store.Durabler); ok {
		c.durable = d.Durable()
	}
	// An in-memory store the Client made is new and dies with it: there is nothing to
	// check or record.
	if inMemory := c.ownStore && !c.durable; c.emb != nil && !inMemory {
		settling.Store(true)
		emb, err := settleEmbedder(ctx, c.st, c.emb, defaulted)
		settling.Store(false)
		if err != nil {
			if c.ownStore {
				_ = c.st.Close()
			}
			return nil, err
		}
		if emb != c.emb {
			c.emb, c.cfg.Embedder = emb, emb
			if defaultResolver && cfg.Model != nil {
				c.cfg.Resolver = &curation.Resolver{Model: cfg.Model, Embedder: emb}
			}
		}
	}
	c.name = storeName(c.st)
	c.engine = &merge.Engine{
		Store:       c.st,
		Resolver:    c.cfg.Resolver,
		Gate:        cfg.MergeGate,
		NewID:       cfg.Test.NewID,
		Now:         cfg.Test.Now,
		Contradicts: c.contradicts(),
		Duplicates:  c.duplicates(),
		Logger:      cfg.Logger,
	}
	c.reader = reader{c: c}
	return c, nil
}

// Close releases the Client. It closes the store the Client opened; a store injected
// with Config.Store stays open and belongs to the caller. The first call returns the
// store's Close error, if any; later calls return ErrClosed. The Client of a tenant
// (see Tenants) belongs to its manager: Close refuses it with a *ValidationError, and
// the Client stays open until the manager closes it.
func (c *Client) Close() error {
	if c.managed {
		return store.Invalid("Client", "belongs to a Tenants manager, which closes it; release its TenantLease (or return from Tenants.Use) instead", nil)
	}
	return c.close()
}

func (c *Client) close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	if c.ownStore {
		if err := c.st.Close(); err != nil {
			return fmt.Errorf("day1: closing the store: %w", err)
		}
	}
	return nil
}

// Refresh reads in at once what other Clients and processes committed to the durable
// embedded store since this Client last looked. Reads do so by themselves within a
// millisecond or two; Refresh makes sure before a read that must see a commit made
// elsewhere. It does nothing on stores that always read the current state.
func (c *Client) Refresh(ctx context.Context) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if r, ok := c.st.(store.Refresher); ok {
		return r.Refresh(ctx)
	}
	return nil
}

// Store returns the underlying store, for engine packages that work on a store.Store.
// Writes made through it bypass the Client's embedding and id generation.
func (c *Client) Store() store.Store { return c.st }

// As is the escape hatch to what a backend offers beyond the Client: target must be a
// non-nil pointer, and As sets it and reports true when the Client's store is of the
// pointed-to type (or implements it, for an interface), or when the store's own As
// method (store.Aser) can set it. For example, on MatrixOne:
//
//	var ms *matrixone.Store
//	if c.As(&ms) { ... ms.Capabilities() ... }
//
// It reports false, leaving target as it was, for anything else.
func (c *Client) As(target any) bool {
	return store.As(c.st, target)
}

// Capabilities describes what a Client runs on. What a backend reports of itself (a
// MatrixOne server's version and features, the paths its operations take) is reached
// through Client.As: see matrixone.Store.Capabilities.
type Capabilities struct {
	// Store names the store: "memstore" for the embedded store, otherwise the injected
	// store's Name() if it has one, else its Go type.
	Store string `json:"store"`
	// Durable reports whether committed writes survive a restart: true for the embedded
	// store opened with Config.Path; for an injected store, what its Durable() bool
	// method says (false without one).
	Durable bool `json:"durable"`
	// Embedder is the embedder's name; empty with Config.NoEmbeddings.
	Embedder string `json:"embedder"`
	// Dimensions is the embedding length; 0 with Config.NoEmbeddings.
	Dimensions int `json:"dimensions"`
	// Model is the name of Config.Model; empty without one.
	Model string `json:"model"`
	// Features lists what this Client can do, in a stable order: "keyword_search",
	// "vector_search" and "hybrid_search" (the last two need embeddings),
	// "near_duplicate_detection" (needs embeddings and a positive DedupeThreshold),
	// "branches", "diff", "merge:native", "merge:cherry_pick", "merge:squash",
	// "merge:auto", "merge_gate" (when Config.MergeGate is set), "snapshots",
	// "time_travel", "sessions", and "durable" when Durable is true.
	Features []string `json:"features"`
}

// Capabilities reports the store, embedder and model in use and the features they give.
func (c *Client) Capabilities() Capabilities {
	caps := Capabilities{Store: c.name, Durable: c.durable}
	if c.emb != nil {
		caps.Embedder, caps.Dimensions = c.emb.Name(), c.emb.Dimensions()
	}
	if c.cfg.Model != nil {
		caps.Model = c.cfg.Model.Name()
	}
	f := []string{"keyword_search"}
	if c.emb != nil {
		f = append(f, "vector_search", "hybrid_search")
		if c.dedupe > 0 {
			f = append(f, "near_duplicate_detection")
		}
	}
	f = append(f, "branches", "diff", "merge:native", "merge:cherry_pick", "merge:squash", "merge:auto")
	if c.cfg.MergeGate != nil {
		f = append(f, "merge_gate")
	}
	f = append(f, "snapshots", "time_travel", "sessions")
	if c.durable {
		f = append(f, "durable")
	}
	caps.Features = f
	return caps
}

func storeName(s store.Store) string {
	if n, ok := s.(store.Namer); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", s)
}

// use checks ctx and that the Client is open. Every method calls it first.
func (c *Client) use(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.closed.Load() {
		return ErrClosed
	}
	return nil
}

func (c *Client) now() time.Time { return c.cfg.Test.Now().UTC() }

func (c *Client) newID() string { return c.cfg.Test.NewID() }

// branchOrMain returns name, or DefaultBranch when it is empty.
func branchOrMain(name string) string {
	if name == "" {
		return DefaultBranch
	}
	return name
}
