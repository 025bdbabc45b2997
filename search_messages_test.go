package day1

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/llm/llmfake"
)

// dialogue writes a conversation of turns to the default branch with AppendMessages.
func dialogue(t *testing.T, c *Client, conv string, turns ...string) []Message {
	t.Helper()
	ctx := context.Background()
	if _, err := c.WriteConversation(ctx, Conversation{ID: conv, Title: "support chat " + conv, SessionID: conv + "-session"}); err != nil {
		t.Fatal(err)
	}
	msgs := make([]Message, len(turns))
	for i, text := range turns {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		msgs[i] = Message{ConversationID: conv, Role: role, Content: text, SessionID: conv + "-session"}
	}
	ws, err := c.AppendMessages(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Message, len(ws))
	for i, w := range ws {
		if w.EmbedErr != nil {
			t.Errorf("%s turn %d: EmbedErr %v", conv, i, w.EmbedErr)
		}
		out[i] = w.Record
	}
	return out
}

// TestSearchFindsMessages: turns written as messages are embedded at write time and
// found by the default search, which names their conversation; a window returns the
// turns around each hit.
func TestSearchFindsMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emb := llmfake.NewEmbedder(384)
	c, _ := open(t, func(cfg *Config) { cfg.Embedder = emb })
	msgs := dialogue(t, c, "chat-1",
		"Which database do we use for orders?",
		"Orders live in Postgres.",
		"And sessions?",
		"Sessions are kept in Redis with a one hour expiry.")
	if emb.Calls() != 1 {
		t.Errorf("Embed calls for one batch of messages = %d, want 1", emb.Calls())
	}
	for i, m := range msgs {
		if m.Seq != i+1 || len(m.Embedding) != 384 {
			t.Errorf("turn %d: Seq %d, %d dims; want Seq %d and an embedding", i, m.Seq, len(m.Embedding), i+1)
		}
	}
	hits, err := c.Search(ctx, SearchQuery{Text: "redis sessions expiry", Limit: 1, Window: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 {
		t.Fatalf("hits = %v", hitIDs(hits))
	}
	h := hits[0]
	m, ok := h.Message()
	if !ok || m.ID != msgs[3].ID {
		t.Fatalf("hit %+v, want the fourth turn", h.Record)
	}
	if h.ConversationTitle != "support chat chat-1" || len(h.Before) != 1 || h.Before[0].ID != msgs[2].ID || len(h.After) != 0 {
		t.Errorf("title %q, before %v, after %v", h.ConversationTitle, h.Before, h.After)
	}
	// The speaker filter.
	hits, err = c.Search(ctx, SearchQuery{Text: "orders postgres sessions", Filter: Filter{Role: RoleUser}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if m, ok := h.Message(); !ok || m.Role != RoleUser {
			t.Errorf("a Role user search gave %+v", h.Record)
		}
	}
}

func TestAppendMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	for _, id := range []string{"a", "b"} {
		if _, err := c.WriteConversation(ctx, Conversation{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.AppendMessage(ctx, Message{ConversationID: "a", Role: RoleUser, Content: "first"}); err != nil {
		t.Fatal(err)
	}
	ws, err := c.AppendMessages(ctx, []Message{
		{ConversationID: "a", Role: RoleUser, Content: "two"},
		{ConversationID: "b", Role: RoleUser, Content: "one"},
		{ConversationID: "a", Role: RoleUser, Seq: 7, Content: "seven"},
		{ConversationID: "a", Role: RoleAssistant, Content: "eight"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	for _, w := range ws {
		seqs = append(seqs, w.Record.Seq)
	}
	if d := cmp.Diff([]int{2, 1, 7, 8}, seqs); d != "" {
		t.Errorf("seqs (-want +got):\n%s", d)
	}
	// A missing conversation fails the batch and writes nothing.
	_, err = c.AppendMessages(ctx, []Message{
		{ConversationID: "a", Role: RoleUser, Content: "lost"},
		{ConversationID: "nope", Role: RoleUser, Content: "x"},
	})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing conversation: err = %v, want ErrNotFound", err)
	}
	msgs, err := c.Messages(ctx, "", "a")
	if err != nil || len(msgs) != 4 {
		t.Errorf("conversation a holds %d messages (%v), want 4", len(msgs), err)
	}
	// A bad message names its place in the batch.
	_, err = c.AppendMessages(ctx, []Message{{ConversationID: "a", Role: RoleUser}, {ConversationID: "", Role: RoleUser}})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "messages[1].ConversationID" {
		t.Errorf("an empty conversation id: err = %v, want a ValidationError on messages[1].ConversationID", err)
	}
}
