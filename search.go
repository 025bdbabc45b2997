package day1

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/rerank"
	"github.com/day1ai/day1/store"
)

// SearchQuery asks for the facts, observations, messages and conversations most
// relevant to a text or a vector.
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
	// Kinds to search: KindFact, KindObservation, KindMessage (by Content and
	// embedding), KindConversation (by Title, keyword only). Empty means all four
	// (store.SearchKinds), so a memory written as facts and one written as the
	// messages of conversations are both searched by default.
	Kinds []Kind
	// Filter narrows the candidates (category, status, session, task, agent, time,
	// metadata, ids; for messages the conversation and the speaker's Role). A field
	// that applies to one kind only leaves the other kinds out: Filter.Role searches
	// messages alone.
	Filter Filter
	// Limit is the most hits returned, 1 to store.MaxLimit. Default 10.
	Limit int
	// Fusion combines the rankings of a Hybrid search: RRF (weighted by VectorWeight),
	// Weighted (by Alpha) or Fill (keyword hits first). Empty means the rule the
	// embedder earns (see Search): Fill for a lexical embedder, RRF otherwise.
	Fusion Fusion
	// RRFK is the rank constant of RRF fusion. Default 60.
	RRFK float64
	// Alpha weighs the vector score in Weighted fusion, 0 to 1. Default 0.5.
	Alpha float64
	// VectorWeight weighs the vector ranking against the keyword ranking (weight 1) in
	// RRF fusion, 0 to 1. Default 1. Setting it asks for RRF fusion when Fusion is
	// empty, whatever the embedder.
	VectorWeight float64
	// MinScore drops hits whose final score is below it. Default 0: keep every hit.
	MinScore float64
	// MinRelevance drops hits whose Relevance is below it, 0 to 1, so that a search
	// of a memory that holds nothing about the query returns nothing (see
	// store.SearchQuery.MinRelevance). Default 0: keep every hit.
	// DefaultMinRelevance is the floor the agent-facing surfaces use.
	MinRelevance float64
	// NoRerank skips Config.Reranker for this search. Default false: a Client with a
	// Reranker reranks every search.
	NoRerank bool
	// IncludeHistory also returns superseded and invalidated facts, which a search
	// leaves out by default: they are history, not what is known now. Setting
	// Filter.Status or Filter.Statuses searches exactly those statuses instead.
	IncludeHistory bool
	// IncludeExpired also returns facts whose ExpiresAt has passed, which a search
	// leaves out by default: at the head, those expired by now (the store's clock); in
	// a View, those expired by the point it reads. Setting Filter.LiveAt judges expiry
	// at that instant instead.
	IncludeExpired bool
	// Window, 0 to store.MaxWindow, returns each message hit with up to Window
	// messages of its conversation on each side, by Seq (Hit.Before, Hit.After).
	// Default 0: no neighbours attached. A Window above store.DefaultContextSpan (2)
	// also widens the context of WindowWeight.
	Window int
	// WindowWeight is the share of their keyword scores that neighbouring messages of
	// a conversation, and neighbouring facts of a session, lend each other, 0 to 1: a
	// message gains WindowWeight times the keyword scores of the messages within two
	// of it by Seq (Hit.WindowScore), a fact those of the facts of its SessionID
	// within two places of it in creation order (CreatedAt; the facts of one write
	// are created in the order given). So a turn among matching turns rises, and the
	// answer after a question is found even when it shares no word with the query
	// (KeywordScore 0). Facts with no session lend each other the same way when
	// written one after another on the branch, with no more than store.LooseGap (30
	// minutes) between their creation times, as if each such stretch of work were a
	// session. Default store.DefaultWindowWeight (0.3); negative turns it off.
	// Observations and conversations neither lend nor gain.
	WindowWeight float64
}

