package day1

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTimeTravel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, clk := open(t, nil)
	if _, err := c.WriteFact(ctx, Fact{ID: "v1", Text: "The API runs on Go 1.22"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteRelation(ctx, Relation{ID: "r1", Source: "API", Type: "uses", Target: "MySQL"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteConversation(ctx, Conversation{ID: "conv"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendMessage(ctx, Message{ConversationID: "conv", Role: RoleUser, Content: "first"}); err != nil {
		t.Fatal(err)
	}
	snap, err := c.Snapshot(ctx, "", "before-upgrade", SnapshotOptions{Description: "before the upgrade"})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Branch != "main" || snap.Description != "before the upgrade" {
		t.Errorf("snapshot = %+v", snap)
	}
	between := clk.Peek()
	// After the snapshot: an update, a new fact, a deletion, a replaced relation, a
	// message.
	if _, err := c.WriteFact(ctx, Fact{ID: "v1", Text: "The API runs on Go 1.26"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, Fact{ID: "cache", Text: "Responses are cached in Redis"}); err != nil {
		t.Fatal(err)
	}
	r1, err := c.GetRelation(ctx, "", "r1")
	if err != nil {
		t.Fatal(err)
	}
	r1.ValidTo = clk.Now()
	if _, err := c.WriteRelation(ctx, r1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteRelation(ctx, Relation{ID: "r2", Source: "API", Type: "uses", Target: "Postgres"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendMessage(ctx, Message{ConversationID: "conv", Role: RoleAssistant, Content: "second"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "", Ref{Kind: KindConversation, ID: "conv"}); err != nil {
		t.Fatal(err)
	}

	type state struct {
		Facts     []string
		Graph     []string
		Messages  []string
		ConvFound bool
		Search    []string
		Timeline  int
	}
	read := func(r Reader) state {
		t.Helper()
		var s state
		facts, err := r.ListFacts(ctx, ListOptions{Order: OrderID})
		if err != nil {
			t.Fatal(err)
		}
		s.Facts = factTexts(facts)
		g, err := r.Graph(ctx, GraphQuery{Entity: "API"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range g.Edges {
			s.Graph = append(s.Graph, e.Target)
		}
		msgs, err := r.Messages(ctx, "", "conv")
		switch {
		case err == nil:
			s.ConvFound = true
			for _, m := range msgs {
				s.Messages = append(s.Messages, m.Content)
			}
		case !errors.Is(err, ErrNotFound):
			t.Fatal(err)
		}
		hits, err := r.Search(ctx, SearchQuery{Text: "Go API version", Mode: Keyword, WindowWeight: -1})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			s.Search = append(s.Search, h.Record.(Fact).Text)
		}
		evs, err := r.Timeline(ctx, TimelineQuery{})
		if err != nil {
			t.Fatal(err)
		}
		s.Timeline = len(evs)
		return s
	}
	then := state{
		Facts:     []string{"The API runs on Go 1.22"},
		Graph:     []string{"MySQL"},
		Messages:  []string{"first"},
		ConvFound: true,
		Search:    []string{"The API runs on Go 1.22"},
		Timeline:  4,
	}
	now := state{
		Facts:    []string{"Responses are cached in Redis", "The API runs on Go 1.26"},
		Graph:    []string{"Postgres"},
		Search:   []string{"The API runs on Go 1.26"},
		Timeline: 6, // two facts, two relations, the deleted conversation's two messages
	}
	tests := []struct {
		name string
		r    Reader
		want state
	}{
		{"head", c, now},
		{"snapshot", c.TimeTravel(AtSnapshot("before-upgrade")), then},
		{"time", c.TimeTravel(AtTime(between)), then},
		{"zero At", c.TimeTravel(At{}), now},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, read(tt.r)); diff != "" {
			t.Errorf("%s: state mismatch (-want +got):\n%s", tt.name, diff)
		}
	}

	v := c.TimeTravel(AtSnapshot("before-upgrade"))
	if v.At() != AtSnapshot("before-upgrade") {
		t.Errorf("View.At() = %+v", v.At())
	}
	if f, err := v.GetFact(ctx, "main", "v1"); err != nil || f.Text != "The API runs on Go 1.22" {
		t.Errorf("View.GetFact = %q, %v", f.Text, err)
	}
	if _, err := v.GetFact(ctx, "", "cache"); !errors.Is(err, ErrNotFound) {
		t.Errorf("View.GetFact of a later fact: err = %v, want ErrNotFound", err)
	}
	if _, err := c.TimeTravel(AtSnapshot("missing")).ListFacts(ctx, ListOptions{}); !errors.Is(err, ErrSnapshotNotFound) {
		t.Errorf("missing snapshot: err = %v, want ErrSnapshotNotFound", err)
	}
	bad := c.TimeTravel(At{Snapshot: "before-upgrade", Time: time.Now()})
	var ve *ValidationError
	if _, err := bad.ListFacts(ctx, ListOptions{}); !errors.As(err, &ve) || ve.Field != "At" {
		t.Errorf("At with both fields: err = %v, want a *ValidationError on At", err)
	}

	snaps, err := c.Snapshots(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 1 || snaps[0].Name != "before-upgrade" {
		t.Errorf("Snapshots = %+v", snaps)
	}
	if _, err := c.Snapshot(ctx, "main", "before-upgrade", SnapshotOptions{}); !errors.Is(err, ErrSnapshotExists) {
		t.Errorf("repeated Snapshot: err = %v, want ErrSnapshotExists", err)
	}
	if err := c.DeleteSnapshot(ctx, "before-upgrade"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSnapshot(ctx, "before-upgrade"); !errors.Is(err, ErrSnapshotNotFound) {
		t.Errorf("GetSnapshot after delete: err = %v, want ErrSnapshotNotFound", err)
	}
}

func TestBranchFromSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	if _, err := c.WriteFact(ctx, Fact{ID: "a", Text: "Fact A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Snapshot(ctx, "main", "s1", SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, Fact{ID: "b", Text: "Fact B"}); err != nil {
		t.Fatal(err)
	}
	b, err := c.Branch(ctx, "replay", BranchOptions{At: AtSnapshot("s1"), Description: "from s1"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Parent != "main" || b.FromSnap != "s1" || b.Description != "from s1" {
		t.Errorf("branch = %+v", b)
	}
	facts, err := c.ListFacts(ctx, ListOptions{Branch: "replay"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Fact A"}, factTexts(facts)); diff != "" {
		t.Errorf("facts of a branch forked at s1 (-want +got):\n%s", diff)
	}
}
