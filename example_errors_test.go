package day1_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// Errors wrap sentinels tested with errors.Is; errors that carry data are reached with
// errors.As.
func Example_errors() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}

	_, err = c.GetFact(ctx, "main", "no-such-fact")
	fmt.Println("not found:", errors.Is(err, day1.ErrNotFound))

	_, err = c.Graph(ctx, day1.GraphQuery{Entity: "AuthService", Depth: 9})
	var invalid *day1.ValidationError
	if errors.As(err, &invalid) {
		fmt.Println("invalid field:", invalid.Field)
	}

	// Both branches change the same fact: a native merge with the default policy
	// refuses and lists the conflicts; nothing changes.
	if _, err := c.WriteFact(ctx, day1.Fact{ID: "limit", Text: "The rate limit is 100 per minute"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Branch(ctx, "tuning", day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{ID: "limit", Branch: "tuning", Text: "The rate limit is 200 per minute"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{ID: "limit", Text: "The rate limit is 150 per minute"}); err != nil {
		log.Fatal(err)
	}
	_, err = c.Merge(ctx, day1.MergeRequest{Source: "tuning", Target: "main"})
	var conflict *day1.MergeConflictError
	if errors.As(err, &conflict) {
		for _, cf := range conflict.Conflicts {
			fmt.Println("conflict:", cf.Ref, cf.Reason)
		}
	}
	fmt.Println("is ErrConflict:", errors.Is(err, day1.ErrConflict))

	if err := c.Close(); err != nil {
		log.Fatal(err)
	}
	_, err = c.Search(ctx, day1.SearchQuery{Text: "rate limit"})
	fmt.Println("closed:", errors.Is(err, day1.ErrClosed))
	// Output:
	// not found: true
	// invalid field: GraphQuery.Depth
	// conflict: fact/limit both_changed
	// is ErrConflict: true
	// closed: true
}
