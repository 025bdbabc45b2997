package eino_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cloudwego/eino/components/indexer"
	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/contrib/eino"
)

var corpus = []*schema.Document{
	{ID: "gateway-tls", Content: "The API gateway terminates TLS with certificates from the internal CA",
		MetaData: map[string]any{"source": "runbook.md", "page": 3, "tags": []string{"network", "security"}}},
	{ID: "cache-ttl", Content: "The session cache keeps entries for twelve hours before eviction",
		MetaData: map[string]any{"source": "config.md"}},
	{ID: "deploy-day", Content: "Production deploys happen on Tuesdays after the change review",
		MetaData: map[string]any{"source": "process.md", "_score": 0.9, "_dense_vector": []float64{0.1, 0.2}}},
}

// indexChain stores documents through a compiled Eino chain whose one node is the
// Indexer.
func indexChain(t *testing.T, ix *eino.Indexer, docs []*schema.Document, opts ...compose.Option) []string {
	t.Helper()
	run, err := compose.NewChain[[]*schema.Document, []string]().AppendIndexer(ix).Compile(context.Background())
	if err != nil {
		t.Fatalf("compiling the indexing chain: %v", err)
	}
	ids, err := run.Invoke(context.Background(), docs, opts...)
	if err != nil {
		t.Fatalf("indexing chain: %v", err)
	}
	return ids
}

// retrievalChain compiles a chain that retrieves with r and keeps each document's ID
// and content, the shape a prompt template would consume.
func retrievalChain(t *testing.T, r *eino.Retriever) compose.Runnable[string, []*schema.Document] {
	t.Helper()
	run, err := compose.NewChain[string, []*schema.Document]().
		AppendLambda(compose.InvokableLambda(func(ctx context.Context, q string) (string, error) {
			return strings.TrimSpace(q), nil
		})).
		AppendRetriever(r).
		Compile(context.Background())
	if err != nil {
		t.Fatalf("compiling the retrieval chain: %v", err)
	}
	return run
}

func ids(docs []*schema.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out
}

// TestChain indexes documents and retrieves them inside compiled Eino chains: the
// documents come back with their IDs, texts, metadata and relevance scores, and the
// chain's call options reach day1's search as its limit, relevance floor and branch.
func TestChain(t *testing.T) {
	forEachStore(t, func(t *testing.T, c *day1.Client) {
		ctx := context.Background()
		ix, err := eino.NewIndexer(c, eino.IndexerConfig{Category: "docs"})
		if err != nil {
			t.Fatal(err)
		}
		if got := indexChain(t, ix, corpus); !cmp.Equal(got, []string{"gateway-tls", "cache-ttl", "deploy-day"}) {
			t.Fatalf("stored ids = %v", got)
		}
		r, err := eino.NewRetriever(c, eino.RetrieverConfig{})
		if err != nil {
			t.Fatal(err)
		}
		run := retrievalChain(t, r)

		docs, err := run.Invoke(ctx, "  which certificates does the gateway use for TLS?  ")
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) == 0 || docs[0].ID != "gateway-tls" {
			t.Fatalf("retrieved %v, want gateway-tls first", ids(docs))
		}
		top := docs[0]
		if top.Content != corpus[0].Content {
			t.Errorf("content = %q", top.Content)
		}
		if s := top.Score(); s <= 0 || s > 1 {
			t.Errorf("score = %v, want a relevance in (0, 1]", s)
		}
		want := map[string]any{
			"source": "runbook.md", "page": float64(3), "tags": []any{"network", "security"},
			eino.MetaBranch: "main", eino.MetaCategory: "docs",
		}
		got := map[string]any{}
		for k, v := range top.MetaData {
			if k != "_score" && k != eino.MetaRankScore {
				got[k] = v
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("metadata (-want +got):\n%s", d)
		}
		if _, ok := top.MetaData[eino.MetaRankScore].(float64); !ok {
			t.Errorf("metadata lacks the rank score: %v", top.MetaData)
		}
		for _, d := range docs {
			if _, ok := d.MetaData["_dense_vector"]; ok {
				t.Errorf("%s carries the document's vector back: %v", d.ID, d.MetaData)
			}
		}

		// TopK is the limit.
		docs, err = run.Invoke(ctx, "gateway cache deploys", compose.WithRetrieverOption(retriever.WithTopK(1)))
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) != 1 {
			t.Errorf("TopK 1 returned %v", ids(docs))
		}

		// ScoreThreshold is the relevance floor: a query about nothing stored finds
		// nothing at day1's agent-facing floor, and every document kept is above it.
		docs, err = run.Invoke(ctx, "quarterly marketing budget spreadsheet",
			compose.WithRetrieverOption(retriever.WithScoreThreshold(day1.DefaultMinRelevance)))
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) != 0 {
			t.Errorf("an unrelated query at the floor returned %v", ids(docs))
		}
		docs, err = run.Invoke(ctx, "session cache eviction hours",
			compose.WithRetrieverOption(retriever.WithScoreThreshold(0.5)))
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) == 0 || docs[0].ID != "cache-ttl" {
			t.Errorf("retrieved %v, want cache-ttl", ids(docs))
		}
		for _, d := range docs {
			if d.Score() < 0.5 {
				t.Errorf("%s scores %v under the threshold 0.5", d.ID, d.Score())
			}
		}

		// SubIndex is the branch: a document indexed on a branch is found there only.
		if _, err := c.Branch(ctx, "team-a", day1.BranchOptions{}); err != nil {
			t.Fatal(err)
		}
		indexChain(t, ix, []*schema.Document{{ID: "team-a-oncall", Content: "Team A rotates the pager weekly on Mondays"}},
			compose.WithIndexerOption(indexer.WithSubIndexes([]string{"team-a"})))
		docs, err = run.Invoke(ctx, "who rotates the pager", compose.WithRetrieverOption(retriever.WithSubIndex("team-a")))
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) == 0 || docs[0].ID != "team-a-oncall" || docs[0].MetaData[eino.MetaBranch] != "team-a" {
			t.Errorf("on team-a retrieved %v", docs)
		}
		docs, err = run.Invoke(ctx, "who rotates the pager", compose.WithRetrieverOption(retriever.WithScoreThreshold(0.5)))
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) != 0 {
			t.Errorf("main sees the branch's document: %v", ids(docs))
		}

		// WithFilter narrows a call by metadata.
		docs, err = run.Invoke(ctx, "gateway cache deploys", compose.WithRetrieverOption(
			eino.WithFilter(day1.Filter{Metadata: map[string]string{"source": "config.md"}})))
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(ids(docs), []string{"cache-ttl"}) {
			t.Errorf("filtered by source retrieved %v", ids(docs))
		}
	})
}

