package agenttool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
)

// A framework adapter, or an agent loop of one's own, offers the model the tools and
// runs the calls it makes.
func Example() {
	ctx := context.Background()
	c, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	var names []string
	for _, t := range agenttool.Tools() {
		names = append(names, t.Name)
	}
	fmt.Println(strings.Join(names, " "))

	// The model calls write_fact, then search_memory.
	write, _ := agenttool.Find("write_fact")
	if _, err := write.Run(ctx, c, json.RawMessage(`{"text":"The release branch is cut every Thursday"}`)); err != nil {
		log.Fatal(err)
	}
	search, _ := agenttool.Find("search_memory")
	out, err := search.Run(ctx, c, json.RawMessage(`{"query":"when is the release branch cut"}`))
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range out.(agenttool.SearchOutput).Hits {
		fmt.Println(h.Kind, h.Text)
	}
	// Output:
	// search_memory search_memory_at write_fact correct_fact create_branch diff_branches merge_branch create_snapshot hand_off accept_handoff
	// fact The release branch is cut every Thursday
}
