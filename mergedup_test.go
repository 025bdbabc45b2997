package day1

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/day1ai/day1/store/sqlite"
)

// topicEmbedder embeds a text as the direction of the first topic word it holds, so
// that two texts about one topic, however worded, are near-duplicates, and texts of
// different topics are not.
type topicEmbedder struct{}

var topics = []string{"refresh", "deploy", "cache"}

// Embed gives each text the direction of its topic.
func (topicEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(topics)+1)
		v[len(topics)] = 1 // no topic
		for j, w := range topics {
			if strings.Contains(strings.ToLower(t), w) {
				v[j], v[len(topics)] = 1, 0
				break
			}
		}
		out[i] = v
	}
	return out, nil
}

// Dimensions is one per topic and one for none.
func (topicEmbedder) Dimensions() int { return len(topics) + 1 }

// Name names the test embedder.
func (topicEmbedder) Name() string { return "topic-test" }

// TestMergeNearDuplicates: two branches each add, in other words, the same fact;
// merging the second into main meets a Duplicate conflict (a diff shows it too), the
// fail policy refuses it, and accepting the source supersedes the fact the first merge
// brought. Facts of the same text are deduplicated, not conflicts.
func TestMergeNearDuplicates(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"memory", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			c, _ := open(t, func(cfg *Config) {
				cfg.Embedder = topicEmbedder{}
				if kind == "sqlite" {
					cfg.Backend = sqlite.Options{Path: t.TempDir()}
				}
			})
			for _, b := range []string{"a", "b"} {
				if _, err := c.Branch(ctx, b, BranchOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.WriteFacts(ctx, []Fact{
				{ID: "a-gw", Branch: "a", Text: "Token refresh happens in the gateway"},
				{ID: "a-pg", Branch: "a", Text: "Sessions live in Postgres"},
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.WriteFacts(ctx, []Fact{
				{ID: "b-gw", Branch: "b", Text: "The gateway is where token refresh happens"},
				{ID: "b-pg", Branch: "b", Text: "sessions live in postgres"},
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Merge(ctx, MergeRequest{Source: "a", Target: DefaultBranch}); err != nil {
				t.Fatal(err)
			}
			d, err := c.Diff(ctx, "b", DefaultBranch)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Conflicts) != 1 || d.Conflicts[0].Reason != Duplicate || d.Conflicts[0].Source.Ref.ID != "b-gw" {
				t.Fatalf("diff of b and main: conflicts %+v; want b-gw as a duplicate of a-gw", d.Conflicts)
			}
			_, err = c.Merge(ctx, MergeRequest{Source: "b", Target: DefaultBranch})
			var mc *MergeConflictError
			if !errors.As(err, &mc) || len(mc.Conflicts) != 1 {
				t.Fatalf("merge of b: %v; want one conflict", err)
			}
			if _, err := c.Merge(ctx, MergeRequest{Source: "b", Target: DefaultBranch, Policy: ConflictAccept}); err != nil {
				t.Fatal(err)
			}
			old, err := c.GetFact(ctx, "", "a-gw")
			if err != nil || old.Status != FactSuperseded {
				t.Errorf("a-gw after b was accepted: %s, %v; want superseded", old.Status, err)
			}
			if _, err := c.GetFact(ctx, "", "b-pg"); !errors.Is(err, ErrNotFound) {
				t.Errorf("b-pg, of a-pg's text: %v; want it deduplicated, not written", err)
			}
		})
	}
}
