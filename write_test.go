package day1

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/llm/llmfake"
)

func TestWriteFactGeneratedIDAndDefaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	w, err := c.WriteFact(ctx, Fact{Text: "The auth service signs JWTs with RS256", Category: "architecture"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Outcome != Created || w.EmbedErr != nil {
		t.Errorf("Outcome, EmbedErr = %v, %v; want created, nil", w.Outcome, w.EmbedErr)
	}
	f := w.Record
	if f.ID != "id-000001" || f.Branch != "main" || f.Status != FactActive || f.Confidence != 1 || len(f.Embedding) != 384 {
		t.Errorf("written fact = id %q branch %q status %q confidence %v dims %d; want id-000001 main active 1 384",
			f.ID, f.Branch, f.Status, f.Confidence, len(f.Embedding))
	}
	got, err := c.GetFact(ctx, "main", f.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, got); diff != "" {
		t.Errorf("GetFact mismatch (-written +read):\n%s", diff)
	}
}

func TestWriteIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	tests := []struct {
		name         string
		first, again Fact
		want         Outcome
		wantReplaced string
	}{
		{"same id, same content", Fact{ID: "a", Text: "Redis is the session store"}, Fact{ID: "a", Text: "Redis is the session store"}, Deduplicated, ""},
		{"generated ids, same text", Fact{Text: "Postgres holds the orders"}, Fact{Text: "Postgres holds the orders"}, Deduplicated, "id-000001"},
		{"same id, new content", Fact{ID: "b", Text: "Deploys happen on Tuesdays"}, Fact{ID: "b", Text: "Deploys happen on Thursdays"}, Updated, ""},
	}
	for _, tt := range tests {
		first, err := c.WriteFact(ctx, tt.first)
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.WriteFact(ctx, tt.again)
		if err != nil {
			t.Fatal(err)
		}
		if first.Outcome != Created || again.Outcome != tt.want {
			t.Errorf("%s: outcomes %v then %v, want created then %v", tt.name, first.Outcome, again.Outcome, tt.want)
		}
		if again.Replaced != tt.wantReplaced {
			t.Errorf("%s: Replaced = %q, want %q", tt.name, again.Replaced, tt.wantReplaced)
		}
		if again.Record.ID != first.Record.ID {
			t.Errorf("%s: repeated write's record id = %q, want %q", tt.name, again.Record.ID, first.Record.ID)
		}
	}
	facts, err := c.ListFacts(ctx, ListOptions{Order: OrderID})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Redis is the session store", "Deploys happen on Thursdays", "Postgres holds the orders"}
	if diff := cmp.Diff(want, factTexts(facts)); diff != "" {
		t.Errorf("facts mismatch (-want +got):\n%s", diff)
	}
}

