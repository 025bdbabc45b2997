package day1_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/day1ai/day1"
)

// A fact that holds for a while says until when (ExpiresAt, or a TTL at write):
// searches and lists leave it out from then on. Filter.LiveAt asks what will still
// hold at another instant.
func ExampleClient_WriteFact_expiry() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	friday := time.Date(2025, 3, 7, 0, 0, 0, 0, time.UTC)
	if _, err := c.WriteFacts(ctx, []day1.Fact{
		{Text: "The deploy freeze holds until Friday", ExpiresAt: friday},
		{Text: "Deploys need two approvals"},
	}); err != nil {
		log.Fatal(err)
	}
	for _, q := range []day1.SearchQuery{
		{Text: "deploy freeze approvals", Mode: day1.Keyword},
		{Text: "deploy freeze approvals", Mode: day1.Keyword, Filter: day1.Filter{LiveAt: friday.Add(time.Hour)}},
	} {
		hits, err := c.Search(ctx, q)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d hit(s):", len(hits))
		for _, h := range hits {
			f, _ := h.Fact()
			fmt.Printf(" %q", f.Text)
		}
		fmt.Println()
	}
	// Output:
	// 2 hit(s): "The deploy freeze holds until Friday" "Deploys need two approvals"
	// 1 hit(s): "Deploys need two approvals"
}
