package day1

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// EmbedderCollection is the store document collection in which a Client records the
// embedder that wrote the store's vectors (document "vectors": its name and
// dimensions), so that a later Open never mixes vectors of two embedders.
const EmbedderCollection = "day1_embedder"

const embedderDocID = "vectors"

// ErrEmbedderMismatch: the store holds vectors of another embedder than
// Config.Embedder. *EmbedderMismatchError matches it, and ErrInvalidArgument.
var ErrEmbedderMismatch = errors.New("day1: the store holds vectors of another embedder")

// EmbedderMismatchError says which embedder wrote a store's vectors and which one the
// Config names. Vectors of different embedders are not comparable even when their
// dimensions agree, so Open refuses the store: open it with the recorded embedder, or
// with a fresh store. It matches ErrEmbedderMismatch and ErrInvalidArgument.
type EmbedderMismatchError struct {
	Stored, Configured         string // embedder names
	StoredDims, ConfiguredDims int
}

func (e *EmbedderMismatchError) Error() string {
	return fmt.Sprintf("day1: the store holds vectors of embedder %q (%d dimensions); Config.Embedder is %q (%d dimensions)",
		e.Stored, e.StoredDims, e.Configured, e.ConfiguredDims)
}

// Is makes errors.Is true for ErrEmbedderMismatch and ErrInvalidArgument.
func (e *EmbedderMismatchError) Is(target error) bool {
	return target == ErrEmbedderMismatch || target == ErrInvalidArgument
}

// embedderRecord is the body of the EmbedderCollection document.
type embedderRecord struct {
	Name       string `json:"name"`
	Dimensions int    `json:"dimensions"`
}

// legacyEmbedder is the default embedder of the versions that recorded no embedder: a
// store they wrote without a record holds its vectors.
func legacyEmbedder(dims int) llm.Embedder { return llm.NewLocalEmbedder(dims) }

// settleEmbedder checks emb against the embedder the store records and returns the
// embedder the Client must use. defaulted says that emb is the Config default rather
// than the caller's choice.
//
//   - A store that records emb's name: emb.
//   - A store that records another name: with the default embedder, the embedder
//     recorded when it is one of the built-in local embedders of the same dimensions
//     (a store written with an older default keeps it); otherwise an
//     *EmbedderMismatchError.
//   - A store with no record that holds facts or observations was written before
//     embedders were recorded, whose default was the hashing LocalEmbedder: with the
//     default embedder the Client keeps that one. The embedder used is then recorded.
func settleEmbedder(ctx context.Context, st store.Store, emb llm.Embedder, defaulted bool) (llm.Embedder, error) {
	doc, err := st.GetDoc(ctx, EmbedderCollection, embedderDocID)
	switch {
	case err == nil:
		var rec embedderRecord
		if err := json.Unmarshal(doc.Data, &rec); err != nil {
			return nil, fmt.Errorf("day1: reading the store's embedder record: %w", err)
		}
		if rec.Name == emb.Name() {
			return emb, nil
		}
		if defaulted {
			if e := builtinEmbedder(rec.Name, emb.Dimensions()); e != nil {
				return e, nil
			}
		}
		return nil, &EmbedderMismatchError{Stored: rec.Name, StoredDims: rec.Dimensions,
			Configured: emb.Name(), ConfiguredDims: emb.Dimensions()}
	case errors.Is(err, store.ErrNotFound):
	default:
		return nil, fmt.Errorf("day1: reading the store's embedder record: %w", err)
	}
	if defaulted {
		old, err := holdsEmbeddedRecords(ctx, st)
		if err != nil {
			return nil, err
		}
		if old {
			emb = legacyEmbedder(emb.Dimensions())
		}
	}
	if ro, ok := st.(store.ReadOnlyReporter); ok && ro.ReadOnly() {
		return emb, nil // a reader records nothing; the writer does
	}
	data, _ := json.Marshal(embedderRecord{Name: emb.Name(), Dimensions: emb.Dimensions()})
	_, err = st.WriteDocs(ctx, []store.DocWrite{{
		Doc:  store.Doc{Collection: EmbedderCollection, ID: embedderDocID, Data: data},
		Cond: store.DocCreate,
	}})
	if errors.Is(err, store.ErrStale) || errors.Is(err, store.ErrExists) {
		// Another Client recorded one meanwhile: check against it.
		return settleEmbedder(ctx, st, emb, defaulted)
	}
	if err != nil {
		return nil, fmt.Errorf("day1: recording the store's embedder: %w", err)
	}
	return emb, nil
}

// builtinEmbedder returns the built-in local embedder called name with dims
// dimensions, or nil.
func builtinEmbedder(name string, dims int) llm.Embedder {
	for _, e := range []llm.Embedder{llm.NewLocalEmbedder(dims), llm.NewStemEmbedder(dims)} {
		if e.Name() == name {
			return e
		}
	}
	return nil
}

// holdsEmbeddedRecords reports whether any branch of st holds a fact or an observation,
// the records that carry vectors.
func holdsEmbeddedRecords(ctx context.Context, st store.Store) (bool, error) {
	bs, err := st.ListBranches(ctx, store.BranchFilter{})
	if err != nil {
		return false, fmt.Errorf("day1: listing branches: %w", err)
	}
	for _, b := range bs {
		for _, k := range []store.Kind{store.KindFact, store.KindObservation} {
			recs, err := st.List(ctx, store.View{Branch: b.Name}, store.ListQuery{Kind: k, Limit: 1})
			if err != nil {
				return false, fmt.Errorf("day1: listing branch %s: %w", b.Name, err)
			}
			if len(recs) > 0 {
				return true, nil
			}
		}
	}
	return false, nil
}
