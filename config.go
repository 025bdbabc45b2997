package day1

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/internal/ids"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/rerank"
	"github.com/day1ai/day1/store"
)

// DefaultDedupeThreshold is the cosine similarity at or above which a new fact
// supersedes a near-duplicate live fact on the same branch, when
// Config.DedupeThreshold is zero.
const DefaultDedupeThreshold = 0.92

// Config configures a Client. The zero Config opens the embedded store in memory with
// the local embedder: no files, no network, no keys.
//
// At most one of Path, DSN, Backend and Store may be set.
type Config struct {
	// Path is the directory of a durable embedded store, shorthand for
	// Backend: sqlite.Options{Path: Path}, a memory in one SQLite file that any
	// number of processes share; or memstore.Options{Path: Path} when the folder
	// already holds a log store's memory (memstore.HoldsMemory). It is created if
	// missing. Empty keeps memory in this process only.
	Path string

	// DSN is the data source name of a MatrixOne database, such as
	// "root:111@tcp(127.0.0.1:6001)/day1", shorthand for
	// Backend: matrixone.Options{DSN: DSN}: the database and its tables are created
	// when missing. Default empty: the embedded store.
	DSN string

	// Backend opens the store with the settings of its backend, which the Client
	// then owns and closes: sqlite.Options for the embedded store in one SQLite file
	// (its Path, lock timeout, read-only opening, retention), memstore.Options for
	// the log store (its Path, sync policy, lock timeout, read-only opening,
	// retention and compaction) or matrixone.Options for MatrixOne (its DSN, pool,
	// retries, retention, indexes).
	// Options that leave the embedding dimensions or the clock unset take the
	// Embedder's and TestConfig.Now. Default nil: the embedded store of Path, or
	// MatrixOne at DSN.
	Backend store.Opener

	// Store is a store.Store to use instead of opening one. The caller owns it:
	// Client.Close leaves it open, and the caller closes it after the Client. Default
	// nil: the Client opens the store of Path, DSN or Backend and closes it on Close.
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

	// Logger receives what the Client and its store do on their own, wait for or
	// retry: facts written without embeddings because the embedder failed, merges
	// planned again because the target changed, and the store's own (the embedded
	// store's compactions, lock waits and torn log tails; MatrixOne's migrations and
	// retried failures), with the branches, ids and figures involved, never record
	// texts. A backend whose options carry a Logger keeps its own. Nil logs nothing.
	Logger *slog.Logger

	// Observer is told as each public operation of the Client starts and ends: the
	// hook of tracing and metrics (see Observer, and the contrib/otel module for
	// OpenTelemetry). Nil observes nothing, at no cost.
	Observer Observer

	// Contradictions says what a fact write does about the live facts of its branch
	// that the new fact contradicts (other values, or the opposite statement, about
	// the same subject; see curation.Contradicts): ContradictionsReport reports them
	// on Written.Contradicts, ContradictionsSupersede makes the new fact supersede
	// the first of them, ContradictionsJudge asks Config.Model what to do about each,
	// ContradictionsOff checks nothing. A check costs one keyword
	// search per fact written. Default (empty): report, for batches of at most
	// DefaultContradictionBatch facts; a larger batch is taken for a bulk load and
	// not checked. Unless it is ContradictionsOff, Diff and Merge also report a fact
	// one branch added that contradicts a fact the other added as a Contradictory
	// conflict.
	Contradictions ContradictionPolicy

	// Reranker, when set, reorders the candidates of every search before its Limit
	// is applied: it sees the best RerankPool of them (or Limit, when larger), in the
	// search's own order, and the search returns the best by its scores (ties keep
	// the search's order), each with Hit.RerankScore. A search asks to skip it with
	// SearchQuery.NoRerank. When it fails (a model's error or malformed reply), the
	// search keeps its own order and its hits carry no RerankScore: a search does not
	// fail because a reranker did, unless ctx ended. A Reranker that is a
	// rerank.UseRecorder is told the hits each search it ranked returned.
	// rerank.Model grades with a language model; rerank.Recency and rerank.Usage
	// decay scores with age and with time unused. Default nil: no reranking.
	Reranker rerank.Reranker

	// RerankPool is how many candidates a Reranker sees, 1 to store.MaxLimit.
	// Default 0: rerank.DefaultPool (50).
	RerankPool int

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

// optionsField renames the field of a backend's *ValidationError ("Options.X") as
// the configuration that holds the options names it (at + ".X"); other errors are
// returned as they are.
func optionsField(at string, err error) error {
	var ve *ValidationError
	if errors.As(err, &ve) && strings.HasPrefix(ve.Field, "Options.") {
		return store.Invalid(at+strings.TrimPrefix(ve.Field, "Options"), ve.Reason, nilIfEmpty(ve.Value))
	}
	return err
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
	if c.RerankPool == 0 {
		c.RerankPool = rerank.DefaultPool
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
	field := ""
	for _, f := range []struct {
		name string
		set  bool
	}{{"Config.Path", c.Path != ""}, {"Config.DSN", c.DSN != ""}, {"Config.Backend", c.Backend != nil}, {"Config.Store", c.Store != nil}} {
		if f.set {
			set++
			field = f.name
		}
	}
	if set > 1 {
		return store.Invalid(field, "set at most one of Path (embedded, durable), DSN (MatrixOne), Backend (a backend's options) and Store (injected)", nil)
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
	switch c.Contradictions {
	case "", ContradictionsReport, ContradictionsSupersede, ContradictionsOff:
	case ContradictionsJudge:
		if c.Model == nil {
			return store.Invalid("Config.Contradictions", "judge needs Config.Model to judge with; without one, use report or supersede", string(c.Contradictions))
		}
	default:
		return store.Invalid("Config.Contradictions", "must be report (the default), supersede, judge or off", string(c.Contradictions))
	}
	if c.RerankPool < 0 || c.RerankPool > store.MaxLimit {
		return store.Invalid("Config.RerankPool", fmt.Sprintf("must be between 1 and %d (0 means rerank.DefaultPool, %d)", store.MaxLimit, rerank.DefaultPool), c.RerankPool)
	}
	return nil
}
