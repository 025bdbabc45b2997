package day1_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// An agent works on its own branch; the diff shows its changes; a native merge brings
// them to main atomically and records the merge.
func ExampleClient_Merge() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.WriteFact(ctx, day1.Fact{Text: "Tokens expire after 15 minutes"}); err != nil {
		log.Fatal(err)
	}
	const agent = "task/fix-auth/agent-a"
	if _, err := c.Branch(ctx, agent, day1.BranchOptions{Description: "agent A fixes the refresh bug"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{Branch: agent, Text: "The refresh handler must check the token expiry"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteObservation(ctx, day1.Observation{Branch: agent, Type: day1.ObsDecision, Summary: "Patch the refresh handler"}); err != nil {
		log.Fatal(err)
	}

	d, err := c.Diff(ctx, agent, "main")
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range d.SourceChanges {
		fmt.Println(ch.Op, ch.Ref)
	}

	res, err := c.Merge(ctx, day1.MergeRequest{Source: agent, Target: "main", MergedBy: "lead", Message: "refresh fix", MarkMerged: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Record.Strategy, "merge", res.Record.ID, "adopted", len(res.Record.Merged), "records")

	facts, err := c.ListFacts(ctx, day1.ListOptions{Branch: "main"})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range facts {
		fmt.Println("main:", f.Text)
	}
	b, err := c.GetBranch(ctx, agent)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Name, "is", b.Status, "into", b.MergedInto)
	// Output:
	// added fact/id-2
	// added observation/id-3
	// native merge id-4 adopted 2 records
	// main: Tokens expire after 15 minutes
	// main: The refresh handler must check the token expiry
	// task/fix-auth/agent-a is merged into main
}

// A cherry-pick merge copies chosen records only; the rest of the branch stays there.
func ExampleClient_Merge_cherryPick() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Branch(ctx, "experiment", day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	good, err := c.WriteFact(ctx, day1.Fact{Branch: "experiment", Text: "Batching writes halves the latency"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{Branch: "experiment", Text: "Disabling fsync is safe"}); err != nil {
		log.Fatal(err)
	}

	res, err := c.Merge(ctx, day1.MergeRequest{
		Source:   "experiment",
		Target:   "main",
		Strategy: day1.CherryPick,
		Pick:     []day1.Ref{day1.RefOf(good.Record)},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, item := range res.Record.Merged {
		fmt.Println(item.Action, item.Ref)
	}
	facts, err := c.ListFacts(ctx, day1.ListOptions{Branch: "main"})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range facts {
		fmt.Println("main:", f.Text)
	}
	// Output:
	// adopt fact/id-1
	// main: Batching writes halves the latency
}

// An auto merge adopts what does not conflict and asks the resolver about each
// conflict. The default resolver keeps the fact with the higher confidence.
func ExampleClient_Merge_auto() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.WriteFact(ctx, day1.Fact{ID: "timeout", Text: "The gateway timeout is 30s"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Branch(ctx, "tuning", day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	// Both branches change the same fact.
	if _, err := c.WriteFact(ctx, day1.Fact{ID: "timeout", Branch: "tuning", Text: "The gateway timeout is 60s", Confidence: 0.9}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{ID: "timeout", Text: "The gateway timeout is 45s", Confidence: 0.6}); err != nil {
		log.Fatal(err)
	}

	res, err := c.Merge(ctx, day1.MergeRequest{Source: "tuning", Target: "main", Strategy: day1.Auto})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res.Record.Resolutions {
		fmt.Println(r.Ref, r.Action, "by", r.By)
	}
	f, err := c.GetFact(ctx, "main", "timeout")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("main:", f.Text)
	// Output:
	// fact/timeout adopt by resolver:default
	// main: The gateway timeout is 60s
}

// A squash merge adopts the net effect of a branch: a fact created and superseded on
// the branch never reaches the target, only the last fact of its chain does.
func ExampleClient_Merge_squash() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Branch(ctx, "drafts", day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	draft, err := c.WriteFact(ctx, day1.Fact{Branch: "drafts", Text: "Cache entries live for 5 minutes"})
	if err != nil {
		log.Fatal(err)
	}
	// A later finding replaces the draft: the old fact is superseded, the new one names
	// it as its parent.
	old := draft.Record
	old.Status = day1.FactSuperseded
	if _, err := c.WriteFacts(ctx, []day1.Fact{old, {Branch: "drafts", Text: "Cache entries live for 10 minutes", ParentID: old.ID}}); err != nil {
		log.Fatal(err)
	}

	if _, err := c.Merge(ctx, day1.MergeRequest{Source: "drafts", Target: "main", Strategy: day1.Squash}); err != nil {
		log.Fatal(err)
	}
	facts, err := c.ListFacts(ctx, day1.ListOptions{Branch: "main"})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range facts {
		fmt.Println("main:", f.Text, f.Status)
	}
	// Output:
	// main: Cache entries live for 10 minutes active
}

// A long-running agent branch that delivers to main several times and syncs with it in
// between: every merge is the new merge base, so each diff lists only what is new and
// nothing already merged conflicts again.
func ExampleClient_Merge_repeated() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	const agent = "agent/researcher"
	if _, err := c.Branch(ctx, agent, day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	must := func(_ any, err error) {
		if err != nil {
			log.Fatal(err)
		}
	}
	must(c.WriteFact(ctx, day1.Fact{ID: "retry", Branch: agent, Text: "Retries back off exponentially"}))
	must(c.Merge(ctx, day1.MergeRequest{Source: agent, Target: "main"})) // first delivery

	// main refines the delivered fact; the agent learns something new meanwhile.
	must(c.WriteFact(ctx, day1.Fact{ID: "retry", Text: "Retries back off exponentially, capped at one minute"}))
	must(c.WriteFact(ctx, day1.Fact{ID: "health", Branch: agent, Text: "Health checks run every ten seconds"}))

	diff, err := c.Diff(ctx, agent, "main")
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range diff.SourceChanges {
		fmt.Println("agent:", ch.Op, ch.Ref)
	}
	for _, ch := range diff.TargetChanges {
		fmt.Println("main:", ch.Op, ch.Ref)
	}
	fmt.Println("conflicts:", len(diff.Conflicts))

	must(c.Merge(ctx, day1.MergeRequest{Source: agent, Target: "main"})) // second delivery
	must(c.Merge(ctx, day1.MergeRequest{Source: "main", Target: agent})) // sync back

	f, err := c.GetFact(ctx, agent, "retry")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("agent now reads:", f.Text)
	hits, err := c.Search(ctx, day1.SearchQuery{Text: "health checks", Mode: day1.Keyword, Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	if fact, ok := hits[0].Fact(); ok {
		fmt.Println("main finds:", fact.Text, "as", day1.FactRef(fact.ID))
	}
	// Output:
	// agent: added fact/health
	// main: updated fact/retry
	// conflicts: 0
	// agent now reads: Retries back off exponentially, capped at one minute
	// main finds: Health checks run every ten seconds as fact/health
}

// A diff narrowed to one category of facts, as the MCP tool memory_branch_diff asks.
func ExampleDiff_Filter() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	const agent = "task/fix-auth/agent-a"
	if _, err := c.Branch(ctx, agent, day1.BranchOptions{}); err != nil {
		log.Fatal(err)
	}
	for _, f := range []day1.Fact{
		{Branch: agent, Text: "The refresh handler must check the token expiry", Category: "bug_fix"},
		{Branch: agent, Text: "Sessions live in Redis", Category: "architecture"},
	} {
		if _, err := c.WriteFact(ctx, f); err != nil {
			log.Fatal(err)
		}
	}
	d, err := c.Diff(ctx, agent, "main")
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range d.Filter(day1.Filter{Category: "bug_fix"}).SourceChanges {
		fmt.Println(ch.Op, ch.After.(day1.Fact).Text)
	}
	fmt.Println(len(d.SourceChanges), "changes in all")
	// Output:
	// added The refresh handler must check the token expiry
	// 2 changes in all
}

// Two agents wrote the cache TTL differently on their branches. The second merge into
// main meets the contradiction as a conflict instead of leaving two live truths; an
// Auto merge lets the resolver keep one (here the fact of higher confidence).
func ExampleClient_Merge_contradiction() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, f := range []day1.Fact{
		{Branch: "agent-a", ID: "ttl-a", Text: "The cache TTL is 24 hours", Confidence: 0.7},
		{Branch: "agent-b", ID: "ttl-b", Text: "The cache TTL is 12 hours", Confidence: 0.9},
	} {
		if _, err := c.Branch(ctx, f.Branch, day1.BranchOptions{}); err != nil {
			log.Fatal(err)
		}
		if _, err := c.WriteFact(ctx, f); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := c.Merge(ctx, day1.MergeRequest{Source: "agent-a", Target: "main"}); err != nil {
		log.Fatal(err)
	}
	_, err = c.Merge(ctx, day1.MergeRequest{Source: "agent-b", Target: "main"})
	var ce *day1.MergeConflictError
	if errors.As(err, &ce) {
		for _, cf := range ce.Conflicts {
			fmt.Println(cf.Reason, cf.Source.Ref.ID, "vs", cf.Target.Ref.ID)
		}
	}
	if _, err := c.Merge(ctx, day1.MergeRequest{Source: "agent-b", Target: "main", Strategy: day1.Auto}); err != nil {
		log.Fatal(err)
	}
	facts, err := c.ListFacts(ctx, day1.ListOptions{Filter: day1.Filter{Status: day1.FactActive}})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range facts {
		fmt.Println("live:", f.Text)
	}
	// Output:
	// contradictory ttl-b vs ttl-a
	// live: The cache TTL is 12 hours
}
