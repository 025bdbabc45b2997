// Package rerank is the optional last stage of a search: a Reranker sees the whole
// pool of fused candidates (the best DefaultPool of them, say), scores each against
// the query, and the search returns the best of the pool by that score. Keyword and
// vector retrieval rank by words and by likeness; a reranker that reads the query and
// each candidate (a language model, a cross-encoder) can tell which candidate answers,
// and it sees more than the few hits a search returns.
//
// day1.Config.Reranker turns the stage on for a Client; it is off by default. Model
// reranks with an llm.Model; Recency decays scores with the age of their records;
// Usage decays them with the time since a search last returned them, so that
// memories nobody uses fade; Func turns a plain function into a Reranker, for tests
// and for scorers of one's own. Recency and Usage decay Model's grades when given it
// as Next.
package rerank

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// DefaultPool is how many fused candidates a search hands its reranker when the
// Client names no other number (day1.Config.RerankPool).
const DefaultPool = 50

// Reranker scores the candidates of a search.
type Reranker interface {
	// Rerank returns one score per candidate, in the order given, higher is better.
	// The candidates come best first by the search's own ranking; a Reranker must
	// not change them.
	Rerank(ctx context.Context, query string, candidates []store.Hit) ([]float64, error)
	// Name identifies the reranker.
	Name() string
}

// Func is a Reranker that scores each candidate with a function of the query and
// the candidate, such as a deterministic scorer in a test.
type Func func(query string, h store.Hit) float64

// Rerank scores every candidate with f.
func (f Func) Rerank(ctx context.Context, query string, candidates []store.Hit) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]float64, len(candidates))
	for i, h := range candidates {
		out[i] = f(query, h)
	}
	return out, nil
}

// Name returns "func".
func (Func) Name() string { return "func" }

// Model is a Reranker that asks a language model to grade every candidate, in one
// request, from 0 (does not help answer the query) to 10 (answers it).
//
// A reply that is not the JSON asked for, or grades a candidate twice, out of range
// or not at all, is an error that wraps ErrMalformedReply (and the
// *llm.MalformedOutputError when the JSON itself was bad); the search that asked
// keeps its own order then (see day1.Config.Reranker).
type Model struct {
	// Model grades. Required.
	Model llm.Model
	// MaxText is how many characters of each candidate's text the model reads.
	// Default 400.
	MaxText int
}

// ErrMalformedReply is wrapped by the error of a model's reply that does not grade
// every candidate once, from 0 to 10.
var ErrMalformedReply = errors.New("day1: the reranking model's reply does not grade every candidate once, from 0 to 10")

const system = `You grade search results for a memory of an AI agent. Given a query and numbered records, grade how well each record helps answer the query, from 0 (not at all) to 10 (answers it). Reply with JSON only: {"grades": [{"n": 1, "grade": 7}, ...]}, one entry for every record.`

type reply struct {
	Grades []struct {
		N     int      `json:"n"`
		Grade *float64 `json:"grade"`
	} `json:"grades"`
}

// Rerank asks the model to grade the candidates and returns the grades.
func (m *Model) Rerank(ctx context.Context, query string, candidates []store.Hit) ([]float64, error) {
	if m == nil || m.Model == nil {
		return nil, store.Invalid("Model.Model", "must be set to the model that grades candidates", nil)
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	limit := m.MaxText
	if limit <= 0 {
		limit = 400
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Query: %s\n\nRecords:\n", query)
	for i, h := range candidates {
		fmt.Fprintf(&b, "%d. [%s] %s\n", i+1, h.Record.RecordKind(), clip(store.SearchText(h.Record), limit))
	}
	var r reply
	if err := llm.CompleteJSON(ctx, m.Model, llm.Request{System: system,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: b.String()}}}, &r); err != nil {
		var mo *llm.MalformedOutputError
		if errors.As(err, &mo) {
			return nil, fmt.Errorf("%w: %w", ErrMalformedReply, err)
		}
		return nil, err
	}
	out := make([]float64, len(candidates))
	seen := make([]bool, len(candidates))
	for _, g := range r.Grades {
		if g.N < 1 || g.N > len(candidates) || seen[g.N-1] || g.Grade == nil || math.IsNaN(*g.Grade) || *g.Grade < 0 || *g.Grade > 10 {
			return nil, fmt.Errorf("%w: entry %+v of %d records", ErrMalformedReply, g, len(candidates))
		}
		seen[g.N-1] = true
		out[g.N-1] = *g.Grade
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("%w: record %d has no grade", ErrMalformedReply, i+1)
		}
	}
	return out, nil
}

// Name returns "model:" and the model's name.
func (m *Model) Name() string {
	if m == nil || m.Model == nil {
		return "model"
	}
	return "model:" + m.Model.Name()
}

// clip shortens s to at most n characters, on a character boundary.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
