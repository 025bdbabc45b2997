package curation_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/store"
)

func TestPolicy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		p     curation.Policy
		field string // "" means valid
	}{
		{"zero is the default", curation.Policy{}, ""},
		{"default", curation.DefaultPolicy(), ""},
		{"strict", curation.StrictPolicy(), ""},
		{"equal thresholds", curation.Policy{VerifyAt: 0.5, InvalidateBelow: 0.5}, ""},
		{"verify above 1", curation.Policy{VerifyAt: 1.2, InvalidateBelow: 0.3}, "P.VerifyAt"},
		{"negative", curation.Policy{VerifyAt: 0.6, InvalidateBelow: -0.1}, "P.InvalidateBelow"},
		{"NaN", curation.Policy{VerifyAt: math.NaN(), InvalidateBelow: 0.1}, "P.VerifyAt"},
		{"inverted", curation.Policy{VerifyAt: 0.3, InvalidateBelow: 0.6}, "P.InvalidateBelow"},
	} {
		err := c.p.Validate("P")
		var ve *store.ValidationError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: Validate = %v; want nil", c.name, err)
		case c.field != "" && (!errors.As(err, &ve) || ve.Field != c.field || !errors.Is(err, store.ErrInvalidArgument)):
			t.Errorf("%s: Validate = %v; want a ValidationError on %s", c.name, err, c.field)
		}
	}
	for _, c := range []struct {
		p     curation.Policy
		score float64
		want  store.VerificationStatus
	}{
		{curation.Policy{}, 0.6, store.Verified},
		{curation.Policy{}, 0.59, store.Pending},
		{curation.Policy{}, 0.3, store.Pending},
		{curation.Policy{}, 0.29, store.Invalidated},
		{curation.StrictPolicy(), 0.65, store.Pending},
		{curation.StrictPolicy(), 0.7, store.Verified},
		{curation.StrictPolicy(), 0.35, store.Invalidated},
	} {
		if got := c.p.Status(c.score); got != c.want {
			t.Errorf("%+v.Status(%g) = %q; want %q", c.p, c.score, got, c.want)
		}
	}
}

func TestHeuristicFactScores(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f    store.Fact
		want store.Scores
	}{
		{store.Fact{Text: strings.Repeat("word ", 10), Confidence: 0.9, Category: "bug_fix"},
			store.Scores{Accuracy: 0.9, Relevance: 0.7, Specificity: 0.5}},
		{store.Fact{Text: strings.Repeat("word ", 30), Confidence: 1, Category: "Architecture"},
			store.Scores{Accuracy: 1, Relevance: 0.7, Specificity: 1}},
		{store.Fact{Text: "short", Category: "note"},
			store.Scores{Accuracy: 1, Relevance: 0.5, Specificity: 0.05}},
	} {
		if diff := cmp.Diff(c.want, curation.HeuristicFactScores(c.f)); diff != "" {
			t.Errorf("HeuristicFactScores(%q) (-want +got):\n%s", c.f.Text, diff)
		}
	}
}

func TestVerifyFactHeuristic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	long := "The refresh handler in auth/refresh.go must check the token expiry before issuing a new access token"
	put(t, st, "main",
		store.Fact{ID: "good", Text: long, Category: "bug_fix", Confidence: 0.9},
		store.Fact{ID: "mid", Text: "tokens expire sometimes", Category: "note", Confidence: 0.6},
		store.Fact{ID: "bad", Text: "maybe", Confidence: 0.1},
		store.Fact{ID: "promoted", Text: long + " always", Category: "architecture", Status: store.FactPromoted},
	)
	for _, c := range []struct {
		id         string
		wantStatus store.VerificationStatus
		wantFact   store.FactStatus
	}{
		{"good", store.Verified, store.FactVerified},
		{"mid", store.Pending, store.FactActive},
		{"bad", store.Invalidated, store.FactInvalidated},
		{"promoted", store.Verified, store.FactPromoted},
	} {
		v, err := e.VerifyFact(ctx, "", c.id)
		if err != nil {
			t.Fatalf("VerifyFact(%s): %v", c.id, err)
		}
		if v.Status != c.wantStatus || v.Fact.Status != c.wantFact || !v.Heuristic() {
			t.Errorf("VerifyFact(%s) = status %q, fact %q, by %q; want %q, %q, heuristic", c.id, v.Status, v.Fact.Status, v.By, c.wantStatus, c.wantFact)
		}
		stored := getFact(t, st, "main", c.id)
		want := store.Verification{Status: c.wantStatus, Score: v.Score, Scores: v.Scores, By: "heuristic", At: stored.Verify.At, Notes: v.Explanation}
		if diff := cmp.Diff(want, stored.Verify); diff != "" || stored.Verify.At.IsZero() {
			t.Errorf("stored verification of %s (-want +got):\n%s", c.id, diff)
		}
		if stored.Status != c.wantFact {
			t.Errorf("stored status of %s = %q; want %q", c.id, stored.Status, c.wantFact)
		}
	}
	if got := getFact(t, st, "main", "good").Verify.Scores; got != (store.Scores{Accuracy: 0.9, Relevance: 0.7, Specificity: 0.8}) {
		t.Errorf("scores of good = %+v", got)
	}
}

func TestVerifyFactModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := llmfake.NewModel().
		On(`Fact to verify: Tokens expire after 15 minutes`, "```json\n{\"accuracy\": 0.9, \"relevance\": 0.8, \"specificity\": 0.7, \"explanation\": \"matches the config\"}\n```").
		On(`Fact to verify: Tokens never expire`, `{"accuracy": 0.05, "relevance": 0.5, "specificity": 0.3, "explanation": "contradicts the config"}`)
	e, st := newEngine(t, m)
	put(t, st, "main",
		store.Observation{ID: "o1", Type: store.ObsDiscovery, Tool: "read", Summary: "config sets token ttl to 15m"},
		store.Fact{ID: "f1", Text: "Tokens expire after 15 minutes", SourceType: "observation", SourceID: "o1"},
		store.Fact{ID: "f2", Text: "Tokens never expire"},
	)
	v, err := e.VerifyFact(ctx, "main", "f1")
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != store.Verified || v.By != "model:llmfake" || v.Explanation != "matches the config" ||
		math.Abs(v.Score-0.8) > 1e-9 || v.Fact.Status != store.FactVerified {
		t.Errorf("VerifyFact(f1) = %+v", v)
	}
	if diff := cmp.Diff([]string{"f2"}, v.Related); diff != "" {
		t.Errorf("related facts (-want +got):\n%s", diff)
	}
	prompt := llmfake.Prompt(m.Calls()[0])
	for _, want := range []string{"config sets token ttl to 15m", "[f2] (active) Tokens never expire", "accuracy"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the judge's prompt lacks %q:\n%s", want, prompt)
		}
	}
	if !m.Calls()[0].JSON {
		t.Error("the judge was not asked for JSON")
	}
	v, err = e.VerifyFact(ctx, "main", "f2")
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != store.Invalidated || getFact(t, st, "main", "f2").Status != store.FactInvalidated {
		t.Errorf("VerifyFact(f2) = %q; want invalidated", v.Status)
	}
}

func TestVerifyFactErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, c := range []struct {
		name  string
		model *llmfake.Model
		ctx   context.Context
		id    string
		check func(error) bool
	}{
		{"unknown id", nil, ctx, "nope", func(err error) bool { return errors.Is(err, store.ErrNotFound) }},
		{"bad id", nil, ctx, "bad id", func(err error) bool { return errors.Is(err, store.ErrInvalidArgument) }},
		{"model error", llmfake.NewModel().FailNext(1, nil), ctx, "f", func(err error) bool { return errors.Is(err, llmfake.ErrInjected) }},
		{"not JSON", llmfake.NewModel().Default("the fact looks fine"), ctx, "f", isMalformed},
		{"score out of range", llmfake.NewModel().Default(`{"accuracy": 1.5, "relevance": 0.5, "specificity": 0.5}`), ctx, "f", isMalformed},
		{"score missing", llmfake.NewModel().Default(`{"accuracy": 0.5, "relevance": 0.5}`), ctx, "f", isMalformed},
		{"cancelled", llmfake.NewModel().Default(`{"accuracy": 1, "relevance": 1, "specificity": 1}`), cancelled, "f", func(err error) bool { return errors.Is(err, context.Canceled) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var m llm.Model
			if c.model != nil {
				m = c.model
			}
			e, st := newEngine(t, m)
			put(t, st, "main", store.Fact{ID: "f", Text: "Tokens expire after 15 minutes"})
			_, err := e.VerifyFact(c.ctx, "main", c.id)
			if err == nil || !c.check(err) {
				t.Fatalf("VerifyFact = %v; not the expected error", err)
			}
			if got := getFact(t, st, "main", "f"); got.Verify != (store.Verification{}) || got.Status != store.FactActive {
				t.Errorf("a failed verification wrote %+v", got)
			}
		})
	}
	e, _ := newEngine(t, nil)
	if _, err := e.VerifyFact(ctx, "no-such-branch", "f"); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("VerifyFact on a missing branch = %v; want ErrBranchNotFound", err)
	}
	bad := *e
	bad.Policy = curation.Policy{VerifyAt: 2}
	if _, err := bad.VerifyFact(ctx, "main", "f"); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("VerifyFact with a bad policy = %v; want ErrInvalidArgument", err)
	}
	if _, err := (&curation.Engine{}).VerifyFact(ctx, "main", "f"); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("VerifyFact without a store = %v; want ErrInvalidArgument", err)
	}
}

func isMalformed(err error) bool {
	var m *llm.MalformedOutputError
	return errors.As(err, &m)
}

