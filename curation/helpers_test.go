package curation_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/testkit"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// newEngine returns an engine over a fresh in-memory store with a step clock and ids
// n1, n2, ..., with model (nil: heuristics).
func newEngine(t *testing.T, model llm.Model) (*curation.Engine, store.Store) {
	t.Helper()
	clk := testkit.NewClock(time.Second)
	st := testkit.Store(t, clk.Now)
	var n atomic.Int64
	e := &curation.Engine{
		Store: st,
		NewID: func() string { return fmt.Sprintf("n%d", n.Add(1)) },
		Now:   clk.Now,
	}
	if model != nil {
		e.Model = model
	}
	return e, st
}

func put(t *testing.T, st store.Store, branch string, recs ...store.Record) {
	t.Helper()
	testkit.Put(t, st, branch, recs...)
}

func branch(t *testing.T, st store.Store, name, from string) {
	t.Helper()
	if _, err := st.CreateBranch(context.Background(), store.BranchSpec{Name: name, From: from}); err != nil {
		t.Fatalf("CreateBranch %s: %v", name, err)
	}
}

func getFact(t *testing.T, st store.Store, branch, id string) store.Fact {
	t.Helper()
	r, err := st.Get(context.Background(), store.View{Branch: branch}, store.Ref{Kind: store.KindFact, ID: id})
	if err != nil {
		t.Fatalf("Get fact %s on %s: %v", id, branch, err)
	}
	return r.(store.Fact)
}

func getConv(t *testing.T, st store.Store, branch, id string) store.Conversation {
	t.Helper()
	r, err := st.Get(context.Background(), store.View{Branch: branch}, store.Ref{Kind: store.KindConversation, ID: id})
	if err != nil {
		t.Fatalf("Get conversation %s on %s: %v", id, branch, err)
	}
	return r.(store.Conversation)
}

func listMessages(t *testing.T, st store.Store, branch, conv string) []store.Message {
	t.Helper()
	recs, err := st.List(context.Background(), store.View{Branch: branch}, store.ListQuery{
		Kind: store.KindMessage, Filter: store.Filter{ConversationID: conv}, Order: store.OrderSeq,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]store.Message, len(recs))
	for i, r := range recs {
		out[i] = r.(store.Message)
	}
	return out
}

func listFacts(t *testing.T, st store.Store, branch string) []store.Fact {
	t.Helper()
	recs, err := st.List(context.Background(), store.View{Branch: branch}, store.ListQuery{Kind: store.KindFact, Order: store.OrderID})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]store.Fact, len(recs))
	for i, r := range recs {
		out[i] = r.(store.Fact)
	}
	return out
}

// debugConversation is a conversation with a failed tool call, a recovery and a
// successful fix: seq 1..8.
func debugConversation(id string) []store.Record {
	msg := func(seq int, role store.Role, content string) store.Message {
		return store.Message{ID: fmt.Sprintf("%s-m%d", id, seq), ConversationID: id, Seq: seq, Role: role, Content: content}
	}
	return []store.Record{
		store.Conversation{ID: id, Title: "fix the auth bug", SessionID: "s1", AgentID: "agent-a"},
		msg(1, store.RoleUser, "fix the auth bug"),
		msg(2, store.RoleAssistant, "Let me run the tests first."),
		msg(3, store.RoleToolCall, "go test ./auth"),
		msg(4, store.RoleToolResult, "FAILED: TestRefresh: token expired"),
		msg(5, store.RoleAssistant, "The refresh handler ignores expiry; I will patch it."),
		msg(6, store.RoleToolCall, "edit auth/refresh.go"),
		msg(7, store.RoleToolResult, "ok"),
		msg(8, store.RoleAssistant, "Fixed: the refresh handler now checks the token expiry."),
	}
}

var sortStrings = cmpopts.SortSlices(func(a, b string) bool { return a < b })
