package curation_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// conflicted writes fact f on main, forks agent, and changes f differently on both.
func conflicted(t *testing.T, st store.Store, verified bool) {
	t.Helper()
	base := store.Fact{ID: "f", Text: "Tokens expire after 15 minutes", Category: "auth", Confidence: 0.8}
	put(t, st, "main", base)
	branch(t, st, agent, "main")
	src, tgt := base, base
	src.Text = "Tokens expire after 30 minutes"
	tgt.Text = "Refresh tokens expire after 7 days"
	if verified {
		src.Status, tgt.Status = store.FactVerified, store.FactVerified
		src.Verify = store.Verification{Status: store.Verified, Score: 0.9}
		tgt.Verify = store.Verification{Status: store.Verified, Score: 0.7}
	}
	put(t, st, agent, src)
	put(t, st, "main", tgt)
}

func TestResolver(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		reply     string
		verified  bool
		action    store.MergeAction
		wantTexts []string // live fact texts on main after the merge
		reason    string   // part of the recorded reason
	}{
		{"keep source", `{"action": "keep_source", "reason": "the config says 30m"}`, false, store.ActionAdopt,
			[]string{"Tokens expire after 30 minutes"}, "judge llmfake: the config says 30m"},
		{"keep target", `{"action": "keep_target", "reason": "newer"}`, false, store.ActionKeepTarget,
			[]string{"Refresh tokens expire after 7 days"}, "newer"},
		{"keep both", `{"action": "keep_both", "reason": "different tokens"}`, false, store.ActionKeepBoth,
			[]string{"Refresh tokens expire after 7 days", "Tokens expire after 30 minutes"}, "different tokens"},
		{"merge", "```json\n{\"action\": \"merge\", \"merged_text\": \"Access tokens expire after 30 minutes, refresh tokens after 7 days\", \"reason\": \"both hold\"}\n```", false, store.ActionMerged,
			[]string{"Access tokens expire after 30 minutes, refresh tokens after 7 days"}, "both hold"},
		{"malformed falls back", `I would keep the source`, false, store.ActionKeepTarget,
			[]string{"Refresh tokens expire after 7 days"}, "malformed"},
		{"unknown action falls back", `{"action": "flip a coin"}`, false, store.ActionKeepTarget,
			[]string{"Refresh tokens expire after 7 days"}, "resolver default"},
		{"merge without text falls back", `{"action": "merge"}`, false, store.ActionKeepTarget,
			[]string{"Refresh tokens expire after 7 days"}, "merged_text"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			m := llmfake.NewModel().On(`Source branch fact \[f\]: Tokens expire after 30 minutes`, c.reply)
			_, st := newEngine(t, nil)
			conflicted(t, st, c.verified)
			eng := &merge.Engine{Store: st, Resolver: &curation.Resolver{Model: m, Embedder: llmfake.NewEmbedder(16)}}
			res, err := eng.Merge(ctx, merge.Request{Source: agent, Target: "main", Strategy: store.Auto})
			if err != nil {
				t.Fatal(err)
			}
			rs := res.Record.Resolutions
			if len(rs) != 1 || rs[0].Action != c.action || rs[0].By != "resolver:judge" || !strings.Contains(rs[0].Reason, c.reason) {
				t.Errorf("resolutions = %+v; want %s by resolver:judge, reason with %q", rs, c.action, c.reason)
			}
			var texts []string
			for _, f := range listFacts(t, st, "main") {
				if f.Status.Live() {
					texts = append(texts, f.Text)
				}
			}
			if !equalSorted(texts, c.wantTexts) {
				t.Errorf("live facts on main = %q; want %q", texts, c.wantTexts)
			}
			if m.CallCount() != 1 {
				t.Errorf("model calls = %d; want 1", m.CallCount())
			}
		})
	}
}

func equalSorted(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s]--; seen[s] < 0 {
			return false
		}
	}
	return true
}

// A merged fact of two verified facts is verified, carries an embedding and names
// both sides.
func TestResolverMergedFact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := llmfake.NewModel().Default(`{"action": "merge", "merged_text": "Access tokens last 30 minutes; refresh tokens 7 days", "reason": "both"}`)
	_, st := newEngine(t, nil)
	conflicted(t, st, true)
	eng := &merge.Engine{Store: st, Resolver: &curation.Resolver{Model: m, Embedder: llmfake.NewEmbedder(16)}}
	res, err := eng.Merge(ctx, merge.Request{Source: agent, Target: "main", Strategy: store.Auto})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Record.Resolutions[0].ResultRef.ID
	f := getFact(t, st, "main", id)
	if f.Status != store.FactVerified || f.Verify.Status != store.Verified || f.Verify.Score != 0.7 ||
		f.Metadata["merged_from"] != "f,f" || len(f.Embedding) != 16 || f.ParentID != "f" || f.Confidence != 0.8 {
		t.Errorf("merged fact = %+v", f)
	}
	if old := getFact(t, st, "main", "f"); old.Status != store.FactSuperseded {
		t.Errorf("the replaced fact is %q; want superseded", old.Status)
	}
	// The curation gate lets a merged fact of two verified facts through.
	if _, err := curation.Gate.Check(curation.Gate{}, ctx, &store.MergePlan{Puts: []store.Record{f}}); err != nil {
		t.Fatal(err)
	}
}

func TestResolverErrorsAndFallback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("model error aborts", func(t *testing.T) {
		t.Parallel()
		m := llmfake.NewModel().FailNext(1, nil)
		_, st := newEngine(t, nil)
		conflicted(t, st, false)
		eng := &merge.Engine{Store: st, Resolver: &curation.Resolver{Model: m}}
		_, err := eng.Merge(ctx, merge.Request{Source: agent, Target: "main", Strategy: store.Auto})
		if !errors.Is(err, llmfake.ErrInjected) {
			t.Fatalf("Merge = %v; want the model's error", err)
		}
		if got := getFact(t, st, "main", "f").Text; got != "Refresh tokens expire after 7 days" {
			t.Errorf("a failed merge changed main: %q", got)
		}
	})
	t.Run("other kinds go to the fallback", func(t *testing.T) {
		t.Parallel()
		m := llmfake.NewModel()
		_, st := newEngine(t, nil)
		put(t, st, "main", store.Conversation{ID: "c", Title: "base"})
		branch(t, st, agent, "main")
		put(t, st, agent, store.Conversation{ID: "c", Title: "source title"})
		put(t, st, "main", store.Conversation{ID: "c", Title: "target title"})
		fb := merge.ResolverFunc("fb", func(context.Context, store.Conflict) (merge.Decision, error) {
			return merge.Decision{Action: store.ActionKeepTarget, Reason: "fallback"}, nil
		})
		eng := &merge.Engine{Store: st, Resolver: &curation.Resolver{Model: m, Fallback: fb}}
		res, err := eng.Merge(ctx, merge.Request{Source: agent, Target: "main", Strategy: store.Auto})
		if err != nil {
			t.Fatal(err)
		}
		if m.CallCount() != 0 || res.Record.Resolutions[0].Reason != "resolver fb: fallback" {
			t.Errorf("model calls %d, resolutions %+v", m.CallCount(), res.Record.Resolutions)
		}
	})
	t.Run("no model", func(t *testing.T) {
		t.Parallel()
		_, err := (&curation.Resolver{}).Resolve(ctx, store.Conflict{})
		if !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("Resolve without a model = %v", err)
		}
	})
}
