package day1_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// Messages are appended to a conversation; a zero Seq means the next one.
func ExampleClient_AppendMessage() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	conv, err := c.WriteConversation(ctx, day1.Conversation{ID: "conv-auth", Title: "Fix the refresh bug"})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range []day1.Message{
		{Role: day1.RoleUser, Content: "Users are logged out after 15 minutes"},
		{Role: day1.RoleToolCall, Tool: "grep", Content: "grep -n Expiry auth/refresh.go"},
		{Role: day1.RoleToolResult, Tool: "grep", Content: "42: if tok.Expiry.Before(now) {"},
		{Role: day1.RoleAssistant, Content: "The refresh handler compares against the wrong clock"},
	} {
		m.ConversationID = conv.Record.ID
		if _, err := c.AppendMessage(ctx, m); err != nil {
			log.Fatal(err)
		}
	}

	msgs, err := c.Messages(ctx, "main", "conv-auth")
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Printf("#%d %-11s %s\n", m.Seq, m.Role, m.Content)
	}
	// Output:
	// #1 user        Users are logged out after 15 minutes
	// #2 tool_call   grep -n Expiry auth/refresh.go
	// #3 tool_result 42: if tok.Expiry.Before(now) {
	// #4 assistant   The refresh handler compares against the wrong clock
}
