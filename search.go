package day1

import (
	"context"
	"fmt"
	"strings"

	"github.com/day1ai/day1/store"
)

// SearchQuery asks for the facts and observations most relevant to a text or a vector.
type SearchQuery struct {
	// Branch to search. Empty means DefaultBranch (the snapshot's branch in a View at a
	// snapshot).
	Branch string
	// Text is the query. Required for Keyword; for Hybrid unless Vector is set. The
	// Client embeds it when the mode needs a vector and Vector is empty.
	Text string
	// Vector is a query embedding, used as is instead of embedding Text.
	Vector []float32
	// Mode is Hybrid (the default), Keyword or Vector.
	//
	// When embedding Text fails, a Hybrid search falls back to keyword ranking alone
	// (its hits are then FoundBy keyword only) and a Vector search returns the error.
	// With Config.NoEmbeddings, Hybrid is keyword only and Vector fails with
	// ErrNotSupported.
	Mode SearchMode
	// Kinds to search: KindFact, KindObservation. Empty means both.
	Kinds []Kind
	// Filter narrows the candidates (category, status, session, task, agent, time,
	// metadata, ids).
	Filter Filter
	// Limit is the most hits returned, 1 to store.MaxLimit. Default 10.
	Limit int
	// Fusion combines the rankings of a Hybrid search: RRF (the default) or Weighted.
	Fusion Fusion
	// RRFK is the rank constant of RRF fusion. Default 60.
	RRFK float64
	// Alpha weighs the vector score in Weighted fusion, 0 to 1. Default 0.5.
	Alpha float64
	// MinScore drops hits whose final score is below it. Default 0: keep every hit.
	MinScore float64
}

// Search ranks facts and observations by keyword (BM25), vector (cosine) or both
// (fused). Hits carry their final score, the score and rank of each retriever that
// found them, and the retrievers' names. Errors: *ValidationError for a bad query (an
// empty Text, a Limit out of range, ...), ErrBranchNotFound, ErrClosed, ctx's error,
// and for a Vector search the embedder's error.
func (r reader) Search(ctx context.Context, q SearchQuery) ([]Hit, error) {
	if err := r.c.use(ctx); err != nil {
		return nil, err
	}
	v, err := r.view(ctx, q.Branch)
	if err != nil {
		return nil, err
	}
	sq := store.SearchQuery{
		Kinds: q.Kinds, Text: q.Text, Vector: q.Vector, Mode: q.Mode, Filter: q.Filter,
		Limit: q.Limit, Fusion: q.Fusion, RRFK: q.RRFK, Alpha: q.Alpha, MinScore: q.MinScore,
	}
	if sq.Mode == "" {
		sq.Mode = Hybrid
	}
	if sq.Mode != Keyword && len(sq.Vector) == 0 && strings.TrimSpace(sq.Text) != "" {
		vec, err := r.c.embedQuery(ctx, sq.Text)
		switch {
		case err == nil:
			sq.Vector = vec
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case sq.Mode == Vector:
			return nil, err
		}
		// A Hybrid search whose query could not be embedded ranks by keyword alone.
	}
	return r.c.st.Search(ctx, v, sq)
}

// embedQuery embeds a search text.
func (c *Client) embedQuery(ctx context.Context, text string) ([]float32, error) {
	if c.emb == nil {
		return nil, fmt.Errorf("day1: a vector search needs embeddings, and Config.NoEmbeddings is set; search by Keyword or Hybrid: %w", ErrNotSupported)
	}
	vecs, err := c.emb.Embed(ctx, []string{text})
	if err == nil && len(vecs) != 1 {
		err = fmt.Errorf("the embedder returned %d vectors for 1 text", len(vecs))
	}
	if err == nil && len(vecs[0]) == 0 {
		err = fmt.Errorf("the embedder returned an empty vector")
	}
	if err == nil {
		err = store.ValidateEmbedding("query embedding", vecs[0], c.emb.Dimensions())
	}
	if err != nil {
		return nil, fmt.Errorf("day1: embedding the search text with %s failed: %w", c.emb.Name(), err)
	}
	return vecs[0], nil
}
