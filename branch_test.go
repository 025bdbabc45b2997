package day1

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

const agentBranch = "task/fix-auth/agent-a"

func TestBranchDiffMergeNative(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	if _, err := c.WriteFact(ctx, Fact{ID: "base", Text: "Tokens expire after 15 minutes"}); err != nil {
		t.Fatal(err)
	}
	b, err := c.Branch(ctx, agentBranch, BranchOptions{Description: "agent A fixes auth", Metadata: map[string]string{"agent": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Parent != "main" || b.Status != BranchActive || b.Metadata["agent"] != "a" {
		t.Errorf("branch = %+v", b)
	}
	if _, err := c.Branch(ctx, agentBranch, BranchOptions{}); !errors.Is(err, ErrBranchExists) {
		t.Errorf("second Branch: err = %v, want ErrBranchExists", err)
	}
	if _, err := c.WriteFact(ctx, Fact{ID: "fix", Branch: agentBranch, Text: "The refresh handler must check the token expiry"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteObservation(ctx, Observation{ID: "obs", Branch: agentBranch, Type: ObsDecision, Summary: "Patch the refresh handler"}); err != nil {
		t.Fatal(err)
	}
	// The parent does not see the branch's writes.
	if _, err := c.GetFact(ctx, "main", "fix"); !errors.Is(err, ErrNotFound) {
		t.Errorf("main sees the branch's fact: err = %v", err)
	}
	d, err := c.Diff(ctx, agentBranch, "main")
	if err != nil {
		t.Fatal(err)
	}
	type change struct {
		Ref Ref
		Op  Op
	}
	var got []change
	for _, ch := range d.SourceChanges {
		got = append(got, change{ch.Ref, ch.Op})
	}
	want := []change{{Ref{Kind: KindFact, ID: "fix"}, OpAdded}, {Ref{Kind: KindObservation, ID: "obs"}, OpAdded}}
	if diff := cmp.Diff(want, got); diff != "" || len(d.TargetChanges) != 0 || len(d.Conflicts) != 0 {
		t.Errorf("Diff: %d target changes, %d conflicts; source changes (-want +got):\n%s", len(d.TargetChanges), len(d.Conflicts), diff)
	}
	res, err := c.Merge(ctx, MergeRequest{Source: agentBranch, Target: "main", MergedBy: "lead", Message: "auth fix", MarkMerged: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Applied || res.Record.Strategy != Native || len(res.Record.Merged) != 2 || res.Record.ID != "id-000001" {
		t.Errorf("merge result: applied %v, strategy %v, merged %d, id %q", res.Applied, res.Record.Strategy, len(res.Record.Merged), res.Record.ID)
	}
	if f, err := c.GetFact(ctx, "main", "fix"); err != nil || f.Branch != "main" {
		t.Errorf("merged fact on main: %+v, %v", f, err)
	}
	history, err := c.Merges(ctx, MergeFilter{Target: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != 1 || history[0].MergedBy != "lead" || history[0].Message != "auth fix" {
		t.Errorf("Merges = %+v", history)
	}
	if got, err := c.GetBranch(ctx, agentBranch); err != nil || got.Status != BranchMerged {
		t.Errorf("source after a native merge: status %q, err %v; want merged", got.Status, err)
	}
}

func TestMergeConflictAndStrategies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setup := func(t *testing.T, edit func(*Config)) *Client {
		c, _ := open(t, edit)
		if _, err := c.WriteFact(ctx, Fact{ID: "timeout", Text: "The gateway timeout is 30s"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Branch(ctx, "b", BranchOptions{}); err != nil {
			t.Fatal(err)
		}
		// Both sides change the same fact: a conflict.
		if _, err := c.WriteFact(ctx, Fact{ID: "timeout", Branch: "b", Text: "The gateway timeout is 60s", Confidence: 0.9}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WriteFact(ctx, Fact{ID: "timeout", Text: "The gateway timeout is 45s", Confidence: 0.5}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WriteFact(ctx, Fact{ID: "extra", Branch: "b", Text: "Retries use jitter"}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	text := func(t *testing.T, c *Client, id string) string {
		t.Helper()
		f, err := c.GetFact(ctx, "main", id)
		if errors.Is(err, ErrNotFound) {
			return ""
		}
		if err != nil {
			t.Fatal(err)
		}
		return f.Text
	}

	t.Run("native fails on conflict", func(t *testing.T) {
		t.Parallel()
		c := setup(t, nil)
		_, err := c.Merge(ctx, MergeRequest{Source: "b", Target: "main"})
		var mc *MergeConflictError
		if !errors.As(err, &mc) || !errors.Is(err, ErrConflict) {
			t.Fatalf("err = %v, want a *MergeConflictError", err)
		}
		if len(mc.Conflicts) != 1 || mc.Conflicts[0].Ref != (Ref{Kind: KindFact, ID: "timeout"}) || mc.Conflicts[0].Reason != BothChanged {
			t.Errorf("conflicts = %+v", mc.Conflicts)
		}
		if got := text(t, c, "extra"); got != "" {
			t.Errorf("a failed merge wrote %q", got)
		}
	})
	t.Run("native accept", func(t *testing.T) {
		t.Parallel()
		c := setup(t, nil)
		if _, err := c.Merge(ctx, MergeRequest{Source: "b", Target: "main", Policy: ConflictAccept}); err != nil {
			t.Fatal(err)
		}
		if got := text(t, c, "timeout"); got != "The gateway timeout is 60s" {
			t.Errorf("timeout = %q, want the source's", got)
		}
	})
	t.Run("native skip", func(t *testing.T) {
		t.Parallel()
		c := setup(t, nil)
		if _, err := c.Merge(ctx, MergeRequest{Source: "b", Target: "main", Policy: ConflictSkip}); err != nil {
			t.Fatal(err)
		}
		if got := text(t, c, "timeout"); got != "The gateway timeout is 45s" {
			t.Errorf("timeout = %q, want the target's", got)
		}
		if got := text(t, c, "extra"); got != "Retries use jitter" {
			t.Errorf("extra = %q, want it merged", got)
		}
	})
	t.Run("cherry-pick", func(t *testing.T) {
		t.Parallel()
		c := setup(t, nil)
		res, err := c.Merge(ctx, MergeRequest{Source: "b", Target: "main", Strategy: CherryPick, Pick: []Ref{{Kind: KindFact, ID: "extra"}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, c, "extra"); got != "Retries use jitter" || text(t, c, "timeout") != "The gateway timeout is 45s" {
			t.Errorf("after cherry-pick: extra %q, timeout %q", got, text(t, c, "timeout"))
		}
		if res.Record.Strategy != CherryPick {
			t.Errorf("strategy = %v", res.Record.Strategy)
		}
	})
	t.Run("auto with the configured resolver", func(t *testing.T) {
		t.Parallel()
		keepTarget := merge.ResolverFunc("keep-target", func(context.Context, store.Conflict) (merge.Decision, error) {
			return merge.Decision{Action: ActionKeepTarget, Reason: "test"}, nil
		})
		c := setup(t, func(cfg *Config) { cfg.Resolver = keepTarget })
		res, err := c.Merge(ctx, MergeRequest{Source: "b", Target: "main", Strategy: Auto})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, c, "timeout"); got != "The gateway timeout is 45s" {
			t.Errorf("timeout = %q, want the target's (resolver keep-target)", got)
		}
		if len(res.Record.Resolutions) != 1 || res.Record.Resolutions[0].By != "resolver:keep-target" {
			t.Errorf("resolutions = %+v", res.Record.Resolutions)
		}
	})
	t.Run("auto with the default resolver", func(t *testing.T) {
		t.Parallel()
		c := setup(t, nil)
		if _, err := c.Merge(ctx, MergeRequest{Source: "b", Target: "main", Strategy: Auto}); err != nil {
			t.Fatal(err)
		}
		if got := text(t, c, "timeout"); got != "The gateway timeout is 60s" {
			t.Errorf("timeout = %q, want the source's (higher confidence)", got)
		}
	})
	t.Run("configured gate blocks", func(t *testing.T) {
		t.Parallel()
		gate := merge.GateFunc("no-jitter", func(_ context.Context, p *store.MergePlan) ([]store.Offense, error) {
			var out []store.Offense
			for _, r := range p.Puts {
				if r.RecordID() == "extra" {
					out = append(out, store.Offense{Ref: RefOf(r), Reason: "not reviewed"})
				}
			}
			return out, nil
		})
		c := setup(t, func(cfg *Config) { cfg.MergeGate = gate })
		_, err := c.Merge(ctx, MergeRequest{Source: "b", Target: "main", Policy: ConflictAccept})
		var mb *MergeBlockedError
		if !errors.As(err, &mb) || !errors.Is(err, ErrMergeBlocked) || mb.Gate != "no-jitter" || len(mb.Offenses) != 1 {
			t.Fatalf("err = %v, want a *MergeBlockedError from no-jitter with one offense", err)
		}
		// The request's own gate replaces the configured one.
		allow := merge.GateFunc("allow", nil)
		if _, err := c.Merge(ctx, MergeRequest{Source: "b", Target: "main", Policy: ConflictAccept, Gate: allow}); err != nil {
			t.Fatalf("merge with the request's gate: %v", err)
		}
	})
	t.Run("dry run", func(t *testing.T) {
		t.Parallel()
		c := setup(t, nil)
		res, err := c.Merge(ctx, MergeRequest{Source: "b", Target: "main", Policy: ConflictAccept, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Applied || len(res.Plan.Puts) == 0 || text(t, c, "extra") != "" {
			t.Errorf("dry run: applied %v, %d puts, extra %q", res.Applied, len(res.Plan.Puts), text(t, c, "extra"))
		}
	})
}

func TestBranchLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	for _, name := range []string{"task/a", "task/a/agent-1", "task/b"} {
		from := ""
		if name == "task/a/agent-1" {
			from = "task/a"
		}
		if _, err := c.Branch(ctx, name, BranchOptions{From: from}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.Branches(ctx, BranchFilter{Prefix: "task/"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range list {
		names = append(names, b.Name)
	}
	if diff := cmp.Diff([]string{"task/a", "task/a/agent-1", "task/b"}, names); diff != "" {
		t.Errorf("Branches mismatch (-want +got):\n%s", diff)
	}
	if b, err := c.ArchiveBranch(ctx, "task/b"); err != nil || b.Status != BranchArchived {
		t.Fatalf("ArchiveBranch: %+v, %v", b, err)
	}
	if _, err := c.WriteFact(ctx, Fact{Branch: "task/b", Text: "x"}); !errors.Is(err, ErrBranchArchived) {
		t.Errorf("write to an archived branch: err = %v, want ErrBranchArchived", err)
	}
	if b, err := c.ReactivateBranch(ctx, "task/b"); err != nil || b.Status != BranchActive {
		t.Fatalf("ReactivateBranch: %+v, %v", b, err)
	}
	if _, err := c.WriteFact(ctx, Fact{Branch: "task/b", Text: "x"}); err != nil {
		t.Errorf("write to a reactivated branch: %v", err)
	}
	if err := c.DeleteBranch(ctx, "task/a"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("delete a branch with a child: err = %v, want ErrInvalidArgument", err)
	}
	if err := c.DeleteBranch(ctx, "task/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetBranch(ctx, "task/b"); !errors.Is(err, ErrBranchNotFound) {
		t.Errorf("GetBranch after delete: err = %v, want ErrBranchNotFound", err)
	}
	var ve *ValidationError
	if _, err := c.Branch(ctx, "bad name", BranchOptions{}); !errors.As(err, &ve) {
		t.Errorf("bad branch name: err = %v, want a *ValidationError", err)
	}
	if _, err := c.Branch(ctx, "x", BranchOptions{At: At{Snapshot: "s", Time: t0}}); !errors.As(err, &ve) || ve.Field != "BranchOptions.At" {
		t.Errorf("At with both fields: err = %v, want a *ValidationError on BranchOptions.At", err)
	}
}

// TestDiffLeavesEmbeddingsOut checks that a diff's records, on both sides and in its
// conflicts, carry no embeddings, while a read of the same records returns them.
func TestDiffLeavesEmbeddingsOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	for _, f := range []Fact{{ID: "both", Text: "Deploys run on Fridays"}, {ID: "mine", Text: "The cache holds sessions"}} {
		if _, err := c.WriteFact(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Branch(ctx, agentBranch, BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Fact{
		{ID: "both", Branch: agentBranch, Text: "Deploys run on Thursdays"},
		{ID: "mine", Branch: agentBranch, Text: "The cache holds sessions and tokens"},
		{ID: "new", Branch: agentBranch, Text: "Refresh tokens rotate hourly"},
	} {
		if _, err := c.WriteFact(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.WriteObservation(ctx, Observation{ID: "obs", Branch: agentBranch, Type: ObsDecision, Summary: "Patch the refresh handler"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteConversation(ctx, Conversation{ID: "conv", Branch: agentBranch, Title: "auth"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendMessage(ctx, Message{ID: "msg", ConversationID: "conv", Branch: agentBranch, Role: RoleUser, Content: "Why do tokens expire?"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, Fact{ID: "both", Text: "Deploys run on Mondays"}); err != nil {
		t.Fatal(err)
	}
	d, err := c.Diff(ctx, agentBranch, "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.SourceChanges) != 6 || len(d.TargetChanges) != 1 || len(d.Conflicts) != 1 {
		t.Fatalf("diff: %d source changes, %d target changes, %d conflicts; want 6, 1, 1", len(d.SourceChanges), len(d.TargetChanges), len(d.Conflicts))
	}
	changes := append(append([]Change{}, d.SourceChanges...), d.TargetChanges...)
	for _, cf := range d.Conflicts {
		changes = append(changes, cf.Source, cf.Target)
	}
	for _, ch := range changes {
		for side, r := range map[string]store.Record{"before": ch.Before, "after": ch.After} {
			if emb := store.EmbeddingOf(r); emb != nil {
				t.Errorf("%s %s: the record %s carries an embedding of %d dimensions", ch.Ref.Kind, ch.Ref.ID, side, len(emb))
			}
		}
	}
	f, err := c.GetFact(ctx, agentBranch, "mine")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Embedding) == 0 {
		t.Error("GetFact after the diff: no embedding")
	}
}
