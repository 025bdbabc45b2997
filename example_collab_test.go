package day1_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1"
)

// Agents agree on a handoff over the collaboration protocol: a capability query to
// everyone, a request one agent declines, a request another takes with negotiated
// terms. Every message is stored, so an agent that crashed catches up from its inbox.
func ExampleClient_Collab() {
	ctx := context.Background()
	c, err := day1.Open(ctx, exampleConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	col := c.Collab()
	if err := col.Handle(day1.MessageRequest, func(_ context.Context, m day1.CollabMessage) error {
		fmt.Printf("handler: %s asks %s: %v\n", m.Sender, m.Receiver, m.Payload["description"])
		return nil
	}); err != nil {
		log.Fatal(err)
	}
	s, err := col.Open(ctx, day1.CollabSpec{ID: "oauth-fix", Initiator: "investigator", Participants: []string{"expert", "novice"}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := col.QueryCapabilities(ctx, day1.CollabCapabilityAsk{Session: s.ID, From: "investigator", Required: []string{"oauth2"}}); err != nil {
		log.Fatal(err)
	}
	req, err := col.RequestHandoff(ctx, day1.CollabHandoffAsk{Session: s.ID, From: "investigator", To: "novice", Description: "fix the refresh state machine", Required: []string{"oauth2"}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := col.Respond(ctx, day1.CollabReply{Session: s.ID, From: "novice", To: "investigator", Correlation: req.ID, Reason: "no OAuth2 experience"}); err != nil {
		log.Fatal(err)
	}
	if _, err := col.RequestHandoff(ctx, day1.CollabHandoffAsk{Session: s.ID, From: "investigator", To: "expert", Description: "fix the refresh state machine", Required: []string{"oauth2"}}); err != nil {
		log.Fatal(err)
	}
	terms, err := col.ProposeTerms(ctx, day1.CollabTermsOffer{Session: s.ID, From: "expert", To: "investigator", Terms: map[string]any{"objectives": "2 and 3", "deadline": "friday"}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := col.Respond(ctx, day1.CollabReply{Session: s.ID, From: "investigator", To: "expert", Correlation: terms.ID, Accepted: true, Reason: "agreed"}); err != nil {
		log.Fatal(err)
	}

	s, err = col.Get(ctx, s.ID)
	if err != nil {
		log.Fatal(err)
	}
	var phases []day1.CollabPhase
	for _, ch := range s.History {
		phases = append(phases, ch.To)
	}
	fmt.Println(phases, "terms:", s.Terms)

	inbox, err := col.Messages(ctx, day1.CollabMessageFilter{Session: s.ID, Receiver: "expert"})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range inbox {
		fmt.Println("expert's inbox:", m.Type, "from", m.Sender)
	}
	s, err = col.Advance(ctx, day1.CollabAdvance{Session: s.ID, To: day1.PhaseExecution, By: "expert"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = col.Advance(ctx, day1.CollabAdvance{Session: s.ID, To: day1.PhaseDiscovery, By: "expert"})
	fmt.Println(err)
	// Output:
	// handler: investigator asks novice: fix the refresh state machine
	// handler: investigator asks expert: fix the refresh state machine
	// [negotiation discovery negotiation agreement] terms: map[deadline:friday objectives:2 and 3]
	// expert's inbox: broadcast from investigator
	// expert's inbox: request from investigator
	// expert's inbox: acknowledge from investigator
	// day1: a collaboration cannot go from phase execution to discovery; allowed next: completion
}
