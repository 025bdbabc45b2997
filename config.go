package day1

import (
	"fmt"
	"math"
	"time"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/internal/ids"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// DefaultDedupeThreshold is the cosine similarity at or above which a new fact
// supersedes a near-duplicate live fact on the same branch, when
// Config.DedupeThreshold is zero.
const DefaultDedupeThreshold = 0.92

// Config configures a Client. The zero Config opens the embedded store in memory with
// the local embedder: no files, no network, no keys.
//
// At most one of Path, DSN and Store may be set.
type Config struct {
	// Path is the directory of a durable embedded store. It is created if missing, and
	// its log is replayed when it exists. Empty keeps memory in this process only.
	Path string

	// DSN is the data source name of a MatrixOne database, such as
	// "root:111@tcp(127.0.0.1:6001)/day1": Open uses the MatrixOne store
	// (store/matrixone), creating the database and its tables when missing. Its
	// embeddings have the Embedder's dimensions. Default empty: the embedded store.
	DSN string

	// Store is a store.Store to use instead of opening one. The caller owns it:
	// Client.Close leaves it open, and the caller closes it after the Client. Default
	// nil: the Client opens the embedded store (see Path) and closes it on Close.
	Store store.Store

	// Embedder turns fact texts, observation summaries and search queries into vectors.
	// Default llm.NewStemEmbedder(llm.DefaultDimensions): deterministic and offline.
	//
	// The store records the name of the embedder that writes its vectors (see
	// EmbedderCollection), and Open fails with an *EmbedderMismatchError when a store
	// recorded another one: vectors of two embedders are never compared. With the
	// default, a store written by the older default llm.NewLocalEmbedder (recorded, or
	// holding records from before embedders were recorded) keeps that embedder.
	Embedder llm.Embedder

	// NoEmbeddings stores no vectors at all: search is keyword only (Hybrid ranks by
	// keyword, Vector fails with ErrNotSupported) and only exact repeats of a fact text
	// are deduplicated. It cannot be combined with Embedder. Default false.
	NoEmbeddings bool

	// Model is an optional language model, kept for the engines that judge, extract or
	// resolve with one. Default nil: those engines use their heuristics.
	Model llm.Model

	// Resolver decides the conflicts of Auto merges. Default: with a Model, the judge
	// (curation.Resolver: the model keeps the source's fact, the target's, both, or
	// writes a merged fact, and a malformed reply falls back to the deterministic
	// resolver); without one, merge.DefaultResolver().
	Resolver merge.Resolver

	// MergeGate checks every merge before it is applied, unless the MergeRequest has a
	// Gate of its own. Default nil: no gate. VerificationGate{} requires verified facts.
	MergeGate merge.Gate

	// Verification holds the thresholds that turn a judge's score into a verdict.
	// Default (the zero Policy): verified at 0.6 or more, invalidated under 0.3;
	// StrictPolicy() verifies facts at 0.7 and conversations at 0.6, invalidating both
	// under 0.4. ConversationVerifyAt and ConversationInvalidateBelow, when set, judge
	// conversations apart from facts. Every threshold must lie in 0..1, an invalidate
	// threshold at most its verify threshold.
	Verification Policy

	// DedupeThreshold is the cosine similarity at or above which a new fact supersedes
	// a near-duplicate live fact on the same branch instead of being added beside it.
	// Zero means DefaultDedupeThreshold (0.92); a negative value turns near-duplicate
	// detection off (exact repeats of a fact text are still deduplicated). It must be at
	// most 1.
	DedupeThreshold float64

	// NoSync makes the durable embedded store skip the fsync after each commit: a
	// committed write survives a crash of the process but not a power loss. It requires
	// Path. Default false: every commit is flushed to stable storage.
	NoSync bool

	// LockTimeout is how long a write waits for the writes of other Clients on the
	// durable embedded store at Path, in this process or another, before it fails with
	// ErrLocked. Any number of Clients open one Path at once; their commits take turns,
	// each holding the store only while it reads in the others' commits, decides and
	// appends. Default 0: memstore.DefaultLockTimeout (30 s). It requires Path.
	LockTimeout time.Duration

	// ReadOnly opens the durable embedded store at Path for reading only, beside the
	// processes that write it: every write fails with ErrReadOnly. Reads see the
	// others' commits as every Client does, within a millisecond or two, or at once
	// after Client.Refresh. The store must exist: a writer creates it. It requires
	// Path.
	ReadOnly bool

	// Retention is how far back reads at an instant may go: older instants fail with
	// ErrTooOld (snapshots stay readable as long as they exist). On the durable
	// embedded store, compactions (Client.Compact, and those it starts by itself) drop
	// the versions replaced more than Retention ago that no branch, snapshot or merge
	// base still reads. On MatrixOne it sets matrixone.Options.Retention. Default 0:
	// the embedded store keeps all history, and MatrixOne uses its own default (7
	// days). It must not be negative.
	Retention time.Duration

	// CompactRatio makes the durable embedded store compact itself, in the background,
	// when the log written since its last checkpoint holds more than CompactRatio times
	// the checkpoint's bytes (and at least 64 MiB). Default 0 means 2; a negative value
	// turns automatic compaction off (Client.Compact still compacts). It requires Path.
	CompactRatio float64

	// Test holds seams for tests. Leave it zero in production.
	Test TestConfig
}

// TestConfig holds the test seams of a Client. Zero fields use the real implementation.
type TestConfig struct {
	// Now is the clock of the embedded store, the merge engine, session end times and
	// the "now" of Graph queries.
	// Default time.Now. It must be safe for concurrent use.
	Now func() time.Time

	// NewID makes the ids of records written without one, of sessions and of merge
	// records. Default: time-ordered random ids. It must be safe for concurrent use and
	// return distinct, valid ids.
	NewID func() string
}

// withDefaults returns a copy of c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.Embedder == nil && !c.NoEmbeddings {
		c.Embedder = llm.NewStemEmbedder(llm.DefaultDimensions)
	}
	if c.Resolver == nil && c.Model != nil {
		c.Resolver = &curation.Resolver{Model: c.Model, Embedder: c.Embedder}
	}
	if c.Resolver == nil {
		c.Resolver = merge.DefaultResolver()
	}
	if c.DedupeThreshold == 0 {
		c.DedupeThreshold = DefaultDedupeThreshold
	}
	if c.Test.Now == nil {
		c.Test.Now = time.Now
	}
	if c.Test.NewID == nil {
		c.Test.NewID = ids.New
	}
	return c
}