// TestIndexerBranchesAndIDs covers where documents go and which IDs come back: the
// call's sub-indexes, the document's own, branches created on demand, generated IDs
// shared across branches, and a repeated store.
func TestIndexerBranchesAndIDs(t *testing.T) {
	forEachStore(t, func(t *testing.T, c *day1.Client) {
		ctx := context.Background()
		strict, err := eino.NewIndexer(c, eino.IndexerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = strict.Store(ctx, []*schema.Document{{Content: "anything"}}, indexer.WithSubIndexes([]string{"missing"}))
		if !errors.Is(err, day1.ErrBranchNotFound) || !strings.Contains(err.Error(), "CreateBranches") {
			t.Fatalf("a missing branch: %v", err)
		}

		ix, err := eino.NewIndexer(c, eino.IndexerConfig{CreateBranches: true})
		if err != nil {
			t.Fatal(err)
		}
		anon := (&schema.Document{Content: "Invoices are archived for seven years"}).WithSubIndexes([]string{"finance", "legal"})
		named := &schema.Document{ID: "handbook-1", Content: "New hires get a laptop on their first day"}
		got, err := ix.Store(ctx, []*schema.Document{anon, named})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0] == "" || got[1] != "handbook-1" {
			t.Fatalf("ids = %v", got)
		}
		for _, b := range []string{"finance", "legal"} {
			f, err := c.GetFact(ctx, b, got[0])
			if err != nil || f.Text != anon.Content || f.SourceType != eino.SourceType {
				t.Errorf("on %s: %+v, %v", b, f, err)
			}
		}
		if _, err := c.GetFact(ctx, "main", got[0]); !errors.Is(err, day1.ErrNotFound) {
			t.Errorf("the document routed to finance and legal is on main: %v", err)
		}
		if _, err := c.GetFact(ctx, "main", "handbook-1"); err != nil {
			t.Errorf("the document without sub-indexes is not on the default branch: %v", err)
		}
		again, err := ix.Store(ctx, []*schema.Document{named})
		if err != nil || !cmp.Equal(again, []string{"handbook-1"}) {
			t.Errorf("storing again: %v, %v", again, err)
		}
		facts, err := c.ListFacts(ctx, day1.ListOptions{})
		if err != nil || len(facts) != 1 {
			t.Errorf("main holds %d facts after a repeated store (%v), want 1", len(facts), err)
		}
	})
}

