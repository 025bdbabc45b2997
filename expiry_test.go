package day1

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/day1ai/day1/store/sqlite"
)

// TestExpiry writes facts that expire, by TTL and by ExpiresAt, and checks what the
// Client's reads show as its clock passes their expiry: searches and lists at the head
// leave them out unless asked for expired facts, a View before the expiry still shows
// them, gets always do; and an expiry in the past, or a negative TTL, is refused.
func TestExpiry(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"memory", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			c, clk := open(t, func(cfg *Config) {
				if kind == "sqlite" {
					cfg.Backend = sqlite.Options{Path: t.TempDir()}
				}
			})
			start := clk.Peek()
			if _, err := c.WriteFacts(ctx, []Fact{
				{ID: "freeze", Text: "The deploy freeze holds this week", TTL: time.Hour},
				{ID: "window", Text: "The deploy window opens on Monday", ExpiresAt: start.Add(3 * time.Hour)},
				{ID: "owner", Text: "The deploy runbook belongs to the platform team"},
			}); err != nil {
				t.Fatal(err)
			}
			f, err := c.GetFact(ctx, "", "freeze")
			if err != nil || f.ExpiresAt.Sub(f.CreatedAt) != time.Hour {
				t.Fatalf("freeze: created %v, expires %v (%v); want an hour apart", f.CreatedAt, f.ExpiresAt, err)
			}
			found := func(q SearchQuery) []string {
				t.Helper()
				q.Text, q.Mode = "deploy", Keyword
				hits, err := c.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				ids := hitIDs(hits)
				slices.Sort(ids)
				return ids
			}
			listed := func(o ListOptions) []string {
				t.Helper()
				fs, err := c.ListFacts(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, f := range fs {
					ids = append(ids, f.ID)
				}
				slices.Sort(ids)
				return ids
			}
			all := []string{"freeze", "owner", "window"}
			if got := found(SearchQuery{}); !slices.Equal(got, all) {
				t.Errorf("search before any expiry: %v; want %v", got, all)
			}
			clk.Advance(2 * time.Hour)
			want := []string{"owner", "window"}
			if got := found(SearchQuery{}); !slices.Equal(got, want) {
				t.Errorf("search two hours later: %v; want %v", got, want)
			}
			if got := listed(ListOptions{}); !slices.Equal(got, want) {
				t.Errorf("list two hours later: %v; want %v", got, want)
			}
			if got := found(SearchQuery{IncludeExpired: true}); !slices.Equal(got, all) {
				t.Errorf("search with IncludeExpired: %v; want %v", got, all)
			}
			if got := listed(ListOptions{IncludeExpired: true}); !slices.Equal(got, all) {
				t.Errorf("list with IncludeExpired: %v; want %v", got, all)
			}
			logged := func(q TimelineQuery) []string {
				t.Helper()
				q.Kinds = []Kind{KindFact}
				evs, err := c.Timeline(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, e := range evs {
					ids = append(ids, e.Ref.ID)
				}
				slices.Sort(ids)
				return ids
			}
			if got := logged(TimelineQuery{}); !slices.Equal(got, want) {
				t.Errorf("timeline two hours later: %v; want %v", got, want)
			}
			if got := logged(TimelineQuery{IncludeExpired: true}); !slices.Equal(got, all) {
				t.Errorf("timeline with IncludeExpired: %v; want %v", got, all)
			}
			then := c.TimeTravel(At{Time: start.Add(30 * time.Minute)})
			hits, err := then.Search(ctx, SearchQuery{Text: "deploy", Mode: Keyword})
			if got := hitIDs(hits); err != nil || len(got) != 3 {
				t.Errorf("search of the past before any expiry: %v, %v; want all three", got, err)
			}
			if _, err := c.GetFact(ctx, "", "freeze"); err != nil {
				t.Errorf("get of an expired fact: %v", err)
			}
			clk.Advance(2 * time.Hour)
			if got := found(SearchQuery{}); !slices.Equal(got, []string{"owner"}) {
				t.Errorf("search four hours later: %v; want [owner]", got)
			}

			for field, f := range map[string]Fact{
				"Fact.ExpiresAt": {Text: "The cache is warm", ExpiresAt: clk.Peek().Add(-time.Minute)},
				"Fact.TTL":       {Text: "The cache is warm", TTL: -time.Minute},
			} {
				_, err := c.WriteFact(ctx, f)
				var ve *ValidationError
				if !errors.As(err, &ve) || ve.Field != field {
					t.Errorf("write with a bad %s: %v; want a *ValidationError naming it", field, err)
				}
			}
		})
	}
}
