package curation_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/store"
)

// transcript is a conversation that is not stored: it changes the cache TTL memory
// holds, proves the Redis fact wrong and states something new.
var transcript = []store.Message{
	{Role: store.RoleUser, Content: "The sessions keep expiring early. What is the cache TTL now?"},
	{Role: store.RoleAssistant, Content: "I checked the config: the cache TTL is 12 hours since the last deploy, not 24."},
	{Role: store.RoleUser, Content: "And are sessions still in Redis?"},
	{Role: store.RoleAssistant, Content: "No. We switched to Postgres for sessions last week. I found the cause: the refresh job runs every 6 hours."},
}

func memoryOfFacts(t *testing.T, st store.Store) {
	t.Helper()
	put(t, st, "main",
		store.Fact{ID: "ttl", Text: "The cache TTL is 24 hours", Category: "config", Confidence: 0.9},
		store.Fact{ID: "redis", Text: "Sessions are stored in Redis", Category: "architecture", Confidence: 0.9},
		store.Fact{ID: "other", Text: "The deploy pipeline runs on GitHub Actions"})
}

// TestExtractFactsModel checks the model's three actions land in one batch: the TTL
// fact gets a new version with audit keys and the old text in history, the Redis fact
// is invalidated with the reason, and a new fact names its turns.
func TestExtractFactsModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := llmfake.NewModel().On(`long-term memory`, `{"facts": [
		{"action": "update", "id": "ttl", "text": "The cache TTL is 12 hours", "turns": [2]},
		{"action": "invalidate", "id": "redis", "reason": "sessions moved to Postgres", "turns": [4]},
		{"action": "add", "text": "Sessions are stored in Postgres", "category": "architecture", "confidence": 0.9, "turns": [4, 4, 99]},
		{"action": "add", "text": "The refresh job runs every 6 hours", "turns": [4]}
	]}`)
	e, st := newEngine(t, m)
	memoryOfFacts(t, st)
	if _, err := st.CreateSnapshot(ctx, "main", "before", ""); err != nil {
		t.Fatal(err)
	}
	res, err := e.ExtractFacts(ctx, curation.Extraction{Messages: transcript, SessionID: "s1", AgentID: "agent-a", By: "hook"})
	if err != nil {
		t.Fatal(err)
	}
	if res.By != "model:llmfake" || len(res.Added) != 2 || len(res.Updated) != 1 || len(res.Invalidated) != 1 {
		t.Fatalf("result: by %q, %d added, %d updated, %d invalidated; want model:llmfake, 2, 1, 1", res.By, len(res.Added), len(res.Updated), len(res.Invalidated))
	}
	prompt := llmfake.Prompt(m.Calls()[0])
	for _, want := range []string{"[ttl] The cache TTL is 24 hours", "[redis] Sessions are stored in Redis", "2. assistant: I checked the config"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	ttl := getFact(t, st, "main", "ttl")
	if ttl.Text != "The cache TTL is 12 hours" || ttl.Status != store.FactActive ||
		ttl.Metadata[store.MetaCorrection] != "update" || ttl.Metadata[store.MetaCorrectedBy] != "hook (model:llmfake)" ||
		ttl.Metadata[curation.MetaExtractedFromTurns] != "2" {
		t.Errorf("updated fact = %+v", ttl)
	}
	old, err := st.Get(ctx, store.View{Branch: "main", At: store.Point{Snapshot: "before"}}, store.Ref{Kind: store.KindFact, ID: "ttl"})
	if err != nil || old.(store.Fact).Text != "The cache TTL is 24 hours" {
		t.Errorf("the TTL fact before the extraction = %v, %v; want its old text kept in history", old, err)
	}
	redis := getFact(t, st, "main", "redis")
	if redis.Status != store.FactInvalidated || redis.Metadata[store.MetaCorrectionReason] != "sessions moved to Postgres" ||
		redis.Metadata[store.MetaCorrection] != "invalidate" {
		t.Errorf("invalidated fact = %+v", redis)
	}
	added := res.Added[0].Fact
	if added.Text != "Sessions are stored in Postgres" || added.Status != store.FactVerified || added.Confidence != 0.9 ||
		added.SessionID != "s1" || added.AgentID != "agent-a" || added.SourceType != "messages" ||
		added.Metadata[curation.MetaExtractedFromTurns] != "4" || res.Added[0].Outcome != store.Created {
		t.Errorf("added fact = %+v (%s)", added, res.Added[0].Outcome)
	}
	if c := res.Added[1].Fact.Confidence; c != curation.DefaultExtractedConfidence {
		t.Errorf("an added fact without confidence got %g, want %g", c, curation.DefaultExtractedConfidence)
	}
	if got := getFact(t, st, "main", "other"); got.Status != store.FactActive || got.Metadata[store.MetaCorrection] != "" {
		t.Errorf("a fact the model left alone changed: %+v", got)
	}
}