// TestRetrieverOverThePast retrieves through a time-travel view: what was stored
// before the snapshot, not what came after.
func TestRetrieverOverThePast(t *testing.T) {
	ctx := context.Background()
	c := stores()[0].open(t)
	ix, err := eino.NewIndexer(c, eino.IndexerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Store(ctx, []*schema.Document{{ID: "v1", Content: "The release train leaves every second Thursday"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Snapshot(ctx, "main", "before", day1.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Store(ctx, []*schema.Document{{ID: "v2", Content: "The release train is paused for the holidays"}}); err != nil {
		t.Fatal(err)
	}
	r, err := eino.NewRetriever(c.TimeTravel(day1.AtSnapshot("before")), eino.RetrieverConfig{})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := r.Retrieve(ctx, "release train")
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(ids(docs), []string{"v1"}) {
		t.Errorf("in the past retrieved %v, want [v1]", ids(docs))
	}
}

// TestErrors checks that bad input is refused with a *day1.ValidationError that names
// the field, before anything is written.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	c := stores()[0].open(t)
	ix, err := eino.NewIndexer(c, eino.IndexerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := eino.NewRetriever(c, eino.RetrieverConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ok := &schema.Document{ID: "fine", Content: "a fine document"}
	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"nil reader", func() error { _, err := eino.NewRetriever(nil, eino.RetrieverConfig{}); return err }, "reader"},
		{"nil client", func() error { _, err := eino.NewIndexer(nil, eino.IndexerConfig{}); return err }, "client"},
		{"config branch", func() error { _, err := eino.NewRetriever(c, eino.RetrieverConfig{Branch: "a//b"}); return err }, "RetrieverConfig.Branch"},
		{"config topk", func() error { _, err := eino.NewRetriever(c, eino.RetrieverConfig{TopK: -1}); return err }, "RetrieverConfig.TopK"},
		{"config threshold", func() error { _, err := eino.NewRetriever(c, eino.RetrieverConfig{ScoreThreshold: 2}); return err }, "RetrieverConfig.ScoreThreshold"},
		{"config mode", func() error { _, err := eino.NewRetriever(c, eino.RetrieverConfig{Mode: "fuzzy"}); return err }, "RetrieverConfig.Mode"},
		{"config category", func() error {
			_, err := eino.NewIndexer(c, eino.IndexerConfig{Category: strings.Repeat("c", 101)})
			return err
		}, "IndexerConfig.Category"},
		{"config parent", func() error { _, err := eino.NewIndexer(c, eino.IndexerConfig{Parent: "-x"}); return err }, "IndexerConfig.Parent"},
		{"topk 0", func() error { _, err := r.Retrieve(ctx, "q", retriever.WithTopK(0)); return err }, "retriever.WithTopK"},
		{"threshold", func() error { _, err := r.Retrieve(ctx, "q", retriever.WithScoreThreshold(-0.1)); return err }, "retriever.WithScoreThreshold"},
		{"sub-index", func() error { _, err := r.Retrieve(ctx, "q", retriever.WithSubIndex("a b")); return err }, "retriever.WithSubIndex"},
		{"empty query", func() error { _, err := r.Retrieve(ctx, "  "); return err }, "query"},
		{"nil document", func() error { _, err := ix.Store(ctx, []*schema.Document{ok, nil}); return err }, "docs[1]"},
		{"document id", func() error {
			_, err := ix.Store(ctx, []*schema.Document{ok, {ID: "docs/a.md#0", Content: "x"}})
			return err
		}, "docs[1].ID"},
		{"blank content", func() error { _, err := ix.Store(ctx, []*schema.Document{{Content: " "}}); return err }, "docs[0].Content"},
		{"reserved key", func() error {
			_, err := ix.Store(ctx, []*schema.Document{{Content: "x", MetaData: map[string]any{eino.MetaJSONKeys: "[]"}}})
			return err
		}, "docs[0].MetaData[" + eino.MetaJSONKeys + "]"},
		{"unencodable value", func() error {
			_, err := ix.Store(ctx, []*schema.Document{{Content: "x", MetaData: map[string]any{"ch": make(chan int)}}})
			return err
		}, "docs[0].MetaData[ch]"},
		{"long value", func() error {
			_, err := ix.Store(ctx, []*schema.Document{{Content: "x", MetaData: map[string]any{"long": strings.Repeat("y", 5000)}}})
			return err
		}, "docs[0].MetaData[long]"},
		{"call sub-index", func() error {
			_, err := ix.Store(ctx, []*schema.Document{ok}, indexer.WithSubIndexes([]string{"../up"}))
			return err
		}, "indexer.WithSubIndexes[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var ve *day1.ValidationError
			if !errors.As(err, &ve) || !strings.Contains(ve.Field, tt.field) {
				t.Fatalf("error %v, want a *day1.ValidationError naming %s", err, tt.field)
			}
			if !errors.Is(err, day1.ErrInvalidArgument) {
				t.Errorf("%v does not match day1.ErrInvalidArgument", err)
			}
		})
	}
	facts, err := c.ListFacts(ctx, day1.ListOptions{})
	if err != nil || len(facts) != 0 {
		t.Errorf("refused calls wrote %d facts (%v)", len(facts), err)
	}
}
