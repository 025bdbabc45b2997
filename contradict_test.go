package day1

import (
	"context"
	"errors"
	"testing"

	"github.com/day1ai/day1/curation"
)

func TestWriteReportsContradictions(t *testing.T) {
	ctx := context.Background()
	c, _ := open(t, nil)
	if _, err := c.WriteFacts(ctx, []Fact{
		{ID: "ttl", Text: "The cache TTL is 24 hours"},
		{ID: "deploy", Text: "Deploys go out on Fridays"},
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
	hits, err := c.Search(ctx, SearchQuery{Text: "feature flags production", Mode: Keyword})
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
