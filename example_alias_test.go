package day1_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// Two agents write the same knowledge under ids of their own. The second write is
// deduplicated, and its id becomes an alias of the first fact: reads, verification
// and time travel by either id reach the one fact.
func ExampleWritten_AliasOf() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.WriteFact(ctx, day1.Fact{ID: "agent-a:cache", Text: "Sessions are cached in Redis"}); err != nil {
		log.Fatal(err)
	}
	w, err := c.WriteFact(ctx, day1.Fact{ID: "agent-b:cache", Text: "sessions are cached in redis"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.Outcome, "as an alias of", w.AliasOf)

	f, err := c.GetFact(ctx, "main", "agent-b:cache")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("agent-b:cache reads", f.ID+":", f.Text)
	// Output:
	// deduplicated as an alias of agent-a:cache
	// agent-b:cache reads agent-a:cache: Sessions are cached in Redis
}
