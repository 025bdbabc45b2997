package adk_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/sessiontestsuite"
	"google.golang.org/genai"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/contrib/adk"
)

// TestSessionServiceSuite runs ADK's own conformance suite for session services
// against the SessionService, on every store.
func TestSessionServiceSuite(t *testing.T) {
	for _, s := range stores() {
		for _, perSession := range []bool{false, true} {
			name := s.name
			if perSession {
				name += "/branch-per-session"
			}
			t.Run(name, func(t *testing.T) {
				sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true},
					func(t *testing.T) session.Service {
						svc, err := adk.NewSessionService(openClient(t, s.config(t)), adk.SessionServiceConfig{BranchPerSession: perSession})
						if err != nil {
							t.Fatal(err)
						}
						return svc
					})
			})
		}
	}
}

// TestBranchPerSession keeps two sessions on branches of their own: each session's
// events are on its branch and not on the other's or the service's, the two share
// the user's state, and a session's branch diffs against the service's branch as
// that session's log.
func TestBranchPerSession(t *testing.T) {
	ctx := context.Background()
	c := openClient(t, day1.Config{})
	svc, err := adk.NewSessionService(c, adk.SessionServiceConfig{BranchPerSession: true})
	if err != nil {
		t.Fatal(err)
	}
	var sessions []session.Session
	for _, id := range []string{"s1", "s2"} {
		res, err := svc.Create(ctx, &session.CreateRequest{AppName: "shop", UserID: "ana", SessionID: id, State: map[string]any{"user:lang": "pt"}})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, res.Session)
	}
	ev := session.NewEvent(ctx, "inv-1")
	ev.Author = "user"
	ev.Content = genai.NewContentFromText("Where is my parcel?", genai.RoleUser)
	ev.Actions.StateDelta = map[string]any{"user:lang": "en"}
	if err := svc.AppendEvent(ctx, sessions[0], ev); err != nil {
		t.Fatal(err)
	}
	b1, b2 := svc.SessionBranch("shop", "ana", "s1"), svc.SessionBranch("shop", "ana", "s2")
	if b1 == b2 || !strings.HasPrefix(b1, svc.Branch()+"/") {
		t.Fatalf("session branches %q and %q; want two under %q", b1, b2, svc.Branch())
	}
	for branch, want := range map[string]int{b1: 1, b2: 0} {
		key := adk.SessionKey("shop", "ana", map[string]string{b1: "s1", b2: "s2"}[branch])
		msgs, err := c.Messages(ctx, branch, key)
		if err != nil || len(msgs) != want {
			t.Errorf("messages on %s: %d (%v); want %d", branch, len(msgs), err, want)
		}
	}
	got, err := svc.Get(ctx, &session.GetRequest{AppName: "shop", UserID: "ana", SessionID: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if lang, _ := got.Session.State().Get("user:lang"); lang != "en" || got.Session.Events().Len() != 0 {
		t.Errorf("s2: user:lang %v, %d events; want the user state en that s1 set, and no events", lang, got.Session.Events().Len())
	}
	d, err := c.Diff(ctx, b1, svc.Branch())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.SourceChanges) != 2 { // the session's conversation and its one message
		t.Errorf("the diff of s1's branch: %d changes; want its conversation and one message", len(d.SourceChanges))
	}
	list, err := svc.List(ctx, &session.ListRequest{AppName: "shop", UserID: "ana"})
	if err != nil || len(list.Sessions) != 2 || list.Sessions[0].ID() != "s1" {
		t.Fatalf("List: %v, %v; want s1 then s2", list, err)
	}
	if err := svc.Delete(ctx, &session.DeleteRequest{AppName: "shop", UserID: "ana", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if list, err := svc.List(ctx, &session.ListRequest{AppName: "shop"}); err != nil || len(list.Sessions) != 1 || list.Sessions[0].ID() != "s2" {
		t.Errorf("List after deleting s1: %v, %v; want s2 alone", list, err)
	}
}

// TestSessionsAreDurable appends events, closes the memory, opens it again in a new
// Client and finds the session as it was: events, state and order.
func TestSessionsAreDurable(t *testing.T) {
	for _, s := range stores() {
		if !s.durable {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := s.config(t)
			c, err := day1.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			svc, err := adk.NewSessionService(c, adk.SessionServiceConfig{})
			if err != nil {
				t.Fatal(err)
			}
			created, err := svc.Create(ctx, &session.CreateRequest{AppName: "travel", UserID: "ana", SessionID: "trip/1", State: map[string]any{"lang": "pt", "user:home": "Porto"}})
			if err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			events := []*session.Event{
				{ID: "e1", Author: "user", InvocationID: "i1", Timestamp: at,
					LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("Book me a window seat", genai.RoleUser)}},
				{ID: "e2", Author: "concierge", InvocationID: "i1", Timestamp: at.Add(time.Second),
					LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
						genai.NewPartFromFunctionCall("book_seat", map[string]any{"seat": "12A"})}}}},
				{ID: "e3", Author: "concierge", InvocationID: "i1", Timestamp: at.Add(2 * time.Second),
					LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("Seat 12A is yours", genai.RoleModel)},
					Actions:     session.EventActions{StateDelta: map[string]any{"seat": "12A", "temp:draft": "x", "app:flights": float64(3)}}},
			}
			for _, e := range events {
				if err := svc.AppendEvent(ctx, created.Session, e); err != nil {
					t.Fatalf("AppendEvent %s: %v", e.ID, err)
				}
			}
			// The caller's copy sees the temporary key for the rest of the invocation.
			if v, err := created.Session.State().Get("temp:draft"); err != nil || v != "x" {
				t.Errorf("the caller's session lacks the temporary key: %v, %v", v, err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}

			c2 := openClient(t, cfg)
			svc2, err := adk.NewSessionService(c2, adk.SessionServiceConfig{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := svc2.Get(ctx, &session.GetRequest{AppName: "travel", UserID: "ana", SessionID: "trip/1"})
			if err != nil {
				t.Fatal(err)
			}
			snap := sessiontestsuite.Snapshot(got.Session)
			wantState := map[string]any{"lang": "pt", "seat": "12A", "user:home": "Porto", "app:flights": float64(3)}
			if d := cmp.Diff(wantState, snap.State); d != "" {
				t.Errorf("state after reopening (-want +got):\n%s", d)
			}
			var texts []string
			for _, e := range snap.Events {
				texts = append(texts, e.ID+":"+e.Author)
			}
			if d := cmp.Diff([]string{"e1:user", "e2:concierge", "e3:concierge"}, texts); d != "" {
				t.Errorf("events after reopening (-want +got):\n%s", d)
			}
			if call := snap.Events[1].Content.Parts[0].FunctionCall; call == nil || call.Args["seat"] != "12A" {
				t.Errorf("the function call did not survive: %+v", snap.Events[1].Content)
			}
			if _, ok := snap.Events[2].Actions.StateDelta["temp:draft"]; ok {
				t.Errorf("a temporary key was kept: %v", snap.Events[2].Actions.StateDelta)
			}
			if !got.Session.LastUpdateTime().Equal(at.Add(2 * time.Second)) {
				t.Errorf("LastUpdateTime = %v", got.Session.LastUpdateTime())
			}

			// The log is a day1 conversation of readable messages.
			msgs, err := c2.Messages(ctx, svc2.Branch(), adk.SessionKey("travel", "ana", "trip/1"))
			if err != nil {
				t.Fatal(err)
			}
			var log []string
			for _, m := range msgs {
				log = append(log, string(m.Role)+" "+m.Content)
			}
			want := []string{"user Book me a window seat", `tool_call book_seat({"seat":"12A"})`, "assistant Seat 12A is yours"}
			if d := cmp.Diff(want, log); d != "" {
				t.Errorf("the day1 conversation (-want +got):\n%s", d)
			}
			sess, err := c2.GetSession(ctx, adk.SessionKey("travel", "ana", "trip/1"))
			if err != nil || sess.Metadata[adk.MetaSession] != "trip/1" || sess.Project != "travel" {
				t.Errorf("the day1 session: %+v, %v", sess, err)
			}
		})
	}
}

