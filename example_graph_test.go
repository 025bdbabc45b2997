package day1_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// Graph walks the relations around an entity, breadth first, in both directions.
func ExampleClient_Graph() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	for _, r := range []day1.Relation{
		{Source: "Gateway", Type: "calls", Target: "AuthService"},
		{Source: "AuthService", Type: "uses", Target: "Redis"},
		{Source: "AuthService", Type: "uses", Target: "Postgres"},
		{Source: "Postgres", Type: "runs_on", Target: "db-vm-1"},
	} {
		if _, err := c.WriteRelation(ctx, r); err != nil {
			log.Fatal(err)
		}
	}

	g, err := c.Graph(ctx, day1.GraphQuery{Entity: "AuthService", Depth: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range g.Nodes {
		fmt.Println("node", n.Depth, n.Entity)
	}
	for _, e := range g.Edges {
		fmt.Println("edge", e.Source, "-"+e.Type+"->", e.Target)
	}
	// Output:
	// node 0 AuthService
	// node 1 Gateway
	// node 1 Postgres
	// node 1 Redis
	// node 2 db-vm-1
	// edge AuthService -uses-> Postgres
	// edge AuthService -uses-> Redis
	// edge Gateway -calls-> AuthService
	// edge Postgres -runs_on-> db-vm-1
}
