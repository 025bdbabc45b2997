package day1_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store/memstore"
	"github.com/day1ai/day1/store/sqlite"
)

// TestPathOpensSQLiteMemory checks what Config.Path opens: a folder that holds a
// memory kept in SQLite as one, a new folder as one too, a folder of a log store's
// memory as the log store, and a folder of other files not at all (nothing is
// written there).
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
	if got := other.Capabilities().Store; got != "sqlite" {
		t.Errorf("Config.Path of a new folder opened store %q; want sqlite", got)
	}
	logDir := t.TempDir()
	logMem, err := day1.Open(ctx, day1.Config{Backend: memstore.Options{Path: logDir}})
	if err != nil {
		t.Fatal(err)
	}
	logMem.Close()
	logMem, err = day1.Open(ctx, day1.Config{Path: logDir})
	if err != nil {
		t.Fatal(err)
	}
	defer logMem.Close()
	if got := logMem.Capabilities().Store; got != "memstore" {
		t.Errorf("Config.Path of a log store's memory opened store %q; want memstore", got)
	}
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("not a memory"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := day1.Open(ctx, day1.Config{Path: foreign}); !errors.Is(err, day1.ErrInvalidArgument) || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("Config.Path of a folder of other files: %v; want ErrInvalidArgument naming the file", err)
	}
	if ents, _ := os.ReadDir(foreign); len(ents) != 1 {
		t.Errorf("the refused folder holds %d files; want only notes.txt", len(ents))
	}
}
