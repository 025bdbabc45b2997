package mapfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestMapIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	want := bytes.Repeat([]byte("day1"), 5000)
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Bytes(), want) {
		t.Fatal("the mapping does not hold the file's bytes")
	}
	m.Bytes()[0] = 'X'
	if m.Bytes()[0] != 'X' {
		t.Fatal("a write to the mapping is not seen by the process")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("a write to the mapping reached the file")
	}
	if m.Bytes() != nil || m.Close() != nil {
		t.Fatal("a closed map still holds bytes, or fails to close again")
	}
}

func TestMapRefusesEmptyAndMissing(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(empty); err == nil {
		t.Fatal("an empty file was mapped")
	}
	if _, err := Open(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("a missing file: %v, want not-exist", err)
	}
}
