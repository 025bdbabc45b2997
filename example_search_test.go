package day1_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/rerank"
	"github.com/day1ai/day1/store"
)

// A dialogue kept as the messages of a conversation is searched like facts: the
// default search finds the turns, names their conversation and, with a Window, gives
// the turns around each hit: here the answer, two turns after the one found. Filter.Role
// keeps one speaker's turns.
func ExampleClient_Search_messages() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.WriteConversation(ctx, day1.Conversation{ID: "chat-7", Title: "Weekend plans"}); err != nil {
		log.Fatal(err)
	}
	var turns []day1.Message
	for _, t := range []struct {
		role day1.Role
		text string
	}{
		{day1.RoleUser, "I adopted a dog last month"},
		{day1.RoleAssistant, "Congratulations! What is its name?"},
		{day1.RoleUser, "Biscuit, a beagle who loves the beach"},
		{day1.RoleAssistant, "Beagles are great company on long walks"},
	} {
		turns = append(turns, day1.Message{ConversationID: "chat-7", Role: t.role, Content: t.text})
	}
	// One batch: the contents are embedded in one call, Seq numbers 1 to 4.
	if _, err := c.AppendMessages(ctx, turns); err != nil {
		log.Fatal(err)
	}

	hits, err := c.Search(ctx, day1.SearchQuery{Text: "what is the dog called", Limit: 1, Window: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		m, _ := h.Message()
		fmt.Printf("%q, turn %d of %q\n", m.Content, m.Seq, h.ConversationTitle)
		for _, n := range h.Before {
			fmt.Printf("  before: %s: %s\n", n.Role, n.Content)
		}
		for _, n := range h.After {
			fmt.Printf("  after:  %s: %s\n", n.Role, n.Content)
		}
	}

	hits, err = c.Search(ctx, day1.SearchQuery{Text: "beagle", Limit: 1, Filter: day1.Filter{Role: day1.RoleUser}})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		m, _ := h.Message()
		fmt.Printf("%s said: %s\n", m.Role, m.Content)
	}
	// Output:
	// "I adopted a dog last month", turn 1 of "Weekend plans"
	//   after:  assistant: Congratulations! What is its name?
	//   after:  user: Biscuit, a beagle who loves the beach
	// user said: Biscuit, a beagle who loves the beach
}

// The facts of a session lend each other keyword score, by the order they were
// written in: an answer that shares no word with the query is found through the
// question before it (KeywordScore 0, WindowScore above 0).
func ExampleClient_Search_session() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	var facts []day1.Fact
	for _, text := range []string{
		"Melanie: what did you research this week?",
		"Caroline: adoption agencies for single parents",
		"Melanie: the weather turned cold",
	} {
		facts = append(facts, day1.Fact{Text: text, SessionID: "session-3"})
	}
	// One write: creation order is the order given.
	if _, err := c.WriteFacts(ctx, facts); err != nil {
		log.Fatal(err)
	}
	hits, err := c.Search(ctx, day1.SearchQuery{Text: "what did she research", Kinds: []day1.Kind{day1.KindFact}, Limit: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		f, _ := h.Fact()
		fmt.Printf("%s (keyword %.2f, from its session %.2f)\n", f.Text, h.KeywordScore, h.WindowScore)
	}
	// Output:
	// Melanie: what did you research this week? (keyword 1.05, from its session 0.00)
	// Caroline: adoption agencies for single parents (keyword 0.00, from its session 0.32)
}

// Every hit says how much of the query it matches (Relevance, 0 to 1), and
// MinRelevance lets a search answer that memory holds nothing about a question,
// instead of filling its Limit with whatever ranks first.
func ExampleClient_Search_relevance() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	// Facts of one session lend each other score, as do facts with no session written
	// one after another: the refresh token's expiry comes with the signing, as context.
	if _, err := c.WriteFacts(ctx, []day1.Fact{
		{Text: "The auth service signs access tokens with RS256", SessionID: "auth-review"},
		{Text: "Refresh tokens expire after 30 days", SessionID: "auth-review"},
		{Text: "The billing service retries failed charges twice", SessionID: "billing-review"},
	}); err != nil {
		log.Fatal(err)
	}
	for _, question := range []string{"How are access tokens signed?", "What is the office wifi password?"} {
		hits, err := c.Search(ctx, day1.SearchQuery{Text: question, MinRelevance: day1.DefaultMinRelevance})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(question)
		if len(hits) == 0 {
			fmt.Println("  nothing relevant")
		}
		for _, h := range hits {
			f, _ := h.Fact()
			fmt.Printf("  %.2f %s\n", h.Relevance, f.Text)
		}
	}
	// Output:
	// How are access tokens signed?
	//   1.00 The auth service signs access tokens with RS256
	//   0.49 Refresh tokens expire after 30 days
	// What is the office wifi password?
	//   nothing relevant
}

// A Reranker sees the best candidates of a search (Config.RerankPool of them) before
// the Limit is applied and orders them by its own scores. rerank.Model grades them with
// a language model; here a plain function prefers verified facts.
func ExampleClient_Search_reranker() {
	ctx := context.Background()
	cfg := exampleConfig()
	cfg.Reranker = rerank.Func(func(query string, h store.Hit) float64 {
		if f, ok := h.Fact(); ok && f.Status == day1.FactVerified {
			return 1
		}
		return 0
	})
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.WriteFacts(ctx, []day1.Fact{
		{Text: "Deploys run on Fridays after the deploy review"},
		{Text: "Deploys run on Tuesdays", Status: day1.FactVerified},
	}); err != nil {
		log.Fatal(err)
	}
	hits, err := c.Search(ctx, day1.SearchQuery{Text: "when do deploys run", Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		f, _ := h.Fact()
		fmt.Printf("%s (rerank score %.0f)\n", f.Text, h.RerankScore)
	}
	// Output:
	// Deploys run on Tuesdays (rerank score 1)
}

// rerank.Usage lets memories nobody uses fade: a search it ranks counts its hits as
// used, and a memory's score halves for every HalfLife it goes unused. Of two notes of
// the same age that match equally, the one the team keeps reading comes first.
func ExampleClient_Search_usage() {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	cfg := exampleConfig()
	cfg.Reranker = &rerank.Usage{HalfLife: 7 * 24 * time.Hour, Now: func() time.Time { return now }}
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	written := now.AddDate(0, 0, -28)
	if _, err := c.WriteFacts(ctx, []day1.Fact{
		{ID: "runbook-a", Text: "Restart the cache with the runbook in the ops wiki", CreatedAt: written},
		{ID: "runbook-b", Text: "Restart the cache with the runbook in the old wiki", CreatedAt: written},
	}); err != nil {
		log.Fatal(err)
	}
	// Someone asks for the ops wiki's runbook: it is used today.
	if _, err := c.Search(ctx, day1.SearchQuery{Text: "ops wiki runbook", Limit: 1}); err != nil {
		log.Fatal(err)
	}
	// A week later, a question both notes answer as well.
	now = now.AddDate(0, 0, 7)
	hits, err := c.Search(ctx, day1.SearchQuery{Text: "restart the cache", Limit: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %.2f\n", h.Record.RecordID(), h.RerankScore)
	}
	// Output:
	// runbook-a 0.50
	// runbook-b 0.03
}