// A fact whose text changes while the judge works is not stamped with a verdict
// about the old text.
func TestVerifyFactStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := llmfake.NewModel()
	e, st := newEngine(t, m)
	put(t, st, "main", store.Fact{ID: "f", Text: "Tokens expire after 15 minutes"})
	m.OnFunc(`.`, func(llm.Request) (string, error) {
		put(t, st, "main", store.Fact{ID: "f", Text: "Tokens expire after 30 minutes"})
		return `{"accuracy": 1, "relevance": 1, "specificity": 1}`, nil
	})
	if _, err := e.VerifyFact(ctx, "main", "f"); !errors.Is(err, store.ErrStale) {
		t.Fatalf("VerifyFact = %v; want ErrStale", err)
	}
	if got := getFact(t, st, "main", "f"); got.Verify.Status != store.Unverified {
		t.Errorf("the changed fact was stamped %q", got.Verify.Status)
	}
}

func TestVerifyConversation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("heuristic", func(t *testing.T) {
		t.Parallel()
		e, st := newEngine(t, nil)
		put(t, st, "main", debugConversation("c1")...)
		v, err := e.VerifyConversation(ctx, "main", "c1")
		if err != nil {
			t.Fatal(err)
		}
		want := store.Scores{Tools: 0.5, Reasoning: 0.8, Outcome: 0.8, Errors: 0.8}
		if diff := cmp.Diff(want, v.Scores); diff != "" {
			t.Errorf("scores (-want +got):\n%s", diff)
		}
		if v.Status != store.Verified || math.Abs(v.Score-0.725) > 1e-9 || !v.Heuristic() {
			t.Errorf("verdict = %+v", v.Verdict)
		}
		if diff := cmp.Diff([]int{2, 5}, v.KeyDecisions); diff != "" {
			t.Errorf("key decisions (-want +got):\n%s", diff)
		}
		if got := getConv(t, st, "main", "c1").Verify; got.Status != store.Verified || got.Scores != want {
			t.Errorf("stored verification = %+v", got)
		}
	})
	t.Run("model", func(t *testing.T) {
		t.Parallel()
		m := llmfake.NewModel().On(`\[5\] assistant: The refresh handler ignores expiry`,
			`{"tools": 0.9, "reasoning": 0.9, "outcome": 1, "errors": 0.6, "explanation": "sound", "key_decisions": [5, 99, 5, 2]}`)
		e, st := newEngine(t, m)
		put(t, st, "main", debugConversation("c1")...)
		v, err := e.VerifyConversation(ctx, "main", "c1")
		if err != nil {
			t.Fatal(err)
		}
		if v.Status != store.Verified || math.Abs(v.Score-0.85) > 1e-9 || v.By != "model:llmfake" {
			t.Errorf("verdict = %+v", v.Verdict)
		}
		if diff := cmp.Diff([]int{2, 5}, v.KeyDecisions); diff != "" {
			t.Errorf("key decisions keep known sequence numbers once (-want +got):\n%s", diff)
		}
	})
	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		e, st := newEngine(t, llmfake.NewModel().Default(`{"tools": 0.9}`))
		put(t, st, "main", debugConversation("c1")...)
		if _, err := e.VerifyConversation(ctx, "main", "c1"); !isMalformed(err) {
			t.Errorf("a reply without every score = %v; want a MalformedOutputError", err)
		}
		if _, err := e.VerifyConversation(ctx, "main", "c2"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an unknown conversation = %v; want ErrNotFound", err)
		}
		if got := getConv(t, st, "main", "c1").Verify; got != (store.Verification{}) {
			t.Errorf("a failed verification wrote %+v", got)
		}
	})
}

func TestFindDecisions(t *testing.T) {
	t.Parallel()
	var msgs []store.Message
	for _, r := range debugConversation("c")[1:] {
		msgs = append(msgs, r.(store.Message))
	}
	want := []curation.DecisionPoint{
		{Seq: 2, MessageID: "c-m2", Reasons: []string{curation.ReasonIntent}},
		{Seq: 5, MessageID: "c-m5", Reasons: []string{curation.ReasonIntent, curation.ReasonRecovery, curation.ReasonStrategy}},
	}
	if diff := cmp.Diff(want, curation.FindDecisions(msgs)); diff != "" {
		t.Errorf("FindDecisions (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		m    store.Message
		want bool
	}{
		{store.Message{Role: store.RoleToolResult, Content: "  Traceback (most recent call last)"}, true},
		{store.Message{Role: store.RoleToolResult, Content: "ok", Metadata: map[string]string{"is_error": "true"}}, true},
		{store.Message{Role: store.RoleToolResult, Content: "ok", Metadata: map[string]string{"is_error": "false"}}, false},
		{store.Message{Role: store.RoleToolResult, Content: "3 files changed"}, false},
		{store.Message{Role: store.RoleAssistant, Content: "error handling is fine"}, false},
	} {
		if got := curation.IsToolError(c.m); got != c.want {
			t.Errorf("IsToolError(%+v) = %v; want %v", c.m, got, c.want)
		}
	}
}
