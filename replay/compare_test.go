package replay_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/replay"
	"github.com/day1ai/day1/store"
)

// paraphrase says what fixText says in other words: a near-duplicate for the
// embedder, another text for exact matching.
const paraphrase = "Retry the refresh call with exponential backoff before you drop the token"

func texts(fs []store.Fact) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Text)
	}
	return out
}

func TestCompareTaskRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	runScenario(t, e, "run-a", fixText)
	runScenario(t, e, "run-b", paraphrase)
	// Run b hits an extra error.
	e.put(t, "task/run-b/tester", store.Observation{ID: "b-err", Type: store.ObsError, Summary: "flaky test", TaskID: "run-b", AgentID: "tester"})

	tests := []struct {
		name            string
		embedder        bool
		method          string
		shared          []string // A's side
		onlyA, onlyB    []string
		sharedSimilarTo float64 // the least similarity among shared facts
	}{
		{name: "text", method: replay.MatchText,
			shared: []string{"token_service.py line 142 drops the refresh token when the refresh call fails",
				"A regression test covers a refresh that fails once and then succeeds"},
			onlyA: []string{fixText}, onlyB: []string{paraphrase}, sharedSimilarTo: 1},
		{name: "embedding", embedder: true, method: replay.MatchEmbedding,
			shared: []string{"token_service.py line 142 drops the refresh token when the refresh call fails", fixText,
				"A regression test covers a refresh that fails once and then succeeds"},
			sharedSimilarTo: replay.DefaultSimilarity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := &replay.Engine{Store: e.st, Now: e.clock.Now}
			if tt.embedder {
				eng.Embedder = llmfake.NewEmbedder(64)
			}
			c, err := eng.CompareTaskRuns(ctx, "run-a", "run-b")
			if err != nil {
				t.Fatal(err)
			}
			if c.Method != tt.method || c.EmbedErr != nil {
				t.Errorf("method %s (%v), want %s", c.Method, c.EmbedErr, tt.method)
			}
			var shared []string
			for _, m := range c.SharedFacts {
				shared = append(shared, m.A.Text)
				if m.Similarity < tt.sharedSimilarTo {
					t.Errorf("%q matched %q at %v", m.A.Text, m.B.Text, m.Similarity)
				}
			}
			if diff := cmp.Diff(tt.shared, shared); diff != "" {
				t.Errorf("shared (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.onlyA, texts(c.OnlyA)); diff != "" {
				t.Errorf("only A (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.onlyB, texts(c.OnlyB)); diff != "" {
				t.Errorf("only B (-want +got):\n%s", diff)
			}
			if len(c.SharedDecisions) != 1 || c.SharedDecisions[0].A.Content != "I'll grep the token service for the refresh path" ||
				len(c.DecisionsOnlyA)+len(c.DecisionsOnlyB) != 0 {
				t.Errorf("decisions: shared %+v, only A %+v, only B %+v", c.SharedDecisions, c.DecisionsOnlyA, c.DecisionsOnlyB)
			}
			var keys []string
			for _, p := range c.Agents {
				if p.A == nil || p.B == nil {
					t.Errorf("agent %s is on one side only", p.Key)
				}
				keys = append(keys, p.Key)
			}
			if diff := cmp.Diff([]string{"investigator", "expert", "tester"}, keys); diff != "" {
				t.Errorf("agents (-want +got):\n%s", diff)
			}
			if len(c.A.Errors) != 1 || len(c.B.Errors) != 2 || len(c.A.Handoffs) != 1 || len(c.B.Handoffs) != 1 {
				t.Errorf("errors %d/%d, handoffs %d/%d", len(c.A.Errors), len(c.B.Errors), len(c.A.Handoffs), len(c.B.Handoffs))
			}
			if c.A.VerificationScore == 0 || c.ScoreDelta != c.B.VerificationScore-c.A.VerificationScore || c.A.Duration <= 0 {
				t.Errorf("scores %v/%v (delta %v), durations %v/%v", c.A.VerificationScore, c.B.VerificationScore, c.ScoreDelta, c.A.Duration, c.B.Duration)
			}
		})
	}
}

func TestCompareTaskRunsEmbedderFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	runScenario(t, e, "run-a", fixText)
	runScenario(t, e, "run-b", paraphrase)
	boom := errors.New("embedder down")
	eng := &replay.Engine{Store: e.st, Embedder: llmfake.NewEmbedder(64).FailNext(1, boom)}
	c, err := eng.CompareTaskRuns(context.Background(), "run-a", "run-b")
	if err != nil {
		t.Fatal(err)
	}
	if c.Method != replay.MatchText || !errors.Is(c.EmbedErr, boom) || len(c.OnlyA) != 1 {
		t.Errorf("method %s, embed error %v, only A %v", c.Method, c.EmbedErr, texts(c.OnlyA))
	}
}

func TestCompareTaskRunsErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	runScenario(t, e, "run-a", fixText)
	ctx := context.Background()
	for _, tt := range []struct{ a, b, field string }{{"", "run-a", "a"}, {"run-a", "", "b"}} {
		_, err := e.replay.CompareTaskRuns(ctx, tt.a, tt.b)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != tt.field {
			t.Errorf("CompareTaskRuns(%q, %q) = %v, want a *store.ValidationError for %s", tt.a, tt.b, err, tt.field)
		}
	}
	if _, err := e.replay.CompareTaskRuns(ctx, "run-a", "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown run: %v, want ErrNotFound", err)
	}
}
