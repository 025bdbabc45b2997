package curation

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/day1ai/day1/internal/evaldata"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/store"
)

// TestContradictionHeuristics measures Contradicts on the labelled pairs of
// internal/evaldata, both ways round, and holds its precision and recall a little
// under what they reached (on the held-out pairs, lower floors). Raise the floors
// when the heuristics get better. go run ./examples/evalsearch
// prints the same figures.
func TestContradictionHeuristics(t *testing.T) {
	for _, set := range []struct {
		name              string
		precision, recall float64
		atLeast           int
	}{
		{evaldata.PairsContradictions, 0.95, 0.9, 100},
		{evaldata.PairsHeldOut, 0.9, 0.8, 30},
	} {
		t.Run(set.name, func(t *testing.T) {
			pairs, err := evaldata.Pairs(set.name)
			if err != nil {
				t.Fatal(err)
			}
			if len(pairs) < set.atLeast {
				t.Fatalf("%d labelled pairs; the set holds at least %d", len(pairs), set.atLeast)
			}
			s := evaldata.ScoreContradictions(pairs, func(a, b string) bool { _, ok := Contradicts(a, b); return ok })
			for _, p := range s.FalsePos {
				c, _ := Contradicts(p.A, p.B)
				t.Logf("false contradiction (%s, %s %q / %q): %q / %q", p.Label, c.Kind, c.A, c.B, p.A, p.B)
			}
			for _, p := range s.FalseNeg {
				t.Logf("missed contradiction: %q / %q", p.A, p.B)
			}
			t.Logf("%d pairs both ways: precision %.3f, recall %.3f (tp %d, fp %d, fn %d, tn %d)", s.Pairs, s.Precision, s.Recall, s.TP, s.FP, s.FN, s.TN)
			if s.Precision < set.precision || s.Recall < set.recall {
				t.Errorf("precision %.3f, recall %.3f; want at least %.2f and %.2f", s.Precision, s.Recall, set.precision, set.recall)
			}
		})
	}
}

func TestContradictsSaysWhatDiffers(t *testing.T) {
	c, ok := Contradicts("The cache TTL is 24 hours", "The cache TTL is 12h")
	if !ok || c.Kind != ContradictValue || c.A != "24 hours" || c.B != "12h" {
		t.Errorf("value contradiction = %+v, %v", c, ok)
	}
	c, ok = Contradicts("Deploys go out on Fridays", "Deploys never go out on Fridays")
	if !ok || c.Kind != ContradictNegation || c.A != "" || c.B != "never" {
		t.Errorf("negation = %+v, %v", c, ok)
	}
	c, ok = Contradicts("Feature flags are enabled in production", "Feature flags are disabled in production")
	if !ok || c.Kind != ContradictNegation || c.A != "enabled" || c.B != "disabled" {
		t.Errorf("opposites = %+v, %v", c, ok)
	}
	for _, same := range [][2]string{{"", ""}, {"x", "x"}, {"The cache TTL is 24 hours", "The cache TTL is 24 hours"},
		{"Bug 123 is fixed in the parser", "Bug 456 is fixed in the parser"}, {"Ticket #88 is closed", "Ticket #91 is closed"}} {
		if _, ok := Contradicts(same[0], same[1]); ok {
			t.Errorf("%q contradicts %q", same[0], same[1])
		}
	}
}

// TestJudgeContradictionReplies checks the replies JudgeContradiction accepts, and
// that keeping both without naming both scopes, or an unknown verdict, is malformed.
func TestJudgeContradictionReplies(t *testing.T) {
	old := store.Fact{ID: "ttl", Text: "The cache TTL is 24 hours", Metadata: map[string]string{MetaScope: "production"}}
	nw := store.Fact{Text: "The cache TTL is 1 hour"}
	for reply, want := range map[string]string{
		`{"verdict": "keep_both", "old_scope": "production", "new_scope": "staging"}`: VerdictKeepBoth,
		`{"verdict": "none"}`: VerdictNone,
		`{"verdict": "keep_both", "old_scope": "production"}`: "malformed",
		`{"verdict": "maybe"}`:                                "malformed",
	} {
		m := llmfake.NewModel().Default(reply)
		v, err := JudgeContradiction(context.Background(), m, old, nw)
		var mal *llm.MalformedOutputError
		switch {
		case want == "malformed" && !errors.As(err, &mal):
			t.Errorf("%s: err = %v; want a *llm.MalformedOutputError", reply, err)
		case want != "malformed" && (err != nil || v.Verdict != want):
			t.Errorf("%s: %+v, %v; want %s", reply, v, err, want)
		}
		if p := llmfake.Prompt(m.Calls()[0]); !strings.Contains(p, "it holds in: production") {
			t.Errorf("the prompt does not give the old fact's scope:\n%s", p)
		}
	}
	if _, err := JudgeContradiction(context.Background(), nil, old, nw); err == nil {
		t.Error("no model: no error")
	}
}
