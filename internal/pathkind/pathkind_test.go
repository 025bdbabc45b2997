package pathkind_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/day1ai/day1/internal/pathkind"
	"github.com/day1ai/day1/internal/testkit"
)

func TestFor(t *testing.T) {
	root := t.TempDir()
	sq, lg, other := filepath.Join(root, "sqlite"), filepath.Join(root, "log"), filepath.Join(root, "other")
	testkit.MakeMemory(t, "sqlite", sq)
	testkit.MakeMemory(t, "log", lg)
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path       string
		want       pathkind.Kind
		held, open pathkind.Kind
	}{
		{sq, "", pathkind.SQLite, pathkind.SQLite},
		{sq, pathkind.Log, pathkind.SQLite, pathkind.SQLite},
		{lg, "", pathkind.Log, pathkind.Log},
		{lg, pathkind.SQLite, pathkind.Log, pathkind.Log},
		{filepath.Join(root, "missing"), "", "", pathkind.SQLite},
		{filepath.Join(root, "missing"), pathkind.Log, "", pathkind.Log},
		{other, "", "", pathkind.SQLite},
	} {
		if got := pathkind.Held(c.path); got != c.held {
			t.Errorf("Held(%s) = %q; want %q", filepath.Base(c.path), got, c.held)
		}
		if got := pathkind.For(c.path, c.want); got != c.open {
			t.Errorf("For(%s, %q) = %q; want %q", filepath.Base(c.path), c.want, got, c.open)
		}
	}
}
