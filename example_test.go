package day1_test

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/day1ai/day1"
)

// exampleConfig returns a Config for reproducible output: a clock that starts at
// 2025-03-01 09:00:00 UTC and ticks one second per reading, and ids id-1, id-2, ...
// Leave Config.Test zero in real programs.
func exampleConfig() day1.Config {
	var mu sync.Mutex
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	n := 0
	return exampleStore(day1.Config{Test: day1.TestConfig{
		Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			now = now.Add(time.Second)
			return now
		},
		NewID: func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("id-%d", n)
		},
	}})
}

// Writing facts and searching them. A repeated text is deduplicated; search is hybrid
// (keyword and vector) by default and says which retrievers found each hit.
func Example() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	written, err := c.WriteFacts(ctx, []day1.Fact{
		{Text: "The auth service signs JWT tokens with RS256", Category: "architecture"},
		{Text: "Sessions are kept in Redis for 30 minutes", Category: "architecture"},
		{Text: "Login fails when the session token has expired", Category: "bug"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range written {
		fmt.Println(w.Outcome, w.Record.ID, w.Record.Text)
	}

	again, err := c.WriteFact(ctx, day1.Fact{Text: "Sessions are kept in Redis for 30 minutes"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(again.Outcome, "as", again.Replaced)

	hits, err := c.Search(ctx, day1.SearchQuery{Text: "expired login token", Limit: 2})
	if err != nil {
		log.Fatal(err)
	}
	for i, h := range hits {
		fmt.Println(i+1, h.Record.(day1.Fact).Text, h.FoundBy)
	}
	// Output:
	// created id-1 The auth service signs JWT tokens with RS256
	// created id-2 Sessions are kept in Redis for 30 minutes
	// created id-3 Login fails when the session token has expired
	// deduplicated as id-2
	// 1 Login fails when the session token has expired [keyword]
	// 2 The auth service signs JWT tokens with RS256 [keyword]
}

func ExampleClient_Capabilities() {
	ctx := context.Background()
	c, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	caps := c.Capabilities()
	fmt.Println(caps.Store, caps.Durable, caps.Embedder, caps.Dimensions)
	fmt.Println(caps.Features[:3])
	// Output:
	// memstore false local-stem-384 384
	// [keyword_search vector_search hybrid_search]
}
