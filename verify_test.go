package day1

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/merge"
)

func TestConfigVerificationPolicy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p     Policy
		field string
	}{
		{Policy{VerifyAt: 1.5, InvalidateBelow: 0.3}, "Config.Verification.VerifyAt"},
		{Policy{VerifyAt: 0.6, InvalidateBelow: -1}, "Config.Verification.InvalidateBelow"},
		{Policy{VerifyAt: 0.3, InvalidateBelow: 0.6}, "Config.Verification.InvalidateBelow"},
	} {
		_, err := Open(context.Background(), Config{Verification: c.p})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("Open with %+v = %v; want a ValidationError on %s", c.p, err, c.field)
		}
	}
	// The strict policy leaves pending what the default verifies.
	ctx := context.Background()
	for _, c := range []struct {
		p    Policy
		want VerificationStatus
	}{{Policy{}, Verified}, {StrictPolicy(), Pending}} {
		cl, _ := open(t, func(cfg *Config) { cfg.Verification = c.p })
		w, err := cl.WriteFact(ctx, Fact{Text: "one two three four five six seven eight nine ten", Confidence: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		v, err := cl.VerifyFact(ctx, "", w.Record.ID)
		if err != nil || v.Status != c.want {
			t.Errorf("VerifyFact under %+v = %q, %v; want %q", c.p, v.Status, err, c.want)
		}
	}
}

func TestDefaultResolverFollowsModel(t *testing.T) {
	t.Parallel()
	c, _ := open(t, nil)
	if c.cfg.Resolver.Name() != "default" {
		t.Errorf("resolver without a model = %q; want default", c.cfg.Resolver.Name())
	}
	c, _ = open(t, func(cfg *Config) { cfg.Model = llmfake.NewModel() })
	if _, ok := c.cfg.Resolver.(*curation.Resolver); !ok {
		t.Errorf("resolver with a model = %T; want the judge", c.cfg.Resolver)
	}
	own := merge.ResolverFunc("mine", nil)
	c, _ = open(t, func(cfg *Config) { cfg.Model = llmfake.NewModel(); cfg.Resolver = own })
	if c.cfg.Resolver.Name() != "mine" {
		t.Errorf("an explicit resolver was replaced by %q", c.cfg.Resolver.Name())
	}
}

// With a model configured, an auto merge's conflict is decided by the judge.
func TestAutoMergeWithModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := llmfake.NewModel().On(`Both branches changed`, `{"action": "merge", "merged_text": "Tokens expire after 30 minutes; refresh tokens after 7 days", "reason": "both hold"}`)
	c, _ := open(t, func(cfg *Config) { cfg.Model = m })
	w, err := c.WriteFact(ctx, Fact{ID: "ttl", Text: "Tokens expire after 15 minutes"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Branch(ctx, "agent", BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	src, tgt := w.Record, w.Record
	src.Branch, src.Text = "agent", "Tokens expire after 30 minutes"
	tgt.Text = "Refresh tokens expire after 7 days"
	if _, err := c.WriteFact(ctx, src); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, tgt); err != nil {
		t.Fatal(err)
	}
	res, err := c.Merge(ctx, MergeRequest{Source: "agent", Target: "main", Strategy: Auto})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Record.Resolutions
	if len(r) != 1 || r[0].By != "resolver:judge" || r[0].Action != ActionMerged {
		t.Fatalf("resolutions = %+v", r)
	}
	f, err := c.GetFact(ctx, "main", r[0].ResultRef.ID)
	if err != nil || f.Text != "Tokens expire after 30 minutes; refresh tokens after 7 days" || len(f.Embedding) == 0 {
		t.Errorf("merged fact = %+v, %v", f, err)
	}
}

func TestVerifyThroughClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	if _, err := c.VerifyFact(ctx, "", "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("VerifyFact(missing) = %v; want ErrNotFound", err)
	}
	if _, err := c.VerifyConversation(ctx, "", "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("VerifyConversation(missing) = %v; want ErrNotFound", err)
	}
	if _, err := c.VerifyBranch(ctx, VerifyBranchRequest{Branch: "nope"}); !errors.Is(err, ErrBranchNotFound) {
		t.Errorf("VerifyBranch(nope) = %v; want ErrBranchNotFound", err)
	}
	var ve *ValidationError
	if _, err := c.VerifyBranch(ctx, VerifyBranchRequest{Policy: Policy{VerifyAt: 2}}); !errors.As(err, &ve) || ve.Field != "BatchRequest.Policy.VerifyAt" {
		t.Errorf("VerifyBranch with a threshold above 1 = %v", err)
	}

	if _, err := c.Branch(ctx, "agent", BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	good, _ := c.WriteFact(ctx, Fact{Branch: "agent", Text: "The refresh handler must check the token expiry before it issues tokens", Category: "bug_fix"})
	bad, _ := c.WriteFact(ctx, Fact{Branch: "agent", Text: "maybe", Confidence: 0.1})
	res, err := c.VerifyBranch(ctx, VerifyBranchRequest{Branch: "agent"})
	if err != nil || res.Verified != 1 || res.Invalidated != 1 {
		t.Fatalf("VerifyBranch = %+v, %v", res, err)
	}
	sum, err := c.VerificationSummary(ctx, "agent")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(VerificationCounts{Verified: 1, Invalidated: 1}, sum.Facts); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	_, err = c.Merge(ctx, MergeRequest{Source: "agent", Target: "main", Gate: VerificationGate{}})
	var blocked *MergeBlockedError
	if !errors.As(err, &blocked) || len(blocked.Offenses) != 1 || blocked.Offenses[0].Ref.ID != bad.Record.ID {
		t.Fatalf("gated merge = %v; want blocked by %s", err, bad.Record.ID)
	}
	if fs, _ := c.ListFacts(ctx, ListOptions{}); len(fs) != 0 {
		t.Errorf("a blocked merge wrote %d facts to main", len(fs))
	}
	if _, err := c.Merge(ctx, MergeRequest{Source: "agent", Target: "main", Strategy: CherryPick, Pick: []Ref{RefOf(good.Record)}, Gate: VerificationGate{}}); err != nil {
		t.Errorf("cherry-pick of the verified fact = %v", err)
	}

	_ = c.Close()
	if _, err := c.VerifyFact(ctx, "", good.Record.ID); !errors.Is(err, ErrClosed) {
		t.Errorf("VerifyFact after Close = %v; want ErrClosed", err)
	}
	if _, err := c.CherryPickFacts(ctx, FactPick{Target: "agent", ConversationID: "c"}); !errors.Is(err, ErrClosed) {
		t.Errorf("CherryPickFacts after Close = %v; want ErrClosed", err)
	}
	if _, err := c.Templates(ctx, TemplateFilter{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Templates after Close = %v; want ErrClosed", err)
	}
}

func TestCherryPickThroughClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	if _, err := c.Branch(ctx, "task", BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	conv, err := c.WriteConversation(ctx, Conversation{Title: "debug"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Message{
		{Role: RoleUser, Content: "fix it"},
		{Role: RoleAssistant, Content: "Let me look at the handler."},
		{Role: RoleAssistant, Content: "Found it: the handler skips the expiry check."},
	} {
		m.ConversationID = conv.Record.ID
		if _, err := c.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var ve *ValidationError
	for _, c2 := range []struct {
		p     MessagePick
		field string
	}{
		{MessagePick{Target: "task", ConversationID: conv.Record.ID, FromSeq: 3, ToSeq: 1}, "MessagePick.ToSeq"},
		{MessagePick{Target: "task", ConversationID: conv.Record.ID, FromSeq: 7, ToSeq: 9}, "MessagePick.FromSeq"},
		{MessagePick{ConversationID: conv.Record.ID, FromSeq: 1, ToSeq: 2}, "MessagePick.Target"},
	} {
		if _, err := c.CherryPickMessages(ctx, c2.p); !errors.As(err, &ve) || ve.Field != c2.field {
			t.Errorf("CherryPickMessages(%+v) = %v; want a ValidationError on %s", c2.p, err, c2.field)
		}
	}
	if _, err := c.CherryPickConversation(ctx, ConversationPick{Target: "task", ConversationID: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("CherryPickConversation(nope) = %v; want ErrNotFound", err)
	}
	res, err := c.CherryPickMessages(ctx, MessagePick{Target: "task", ConversationID: conv.Record.ID, FromSeq: 2, ToSeq: 3})
	if err != nil || len(res.Messages) != 2 {
		t.Fatalf("CherryPickMessages = %+v, %v", res, err)
	}
	msgs, err := c.Messages(ctx, "", conv.Record.ID)
	if err != nil {
		t.Fatal(err)
	}
	var picked [][]string
	for _, m := range msgs {
		picked = append(picked, m.PickedTo)
	}
	if diff := cmp.Diff([][]string{nil, {"task"}, {"task"}}, picked); diff != "" {
		t.Errorf("PickedTo (-want +got):\n%s", diff)
	}
	facts, err := c.CherryPickFacts(ctx, FactPick{Target: "task", ConversationID: conv.Record.ID})
	if err != nil || len(facts.Facts) != 1 || len(facts.Facts[0].Fact.Embedding) == 0 {
		t.Errorf("CherryPickFacts = %+v, %v; want one embedded candidate", facts, err)
	}
}

// Two siblings that verify the facts they inherited reach the same verdicts: their
// merges into main, one after the other, meet no conflict.
func TestVerifiedSiblingsMergeCleanly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	for _, text := range []string{
		"The auth service signs tokens with RS256 keys rotated weekly",
		"Deploys to production run from the release branch after review",
		"The cache layer uses Redis with a one hour expiry for sessions",
	} {
		if _, err := c.WriteFact(ctx, Fact{Text: text, Confidence: 0.9}); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []string{"x", "y"} {
		if _, err := c.Branch(ctx, b, BranchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []string{"x", "y"} {
		res, err := c.VerifyBranch(ctx, VerifyBranchRequest{Branch: b})
		if err != nil || res.Verified != 3 {
			t.Fatalf("VerifyBranch(%s) = %d verified, %v; want 3", b, res.Verified, err)
		}
	}
	for _, b := range []string{"x", "y"} {
		if _, err := c.Merge(ctx, MergeRequest{Source: b, Target: DefaultBranch}); err != nil {
			t.Fatalf("Merge(%s into main) = %v; want no conflict", b, err)
		}
	}
	facts, err := c.ListFacts(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range facts {
		if f.Verify.Status != Verified {
			t.Errorf("fact %s on main: verdict %q; want verified", f.ID, f.Verify.Status)
		}
	}
}