// TestAppendEvent covers what AppendEvent adds to ADK's suite: a retried append, an
// event too large to keep, IDs and times filled in, and the deleted session.
func TestAppendEvent(t *testing.T) {
	forEachStore(t, func(t *testing.T, c *day1.Client) {
		ctx := context.Background()
		svc, err := adk.NewSessionService(c, adk.SessionServiceConfig{Branch: "agents/sessions"})
		if err != nil {
			t.Fatal(err)
		}
		created, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u"})
		if err != nil {
			t.Fatal(err)
		}
		e := &session.Event{Author: "user", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("hello", genai.RoleUser)}}
		if err := svc.AppendEvent(ctx, created.Session, e); err != nil {
			t.Fatal(err)
		}
		if e.ID == "" || e.Timestamp.IsZero() {
			t.Errorf("the event was given no ID or time: %q, %v", e.ID, e.Timestamp)
		}
		if err := svc.AppendEvent(ctx, created.Session, e); err != nil {
			t.Fatalf("a retried append: %v", err)
		}
		big := &session.Event{Author: "tool", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText(strings.Repeat("long ", adk.MaxJSON/5+1), genai.RoleModel)}}
		var ve *day1.ValidationError
		if err := svc.AppendEvent(ctx, created.Session, big); !errors.As(err, &ve) || ve.Field != "Event" {
			t.Errorf("an event over MaxJSON: %v", err)
		}
		// An event under the limit spans many metadata values, cut between the bytes
		// of a character ("é " is three bytes), and comes back whole.
		wide := &session.Event{Author: "tool", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText(strings.Repeat("é ", adk.MaxJSON/5), genai.RoleModel)}}
		if err := svc.AppendEvent(ctx, created.Session, wide); err != nil {
			t.Fatalf("an event of %d bytes of text: %v", adk.MaxJSON/5*3, err)
		}
		got, err := svc.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: created.Session.ID()})
		if err != nil {
			t.Fatal(err)
		}
		if n := got.Session.Events().Len(); n != 2 {
			t.Fatalf("%d events, want 2 (a retried append adds nothing, a refused one nothing)", n)
		}
		if d := cmp.Diff(wide.Content, got.Session.Events().At(1).Content); d != "" {
			t.Errorf("the wide event (-want +got):\n%s", d)
		}
		if err := svc.Delete(ctx, &session.DeleteRequest{AppName: "a", UserID: "u", SessionID: created.Session.ID()}); err != nil {
			t.Fatal(err)
		}
		if err := svc.AppendEvent(ctx, created.Session, &session.Event{Author: "user"}); !errors.Is(err, day1.ErrNotFound) {
			t.Errorf("appending to a deleted session: %v", err)
		}
		if _, err := svc.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: created.Session.ID()}); !errors.Is(err, day1.ErrNotFound) {
			t.Errorf("getting a deleted session: %v", err)
		}
		if sess, err := c.GetSession(ctx, adk.SessionKey("a", "u", created.Session.ID())); err != nil || sess.Status != day1.SessionAbandoned {
			t.Errorf("the deleted session's day1 record: %+v, %v", sess, err)
		}
		// The same ID can be created again.
		if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: created.Session.ID()}); err != nil {
			t.Errorf("creating a deleted session's ID again: %v", err)
		}
	})
}
