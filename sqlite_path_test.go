package day1_test

import (
	"context"
	"testing"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store/sqlite"
)

// TestPathOpensSQLiteMemory checks that Config.Path opens a folder that holds a
// memory kept in SQLite as one, and a new folder as the log store.
func TestPathOpensSQLiteMemory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := day1.Open(ctx, day1.Config{Backend: sqlite.Options{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{Text: "The cache TTL is 12 hours"}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, err = day1.Open(ctx, day1.Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.Capabilities().Store; got != "sqlite" {
		t.Errorf("Config.Path of a SQLite memory opened store %q; want sqlite", got)
	}
	hits, err := c.Search(ctx, day1.SearchQuery{Text: "cache TTL"})
	if err != nil || len(hits) != 1 {
		t.Errorf("Search = %v, %v; want the fact written before", hits, err)
	}
	other, err := day1.Open(ctx, day1.Config{Path: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if got := other.Capabilities().Store; got != "memstore" {
		t.Errorf("Config.Path of a new folder opened store %q; want memstore", got)
	}
}
