package day1_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// Packaging verified knowledge as a bundle, sharing it by token and importing it into
// another memory. The second import changes nothing.
func ExampleClient_CreateBundle() {
	ctx := context.Background()
	team, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer team.Close()

	for _, f := range []day1.Fact{
		{Text: "The gateway retries idempotent calls three times with exponential backoff", Category: "architecture", Confidence: 0.95},
		{Text: "maybe the cache", Confidence: 0.3},
	} {
		if _, err := team.WriteFact(ctx, f); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := team.VerifyBranch(ctx, day1.VerifyBranchRequest{}); err != nil {
		log.Fatal(err)
	}
	b, err := team.CreateBundle(ctx, day1.CreateBundleRequest{
		Name: "gateway retries", Branch: "main", Visibility: day1.BundleTeam, Tags: []string{"networking"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("bundle %q: %d verified fact(s), %s, token of %d characters\n", b.Name, b.Counts.Facts, b.Visibility, len(b.ShareToken))

	// Whoever holds the token finds the bundle and exports its file.
	shared, err := team.SharedBundle(ctx, b.ShareToken)
	if err != nil {
		log.Fatal(err)
	}
	var file bytes.Buffer
	if _, err := team.ExportBundle(ctx, shared.ID, &file, day1.ExportBundleOptions{Compress: true}); err != nil {
		log.Fatal(err)
	}

	other, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer other.Close()
	for range 2 {
		res, err := other.ImportBundle(ctx, day1.ImportBundleRequest{From: bytes.NewReader(file.Bytes()), Branch: "imported", CreateBranch: true})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("import: %d created, %d deduplicated, seal checked: %v\n", res.Created, res.Deduplicated, res.Hash == b.Hash)
	}
	facts, err := other.ListFacts(ctx, day1.ListOptions{Branch: "imported"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(facts[0].Text, "| from bundle", facts[0].Metadata["bundle_id"] == b.ID)

	// Making it private revokes the token at once.
	if _, err := team.SetBundleVisibility(ctx, b.ID, day1.BundlePrivate); err != nil {
		log.Fatal(err)
	}
	_, err = team.SharedBundle(ctx, b.ShareToken)
	fmt.Println("after revoking:", err != nil)
	// Output:
	// bundle "gateway retries": 1 verified fact(s), team, token of 64 characters
	// import: 1 created, 0 deduplicated, seal checked: true
	// import: 0 created, 1 deduplicated, seal checked: true
	// The gateway retries idempotent calls three times with exponential backoff | from bundle true
	// after revoking: true
}

// Judging a bundle's content, publishing it, and finding it again by its tags.
func ExampleClient_VerifyBundle() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.WriteFact(ctx, day1.Fact{
		Text:     "The auth service signs access tokens with RS256 keys rotated every ninety days",
		Category: "architecture", Verify: day1.Verification{Status: day1.Verified},
	}); err != nil {
		log.Fatal(err)
	}
	b, err := c.CreateBundle(ctx, day1.CreateBundleRequest{Name: "auth keys", Branch: "main", Tags: []string{"auth"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Status, b.Counts.Facts, "fact")
	b, err = c.VerifyBundle(ctx, b.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s by %s, score %.2f\n", b.Status, b.VerifiedBy, b.Score)
	if _, err := c.PublishBundle(ctx, b.ID); err != nil {
		log.Fatal(err)
	}
	found, err := c.Bundles(ctx, day1.BundleFilter{Tags: []string{"auth"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(found), found[0].Name, found[0].Status)
	// Output:
	// draft 1 fact
	// verified by heuristic, score 0.78
	// 1 auth keys published
}
