package day1

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTimeline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	steps := []func() error{
		func() error {
			_, err := c.WriteConversation(ctx, Conversation{ID: "conv", SessionID: "s1", Title: "Debug login"})
			return err
		},
		func() error {
			_, err := c.AppendMessage(ctx, Message{ConversationID: "conv", SessionID: "s1", Role: RoleUser, Content: "Login\n  is broken"})
			return err
		},
		func() error {
			_, err := c.WriteObservation(ctx, Observation{ID: "obs", SessionID: "s1", Type: ObsToolUse, Tool: "curl", Summary: "POST /login returned 500"})
			return err
		},
		func() error {
			_, err := c.AppendMessage(ctx, Message{ConversationID: "conv", SessionID: "s1", Role: RoleAssistant, Content: "The token check panics"})
			return err
		},
		func() error {
			_, err := c.WriteFact(ctx, Fact{ID: "fact", SessionID: "s1", Text: "Login panics when the token has no expiry"})
			return err
		},
		func() error {
			_, err := c.WriteRelation(ctx, Relation{ID: "rel", SessionID: "s1", Source: "LoginHandler", Type: "calls", Target: "TokenCheck"})
			return err
		},
		func() error {
			_, err := c.WriteFact(ctx, Fact{ID: "other", SessionID: "s2", Text: "Another session's fact"})
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		Kind    Kind
		ID      string
		Summary string
	}
	rows := func(evs []Event) []row {
		var out []row
		for i, e := range evs {
			if i > 0 && e.At.Before(evs[i-1].At) {
				t.Errorf("event %d at %v is before event %d at %v", i, e.At, i-1, evs[i-1].At)
			}
			if e.Ref != RefOf(e.Record) || !e.At.Equal(e.Record.RecordTime()) {
				t.Errorf("event %d: Ref %v, At %v do not match its record", i, e.Ref, e.At)
			}
			out = append(out, row{e.Ref.Kind, e.Ref.ID, e.Summary})
		}
		return out
	}
	evs, err := c.Timeline(ctx, TimelineQuery{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []row{
		{KindConversation, "conv", "conversation: Debug login"},
		{KindMessage, "id-000001", "#1 user: Login is broken"},
		{KindObservation, "obs", "tool_use (curl): POST /login returned 500"},
		{KindMessage, "id-000002", "#2 assistant: The token check panics"},
		{KindFact, "fact", "Login panics when the token has no expiry"},
		{KindRelation, "rel", "LoginHandler -calls-> TokenCheck"},
	}
	if diff := cmp.Diff(want, rows(evs)); diff != "" {
		t.Errorf("Timeline mismatch (-want +got):\n%s", diff)
	}

	evs, err = c.Timeline(ctx, TimelineQuery{Kinds: []Kind{KindMessage, KindFact}, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	want = []row{
		{KindMessage, "id-000001", "#1 user: Login is broken"},
		{KindMessage, "id-000002", "#2 assistant: The token check panics"},
		{KindFact, "fact", "Login panics when the token has no expiry"},
	}
	if diff := cmp.Diff(want, rows(evs)); diff != "" {
		t.Errorf("Timeline of kinds with limit mismatch (-want +got):\n%s", diff)
	}

	// Newest: the latest three of those kinds, latest first.
	evs, err = c.Timeline(ctx, TimelineQuery{Kinds: []Kind{KindMessage, KindFact}, Limit: 3, Newest: true})
	if err != nil {
		t.Fatal(err)
	}
	var newest []string
	for i, e := range evs {
		newest = append(newest, e.Ref.ID)
		if i > 0 && e.At.After(evs[i-1].At) {
			t.Errorf("newest first: event %d at %v is after event %d at %v", i, e.At, i-1, evs[i-1].At)
		}
	}
	if diff := cmp.Diff([]string{"other", "fact", "id-000002"}, newest); diff != "" {
		t.Errorf("Timeline newest first (-want +got):\n%s", diff)
	}

	// Since and Until select a time range.
	obs, err := c.GetObservation(ctx, "", "obs")
	if err != nil {
		t.Fatal(err)
	}
	fact, err := c.GetFact(ctx, "", "fact")
	if err != nil {
		t.Fatal(err)
	}
	evs, err = c.Timeline(ctx, TimelineQuery{Since: obs.CreatedAt, Until: fact.CreatedAt})
	if err != nil {
		t.Fatal(err)
	}
	want = []row{
		{KindObservation, "obs", "tool_use (curl): POST /login returned 500"},
		{KindMessage, "id-000002", "#2 assistant: The token check panics"},
	}
	if diff := cmp.Diff(want, rows(evs)); diff != "" {
		t.Errorf("Timeline of a time range mismatch (-want +got):\n%s", diff)
	}
}

func TestTimelineSameInstantOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A frozen clock: every record has the same creation time, so kind and Seq decide.
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c, _ := open(t, func(cfg *Config) { cfg.Test.Now = func() time.Time { return at } })
	if _, err := c.WriteFact(ctx, Fact{ID: "f", Text: "A fact"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteConversation(ctx, Conversation{ID: "c"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.AppendMessage(ctx, Message{ConversationID: "c", Role: RoleUser, Content: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := c.Timeline(ctx, TimelineQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Summary)
	}
	want := []string{"A fact", "conversation", "#1 user: m", "#2 user: m", "#3 user: m"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("same-instant order mismatch (-want +got):\n%s", diff)
	}
}

func TestTimelineInvalid(t *testing.T) {
	t.Parallel()
	c, _ := open(t, nil)
	tests := []struct {
		q     TimelineQuery
		field string
	}{
		{TimelineQuery{Limit: -1}, "TimelineQuery.Limit"},
		{TimelineQuery{Kinds: []Kind{"note"}}, "TimelineQuery.Kinds"},
		{TimelineQuery{Since: t0, Until: t0}, "Filter.Until"},
	}
	for _, tt := range tests {
		_, err := c.Timeline(context.Background(), tt.q)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tt.field {
			t.Errorf("Timeline(%+v): err = %v, want a *ValidationError on %s", tt.q, err, tt.field)
		}
	}
}

func TestTimelineByUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	for _, f := range []Fact{
		{ID: "a", Text: "The cache TTL is 24 hours"},
		{ID: "b", Text: "Deploys run on Fridays"},
		{ID: "c", Text: "The API gateway is Envoy"},
	} {
		if _, err := c.WriteFact(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	cFact, err := c.GetFact(ctx, "", "c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, Fact{ID: "a", Text: "The cache TTL is 12 hours"}); err != nil {
		t.Fatal(err)
	}
	aFact, err := c.GetFact(ctx, "", "a")
	if err != nil {
		t.Fatal(err)
	}
	if !aFact.UpdatedAt.After(cFact.CreatedAt) {
		t.Fatalf("the update of a at %v is not after c's creation at %v", aFact.UpdatedAt, cFact.CreatedAt)
	}
	ids := func(q TimelineQuery) ([]string, []Event) {
		t.Helper()
		evs, err := c.Timeline(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range evs {
			out = append(out, e.Ref.ID)
		}
		return out, evs
	}
	got, evs := ids(TimelineQuery{Newest: true, ByUpdate: true, Limit: 2})
	if diff := cmp.Diff([]string{"a", "c"}, got); diff != "" {
		t.Errorf("newest by update (-want +got):\n%s", diff)
	}
	if len(evs) > 0 && (!evs[0].At.Equal(aFact.UpdatedAt) || evs[0].Summary != "The cache TTL is 12 hours") {
		t.Errorf("the update's event: At %v, %q; want %v and the new text", evs[0].At, evs[0].Summary, aFact.UpdatedAt)
	}
	if got, _ := ids(TimelineQuery{Newest: true, Limit: 2}); !cmp.Equal([]string{"c", "b"}, got) {
		t.Errorf("newest by creation = %v; want [c b]", got)
	}
	if got, _ := ids(TimelineQuery{ByUpdate: true}); !cmp.Equal([]string{"b", "c", "a"}, got) {
		t.Errorf("oldest first by update = %v; want [b c a]", got)
	}
	// Since bounds the update time: only the update is after c's creation.
	since := cFact.CreatedAt.Add(time.Nanosecond)
	if got, _ := ids(TimelineQuery{ByUpdate: true, Since: since}); !cmp.Equal([]string{"a"}, got) {
		t.Errorf("by update since c = %v; want [a]", got)
	}
	if got, _ := ids(TimelineQuery{Since: since}); len(got) != 0 {
		t.Errorf("by creation since c = %v; want none", got)
	}
	// Pages of one event, by Offset, hold the timeline in order.
	var paged []string
	for off := range 4 {
		got, _ := ids(TimelineQuery{ByUpdate: true, Newest: true, Limit: 1, Offset: off})
		paged = append(paged, got...)
	}
	if !cmp.Equal([]string{"a", "c", "b"}, paged) {
		t.Errorf("pages of one, newest by update = %v; want [a c b]", paged)
	}
	for _, off := range []int{-1, 1 << 41} {
		if _, err := c.Timeline(ctx, TimelineQuery{Offset: off}); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "TimelineQuery.Offset") {
			t.Errorf("offset %d: %v; want ErrInvalidArgument naming TimelineQuery.Offset", off, err)
		}
	}
}
