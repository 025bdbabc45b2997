package day1_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/llm/llmfake"
)

// An agent's conversation keeps memory right: with a model, ExtractFacts adds what is
// new, updates what changed and invalidates what no longer holds, in one batch. The
// scripted model here stands in for a real one.
func ExampleClient_ExtractFacts() {
	ctx := context.Background()
	cfg := exampleConfig()
	cfg.Model = llmfake.NewModel().On(`long-term memory`, `{"facts": [
		{"action": "update", "id": "cache-ttl", "text": "The cache TTL is 12 hours", "turns": [2]},
		{"action": "invalidate", "id": "sessions", "reason": "sessions moved to Postgres", "turns": [2]},
		{"action": "add", "text": "Sessions are stored in Postgres", "category": "architecture", "confidence": 0.9, "turns": [2]}
	]}`)
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, f := range []day1.Fact{
		{ID: "cache-ttl", Text: "The cache TTL is 24 hours"},
		{ID: "sessions", Text: "Sessions are stored in Redis"},
	} {
		if _, err := c.WriteFact(ctx, f); err != nil {
			log.Fatal(err)
		}
	}
	res, err := c.ExtractFacts(ctx, day1.Extraction{Messages: []day1.Message{
		{Role: day1.RoleUser, Content: "Why do sessions expire early?"},
		{Role: day1.RoleAssistant, Content: "The cache TTL is 12 hours now, and sessions live in Postgres since last week."},
	}})
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range res.Added {
		fmt.Println("added:", w.Fact.Text)
	}
	for _, f := range res.Updated {
		fmt.Println("updated:", f.Text)
	}
	for _, f := range res.Invalidated {
		fmt.Println("invalidated:", f.Text, "-", f.Metadata["correction_reason"])
	}
	// Output:
	// added: Sessions are stored in Postgres
	// updated: The cache TTL is 12 hours
	// invalidated: Sessions are stored in Redis - sessions moved to Postgres
}
