package day1_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/day1ai/day1"
)

// A handoff offered to the best OAuth2 agent is rejected, and escalates on its own to
// the next capable agent that is available; an offline agent is never offered it.
func ExampleClient_RejectHandoff_escalation() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	const task = "fix-oauth-token-refresh"
	if _, err := c.CreateTask(ctx, day1.TaskSpec{Name: task, Objectives: []string{"Implement the fix"}}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.JoinTask(ctx, day1.JoinRequest{Task: task, Agent: "investigator"}); err != nil {
		log.Fatal(err)
	}
	for _, a := range []day1.AgentProfile{
		{ID: "oauth-lead", Capabilities: []day1.Capability{{Name: "oauth2", Proficiency: 1}}},
		{ID: "oauth-away", Capabilities: []day1.Capability{{Name: "oauth2", Proficiency: 0.95}}, Availability: day1.AgentOffline},
		{ID: "oauth-dev", Capabilities: []day1.Capability{{Name: "oauth2", Proficiency: 0.8}}},
	} {
		if _, err := c.RegisterAgent(ctx, a); err != nil {
			log.Fatal(err)
		}
	}

	_, err = c.Handoff(ctx, day1.HandoffRequest{Task: task, FromAgent: "investigator", ToAgent: "oauth-away"})
	var re *day1.ReceiverError
	if errors.As(err, &re) {
		fmt.Println("refused:", re.Agent, re.Reason)
	}

	h, err := c.Handoff(ctx, day1.HandoffRequest{
		Task: task, FromAgent: "investigator",
		Required: []day1.Requirement{{Name: "oauth2"}},
		Escalate: true, MaxEscalations: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("offered to", h.ToAgent)

	h, err = c.RejectHandoff(ctx, day1.RejectRequest{Handoff: h.ID, Agent: "oauth-lead", Reason: "on another incident"})
	if err != nil {
		log.Fatal(err)
	}
	next, err := c.GetHandoff(ctx, h.EscalatedTo)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(h.Status, "→ offered to", next.ToAgent, "attempt", next.Attempt, "tried", next.Tried)

	acc, err := c.AcceptHandoff(ctx, day1.AcceptRequest{Handoff: next.ID, Agent: "oauth-dev"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(acc.Handoff.Status, "by", acc.Member.Agent)

	evs, err := c.HandoffEvents(ctx, day1.HandoffEventFilter{Task: task})
	if err != nil {
		log.Fatal(err)
	}
	for _, ev := range evs {
		if strings.HasPrefix(string(ev.Kind), "handoff.") {
			fmt.Println(strings.TrimSpace(string(ev.Kind) + " " + ev.To))
		}
	}
	// Output:
	// refused: oauth-away unavailable
	// offered to oauth-lead
	// rejected → offered to oauth-dev attempt 1 tried [oauth-lead oauth-dev]
	// accepted by oauth-dev
	// handoff.refused
	// handoff.created pending
	// handoff.status rejected
	// handoff.created pending
	// handoff.escalated pending
	// handoff.status accepting
	// handoff.status accepted
}
