package adk_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/memory"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/contrib/adk"
)

// adkSearch is a memory search request in one line.
type adkSearch struct{ app, user, query string }

func (s adkSearch) request() *memory.SearchRequest {
	return &memory.SearchRequest{AppName: s.app, UserID: s.user, Query: s.query}
}

// TestMemoryService covers the memory service with ADK's in-memory session service:
// what a session adds, what a search returns and how, and each user's branch.
func TestMemoryService(t *testing.T) {
	forEachStore(t, func(t *testing.T, c *day1.Client) {
		ctx := context.Background()
		sessions := session.InMemoryService()
		mem, err := adk.NewMemoryService(c, adk.MemoryServiceConfig{ExtractFacts: true})
		if err != nil {
			t.Fatal(err)
		}
		created, err := sessions.Create(ctx, &session.CreateRequest{AppName: "shop", UserID: "u-1", SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC)
		for i, e := range []*session.Event{
			{ID: "q", Author: "user", Timestamp: at, LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("My shoe size is 43 and I dislike leather.", genai.RoleUser)}},
			{ID: "t", Author: "clerk", Timestamp: at.Add(time.Second), LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
				genai.NewPartFromFunctionCall("lookup_stock", map[string]any{"size": 43})}}}},
			{ID: "a", Author: "clerk", Timestamp: at.Add(2 * time.Second), LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("Decided: we recommend the canvas sneakers in size 43.", genai.RoleModel)}},
		} {
			if err := sessions.AppendEvent(ctx, created.Session, e); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
		if err := mem.AddSessionToMemory(ctx, created.Session); err != nil {
			t.Fatal(err)
		}
		branch, err := mem.Branch("shop", "u-1")
		if err != nil {
			t.Fatal(err)
		}
		if branch != adk.DefaultMemoryBranch("shop", "u-1") || !strings.HasPrefix(branch, "adk-memory/shop/u-1-") {
			t.Errorf("branch %q", branch)
		}
		facts, err := c.ListFacts(ctx, day1.ListOptions{Branch: branch})
		if err != nil || len(facts) == 0 {
			t.Errorf("the extraction kept no fact (%v)", err)
		}

		found, err := mem.SearchMemory(ctx, adkSearch{"shop", "u-1", "what shoe size does the user wear"}.request())
		if err != nil {
			t.Fatal(err)
		}
		if len(found.Memories) == 0 {
			t.Fatal("found nothing")
		}
		top := found.Memories[0]
		want := memory.Entry{
			ID:        top.ID,
			Content:   genai.NewContentFromText("My shoe size is 43 and I dislike leather.", genai.RoleUser),
			Author:    "user",
			Timestamp: at,
			CustomMetadata: map[string]any{"day1_kind": "message", "adk_session": "s1", "day1_branch": branch,
				"day1_relevance": top.CustomMetadata["day1_relevance"]},
		}
		if d := cmp.Diff(want, top); d != "" {
			t.Errorf("the top memory (-want +got):\n%s", d)
		}
		if r, _ := top.CustomMetadata["day1_relevance"].(float64); r < day1.DefaultMinRelevance || r > 1 {
			t.Errorf("relevance %v", r)
		}
		for _, e := range found.Memories {
			if strings.Contains(e.Content.Parts[0].Text, "lookup_stock") {
				t.Errorf("a tool call is memory: %+v", e)
			}
		}

		for _, q := range []adkSearch{
			{"shop", "u-1", "  "},                                     // blank query
			{"shop", "u-1", "quarterly tax filing deadline"},          // nothing relevant
			{"shop", "u-2", "what shoe size does the user wear"},      // another user
			{"other-app", "u-1", "what shoe size does the user wear"}, // another app
		} {
			got, err := mem.SearchMemory(ctx, q.request())
			if err != nil || got == nil || len(got.Memories) != 0 {
				t.Errorf("%+v found %+v (%v), want an empty response", q, got, err)
			}
		}

		// A grown session adds its new turns only.
		if err := sessions.AppendEvent(ctx, created.Session, &session.Event{ID: "q2", Author: "user", Timestamp: at.Add(time.Minute),
			LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("Also, I prefer blue laces.", genai.RoleUser)}}); err != nil {
			t.Fatal(err)
		}
		grown, err := sessions.Get(ctx, &session.GetRequest{AppName: "shop", UserID: "u-1", SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := mem.AddSessionToMemory(ctx, grown.Session); err != nil {
			t.Fatal(err)
		}
		turns, err := c.Messages(ctx, branch, adk.SessionKey("shop", "u-1", "s1"))
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, m := range turns {
			texts = append(texts, m.Content)
		}
		if d := cmp.Diff([]string{"My shoe size is 43 and I dislike leather.", "Decided: we recommend the canvas sneakers in size 43.", "Also, I prefer blue laces."}, texts); d != "" {
			t.Errorf("memory's turns (-want +got):\n%s", d)
		}
	})
}

