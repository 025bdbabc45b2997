package day1_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// A fact that turns out wrong is corrected, not rewritten in silence: the correction
// is a new version that says who made it and why, and the old text stays in history.
func ExampleClient_CorrectFact() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.WriteFact(ctx, day1.Fact{ID: "cache-ttl", Text: "The cache TTL is 24 hours"}); err != nil {
		log.Fatal(err)
	}
	text := "The cache TTL is 12 hours"
	f, err := c.CorrectFact(ctx, day1.FactCorrection{ID: "cache-ttl", Action: day1.CorrectUpdate, Text: &text,
		By: "agent-b", Why: "the config was changed on Monday"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Text)
	fmt.Println("by", f.Metadata["corrected_by"]+":", f.Metadata["correction_reason"])

	f, err = c.CorrectFact(ctx, day1.FactCorrection{ID: "cache-ttl", Action: day1.CorrectInvalidate,
		By: "lead", Why: "the cache was removed"})
	if err != nil {
		log.Fatal(err)
	}
	hits, err := c.Search(ctx, day1.SearchQuery{Text: "cache TTL"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Status, len(hits), "hits")
	// Output:
	// The cache TTL is 12 hours
	// by agent-b: the config was changed on Monday
	// invalidated 0 hits
}