// Search ranks facts, observations, messages and conversations by keyword (BM25),
// vector (cosine) or both (fused). A message hit names its conversation's title
// (Hit.ConversationTitle) and, with a Window, carries its neighbouring messages.
//
// # Fusion
//
// A Hybrid search weighs the vector ranking by the quality the embedder reports
// (llm.QualityOf). An embedder that captures meaning (llm.QualitySemantic, an
// OpenAI-compatible endpoint, or any embedder that reports nothing) votes as much as
// keyword search, with RRF fusion: a hit scores 1/(RRFK + keyword rank) +
// VectorWeight/(RRFK + vector rank), counting only the retrievers that found it,
// since it finds paraphrases keyword search cannot. A lexical embedder
// (llm.QualityLexical, the local embedders) sees the same words BM25 sees without
// their rarity, so its votes only add noise: the default fusion is then Fill, which
// keeps keyword search's ranking and fills the results keyword search leaves empty
// with the vector retriever's other hits. A default search then ranks exactly as a
// keyword search wherever keyword search finds enough, and finds more where it does
// not. Setting Fusion or VectorWeight overrides the rule.
//
// Hits carry their final score, the score and rank of each retriever that
// found them, the retrievers' names, and their Relevance in [0, 1], which means the
// same on every store and fusion (see store.Hit.Relevance). With MinRelevance, a
// search of a memory that holds nothing about the query returns no hit; the vector
// retriever never finds a record whose cosine to the query is 0 or less. Errors: *ValidationError for a bad query (an
// empty Text, a Limit out of range, ...), ErrBranchNotFound, ErrClosed, ctx's error,
// and for a Vector search the embedder's error.
func (r reader) Search(ctx context.Context, q SearchQuery) (hits []Hit, err error) {
	ctx, end := r.c.start(ctx, Operation{Name: OpSearchMemory, Method: "Search", Branch: branchOrMain(q.Branch), Query: q.Text})
	defer func() { end(OperationEnd{Err: err, Records: len(hits)}) }()
	if err := r.c.use(ctx); err != nil {
		return nil, err
	}
	v, err := r.view(ctx, q.Branch)
	if err != nil {
		return nil, err
	}
	sq := store.SearchQuery{
		Kinds: q.Kinds, Text: q.Text, Vector: q.Vector, Mode: q.Mode, Filter: q.Filter,
		Limit: q.Limit, Fusion: q.Fusion, RRFK: q.RRFK, Alpha: q.Alpha, MinScore: q.MinScore, MinRelevance: q.MinRelevance,
		VectorWeight: q.VectorWeight, IncludeHistory: q.IncludeHistory, Window: q.Window, WindowWeight: q.WindowWeight,
	}
	if sq.Mode == "" {
		sq.Mode = Hybrid
	}
	if sq.Filter, err = r.unexpired(ctx, sq.Filter, q.IncludeExpired); err != nil {
		return nil, err
	}
	if sq.Fusion == "" && sq.VectorWeight == 0 && r.c.emb != nil && llm.QualityOf(r.c.emb) == llm.QualityLexical {
		sq.Fusion = Fill
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
	rr := r.c.cfg.Reranker
	if rr == nil || q.NoRerank {
		return r.c.st.Search(ctx, v, sq)
	}
	limit := sq.Limit
	if limit == 0 {
		limit = store.DefaultSearchLimit
	}
	sq.Limit = max(limit, r.c.cfg.RerankPool)
	hits, err = r.c.st.Search(ctx, v, sq)
	if err != nil {
		return nil, err
	}
	return rerankHits(ctx, rr, q.Text, hits, limit)
}

// rerankHits orders hits by the reranker's scores, ties in their own order, keeps
// limit, and tells a rerank.UseRecorder the hits kept. When the reranker fails, the
// hits keep their order, and no use is recorded.
func rerankHits(ctx context.Context, rr rerank.Reranker, query string, hits []Hit, limit int) ([]Hit, error) {
	scores, err := rr.Rerank(ctx, query, slices.Clone(hits))
	ranked := false
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil || len(scores) != len(hits):
		// The search's own order stands.
	default:
		for i := range hits {
			hits[i].RerankScore = scores[i]
		}
		slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.RerankScore, a.RerankScore) })
		ranked = true
	}
	if len(hits) > limit {
		hits = hits[:limit]
	}
	if u, ok := rr.(rerank.UseRecorder); ok && ranked {
		u.Used(ctx, hits)
	}
	return hits, nil
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

// DefaultMinRelevance is the relevance floor (SearchQuery.MinRelevance) of the
// searches that put memory into an agent's context: the MCP server's search, the
// Claude Code hooks' context and the command line use it. See
// store.DefaultMinRelevance for what it gives on a benchmark.
const DefaultMinRelevance = store.DefaultMinRelevance