// validate checks a Config. It runs before withDefaults fills Embedder, so that an
// explicit Embedder and NoEmbeddings can be told apart.
func (c Config) validate() error {
	set := 0
	for _, s := range []bool{c.Path != "", c.DSN != "", c.Store != nil} {
		if s {
			set++
		}
	}
	if set > 1 {
		field := "Config.Store"
		if c.Store == nil {
			field = "Config.DSN"
		}
		return store.Invalid(field, "set at most one of Path (embedded, durable), DSN (MatrixOne) and Store (injected)", nil)
	}
	if c.NoEmbeddings && c.Embedder != nil {
		return store.Invalid("Config.NoEmbeddings", "cannot be combined with Config.Embedder; set one or the other", nil)
	}
	if c.Embedder != nil {
		if d := c.Embedder.Dimensions(); d < 1 || d > store.MaxEmbeddingDims {
			return store.Invalid("Config.Embedder", fmt.Sprintf("reports %d dimensions; it must report 1 to %d", d, store.MaxEmbeddingDims), c.Embedder.Name())
		}
	}
	if math.IsNaN(c.DedupeThreshold) || c.DedupeThreshold > 1 {
		return store.Invalid("Config.DedupeThreshold", "must be at most 1 (0 means the default 0.92, a negative value turns near-duplicate detection off)", c.DedupeThreshold)
	}
	if err := c.Verification.Validate("Config.Verification"); err != nil {
		return err
	}
	if c.NoSync && c.Path == "" {
		return store.Invalid("Config.NoSync", "applies only to the durable embedded store; set Config.Path too, or leave NoSync false", nil)
	}
	if c.LockTimeout != 0 && c.Path == "" {
		return store.Invalid("Config.LockTimeout", "applies only to the durable embedded store; set Config.Path too, or leave LockTimeout 0", c.LockTimeout.String())
	}
	if c.LockTimeout < 0 {
		return store.Invalid("Config.LockTimeout", "must be 0 (the default, 30 s) or more", c.LockTimeout.String())
	}
	if c.Retention < 0 {
		return store.Invalid("Config.Retention", "must be 0 (the store's default) or more", c.Retention.String())
	}
	if math.IsNaN(c.CompactRatio) || c.CompactRatio != 0 && c.Path == "" {
		return store.Invalid("Config.CompactRatio", "applies only to the durable embedded store; set Config.Path too, or leave CompactRatio 0", c.CompactRatio)
	}
	if c.ReadOnly && c.Path == "" {
		return store.Invalid("Config.ReadOnly", "applies only to the durable embedded store; set Config.Path too", nil)
	}
	return nil
}
