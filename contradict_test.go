package day1

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/llm/llmfake"
)

func TestWriteReportsContradictions(t *testing.T) {
	ctx := context.Background()
	c, _ := open(t, nil)
	if _, err := c.WriteFacts(ctx, []Fact{
		{ID: "ttl", Text: "The cache TTL is 24 hours"},
		{ID: "deploy", Text: "Deploys go out on Fridays"},
		{ID: "flags", Text: "Feature flags are enabled in production"},
	}); err != nil {
		t.Fatal(err)
	}
	w, err := c.WriteFact(ctx, Fact{ID: "ttl-b", Text: "The cache TTL is 12 hours"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Contradicted{{FactID: "ttl", Kind: curation.ContradictValue, Theirs: "24 hours", Mine: "12 hours"}}
	if len(w.Contradicts) != 1 || w.Contradicts[0] != want[0] {
		t.Errorf("Contradicts = %+v; want %+v", w.Contradicts, want)
	}
	// Reported, not acted on: both stay live.
	for _, id := range []string{"ttl", "ttl-b"} {
		if f, err := c.GetFact(ctx, "", id); err != nil || !f.Status.Live() {
			t.Errorf("%s after a reported contradiction: %+v, %v", id, f.Status, err)
		}
	}
	// A paraphrase of one fact contradicts the other; an elaboration and an update
	// of the same fact contradict nothing.
	if w, err := c.WriteFact(ctx, Fact{Text: "The cache TTL is one day"}); err != nil || len(w.Contradicts) != 1 || w.Contradicts[0].FactID != "ttl-b" {
		t.Errorf("one day: Contradicts %+v, %v; want ttl-b alone (ttl says the same)", w.Contradicts, err)
	}
	for _, f := range []Fact{
		{Text: "Deploys go out on Fridays after the review"},
		{ID: "deploy", Text: "Deploys go out on Fridays at noon"},
	} {
		if w, err := c.WriteFact(ctx, f); err != nil || len(w.Contradicts) != 0 {
			t.Errorf("%q: Contradicts %+v, %v; want none", f.Text, w.Contradicts, err)
		}
	}
}

func TestWriteSupersedesContradictions(t *testing.T) {
	ctx := context.Background()
	c, _ := open(t, func(cfg *Config) { cfg.Contradictions = ContradictionsSupersede })
	if _, err := c.WriteFact(ctx, Fact{ID: "flags", Text: "Feature flags are enabled in production"}); err != nil {
		t.Fatal(err)
	}
	ws, err := c.WriteFacts(ctx, []Fact{{ID: "flags-b", Text: "Feature flags are disabled in production"}, {ID: "other", Text: "The queue holds jobs"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || len(ws[0].Contradicts) != 1 || !ws[0].Contradicts[0].Superseded || ws[0].Record.ParentID != "flags" || len(ws[1].Contradicts) != 0 {
		t.Fatalf("written = %+v", ws)
	}
	if f, err := c.GetFact(ctx, "", "flags"); err != nil || f.Status != FactSuperseded {
		t.Errorf("the contradicted fact: %v, %v; want superseded", f.Status, err)
	}
	hits, err := c.Search(ctx, SearchQuery{Text: "feature flags production", Mode: Keyword, WindowWeight: -1})
	if err != nil || len(hits) != 1 || hits[0].Record.RecordID() != "flags-b" {
		t.Errorf("search after superseding = %v, %v; want flags-b alone", hitIDs(hits), err)
	}
}

func TestContradictionsOffAndChecked(t *testing.T) {
	ctx := context.Background()
	c, _ := open(t, func(cfg *Config) { cfg.Contradictions = ContradictionsOff })
	if _, err := c.WriteFact(ctx, Fact{Text: "The cache TTL is 24 hours"}); err != nil {
		t.Fatal(err)
	}
	if w, err := c.WriteFact(ctx, Fact{Text: "The cache TTL is 12 hours"}); err != nil || w.Contradicts != nil {
		t.Errorf("with checks off: %+v, %v", w.Contradicts, err)
	}
	_, err := Open(ctx, Config{Contradictions: "sometimes"})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "Config.Contradictions" {
		t.Errorf("bad policy: %v", err)
	}
	// A bad fact is named as without the check.
	c2, _ := open(t, nil)
	if _, err := c2.WriteFact(ctx, Fact{Text: "The cache TTL is 24 hours", Confidence: 2}); !errors.As(err, &ve) || ve.Field != "Fact.Confidence" {
		t.Errorf("bad fact: %v; want a *ValidationError for Fact.Confidence", err)
	}
}

// TestMergeContradictions replays the scenario: agents on three branches
// wrote the cache TTL as 24 h, 12 h and 48 h under different ids. The first merge into
// main is clean; the second meets a contradiction, which the fail policy refuses, the
// diff reports, and an Auto merge settles, leaving one live TTL. With contradiction
// checks off, both merge silently, as before.
func TestMergeContradictions(t *testing.T) {
	ctx := context.Background()
	for _, off := range []bool{false, true} {
		c, _ := open(t, func(cfg *Config) {
			if off {
				cfg.Contradictions = ContradictionsOff
			}
		})
		texts := map[string]string{"a": "The cache TTL is 24 hours", "b": "The cache TTL is 12 hours", "c": "The cache TTL is 48 hours"}
		for _, name := range []string{"a", "b", "c"} {
			if _, err := c.Branch(ctx, name, BranchOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.WriteFact(ctx, Fact{Branch: name, ID: "ttl-" + name, Text: texts[name], Confidence: 0.8}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Merge(ctx, MergeRequest{Source: "a", Target: "main"}); err != nil {
			t.Fatal(err)
		}
		d, err := c.Diff(ctx, "b", "main")
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Merge(ctx, MergeRequest{Source: "b", Target: "main"})
		if off {
			if err != nil || len(d.Conflicts) != 0 {
				t.Errorf("checks off: merge err %v, diff conflicts %+v; want a clean merge", err, d.Conflicts)
			}
			continue
		}
		if len(d.Conflicts) != 1 || d.Conflicts[0].Reason != Contradictory || d.Conflicts[0].Ref.ID != "ttl-a" {
			t.Errorf("diff conflicts = %+v; want ttl-b contradicting ttl-a", d.Conflicts)
		}
		var ce *MergeConflictError
		if !errors.As(err, &ce) || len(ce.Conflicts) != 1 {
			t.Fatalf("the second merge: err = %v; want a *MergeConflictError with the contradiction", err)
		}
		if _, err := c.Merge(ctx, MergeRequest{Source: "c", Target: "main", Strategy: Auto}); err != nil {
			t.Fatal(err)
		}
		live, err := c.ListFacts(ctx, ListOptions{Filter: Filter{Statuses: []FactStatus{FactActive, FactVerified, FactPromoted}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(live) != 1 {
			t.Errorf("live facts on main after the auto merge: %+v; want one TTL", live)
		}
	}
}

// TestContradictionsJudged checks ContradictionsJudge: the model's verdict decides
// what each contradiction the heuristics find does to memory, and a model that fails
// flags the pair without losing the write.
func TestContradictionsJudged(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, Config{Contradictions: ContradictionsJudge}); err == nil || !strings.Contains(err.Error(), "Config.Model") {
		t.Errorf("judge without a model: err = %v; want a *ValidationError asking for Config.Model", err)
	}
	m := llmfake.NewModel().
		On(`New fact: The cache TTL is 12 hours`, `{"verdict": "supersede", "reason": "the config changed"}`).
		On(`New fact: The cache TTL is 1 hour in staging`, `{"verdict": "keep_both", "old_scope": "production", "new_scope": "staging", "reason": "two environments"}`).
		On(`New fact: Deploys never go out on Fridays`, `{"verdict": "none", "reason": "a policy, not a fact about deploys"}`).
		On(`New fact: Feature flags are disabled`, `not json`)
	c, _ := open(t, func(cfg *Config) { cfg.Model, cfg.Contradictions = m, ContradictionsJudge })
	if _, err := c.WriteFacts(ctx, []Fact{
		{ID: "ttl", Text: "The cache TTL is 24 hours"},
		{ID: "deploy", Text: "Deploys go out on Fridays"},
		{ID: "flags", Text: "Feature flags are enabled in production"},
	}); err != nil {
		t.Fatal(err)
	}
	status := func(id string) FactStatus {
		f, err := c.GetFact(ctx, "", id)
		if err != nil {
			t.Fatal(err)
		}
		return f.Status
	}
	w, err := c.WriteFact(ctx, Fact{ID: "ttl-2", Text: "The cache TTL is 12 hours"})
	if err != nil || len(w.Contradicts) != 1 || w.Contradicts[0].Verdict != curation.VerdictSupersede || !w.Contradicts[0].Superseded ||
		w.Record.ParentID != "ttl" || status("ttl") != FactSuperseded {
		t.Errorf("supersede: %+v, %v; ttl is %s", w, err, status("ttl"))
	}
	w, err = c.WriteFact(ctx, Fact{ID: "ttl-staging", Text: "The cache TTL is 1 hour in staging"})
	if err != nil || len(w.Contradicts) != 1 || w.Contradicts[0].Verdict != curation.VerdictKeepBoth ||
		w.Record.Metadata[curation.MetaScope] != "staging" || w.Contradicts[0].TheirScope != "production" {
		t.Fatalf("keep both: %+v, %v", w, err)
	}
	if f, _ := c.GetFact(ctx, "", "ttl-2"); !f.Status.Live() || f.Metadata[curation.MetaScope] != "production" {
		t.Errorf("the kept fact = %+v; want it live, scoped to production", f)
	}
	w, err = c.WriteFact(ctx, Fact{Text: "Deploys never go out on Fridays"})
	if err != nil || len(w.Contradicts) != 0 {
		t.Errorf("no contradiction by the model: %+v, %v; want nothing reported", w.Contradicts, err)
	}
	w, err = c.WriteFact(ctx, Fact{Text: "Feature flags are disabled in production"})
	if err != nil || len(w.Contradicts) != 1 || w.Contradicts[0].Verdict != curation.VerdictFlag ||
		!strings.Contains(w.Contradicts[0].Reason, "could not judge") || status("flags") != FactActive {
		t.Errorf("a failing model: %+v, %v; want the pair flagged and both live", w.Contradicts, err)
	}
}
