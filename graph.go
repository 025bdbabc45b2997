package day1

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/day1ai/day1/store"
)

// Graph limits.
const (
	// DefaultGraphDepth is the walk depth when GraphQuery.Depth is zero.
	DefaultGraphDepth = 1
	// MaxGraphDepth is the deepest walk a GraphQuery may ask for.
	MaxGraphDepth = 5
	// DefaultGraphLimit is the most edges a Graph holds when GraphQuery.Limit is zero.
	DefaultGraphLimit = 1000
)

// GraphQuery asks for the neighbourhood of an entity in the relation graph.
type GraphQuery struct {
	// Branch to read. Empty means DefaultBranch (the snapshot's branch in a View at a
	// snapshot).
	Branch string
	// Entity is the entity the walk starts from, as written in Relation.Source or
	// Relation.Target. Required.
	Entity string
	// Types keeps relations of these types. Empty means every type.
	Types []string
	// Depth is how many relations away from Entity the walk goes, 1 to MaxGraphDepth.
	// Default 1: the entity's own relations.
	Depth int
	// ValidAt keeps the relations valid at that instant (ValidFrom <= ValidAt and, if
	// set, ValidAt < ValidTo). Zero means now, or the View's instant in a time-travel
	// View (the snapshot's time for a snapshot View).
	ValidAt time.Time
	// IncludeExpired keeps every relation regardless of its validity; ValidAt is then
	// ignored.
	IncludeExpired bool
	// Limit is the most edges returned, 1 to store.MaxLimit. Default DefaultGraphLimit.
	Limit int
}

// Graph is the neighbourhood of an entity.
type Graph struct {
	// Root is the entity the walk started from.
	Root string `json:"root"`
	// Nodes are the entities reached, the root first (Depth 0), then by depth and
	// name.
	Nodes []GraphNode `json:"nodes"`
	// Edges are the relations walked, by the depth they were found at, then source,
	// type, target and id.
	Edges []Relation `json:"edges"`
	// Truncated reports that GraphQuery.Limit cut the walk short.
	Truncated bool `json:"truncated"`
}

// GraphNode is one entity of a Graph.
type GraphNode struct {
	// Entity is the entity's name.
	Entity string `json:"entity"`
	// Depth is the number of relations between it and the root.
	Depth int `json:"depth"`
}

// Graph walks the relations of a branch breadth first from q.Entity, following each
// relation whether the entity is its Source or its Target, up to q.Depth relations
// away. Errors: *ValidationError for an empty Entity or a Depth or Limit out of range,
// ErrBranchNotFound, ErrClosed, ctx's error.
func (r reader) Graph(ctx context.Context, q GraphQuery) (*Graph, error) {
	if err := r.c.use(ctx); err != nil {
		return nil, err
	}
	if strings.TrimSpace(q.Entity) == "" {
		return nil, store.Invalid("GraphQuery.Entity", "must name the entity to start from", nil)
	}
	if q.Depth == 0 {
		q.Depth = DefaultGraphDepth
	}
	if q.Depth < 1 || q.Depth > MaxGraphDepth {
		return nil, store.Invalid("GraphQuery.Depth", fmt.Sprintf("must be between 1 and %d (0 means %d)", MaxGraphDepth, DefaultGraphDepth), q.Depth)
	}
	if q.Limit == 0 {
		q.Limit = DefaultGraphLimit
	}
	if q.Limit < 1 || q.Limit > store.MaxLimit {
		return nil, store.Invalid("GraphQuery.Limit", fmt.Sprintf("must be between 1 and %d (0 means %d)", store.MaxLimit, DefaultGraphLimit), q.Limit)
	}
	v, err := r.view(ctx, q.Branch)
	if err != nil {
		return nil, err
	}
	validAt := q.ValidAt
	if validAt.IsZero() && !q.IncludeExpired {
		if validAt, err = r.instant(ctx); err != nil {
			return nil, err
		}
	}
	filter := Filter{}
	if len(q.Types) == 1 {
		filter.RelationType = q.Types[0]
	}
	g := &Graph{Root: q.Entity, Nodes: []GraphNode{{Entity: q.Entity}}, Edges: []Relation{}}
	depthOf := map[string]int{q.Entity: 0}
	seenEdge := map[string]bool{}
	frontier := []string{q.Entity}
	for depth := 1; depth <= q.Depth && len(frontier) > 0; depth++ {
		var level []Relation
		for _, entity := range frontier {
			filter.Entity = entity
			recs, err := r.c.st.List(ctx, v, store.ListQuery{Kind: KindRelation, Filter: filter, Order: OrderID})
			if err != nil {
				return nil, err
			}
			for _, rec := range recs {
				rel, ok := rec.(Relation)
				if !ok || seenEdge[rel.ID] {
					continue
				}
				if len(q.Types) > 1 && !slices.Contains(q.Types, rel.Type) {
					continue
				}
				if !q.IncludeExpired && !rel.ValidAt(validAt) {
					continue
				}
				seenEdge[rel.ID] = true
				level = append(level, rel)
			}
		}
		slices.SortFunc(level, compareRelations)
		if room := q.Limit - len(g.Edges); len(level) > room {
			level, g.Truncated = level[:room], true
		}
		var next, found []string
		for _, rel := range level {
			g.Edges = append(g.Edges, rel)
			for _, e := range []string{rel.Source, rel.Target} {
				if _, ok := depthOf[e]; !ok {
					depthOf[e] = depth
					next = append(next, e)
					found = append(found, e)
				}
			}
		}
		slices.Sort(found)
		for _, e := range found {
			g.Nodes = append(g.Nodes, GraphNode{Entity: e, Depth: depth})
		}
		if g.Truncated {
			break
		}
		frontier = next
	}
	return g, nil
}

// instant is the time "now" means for this reader: the clock at head, the View's
// instant otherwise.
func (r reader) instant(ctx context.Context) (time.Time, error) {
	switch {
	case r.at.Snapshot != "":
		sn, err := r.c.st.GetSnapshot(ctx, r.at.Snapshot)
		if err != nil {
			return time.Time{}, err
		}
		return sn.At, nil
	case !r.at.Time.IsZero():
		return r.at.Time, nil
	}
	return r.c.now(), nil
}

func compareRelations(a, b Relation) int {
	return cmpStrings(a.Source, b.Source, a.Type, b.Type, a.Target, b.Target, a.ID, b.ID)
}

// cmpStrings compares pairs of strings in turn: (x0, y0), then (x1, y1), ...
func cmpStrings(pairs ...string) int {
	for i := 0; i+1 < len(pairs); i += 2 {
		if c := strings.Compare(pairs[i], pairs[i+1]); c != 0 {
			return c
		}
	}
	return 0
}
