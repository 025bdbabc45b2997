package day1

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeGraph writes a small service graph. "Auth -uses-> Redis" stopped holding at
// t0+1h (its ValidTo); "Auth -uses-> Memcached" held before that.
//
//	Gateway -calls-> Auth -uses-> Redis -runs_on-> VM1
//	Auth -uses-> Postgres -runs_on-> VM2 -located_in-> EU
//	Billing -calls-> Auth
func writeGraph(t *testing.T, c *Client) {
	t.Helper()
	ctx := context.Background()
	rels := []Relation{
		{ID: "r01", Source: "Gateway", Type: "calls", Target: "Auth", ValidFrom: t0},
		{ID: "r02", Source: "Auth", Type: "uses", Target: "Redis", ValidFrom: t0},
		{ID: "r03", Source: "Redis", Type: "runs_on", Target: "VM1", ValidFrom: t0},
		{ID: "r04", Source: "Auth", Type: "uses", Target: "Postgres", ValidFrom: t0},
		{ID: "r05", Source: "Postgres", Type: "runs_on", Target: "VM2", ValidFrom: t0},
		{ID: "r06", Source: "VM2", Type: "located_in", Target: "EU", ValidFrom: t0},
		{ID: "r07", Source: "Billing", Type: "calls", Target: "Auth", ValidFrom: t0},
		{ID: "r08", Source: "Auth", Type: "uses", Target: "Memcached", ValidFrom: t0.Add(-time.Hour), ValidTo: t0},
	}
	for _, r := range rels {
		if _, err := c.WriteRelation(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGraph(t *testing.T) {
	t.Parallel()
	c, _ := open(t, nil)
	writeGraph(t, c)
	type edge struct{ ID, Source, Type, Target string }
	type result struct {
		Nodes     []GraphNode
		Edges     []edge
		Truncated bool
	}
	n := func(e string, d int) GraphNode { return GraphNode{Entity: e, Depth: d} }
	tests := []struct {
		name string
		q    GraphQuery
		want result
	}{
		{
			name: "depth 1 by default",
			q:    GraphQuery{Entity: "Auth"},
			want: result{
				Nodes: []GraphNode{n("Auth", 0), n("Billing", 1), n("Gateway", 1), n("Postgres", 1), n("Redis", 1)},
				Edges: []edge{{"r04", "Auth", "uses", "Postgres"}, {"r02", "Auth", "uses", "Redis"}, {"r07", "Billing", "calls", "Auth"}, {"r01", "Gateway", "calls", "Auth"}},
			},
		},
		{
			name: "depth 3",
			q:    GraphQuery{Entity: "Gateway", Depth: 3},
			want: result{
				Nodes: []GraphNode{n("Gateway", 0), n("Auth", 1), n("Billing", 2), n("Postgres", 2), n("Redis", 2), n("VM1", 3), n("VM2", 3)},
				Edges: []edge{
					{"r01", "Gateway", "calls", "Auth"},
					{"r04", "Auth", "uses", "Postgres"}, {"r02", "Auth", "uses", "Redis"}, {"r07", "Billing", "calls", "Auth"},
					{"r05", "Postgres", "runs_on", "VM2"}, {"r03", "Redis", "runs_on", "VM1"},
				},
			},
		},
		{
			name: "one type",
			q:    GraphQuery{Entity: "Auth", Types: []string{"calls"}, Depth: 2},
			want: result{
				Nodes: []GraphNode{n("Auth", 0), n("Billing", 1), n("Gateway", 1)},
				Edges: []edge{{"r07", "Billing", "calls", "Auth"}, {"r01", "Gateway", "calls", "Auth"}},
			},
		},
		{
			name: "two types",
			q:    GraphQuery{Entity: "Redis", Types: []string{"uses", "runs_on"}, Depth: 5},
			want: result{
				Nodes: []GraphNode{n("Redis", 0), n("Auth", 1), n("VM1", 1), n("Postgres", 2), n("VM2", 3)},
				Edges: []edge{{"r02", "Auth", "uses", "Redis"}, {"r03", "Redis", "runs_on", "VM1"}, {"r04", "Auth", "uses", "Postgres"}, {"r05", "Postgres", "runs_on", "VM2"}},
			},
		},
		{
			name: "valid in the past",
			q:    GraphQuery{Entity: "Auth", Types: []string{"uses"}, ValidAt: t0.Add(-time.Minute)},
			want: result{
				Nodes: []GraphNode{n("Auth", 0), n("Memcached", 1)},
				Edges: []edge{{"r08", "Auth", "uses", "Memcached"}},
			},
		},
		{
			name: "include expired",
			q:    GraphQuery{Entity: "Auth", Types: []string{"uses"}, IncludeExpired: true},
			want: result{
				Nodes: []GraphNode{n("Auth", 0), n("Memcached", 1), n("Postgres", 1), n("Redis", 1)},
				Edges: []edge{{"r08", "Auth", "uses", "Memcached"}, {"r04", "Auth", "uses", "Postgres"}, {"r02", "Auth", "uses", "Redis"}},
			},
		},
		{
			name: "limit",
			q:    GraphQuery{Entity: "Auth", Depth: 2, Limit: 2},
			want: result{
				Nodes:     []GraphNode{n("Auth", 0), n("Postgres", 1), n("Redis", 1)},
				Edges:     []edge{{"r04", "Auth", "uses", "Postgres"}, {"r02", "Auth", "uses", "Redis"}},
				Truncated: true,
			},
		},
		{
			name: "unknown entity",
			q:    GraphQuery{Entity: "Nobody"},
			want: result{Nodes: []GraphNode{n("Nobody", 0)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := c.Graph(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			got := result{Nodes: g.Nodes, Truncated: g.Truncated}
			for _, e := range g.Edges {
				got.Edges = append(got.Edges, edge{e.ID, e.Source, e.Type, e.Target})
			}
			if g.Root != tt.q.Entity {
				t.Errorf("Root = %q, want %q", g.Root, tt.q.Entity)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Graph mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGraphInvalid(t *testing.T) {
	t.Parallel()
	c, _ := open(t, nil)
	tests := []struct {
		q     GraphQuery
		field string
	}{
		{GraphQuery{}, "GraphQuery.Entity"},
		{GraphQuery{Entity: "  "}, "GraphQuery.Entity"},
		{GraphQuery{Entity: "A", Depth: 6}, "GraphQuery.Depth"},
		{GraphQuery{Entity: "A", Depth: -1}, "GraphQuery.Depth"},
		{GraphQuery{Entity: "A", Limit: -1}, "GraphQuery.Limit"},
	}
	for _, tt := range tests {
		_, err := c.Graph(context.Background(), tt.q)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tt.field {
			t.Errorf("Graph(%+v): err = %v, want a *ValidationError on %s", tt.q, err, tt.field)
		}
	}
}