// TestMemoryConfig covers the config: a branch function of the caller's, the
// relevance floor turned off, and refused values.
func TestMemoryConfig(t *testing.T) {
	ctx := context.Background()
	c := openClient(t, day1.Config{})
	mem, err := adk.NewMemoryService(c, adk.MemoryServiceConfig{
		Branch:       func(app, user string) string { return "users/" + user },
		MinRelevance: -1,
		Limit:        1,
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.InMemoryService().Create(ctx, &session.CreateRequest{AppName: "a", UserID: "kim", SessionID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.AddSessionToMemory(ctx, s.Session); err != nil {
		t.Fatalf("a session without events: %v", err)
	}
	if _, err := c.GetBranch(ctx, "users/kim"); err != nil {
		t.Errorf("the caller's branch was not made: %v", err)
	}
	bad, err := adk.NewMemoryService(c, adk.MemoryServiceConfig{Branch: func(app, user string) string { return user }})
	if err != nil {
		t.Fatal(err)
	}
	var ve *day1.ValidationError
	if _, err := bad.SearchMemory(ctx, adkSearch{"a", "not a branch", "q"}.request()); !errors.As(err, &ve) || !strings.Contains(ve.Field, "MemoryServiceConfig.Branch") {
		t.Errorf("a bad branch name: %v", err)
	}
}

// TestErrors checks that bad input is refused with a *day1.ValidationError that names
// the field.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	c := openClient(t, day1.Config{})
	sessions, err := adk.NewSessionService(c, adk.SessionServiceConfig{})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := adk.NewMemoryService(c, adk.MemoryServiceConfig{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"session service client", func() error { _, err := adk.NewSessionService(nil, adk.SessionServiceConfig{}); return err }, "client"},
		{"session branch", func() error { _, err := adk.NewSessionService(c, adk.SessionServiceConfig{Branch: "a b"}); return err }, "SessionServiceConfig.Branch"},
		{"session parent", func() error { _, err := adk.NewSessionService(c, adk.SessionServiceConfig{Parent: "/"}); return err }, "SessionServiceConfig.Parent"},
		{"memory client", func() error { _, err := adk.NewMemoryService(nil, adk.MemoryServiceConfig{}); return err }, "client"},
		{"memory limit", func() error { _, err := adk.NewMemoryService(c, adk.MemoryServiceConfig{Limit: -2}); return err }, "MemoryServiceConfig.Limit"},
		{"memory floor", func() error {
			_, err := adk.NewMemoryService(c, adk.MemoryServiceConfig{MinRelevance: 1.5})
			return err
		}, "MemoryServiceConfig.MinRelevance"},
		{"memory parent", func() error { _, err := adk.NewMemoryService(c, adk.MemoryServiceConfig{Parent: "a..b"}); return err }, "MemoryServiceConfig.Parent"},
		{"create nil", func() error { _, err := sessions.Create(ctx, nil); return err }, "CreateRequest"},
		{"create app", func() error { _, err := sessions.Create(ctx, &session.CreateRequest{UserID: "u"}); return err }, "CreateRequest.AppName"},
		{"create user", func() error { _, err := sessions.Create(ctx, &session.CreateRequest{AppName: "a"}); return err }, "CreateRequest.UserID"},
		{"create state", func() error {
			_, err := sessions.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", State: map[string]any{"f": func() {}}})
			return err
		}, "CreateRequest.State"},
		{"get session", func() error { _, err := sessions.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u"}); return err }, "GetRequest.SessionID"},
		{"get recent", func() error {
			_, err := sessions.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "s", NumRecentEvents: -1})
			return err
		}, "GetRequest.NumRecentEvents"},
		{"list app", func() error { _, err := sessions.List(ctx, &session.ListRequest{UserID: "u"}); return err }, "ListRequest.AppName"},
		{"delete user", func() error { return sessions.Delete(ctx, &session.DeleteRequest{AppName: "a", SessionID: "s"}) }, "DeleteRequest.UserID"},
		{"append session", func() error { return sessions.AppendEvent(ctx, nil, &session.Event{}) }, "session"},
		{"add session", func() error { return mem.AddSessionToMemory(ctx, nil) }, "session"},
		{"search nil", func() error { _, err := mem.SearchMemory(ctx, nil); return err }, "SearchRequest"},
		{"search user", func() error {
			_, err := mem.SearchMemory(ctx, &memory.SearchRequest{AppName: "a", Query: "q"})
			return err
		}, "SearchRequest.UserID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var ve *day1.ValidationError
			if !errors.As(err, &ve) || !strings.Contains(ve.Field, tt.field) {
				t.Fatalf("error %v, want a *day1.ValidationError naming %s", err, tt.field)
			}
			if !errors.Is(err, day1.ErrInvalidArgument) {
				t.Errorf("%v does not match day1.ErrInvalidArgument", err)
			}
		})
	}
}
