package eino_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/contrib/eino"
)

// Example indexes documents as day1 facts and retrieves them in an Eino chain, on the
// embedded in-memory store: no server, no network, no keys.
func Example() {
	ctx := context.Background()
	client, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	ix, err := eino.NewIndexer(client, eino.IndexerConfig{Category: "runbook"})
	if err != nil {
		log.Fatal(err)
	}
	ids, err := ix.Store(ctx, []*schema.Document{
		{ID: "tls", Content: "The API gateway terminates TLS with certificates from the internal CA",
			MetaData: map[string]any{"source": "gateway.md", "section": 2}},
		{ID: "ttl", Content: "The session cache keeps entries for twelve hours"},
		{ID: "deploys", Content: "Production deploys happen on Tuesdays after the change review"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored:", ids)

	r, err := eino.NewRetriever(client, eino.RetrieverConfig{TopK: 3})
	if err != nil {
		log.Fatal(err)
	}
	chain, err := compose.NewChain[string, []*schema.Document]().AppendRetriever(r).Compile(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// The relevance floor drops what does not answer the question.
	docs, err := chain.Invoke(ctx, "who issues the gateway's TLS certificates?",
		compose.WithRetrieverOption(retriever.WithScoreThreshold(day1.DefaultMinRelevance)))
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range docs {
		fmt.Printf("%s (relevance %.2f, source %v, section %v): %s\n", d.ID, d.Score(), d.MetaData["source"], d.MetaData["section"], d.Content)
	}

	docs, err = chain.Invoke(ctx, "office parking rules",
		compose.WithRetrieverOption(retriever.WithScoreThreshold(day1.DefaultMinRelevance)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("about parking:", len(docs), "documents")
	// Output:
	// stored: [tls ttl deploys]
	// tls (relevance 0.57, source gateway.md, section 2): The API gateway terminates TLS with certificates from the internal CA
	// about parking: 0 documents
}
