package day1_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// A timeline lists what happened in a session, in order, one line per record.
func ExampleClient_Timeline() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	s, err := c.StartSession(ctx, day1.Session{AgentID: "agent-a"})
	if err != nil {
		log.Fatal(err)
	}
	conv, err := c.WriteConversation(ctx, day1.Conversation{SessionID: s.ID, Title: "Debug login"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.AppendMessage(ctx, day1.Message{ConversationID: conv.Record.ID, SessionID: s.ID, Role: day1.RoleUser, Content: "Login returns 500"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteObservation(ctx, day1.Observation{SessionID: s.ID, Type: day1.ObsToolUse, Tool: "curl", Summary: "POST /login -> 500"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{SessionID: s.ID, Text: "Login panics when the token has no expiry"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.EndSession(ctx, s.ID, day1.SessionCompleted, "found the panic"); err != nil {
		log.Fatal(err)
	}

	events, err := c.Timeline(ctx, day1.TimelineQuery{SessionID: s.ID})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range events {
		fmt.Printf("%s %-12s %s\n", e.At.Format("15:04:05"), e.Ref.Kind, e.Summary)
	}
	// Output:
	// 09:00:03 conversation conversation: Debug login
	// 09:00:04 message      #1 user: Login returns 500
	// 09:00:05 observation  tool_use (curl): POST /login -> 500
	// 09:00:06 fact         Login panics when the token has no expiry
}
