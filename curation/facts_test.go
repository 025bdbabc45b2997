package curation_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/store"
)

func TestCherryPickFactsModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := llmfake.NewModel().On(`durable knowledge`, "```json\n"+`{"facts": [
		{"text": "The refresh handler must check the token expiry", "category": "bug_fix", "confidence": 0.9},
		{"text": "Auth tests live in ./auth", "category": "layout"},
		{"text": "Tokens expire after 15 minutes", "confidence": 0.95}
	]}`+"\n```")
	e, st := newEngine(t, m)
	e.Embedder = llmfake.NewEmbedder(32)
	pickSetup(t, e, st)
	put(t, st, task, store.Fact{ID: "known", Text: "Tokens expire after 15 minutes"})
	res, err := e.CherryPickFacts(ctx, curation.FactPick{Source: agent, Target: task, ConversationID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []store.Outcome
	for _, w := range res.Facts {
		outcomes = append(outcomes, w.Outcome)
	}
	if diff := cmp.Diff([]store.Outcome{store.Created, store.Created, store.Deduplicated}, outcomes); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	f := res.Facts[0].Fact
	if f.Status != store.FactVerified || f.Verify.Status != store.Verified || f.Verify.By != "model:llmfake" || f.Verify.Score != 0.9 ||
		f.SourceType != "conversation" || f.SourceID != "c1" || f.AgentID != "agent-a" || len(f.Embedding) != 32 || f.Category != "bug_fix" {
		t.Errorf("extracted fact = %+v", f)
	}
	if c := res.Facts[1].Fact.Confidence; c != curation.DefaultExtractedConfidence {
		t.Errorf("a fact without confidence got %g", c)
	}
	if got := getFact(t, st, task, f.ID); got.Text != f.Text {
		t.Errorf("fact on target = %+v", got)
	}
	if res.By != "model:llmfake" {
		t.Errorf("By = %q", res.By)
	}
}

func TestCherryPickFactsHeuristicAndVerify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	pickSetup(t, e, st)
	res, err := e.CherryPickFacts(ctx, curation.FactPick{Source: agent, Target: task, ConversationID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, w := range res.Facts {
		texts = append(texts, w.Fact.Text)
		if w.Fact.Status != store.FactActive || w.Fact.Confidence != curation.CandidateConfidence || w.Fact.Verify.Status != store.Unverified {
			t.Errorf("heuristic candidate = %+v", w.Fact)
		}
	}
	if diff := cmp.Diff([]string{"Fixed: the refresh handler now checks the token expiry."}, texts); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	if res.Facts[0].Fact.Metadata[curation.MetaPickedFromMessage] != "c1-m8" {
		t.Errorf("metadata = %v", res.Facts[0].Fact.Metadata)
	}
	// With Verify the heuristic judge decides: 0.7 confidence, 0.5 relevance, 8 words.
	e2, st2 := newEngine(t, nil)
	pickSetup(t, e2, st2)
	res, err = e2.CherryPickFacts(ctx, curation.FactPick{Source: agent, Target: task, ConversationID: "c1", Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Facts[0].Fact; f.Verify.Status != store.Pending || f.Status != store.FactActive || f.Verify.By != "heuristic" {
		t.Errorf("verified candidate = %+v", f)
	}
}

func TestCherryPickFactsErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		reply string
	}{
		{"not JSON", "Here are the facts: none"},
		{"empty text", `{"facts": [{"text": " "}]}`},
		{"confidence out of range", `{"facts": [{"text": "x y z", "confidence": 7}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, st := newEngine(t, llmfake.NewModel().Default(c.reply))
			pickSetup(t, e, st)
			if _, err := e.CherryPickFacts(ctx, curation.FactPick{Source: agent, Target: task, ConversationID: "c1"}); !isMalformed(err) {
				t.Fatalf("CherryPickFacts = %v; want a MalformedOutputError", err)
			}
			if fs := listFacts(t, st, task); len(fs) != 0 {
				t.Errorf("a failed extraction wrote %d facts", len(fs))
			}
		})
	}
	e, st := newEngine(t, llmfake.NewModel().FailNext(1, nil).Default(`{"facts": []}`))
	pickSetup(t, e, st)
	if _, err := e.CherryPickFacts(ctx, curation.FactPick{Source: agent, Target: task, ConversationID: "c1"}); !errors.Is(err, llmfake.ErrInjected) {
		t.Errorf("model failure = %v", err)
	}
	if _, err := e.CherryPickFacts(ctx, curation.FactPick{Source: agent, Target: "missing", ConversationID: "c1"}); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("missing target = %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.CherryPickFacts(cancelled, curation.FactPick{Source: agent, Target: task, ConversationID: "c1"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled = %v", err)
	}
}

func TestConsolidateHeuristic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	put(t, st, "main",
		store.Fact{ID: "old", Text: "The cache is warmed at startup"},
		store.Observation{ID: "o1", SessionID: "s1", AgentID: "a", Type: store.ObsToolUse, Tool: "bash", Summary: "ran go test"},
		store.Observation{ID: "o2", SessionID: "s1", AgentID: "a", Type: store.ObsDiscovery, Summary: "The refresh handler skips the expiry check"},
		store.Observation{ID: "o3", SessionID: "s1", AgentID: "a", Type: store.ObsDecision, Summary: "Patch the handler rather than the middleware"},
		store.Observation{ID: "o4", SessionID: "s1", AgentID: "a", Type: store.ObsInsight, Summary: "the cache is warmed at startup"},
		store.Observation{ID: "o5", SessionID: "s2", Type: store.ObsDiscovery, Summary: "another session"},
	)
	res, err := e.Consolidate(ctx, curation.ConsolidateRequest{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Text     string
		Category string
		Source   string
		Outcome  store.Outcome
	}
	var got []row
	for _, w := range res.Facts {
		got = append(got, row{w.Fact.Text, w.Fact.Category, w.Fact.SourceID, w.Outcome})
		if w.Outcome == store.Created && (w.Fact.Confidence != 0.7 || w.Fact.Status != store.FactActive || w.Fact.SessionID != "s1") {
			t.Errorf("candidate = %+v", w.Fact)
		}
	}
	want := []row{
		{"The refresh handler skips the expiry check", "discovery", "o2", store.Created},
		{"Patch the handler rather than the middleware", "decision", "o3", store.Created},
		{"The cache is warmed at startup", "", "", store.Deduplicated},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("consolidated (-want +got):\n%s", diff)
	}
	if res.Observations != 4 || res.By != "heuristic" {
		t.Errorf("result = %+v", res)
	}
	// A second run skips what the first wrote, even once it is verified.
	if _, err := e.VerifyFact(ctx, "main", res.Facts[0].Fact.ID); err != nil {
		t.Fatal(err)
	}
	again, err := e.Consolidate(ctx, curation.ConsolidateRequest{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range again.Facts {
		if w.Outcome != store.Deduplicated {
			t.Errorf("second run wrote %+v", w)
		}
	}
	if f := getFact(t, st, "main", res.Facts[0].Fact.ID); f.Verify.Status == store.Unverified {
		t.Error("the second run reset a verified fact")
	}
}

func TestConsolidateModelSupersedes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := llmfake.NewModel().On(`\[old\] Tokens expire after 15 minutes`, `{"facts": [
		{"text": "Tokens expire after 30 minutes since the config change", "category": "config", "confidence": 0.9, "sources": ["o1", "zz"], "supersedes": "old"},
		{"text": "The config lives in auth/config.yaml", "sources": ["o1"], "supersedes": "unknown"}
	]}`)
	e, st := newEngine(t, m)
	put(t, st, "main",
		store.Fact{ID: "old", Text: "Tokens expire after 15 minutes"},
		store.Observation{ID: "o1", TaskID: "t1", Type: store.ObsDiscovery, Summary: "auth/config.yaml sets tokens expire after 30 minutes"},
	)
	res, err := e.Consolidate(ctx, curation.ConsolidateRequest{TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"old"}, res.Superseded); diff != "" {
		t.Errorf("superseded (-want +got):\n%s", diff)
	}
	if len(res.Facts) != 2 {
		t.Fatalf("facts = %+v", res.Facts)
	}
	nf := res.Facts[0].Fact
	if nf.ParentID != "old" || nf.SourceID != "o1" || nf.Confidence != 0.9 || nf.Status != store.FactActive || nf.TaskID != "t1" {
		t.Errorf("new fact = %+v", nf)
	}
	if res.Facts[1].Fact.ParentID != "" || res.Facts[1].Fact.Confidence != curation.CandidateConfidence {
		t.Errorf("second fact = %+v", res.Facts[1].Fact)
	}
	if old := getFact(t, st, "main", "old"); old.Status != store.FactSuperseded {
		t.Errorf("old fact is %q; want superseded", old.Status)
	}
}

func TestConsolidateErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, llmfake.NewModel().Default(`{"facts": "none"}`))
	put(t, st, "main", store.Observation{ID: "o1", SessionID: "s1", Type: store.ObsDiscovery, Summary: "x y z"})
	var ve *store.ValidationError
	if _, err := e.Consolidate(ctx, curation.ConsolidateRequest{}); !errors.As(err, &ve) || ve.Field != "ConsolidateRequest.SessionID" {
		t.Errorf("no selector = %v", err)
	}
	if _, err := e.Consolidate(ctx, curation.ConsolidateRequest{SessionID: "bad id"}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("bad session id = %v", err)
	}
	if _, err := e.Consolidate(ctx, curation.ConsolidateRequest{SessionID: "s1"}); !isMalformed(err) {
		t.Errorf("malformed reply = %v", err)
	}
	if _, err := e.Consolidate(ctx, curation.ConsolidateRequest{Branch: "missing", SessionID: "s1"}); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("missing branch = %v", err)
	}
	res, err := e.Consolidate(ctx, curation.ConsolidateRequest{SessionID: "nobody"})
	if err != nil || len(res.Facts) != 0 || res.Observations != 0 {
		t.Errorf("no observations = %+v, %v", res, err)
	}
	if fs := listFacts(t, st, "main"); len(fs) != 0 {
		t.Errorf("failed consolidations wrote %d facts", len(fs))
	}
}
