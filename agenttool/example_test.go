package agenttool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
)

// A framework adapter, or an agent loop of one's own, offers the model the tools and
// runs the calls it makes for the agent's session.
func Example() {
	ctx := context.Background()
	c, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s := agenttool.NewSession(c, "release-bot")

	// The model calls memory_write_fact, then memory_search.
	write, _ := agenttool.Find("memory_write_fact")
	res, err := write.Run(ctx, s, json.RawMessage(`{"fact_text":"The release branch is cut every Thursday"}`))
	if err != nil {
		log.Fatal(err)
	}
	w := res.Output.(agenttool.WriteFactOut)
	fmt.Println(w.Outcome, "on", w.Fact.Branch)
	search, _ := agenttool.Find("memory_search")
	res, err = search.Run(ctx, s, json.RawMessage(`{"query":"when is the release branch cut"}`))
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range res.Output.(agenttool.SearchOut).Hits {
		fmt.Println(h.Kind, h.Text)
	}
	// Output:
	// created on main
	// fact The release branch is cut every Thursday
}
