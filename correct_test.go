package day1

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestCorrectFact(t *testing.T) {
	ctx := context.Background()
	c, clk := open(t, nil)
	w, err := c.WriteFact(ctx, Fact{ID: "ttl", Text: "The cache TTL is 24 hours", Category: "config"})
	if err != nil {
		t.Fatal(err)
	}
	before := clk.Now()

	// Update: a new version; the old one stays in the past.
	got, err := c.CorrectFact(ctx, FactCorrection{ID: "ttl", Action: CorrectUpdate, Text: ptr("The cache TTL is 12 hours"),
		Confidence: ptr(0.9), Metadata: map[string]string{"source": "ops"}, By: "agent-b", Why: "the config changed on Monday"})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "ttl" || got.Text != "The cache TTL is 12 hours" || got.Confidence != 0.9 || got.Category != "config" ||
		got.Metadata["source"] != "ops" || got.Metadata["corrected_by"] != "agent-b" ||
		got.Metadata["correction_reason"] != "the config changed on Monday" || got.Metadata["correction"] != "update" {
		t.Errorf("updated fact = %+v", got)
	}
	if hits, _ := c.Search(ctx, SearchQuery{Text: "cache TTL 12 hours", Limit: 1}); len(hits) != 1 || hits[0].Record.RecordID() != "ttl" {
		t.Errorf("search for the new text = %v", hitIDs(hits))
	}
	old, err := c.TimeTravel(AtTime(before)).GetFact(ctx, "", "ttl")
	if err != nil || old.Text != w.Record.Text {
		t.Errorf("the past reads %q, %v; want the old text", old.Text, err)
	}

	// Invalidate: out of search, readable by id, with who and why.
	got, err = c.CorrectFact(ctx, FactCorrection{ID: "ttl", Action: CorrectInvalidate, By: "lead", Why: "the cache was removed"})
	if err != nil || got.Status != FactInvalidated || got.Metadata["correction"] != "invalidate" || got.Metadata["corrected_by"] != "lead" {
		t.Fatalf("invalidated = %+v, %v", got, err)
	}
	if hits, _ := c.Search(ctx, SearchQuery{Text: "cache TTL", Mode: Keyword}); len(hits) != 0 {
		t.Errorf("an invalidated fact is found: %v", hitIDs(hits))
	}
	_, err = c.CorrectFact(ctx, FactCorrection{ID: "ttl", Action: CorrectUpdate, Text: ptr("again"), By: "x", Why: "y"})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "FactCorrection.ID" {
		t.Errorf("correcting an invalidated fact: %v; want a *ValidationError for FactCorrection.ID", err)
	}

	// Delete: gone from the branch, its last version records who and why.
	if _, err := c.WriteFact(ctx, Fact{ID: "db", Text: "Postgres 15 holds the users"}); err != nil {
		t.Fatal(err)
	}
	mid := clk.Now()
	got, err = c.CorrectFact(ctx, FactCorrection{ID: "db", Action: CorrectDelete, By: "lead", Why: "written by mistake"})
	if err != nil || got.Metadata["correction"] != "delete" {
		t.Fatalf("deleted = %+v, %v", got, err)
	}
	if _, err := c.GetFact(ctx, "", "db"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetFact after delete: %v; want ErrNotFound", err)
	}
	if f, err := c.TimeTravel(AtTime(mid)).GetFact(ctx, "", "db"); err != nil || f.Status != FactActive {
		t.Errorf("the past before the delete reads %+v, %v", f, err)
	}
	if _, err := c.CorrectFact(ctx, FactCorrection{ID: "db", Action: CorrectInvalidate, By: "x", Why: "y"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("correcting a deleted fact: %v; want ErrNotFound", err)
	}
}

func TestCorrectFactRefusesBadCorrections(t *testing.T) {
	ctx := context.Background()
	c, _ := open(t, nil)
	meta := map[string]string{}
	for i := range 64 {
		meta[fmt.Sprint("k", i)] = "v"
	}
	if _, err := c.WriteFact(ctx, Fact{ID: "f", Text: "a fact with all the metadata it may have", Metadata: meta}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		fc    FactCorrection
		field string
	}{
		{"no id", FactCorrection{Action: CorrectInvalidate, By: "a", Why: "b"}, "FactCorrection.ID"},
		{"unknown action", FactCorrection{ID: "f", Action: "rewrite", By: "a", Why: "b"}, "FactCorrection.Action"},
		{"update of nothing", FactCorrection{ID: "f", Action: CorrectUpdate, By: "a", Why: "b"}, "FactCorrection"},
		{"empty text", FactCorrection{ID: "f", Action: CorrectUpdate, Text: ptr(" "), By: "a", Why: "b"}, "FactCorrection.Text"},
		{"confidence above 1", FactCorrection{ID: "f", Action: CorrectUpdate, Confidence: ptr(1.5), By: "a", Why: "b"}, "FactCorrection.Confidence"},
		{"text on a delete", FactCorrection{ID: "f", Action: CorrectDelete, Text: ptr("x"), By: "a", Why: "b"}, "FactCorrection"},
		{"nobody", FactCorrection{ID: "f", Action: CorrectInvalidate, Why: "b"}, "FactCorrection.By"},
		{"no reason", FactCorrection{ID: "f", Action: CorrectInvalidate, By: "a", Why: "  "}, "FactCorrection.Why"},
	} {
		_, err := c.CorrectFact(ctx, tc.fc)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: %v; want a *ValidationError for %s", tc.name, err, tc.field)
		}
	}
	if _, err := c.CorrectFact(ctx, FactCorrection{ID: "nope", Action: CorrectInvalidate, By: "a", Why: "b"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown fact: %v; want ErrNotFound", err)
	}
	// The correction's own keys do not count against the 64 pairs the fact has.
	got, err := c.CorrectFact(ctx, FactCorrection{ID: "f", Action: CorrectUpdate, Category: ptr("misc"), By: "a", Why: "b"})
	if err != nil || got.Category != "misc" || len(got.Metadata) != 67 {
		t.Errorf("a correction of a fact with 64 pairs = %d pairs, %v", len(got.Metadata), err)
	}
	if f, _ := c.GetFact(ctx, "", "f"); f.Category != "misc" {
		t.Errorf("stored category %q", f.Category)
	}
}
