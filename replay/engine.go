package replay

import (
	"errors"
	"time"

	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// DefaultSimilarity is the cosine similarity at or above which CompareTaskRuns takes
// two facts (or two decisions) of different runs for the same outcome, when
// Engine.Similarity is zero.
const DefaultSimilarity = 0.85

// Store is what the engine needs of a store: what the handoff engine needs to read
// a task (handoff.Store), and snapshots to replay from. Every store.Store is one.
type Store interface {
	handoff.Store
	store.Snapshots
}

// Engine rebuilds task runs and conversations from memory. Its zero value is not
// usable: Store is required. An Engine holds no state between calls and is safe for
// concurrent use when its Store, Embedder, NewID and Now are.
type Engine struct {
	// Store holds the branches, records and the task documents. Required.
	Store Store
	// Embedder embeds the texts CompareTaskRuns matches across runs. Default nil:
	// facts and decisions match only when their texts are equal after store.NormText.
	Embedder llm.Embedder
	// Similarity is the cosine similarity at or above which two texts of different
	// runs match. Zero means DefaultSimilarity (0.85); it must lie in 0..1.
	Similarity float64
	// NewID is passed to the handoff engine that reads the task's documents.
	// Default: time-ordered random ids.
	NewID func() string
	// Now is the clock that bounds the search for commit instants of a replay at the
	// head. Default time.Now.
	Now func() time.Time
}

func (e *Engine) check() error {
	if e == nil || e.Store == nil {
		return store.Invalid("Engine.Store", "must be set to the store that holds the task's branches", nil)
	}
	if e.Similarity < 0 || e.Similarity > 1 || e.Similarity != e.Similarity {
		return store.Invalid("Engine.Similarity", "must lie in 0..1 (0 means the default 0.85)", e.Similarity)
	}
	return nil
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}

func (e *Engine) similarity() float64 {
	if e.Similarity > 0 {
		return e.Similarity
	}
	return DefaultSimilarity
}

// tasks returns the handoff engine that reads tasks, handoffs and checkpoints.
func (e *Engine) tasks() *handoff.Engine {
	return &handoff.Engine{Store: e.Store, NewID: e.NewID, Now: e.Now}
}

// missing reports whether err says that what was read does not exist at the point
// read: an unknown record or branch, or an instant before the branch began.
func missing(err error) bool {
	return errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrTooOld)
}
