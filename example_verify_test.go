package day1_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/llm/llmfake"
)

// Without a model, the heuristic judges: accuracy is the fact's confidence,
// relevance depends on the category, specificity on the length.
func ExampleClient_VerifyFact() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	w, err := c.WriteFact(ctx, day1.Fact{
		Text:       "The refresh handler in auth/refresh.go must check the token expiry before it issues a new token",
		Category:   "bug_fix",
		Confidence: 0.9,
	})
	if err != nil {
		log.Fatal(err)
	}
	v, err := c.VerifyFact(ctx, "main", w.Record.ID)
	if err != nil {
		log.Fatal(err)
	}
	s := v.Scores
	fmt.Printf("%s by %s: %.2f (accuracy %.2f, relevance %.2f, specificity %.2f)\n",
		v.Status, v.By, v.Score, s.Accuracy, s.Relevance, s.Specificity)
	fmt.Println("fact status:", v.Fact.Status)
	// Output:
	// verified by heuristic: 0.80 (accuracy 0.90, relevance 0.70, specificity 0.80)
	// fact status: verified
}

// With Config.Model, a model judges. Its prompt holds the fact, its source and the
// related facts of the branch, which may contradict it.
func ExampleClient_VerifyFact_model() {
	ctx := context.Background()
	judge := llmfake.NewModel().
		On(`Fact to verify: Tokens never expire`,
			`{"accuracy": 0.05, "relevance": 0.5, "specificity": 0.3, "explanation": "contradicts the 15 minute expiry"}`).
		Default(`{"accuracy": 0.9, "relevance": 0.8, "specificity": 0.7, "explanation": "consistent"}`)
	cfg := exampleConfig()
	cfg.Model = judge
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.WriteFact(ctx, day1.Fact{ID: "ttl", Text: "Tokens expire after 15 minutes"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{ID: "never", Text: "Tokens never expire"}); err != nil {
		log.Fatal(err)
	}
	for _, id := range []string{"ttl", "never"} {
		v, err := c.VerifyFact(ctx, "", id)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s (%.2f by %s): %s; shown %v\n", id, v.Status, v.Score, v.By, v.Explanation, v.Related)
	}
	f, err := c.GetFact(ctx, "", "never")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("never is now", f.Status)
	// Output:
	// ttl: verified (0.80 by model:llmfake): consistent; shown [never]
	// never: invalidated (0.28 by model:llmfake): contradicts the 15 minute expiry; shown [ttl]
	// never is now invalidated
}

// VerifyBranch judges every unverified fact and conversation of a branch; the
// verification gate then refuses to merge what is invalidated or unverified.
func ExampleClient_VerifyBranch() {
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
		{Text: "The refresh handler must check the token expiry before issuing new tokens to clients", Category: "bug_fix"},
		{Text: "Maybe the cache", Confidence: 0.1},
	} {
		f.Branch = agent
		if _, err := c.WriteFact(ctx, f); err != nil {
			log.Fatal(err)
		}
	}
	// Records are judged concurrently; Progress calls come one at a time, in the
	// order the records finish.
	var last day1.VerifyProgress
	res, err := c.VerifyBranch(ctx, day1.VerifyBranchRequest{
		Branch:   agent,
		Progress: func(p day1.VerifyProgress) { last = p },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("progress %d/%d\n", last.Done, last.Total)
	for _, v := range res.Verdicts {
		fmt.Println(v.Ref, v.Status)
	}

	sum, err := c.VerificationSummary(ctx, agent)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("facts: %+v ready: %v\n", sum.Facts, sum.Ready())

	_, err = c.Merge(ctx, day1.MergeRequest{Source: agent, Target: "main", Gate: day1.VerificationGate{}})
	var blocked *day1.MergeBlockedError
	if errors.As(err, &blocked) {
		for _, o := range blocked.Offenses {
			fmt.Println("blocked:", o.Ref, o.Reason)
		}
	}
	// Output:
	// progress 2/2
	// fact/id-1 verified
	// fact/id-2 invalidated
	// facts: {Verified:1 Pending:0 Unverified:0 Invalidated:1} ready: false
	// blocked: fact/id-2 invalidated (score 0.25 by heuristic)
}
