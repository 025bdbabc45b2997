package eino

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/schema"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

// RetrieverConfig configures a Retriever. The zero value searches the facts of the
// default branch with day1's defaults.
type RetrieverConfig struct {
	// Branch is the branch searched when a call sets no sub-index
	// (retriever.WithSubIndex). Empty means day1.DefaultBranch, or the snapshot's
	// branch when the Reader is a View at a snapshot.
	Branch string
	// TopK is the most documents a call returns when it sets no retriever.WithTopK,
	// 1 to store.MaxLimit. Default 0: day1's default limit (10).
	TopK int
	// ScoreThreshold is the relevance floor used when a call sets no
	// retriever.WithScoreThreshold: facts whose Relevance (day1.Hit.Relevance, 0 to
	// 1) is below it are left out. Default 0: every hit is kept.
	// day1.DefaultMinRelevance (0.3) is the floor day1's agent-facing surfaces use.
	ScoreThreshold float64
	// Mode is the search mode: day1.Hybrid (the default when empty), day1.Keyword or
	// day1.Vector.
	Mode day1.SearchMode
	// Filter narrows the facts searched (category, status, session, task, agent,
	// time, metadata equality, ids). WithFilter replaces it for one call. Default:
	// every live fact.
	Filter day1.Filter
}

// Retriever is an Eino retriever.Retriever over a day1 memory: Retrieve is day1's
// search of facts. It is safe for concurrent use.
type Retriever struct {
	r   day1.Reader
	cfg RetrieverConfig
}

var _ retriever.Retriever = (*Retriever)(nil)

// NewRetriever returns a Retriever that searches r: a *day1.Client reads each branch
// at its head, a *day1.View (Client.TimeTravel) reads memory as it was. An invalid
// config is a *day1.ValidationError naming the field.
func NewRetriever(r day1.Reader, cfg RetrieverConfig) (*Retriever, error) {
	if r == nil {
		return nil, store.Invalid("NewRetriever: reader", "must be a *day1.Client or a *day1.View, not nil", nil)
	}
	if err := checkBranch("RetrieverConfig.Branch", cfg.Branch); err != nil {
		return nil, err
	}
	if err := checkTopK("RetrieverConfig.TopK", cfg.TopK, true); err != nil {
		return nil, err
	}
	if err := checkThreshold("RetrieverConfig.ScoreThreshold", cfg.ScoreThreshold); err != nil {
		return nil, err
	}
	if cfg.Mode != "" && !cfg.Mode.Valid() {
		return nil, store.Invalid("RetrieverConfig.Mode", "must be empty, hybrid, keyword or vector", cfg.Mode)
	}
	return &Retriever{r: r, cfg: cfg}, nil
}

// retrieverOptions are the Retriever's own call options (retriever.WrapImplSpecificOptFn).
type retrieverOptions struct {
	filter *day1.Filter
}

// WithFilter narrows one Retrieve call to the facts f matches (metadata equality,
// category, session, time, ...), in place of RetrieverConfig.Filter.
func WithFilter(f day1.Filter) retriever.Option {
	return retriever.WrapImplSpecificOptFn(func(o *retrieverOptions) { o.filter = &f })
}

// Retrieve returns the facts most relevant to query as documents, best first. Each
// document's ID is the fact's ID, its Content the fact's text, its MetaData the
// fact's metadata (values an Indexer stored as JSON decoded again) plus MetaBranch,
// MetaCategory and MetaRankScore, and its Score (schema.Document.Score) the hit's
// Relevance in [0, 1].
//
// Eino's options map to day1's search: WithTopK is the Limit, WithScoreThreshold the
// relevance floor (SearchQuery.MinRelevance, 0 to 1), WithSubIndex the branch.
// WithIndex, WithEmbedding and WithDSLInfo are ignored: a day1 memory is one index
// whose branches are its sub-indexes, and day1 embeds the query with the embedder of
// its Client so that queries and facts are compared in one space.
//
// Errors: a *day1.ValidationError naming the option for a TopK out of 1 to
// store.MaxLimit, a threshold outside 0 to 1, a bad branch name or an empty query;
// day1.ErrBranchNotFound for a sub-index that is no branch; the search's errors.
func (r *Retriever) Retrieve(ctx context.Context, query string, opts ...retriever.Option) ([]*schema.Document, error) {
	common := retriever.GetCommonOptions(&retriever.Options{}, opts...)
	own := retriever.GetImplSpecificOptions(&retrieverOptions{}, opts...)
	q := day1.SearchQuery{
		Branch:       r.cfg.Branch,
		Text:         query,
		Mode:         r.cfg.Mode,
		Kinds:        []day1.Kind{day1.KindFact},
		Filter:       r.cfg.Filter,
		Limit:        r.cfg.TopK,
		MinRelevance: r.cfg.ScoreThreshold,
	}
	if common.SubIndex != nil {
		if err := checkBranch("retriever.WithSubIndex", *common.SubIndex); err != nil {
			return nil, err
		}
		q.Branch = *common.SubIndex
	}
	if common.TopK != nil {
		if err := checkTopK("retriever.WithTopK", *common.TopK, false); err != nil {
			return nil, err
		}
		q.Limit = *common.TopK
	}
	if common.ScoreThreshold != nil {
		if err := checkThreshold("retriever.WithScoreThreshold", *common.ScoreThreshold); err != nil {
			return nil, err
		}
		q.MinRelevance = *common.ScoreThreshold
	}
	if own.filter != nil {
		q.Filter = *own.filter
	}
	if strings.TrimSpace(query) == "" {
		return nil, store.Invalid("query", "must not be empty: day1 ranks facts by the words and the meaning of a query", nil)
	}
	hits, err := r.r.Search(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("day1: Eino retrieval from branch %q: %w", branchName(q.Branch), err)
	}
	docs := make([]*schema.Document, 0, len(hits))
	for _, h := range hits {
		// A search at a floor keeps hits down to half of it beside one that reaches
		// it (SearchQuery.MinRelevance); Eino's threshold leaves out every document
		// scored below it.
		f, ok := h.Fact()
		if !ok || h.Relevance < q.MinRelevance {
			continue
		}
		docs = append(docs, factDocument(f, h, q.Branch))
	}
	return docs, nil
}

// GetType names the component in Eino's callbacks and tooling.
func (r *Retriever) GetType() string { return "Day1" }

// factDocument is the document of one fact hit.
func factDocument(f day1.Fact, h day1.Hit, branch string) *schema.Document {
	md := documentMetadata(f.Metadata)
	md[MetaBranch] = branchName(cmp.Or(f.Branch, branch))
	if f.Category != "" {
		md[MetaCategory] = f.Category
	}
	md[MetaRankScore] = h.Score
	d := &schema.Document{ID: f.ID, Content: f.Text, MetaData: md}
	return d.WithScore(h.Relevance)
}

func checkBranch(field, name string) error {
	if name == "" {
		return nil
	}
	return store.ValidateBranchName(field, name)
}

func checkTopK(field string, k int, zeroOK bool) error {
	if k == 0 && zeroOK {
		return nil
	}
	if k < 1 || k > store.MaxLimit {
		return store.Invalid(field, fmt.Sprintf("must be 1 to %d", store.MaxLimit), k)
	}
	return nil
}

func checkThreshold(field string, x float64) error {
	if !(x >= 0 && x <= 1) {
		return store.Invalid(field, "must be 0 to 1: it is the floor of day1's Relevance, which is in [0, 1]", x)
	}
	return nil
}

// branchName is the name of a branch, with the default for an empty one.
func branchName(b string) string {
	if b == "" {
		return day1.DefaultBranch
	}
	return b
}