func TestNearDuplicateSupersedes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	old, err := c.WriteFact(ctx, Fact{Text: "Deploys to staging run the database migrations before the app starts"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.WriteFact(ctx, Fact{Text: "Production deploys need a second reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	if other.Outcome != Created {
		t.Fatalf("unrelated fact outcome = %v, want created", other.Outcome)
	}
	w, err := c.WriteFact(ctx, Fact{Text: "Deploys to staging run database migrations before the app starts up"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Outcome != Superseded || w.Replaced != old.Record.ID || w.Record.ParentID != old.Record.ID {
		t.Fatalf("paraphrase: outcome %v, replaced %q, parent %q; want superseded, %q, %q",
			w.Outcome, w.Replaced, w.Record.ParentID, old.Record.ID, old.Record.ID)
	}
	if w.Similarity < DefaultDedupeThreshold || w.Similarity > 1.0001 {
		t.Errorf("Similarity = %v, want in [%v, 1]", w.Similarity, DefaultDedupeThreshold)
	}
	prev, err := c.GetFact(ctx, "", old.Record.ID)
	if err != nil {
		t.Fatal(err)
	}
	if prev.Status != FactSuperseded {
		t.Errorf("old fact status = %v, want superseded", prev.Status)
	}
	live, err := c.ListFacts(ctx, ListOptions{Filter: Filter{Status: FactActive}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{other.Record.Text, w.Record.Text}, factTexts(live)); diff != "" {
		t.Errorf("live facts mismatch (-want +got):\n%s", diff)
	}
}

func TestNearDuplicateDisabled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, func(cfg *Config) { cfg.DedupeThreshold = -1 })
	if _, err := c.WriteFact(ctx, Fact{Text: "Deploys to staging run the database migrations before the app starts"}); err != nil {
		t.Fatal(err)
	}
	w, err := c.WriteFact(ctx, Fact{Text: "Deploys to staging run database migrations before the app starts up"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Outcome != Created {
		t.Errorf("outcome with dedupe off = %v, want created", w.Outcome)
	}
}

func TestEmbedFailureStillWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	boom := errors.New("embedding service unavailable")
	emb := llmfake.NewEmbedder(384).FailNext(1, boom)
	c, _ := open(t, func(cfg *Config) { cfg.Embedder = emb })
	w, err := c.WriteFact(ctx, Fact{Text: "The rate limiter allows 100 requests per minute per key"})
	if err != nil {
		t.Fatalf("WriteFact with a failing embedder: %v", err)
	}
	if !errors.Is(w.EmbedErr, boom) {
		t.Errorf("EmbedErr = %v, want it to wrap %v", w.EmbedErr, boom)
	}
	if w.Outcome != Created || len(w.Record.Embedding) != 0 {
		t.Errorf("outcome %v with %d-dim embedding, want created without one", w.Outcome, len(w.Record.Embedding))
	}
	hits, err := c.Search(ctx, SearchQuery{Text: "rate limiter", Mode: Keyword})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{w.Record.ID}, hitIDs(hits)); diff != "" {
		t.Errorf("keyword search mismatch (-want +got):\n%s", diff)
	}
	// Hybrid search still works and finds it by keyword.
	hits, err = c.Search(ctx, SearchQuery{Text: "rate limiter"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || !slices.Equal(hits[0].FoundBy, []Retriever{RetrieverKeyword}) {
		t.Errorf("hybrid hits = %+v, want the fact found by keyword", hits)
	}
	// The embedder works again: the next write is embedded.
	w2, err := c.WriteFact(ctx, Fact{Text: "Requests over the limit get 429"})
	if err != nil || w2.EmbedErr != nil || len(w2.Record.Embedding) != 384 {
		t.Errorf("next write: err %v, EmbedErr %v, %d dims; want embedded", err, w2.EmbedErr, len(w2.Record.Embedding))
	}
}

func TestEmbedBatchOneCallAndEmptyText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emb := llmfake.NewEmbedder(384)
	c, _ := open(t, func(cfg *Config) { cfg.Embedder = emb })
	ws, err := c.WriteFacts(ctx, []Fact{
		{Text: "Builds run on GitHub Actions"},
		{Text: "Caches live in S3"},
		{Text: "The linter is golangci-lint", Embedding: nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	if emb.Calls() != 1 {
		t.Errorf("Embed calls for one batch = %d, want 1", emb.Calls())
	}
	for i, w := range ws {
		if w.EmbedErr != nil || len(w.Record.Embedding) != 384 {
			t.Errorf("facts[%d]: EmbedErr %v, %d dims", i, w.EmbedErr, len(w.Record.Embedding))
		}
	}
	// A text with nothing to embed (only stopwords) fails the batch's Embed call; the
	// other facts are still embedded.
	ws, err = c.WriteFacts(ctx, []Fact{{Text: "Releases are tagged by CI"}, {Text: "it is what it is"}})
	if err != nil {
		t.Fatal(err)
	}
	if ws[0].EmbedErr != nil || len(ws[0].Record.Embedding) == 0 {
		t.Errorf("facts[0]: EmbedErr %v, %d dims; want embedded", ws[0].EmbedErr, len(ws[0].Record.Embedding))
	}
	if ws[1].EmbedErr == nil || len(ws[1].Record.Embedding) != 0 {
		t.Errorf("facts[1]: EmbedErr %v, %d dims; want an error and no embedding", ws[1].EmbedErr, len(ws[1].Record.Embedding))
	}
}

func TestWriteFactsValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	if _, err := c.Branch(ctx, "other", BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		facts []Fact
		field string
	}{
		{"mixed branches", []Fact{{Branch: "main", Text: "a"}, {Text: "b"}, {Branch: "other", Text: "c"}}, "facts[2].Branch"},
		{"empty text in batch", []Fact{{Text: "a"}, {Text: " "}}, "facts[1].Text"},
		{"empty text alone", []Fact{{Text: ""}}, "Fact.Text"},
		{"bad id", []Fact{{ID: "no spaces allowed", Text: "a"}}, "Fact.ID"},
		{"confidence", []Fact{{Text: "a", Confidence: 2}}, "Fact.Confidence"},
	}
	for _, tt := range tests {
		_, err := c.WriteFacts(ctx, tt.facts)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tt.field {
			t.Errorf("%s: err = %v, want a *ValidationError on %s", tt.name, err, tt.field)
		}
	}
	facts, err := c.ListFacts(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(facts) != 0 {
		t.Errorf("failed batches wrote %d facts, want none", len(facts))
	}
	// An empty Branch is main in a batch too: beside a fact for another branch it is
	// refused, and nothing is written.
	_, err = c.WriteFacts(ctx, []Fact{{Text: "x1"}, {Branch: "other", Text: "x2"}})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "facts[1].Branch" {
		t.Errorf("a batch of main and other: err = %v, want a *ValidationError on facts[1].Branch", err)
	}
	for _, b := range []string{"main", "other"} {
		if n, err := c.ListFacts(ctx, ListOptions{Branch: b}); err != nil || len(n) != 0 {
			t.Errorf("%s after a refused batch: %d facts, %v; want none", b, len(n), err)
		}
	}
	ws, err := c.WriteFacts(ctx, []Fact{{Text: "x1"}, {Branch: "main", Text: "x2"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Record.Branch != "main" {
			t.Errorf("fact %q written to %q, want main", w.Record.Text, w.Record.Branch)
		}
	}
	if _, err := c.WriteFact(ctx, Fact{Branch: "nope", Text: "x"}); !errors.Is(err, ErrBranchNotFound) {
		t.Errorf("write to a missing branch: err = %v, want ErrBranchNotFound", err)
	}
}

func TestWriteOtherKinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	o, err := c.WriteObservation(ctx, Observation{Type: ObsError, Tool: "go test", Summary: "TestLogin failed with a nil pointer"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Outcome != Created || len(o.Record.Embedding) != 384 || o.Record.ID == "" {
		t.Errorf("observation: %v, %d dims, id %q", o.Outcome, len(o.Record.Embedding), o.Record.ID)
	}
	r, err := c.WriteRelation(ctx, Relation{Source: "AuthService", Target: "Redis", Type: "uses"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Record.ValidFrom.IsZero() || r.Record.Confidence != 1 {
		t.Errorf("relation defaults: ValidFrom %v, Confidence %v", r.Record.ValidFrom, r.Record.Confidence)
	}
	if _, err := c.WriteObservation(ctx, Observation{Summary: "no type"}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("observation without type: err = %v, want ErrInvalidArgument", err)
	}
	if err := c.Delete(ctx, "", RefOf(o.Record), RefOf(r.Record)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetObservation(ctx, "", o.Record.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetObservation after Delete: err = %v, want ErrNotFound", err)
	}
	if err := c.Delete(ctx, "", RefOf(o.Record)); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: err = %v, want ErrNotFound", err)
	}
	if err := c.Delete(ctx, ""); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Delete without refs: err = %v, want ErrInvalidArgument", err)
	}
}

func TestAppendMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	if _, err := c.AppendMessage(ctx, Message{ConversationID: "conv-1", Role: RoleUser, Content: "hi"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("append to a missing conversation: err = %v, want ErrNotFound", err)
	}
	if _, err := c.WriteConversation(ctx, Conversation{ID: "conv-1", Title: "Fix login"}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		msg     Message
		wantSeq int
	}{
		{Message{Role: RoleUser, Content: "Login fails after the token refresh"}, 1},
		{Message{Role: RoleAssistant, Content: "Checking the refresh handler"}, 2},
		{Message{Role: RoleToolCall, Tool: "grep", Content: "grep -n refresh"}, 3},
		{Message{Role: RoleToolResult, Seq: 10, Content: "auth/refresh.go:42"}, 10},
		{Message{Role: RoleAssistant, Content: "Found it"}, 11},
	}
	for _, s := range steps {
		s.msg.ConversationID = "conv-1"
		w, err := c.AppendMessage(ctx, s.msg)
		if err != nil {
			t.Fatal(err)
		}
		if w.Record.Seq != s.wantSeq {
			t.Errorf("message %q: Seq = %d, want %d", s.msg.Content, w.Record.Seq, s.wantSeq)
		}
	}
	msgs, err := c.Messages(ctx, "", "conv-1")
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	for _, m := range msgs {
		seqs = append(seqs, m.Seq)
	}
	if diff := cmp.Diff([]int{1, 2, 3, 10, 11}, seqs); diff != "" {
		t.Errorf("Messages seqs mismatch (-want +got):\n%s", diff)
	}
	if _, err := c.Messages(ctx, "", "conv-2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Messages of a missing conversation: err = %v, want ErrNotFound", err)
	}
}

func TestAppendMessageConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	for _, id := range []string{"a", "b"} {
		if _, err := c.WriteConversation(ctx, Conversation{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	const perConv = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*perConv)
	for i := range perConv {
		for _, conv := range []string{"a", "b"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.AppendMessage(ctx, Message{ConversationID: conv, Role: RoleUser, Content: fmt.Sprintf("message %d", i)})
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, conv := range []string{"a", "b"} {
		msgs, err := c.Messages(ctx, "", conv)
		if err != nil {
			t.Fatal(err)
		}
		var seqs, want []int
		for i, m := range msgs {
			seqs = append(seqs, m.Seq)
			want = append(want, i+1)
		}
		if diff := cmp.Diff(want, seqs); diff != "" || len(msgs) != perConv {
			t.Errorf("conversation %s: %d messages, seqs mismatch (-want +got):\n%s", conv, len(msgs), diff)
		}
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	s, err := c.StartSession(ctx, Session{AgentID: "agent-a", TaskID: "fix-auth"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "id-000001" || s.Status != SessionActive || s.Branch != "main" || s.StartedAt.IsZero() {
		t.Errorf("started session = %+v", s)
	}
	again, err := c.StartSession(ctx, Session{ID: s.ID, AgentID: "someone-else"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, again); diff != "" {
		t.Errorf("repeated start changed the session (-first +again):\n%s", diff)
	}
	ended, err := c.EndSession(ctx, s.ID, "", "fixed the refresh bug")
	if err != nil {
		t.Fatal(err)
	}
	if ended.Status != SessionCompleted || ended.Summary != "fixed the refresh bug" || !ended.EndedAt.After(ended.StartedAt) {
		t.Errorf("ended session = %+v", ended)
	}
	got, err := c.GetSession(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ended, got); diff != "" {
		t.Errorf("GetSession mismatch (-ended +got):\n%s", diff)
	}
	if _, err := c.StartSession(ctx, Session{Branch: "nope"}); !errors.Is(err, ErrBranchNotFound) {
		t.Errorf("session on a missing branch: err = %v, want ErrBranchNotFound", err)
	}
	if _, err := c.EndSession(ctx, s.ID, SessionActive, ""); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("EndSession with active: err = %v, want ErrInvalidArgument", err)
	}
	if _, err := c.EndSession(ctx, "missing", "", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("EndSession of a missing session: err = %v, want ErrNotFound", err)
	}
	list, err := c.Sessions(ctx, SessionFilter{AgentID: "agent-a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != s.ID {
		t.Errorf("Sessions = %+v, want the one session", list)
	}
}

// TestAliasOfChosenIDs: a caller's id of a deduplicated fact reads as the fact it
// matched, on its branch and in merges, while a generated id leaves nothing behind.
func TestAliasOfChosenIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	first, err := c.WriteFact(ctx, Fact{ID: "a", Text: "Builds run on the arm64 runners"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Branch(ctx, "task", BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.WriteFact(ctx, Fact{ID: "b", Branch: "task", Text: "builds run on the ARM64 runners"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Outcome != Deduplicated || w.AliasOf != "a" || w.Record.ID != "a" {
		t.Fatalf("write under b: outcome %v, AliasOf %q, record %q; want deduplicated, a, a", w.Outcome, w.AliasOf, w.Record.ID)
	}
	got, err := c.GetFact(ctx, "task", "b")
	if err != nil || got.ID != "a" || got.Text != first.Record.Text {
		t.Fatalf("GetFact(task, b) = %+v, %v; want fact a", got, err)
	}
	if _, err := c.GetFact(ctx, "main", "b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetFact(main, b) before the merge: %v; want ErrNotFound", err)
	}
	if _, err := c.Merge(ctx, MergeRequest{Source: "task", Target: "main"}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetFact(ctx, "main", "b"); err != nil || got.ID != "a" {
		t.Fatalf("GetFact(main, b) after the merge = %q, %v; want a", got.ID, err)
	}
	gen, err := c.WriteFact(ctx, Fact{Text: "Builds run on the arm64 runners"})
	if err != nil {
		t.Fatal(err)
	}
	if gen.Outcome != Deduplicated || gen.AliasOf != "" {
		t.Fatalf("generated id: outcome %v, AliasOf %q; want deduplicated and no alias", gen.Outcome, gen.AliasOf)
	}
}