// TestExtractFactsBadReplies checks that a reply the engine cannot trust writes
// nothing and says why, as a *llm.MalformedOutputError.
func TestExtractFactsBadReplies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, reply, want string }{
		{"not JSON", "the cache TTL changed", ""},
		{"unknown action", `{"facts": [{"action": "merge", "text": "x"}]}`, "action"},
		{"unknown id", `{"facts": [{"action": "update", "id": "nope", "text": "The cache TTL is 12 hours"}]}`, "not among the facts shown"},
		{"update without text", `{"facts": [{"action": "update", "id": "ttl"}]}`, "no text"},
		{"changed twice", `{"facts": [{"action": "update", "id": "ttl", "text": "a b"}, {"action": "invalidate", "id": "ttl"}]}`, "second time"},
		{"confidence", `{"facts": [{"action": "add", "text": "The cache TTL is 12 hours", "confidence": 7}]}`, "confidence"},
		{"one good, one bad", `{"facts": [{"action": "add", "text": "The cache TTL is 12 hours"}, {"action": "add", "text": " "}]}`, "no text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, st := newEngine(t, llmfake.NewModel().Default(tc.reply))
			memoryOfFacts(t, st)
			before := listFacts(t, st, "main")
			_, err := e.ExtractFacts(context.Background(), curation.Extraction{Messages: transcript})
			var mal *llm.MalformedOutputError
			if !errors.As(err, &mal) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want a *llm.MalformedOutputError saying %q", err, tc.want)
			}
			if d := cmp.Diff(before, listFacts(t, st, "main")); d != "" {
				t.Errorf("a refused reply changed memory (-before +after):\n%s", d)
			}
		})
	}
}

// TestExtractFactsHeuristics checks the extraction without a model: the findings and
// decisions of assistant turns, as candidates naming their message, deduplicated
// against memory, on a stored conversation.
func TestExtractFactsHeuristics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	put(t, st, "main", store.Fact{ID: "known", Text: "We switched to Postgres for sessions last week."},
		store.Conversation{ID: "c1", Title: "TTL", SessionID: "s9", AgentID: "agent-b"})
	for i, m := range transcript {
		m.ConversationID, m.Seq, m.ID = "c1", i+1, "c1-m"+string(rune('1'+i))
		put(t, st, "main", m)
	}
	res, err := e.ExtractFacts(ctx, curation.Extraction{ConversationID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range res.Added {
		got = append(got, string(w.Outcome)+": "+w.Fact.Text)
		if w.Outcome == store.Created && (w.Fact.Confidence != curation.CandidateConfidence || w.Fact.SessionID != "s9" ||
			w.Fact.SourceID != "c1" || w.Fact.AgentID != "agent-b" || w.Fact.Metadata[curation.MetaPickedFromMessage] != "c1-m4") {
			t.Errorf("candidate = %+v", w.Fact)
		}
	}
	want := []string{
		"deduplicated: We switched to Postgres for sessions last week.",
		"created: I found the cause: the refresh job runs every 6 hours.",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("heuristic facts (-want +got):\n%s", d)
	}
	if res.By != "heuristic" || len(res.Updated)+len(res.Invalidated) != 0 {
		t.Errorf("result = %+v", res)
	}
}

// TestExtractFactsBadInput checks every refused request names its field and writes
// nothing.
func TestExtractFactsBadInput(t *testing.T) {
	t.Parallel()
	e, st := newEngine(t, nil)
	memoryOfFacts(t, st)
	for _, tc := range []struct {
		x     curation.Extraction
		field string
	}{
		{curation.Extraction{}, "Extraction"},
		{curation.Extraction{ConversationID: "c1", Messages: transcript}, "Extraction"},
		{curation.Extraction{Messages: []store.Message{{Role: "robot", Content: "x"}}}, "Extraction.Messages[0].Role"},
		{curation.Extraction{Messages: transcript, Related: -1}, "Extraction.Related"},
		{curation.Extraction{Messages: transcript, Branch: "a b"}, "Extraction.Branch"},
		{curation.Extraction{ConversationID: "c1", SessionID: "s1"}, "Extraction.SessionID"},
	} {
		_, err := e.ExtractFacts(context.Background(), tc.x)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%+v: err = %v; want a *store.ValidationError on %s", tc.x, err, tc.field)
		}
	}
	if _, err := e.ExtractFacts(context.Background(), curation.Extraction{ConversationID: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown conversation: err = %v; want store.ErrNotFound", err)
	}
	if _, err := e.ExtractFacts(context.Background(), curation.Extraction{Branch: "gone", Messages: transcript}); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("an unknown branch: err = %v; want store.ErrBranchNotFound", err)
	}
}

// TestExtractFactsHeuristicWithModel checks that Heuristic keeps the model out: the
// cheap path, and the fallback when the model fails.
func TestExtractFactsHeuristicWithModel(t *testing.T) {
	t.Parallel()
	m := llmfake.NewModel().Default(`{"facts": []}`)
	e, _ := newEngine(t, m)
	res, err := e.ExtractFacts(context.Background(), curation.Extraction{Messages: transcript, Heuristic: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.CallCount() != 0 || res.By != "heuristic" || len(res.Added) != 2 {
		t.Errorf("%d model calls, by %q, %d facts added; want 0, heuristic, 2", m.CallCount(), res.By, len(res.Added))
	}
	if res.Added[0].Fact.Category != "decision" || res.Added[1].Fact.Category != "" {
		t.Errorf("categories %q, %q; want decision for the switch, none for the finding", res.Added[0].Fact.Category, res.Added[1].Fact.Category)
	}
}
