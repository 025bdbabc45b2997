package adk_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"google.golang.org/adk/v2/memory"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/contrib/adk"
)

// Example keeps an ADK session in day1, adds it to its user's memory, and searches
// that memory from a later session, as the load_memory tool does, on the embedded
// in-memory store: no server, no network, no keys. A runner takes both services in
// runner.Config{SessionService: sessions, MemoryService: mem}.
func Example() {
	ctx := context.Background()
	client, err := day1.Open(ctx, day1.Config{}) // Config{Path: dir} or {DSN: ...} keeps sessions across restarts
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	sessions, err := adk.NewSessionService(client, adk.SessionServiceConfig{})
	if err != nil {
		log.Fatal(err)
	}
	mem, err := adk.NewMemoryService(client, adk.MemoryServiceConfig{})
	if err != nil {
		log.Fatal(err)
	}

	created, err := sessions.Create(ctx, &session.CreateRequest{AppName: "travel", UserID: "ana", SessionID: "monday"})
	if err != nil {
		log.Fatal(err)
	}
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for i, turn := range []struct{ author, text string }{
		{"user", "I always fly out of Porto and I prefer aisle seats."},
		{"concierge", "Noted: Porto, aisle seats."},
	} {
		role := genai.Role(genai.RoleModel)
		if turn.author == "user" {
			role = genai.RoleUser
		}
		e := &session.Event{ID: fmt.Sprint("e", i), Author: turn.author, Timestamp: at.Add(time.Duration(i) * time.Second),
			LLMResponse: model.LLMResponse{Content: genai.NewContentFromText(turn.text, role)}}
		if err := sessions.AppendEvent(ctx, created.Session, e); err != nil {
			log.Fatal(err)
		}
	}

	// The session is durable: Get reads it back from day1.
	got, err := sessions.Get(ctx, &session.GetRequest{AppName: "travel", UserID: "ana", SessionID: "monday"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("events:", got.Session.Events().Len())

	if err := mem.AddSessionToMemory(ctx, got.Session); err != nil {
		log.Fatal(err)
	}
	for _, user := range []string{"ana", "bruno"} {
		res, err := mem.SearchMemory(ctx, &memory.SearchRequest{AppName: "travel", UserID: user, Query: "Which city do I fly out of?"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d memories\n", user, len(res.Memories))
		for _, m := range res.Memories {
			fmt.Printf("  %s said %q in session %v\n", m.Author, m.Content.Parts[0].Text, m.CustomMetadata["adk_session"])
		}
	}
	// Output:
	// events: 2
	// ana: 1 memories
	//   user said "I always fly out of Porto and I prefer aisle seats." in session monday
	// bruno: 0 memories
}
