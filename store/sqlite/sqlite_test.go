package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/filelock"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/sqlite"
)

// TestTwoOpenersShareOneMemory opens one folder twice, as two processes would (each
// opener has its own connections, and SQLite locks the file across processes the
// same way): writers on both take turns and every write lands once, and each sees
// the other's commits without reopening.
func TestTwoOpenersShareOneMemory(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir, sqlite.Options{NoSync: true})
	defer a.Close()
	b := open(t, dir, sqlite.Options{NoSync: true})
	defer b.Close()
	ctx := context.Background()

	const per = 25
	var wg sync.WaitGroup
	errs := make(chan error, 2*per)
	for w, s := range []store.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				f := store.Fact{ID: fmt.Sprintf("w%d-%d", w, i), Text: fmt.Sprintf("writer %d wrote fact number %d", w, i)}
				if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{f}, store.PutOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Put: %v", err)
	}
	for name, s := range map[string]store.Store{"a": a, "b": b} {
		facts, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
		if err != nil {
			t.Fatalf("%s: List: %v", name, err)
		}
		if len(facts) != 2*per {
			t.Errorf("%s sees %d facts; want %d", name, len(facts), 2*per)
		}
	}
	// A duplicate decided on one opener counts the other's writes.
	res, err := b.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "again", Text: "writer 0 wrote fact number 3"}}, store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != store.Deduplicated || res[0].Replaced != "w0-3" {
		t.Errorf("Put of a's text on b: %s replacing %q; want deduplicated replacing w0-3", res[0].Outcome, res[0].Replaced)
	}
}

// TestWriteLockTimeout holds the write lock from outside and checks that a write
// waits for it, then fails with store.ErrLocked, and that a cancelled context ends
// the wait sooner.
func TestWriteLockTimeout(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, sqlite.Options{NoSync: true, LockTimeout: 200 * time.Millisecond})
	defer s.Close()
	holder, err := sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	tx, err := holder.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	ctx := context.Background()
	f := []store.Record{store.Fact{ID: "f", Text: "blocked"}}
	start := time.Now()
	_, err = s.Put(ctx, store.DefaultBranch, f, store.PutOptions{})
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Put while the lock is held: %v; want ErrLocked", err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("Put gave up after %v; want it to wait about the 200ms lock timeout", waited)
	}
	// Reads go on while the lock is held.
	if _, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact}); err != nil {
		t.Errorf("List while the write lock is held: %v", err)
	}
	tx.Rollback()
	if _, err := s.Put(ctx, store.DefaultBranch, f, store.PutOptions{}); err != nil {
		t.Errorf("Put after the lock was let go: %v", err)
	}
}

// TestOpenRefuses checks the typed errors of paths that are no day1 memory, a memory
// of a newer format, and a read-only open of a missing memory; none changes a file.
func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	t.Run("a file, not a folder", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "file")
		os.WriteFile(p, []byte("x"), 0o644)
		_, err := sqlite.Open(ctx, sqlite.Options{Path: p})
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != "Options.Path" {
			t.Errorf("Open(file) = %v; want a *ValidationError on Options.Path", err)
		}
	})
	t.Run("not a database", func(t *testing.T) {
		dir := t.TempDir()
		junk := []byte("this is not a database, but someone's notes about a database file")
		os.WriteFile(filepath.Join(dir, sqlite.FileName), junk, 0o644)
		_, err := sqlite.Open(ctx, sqlite.Options{Path: dir})
		if !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("Open over a text file = %v; want ErrCorrupt", err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, sqlite.FileName)); string(got) != string(junk) {
			t.Errorf("the file was changed")
		}
	})
	t.Run("another program's database", func(t *testing.T) {
		dir := t.TempDir()
		db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.FileName))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE TABLE notes (body TEXT)"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		_, err = sqlite.Open(ctx, sqlite.Options{Path: dir})
		var ve *store.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("Open over another database = %v; want a *ValidationError", err)
		}
	})
	t.Run("newer format", func(t *testing.T) {
		dir := t.TempDir()
		d, err := sqlite.Open(ctx, sqlite.Options{Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.FileName))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		_, err = sqlite.Open(ctx, sqlite.Options{Path: dir})
		if !errors.Is(err, store.ErrNotSupported) {
			t.Errorf("Open of format 99 = %v; want ErrNotSupported", err)
		}
	})
	t.Run("a folder of other files", func(t *testing.T) {
		for _, files := range [][]string{{"notes.txt"}, {"LOCK", "day1.log"}} { // someone's; a log store's
			dir := t.TempDir()
			for _, f := range files {
				os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
			}
			_, err := sqlite.Open(ctx, sqlite.Options{Path: dir})
			var ve *store.ValidationError
			if !errors.As(err, &ve) || ve.Field != "Options.Path" || !strings.Contains(err.Error(), files[0]) {
				t.Errorf("Open of a folder of %v = %v; want a *ValidationError on Options.Path naming %s", files, err, files[0])
			}
			if ents, _ := os.ReadDir(dir); len(ents) != len(files) {
				t.Errorf("Open of a folder of %v left %d files there", files, len(ents))
			}
		}
		// Hidden files and a tenant's marker are no obstacle.
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, ".DS_Store"), []byte("x"), 0o644)
		os.WriteFile(filepath.Join(dir, "day1.tenant"), []byte("day1 tenant acme\n"), 0o644)
		d, err := sqlite.Open(ctx, sqlite.Options{Path: dir})
		if err != nil {
			t.Fatalf("Open of a tenant's folder: %v", err)
		}
		d.Close()
	})
	t.Run("read-only, missing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "none")
		_, err := sqlite.Open(ctx, sqlite.Options{Path: dir, ReadOnly: true})
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("read-only Open of a missing memory = %v; want ErrNotFound", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the read-only open made the folder")
		}
	})
}

// TestReadOnly reads a memory another opener writes, and refuses writes.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	w := open(t, dir, sqlite.Options{NoSync: true})
	defer w.Close()
	r := open(t, dir, sqlite.Options{ReadOnly: true})
	defer r.Close()
	ctx := context.Background()
	if _, err := w.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "f", Text: "seen by the reader"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, store.View{}, store.FactRef("f")); err != nil {
		t.Errorf("the reader does not see the writer's fact: %v", err)
	}
	if _, err := r.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "g", Text: "x"}}, store.PutOptions{}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Put on a read-only store = %v; want ErrReadOnly", err)
	}
}

// TestWritersQueueOnTheLockFile holds the lock file of a memory as another process's
// writer would, and checks that a write waits for it, fails with store.ErrLocked after
// LockTimeout, and lands once the lock is let go.
func TestWritersQueueOnTheLockFile(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("flock locks of one process conflict between open files on Linux and macOS")
	}
	dir := t.TempDir()
	s := open(t, dir, sqlite.Options{NoSync: true, LockTimeout: 200 * time.Millisecond})
	defer s.Close()
	f, err := os.OpenFile(filepath.Join(dir, sqlite.LockName), os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := filelock.LockFile(f); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	recs := []store.Record{store.Fact{ID: "f", Text: "waits for the lock file"}}
	start := time.Now()
	if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Put while the lock file is held: %v; want ErrLocked", err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("Put gave up after %v; want it to wait about the 200ms lock timeout", waited)
	}
	filelock.UnlockFile(f)
	if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
		t.Errorf("Put after the lock file was let go: %v", err)
	}
}

// TestUpgradeOlderFormats makes memories of format versions 1 (no rows.exp, no
// rows.upd), 2 (no rows.upd) and 3 (a row per posting, no packed lists) and opens
// them: a reader reads each as it is, with no expiries before 2; a writer upgrades it
// to the current version, after which facts written expire, lists by update order
// the rows kept without an update time and those with one alike, and keyword search
// finds the old rows and the new.
func TestUpgradeOlderFormats(t *testing.T) {
	for _, c := range []struct {
		version int
		drop    []string
	}{{1, []string{"exp", "upd"}}, {2, []string{"upd"}}, {3, nil}} {
		t.Run(fmt.Sprint("version ", c.version), func(t *testing.T) {
			upgradeFrom(t, c.version, c.drop)
		})
	}
}

func upgradeFrom(t *testing.T, version int, drop []string) {
	ctx := context.Background()
	dir := t.TempDir()
	at := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	s := open(t, dir, sqlite.Options{NoSync: true})
	if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{
		store.Fact{ID: "old", Text: "the canteen opens at noon", CreatedAt: at.Add(-2 * time.Hour)},
		store.Fact{ID: "older", Text: "the library opens at nine", CreatedAt: at.Add(-3 * time.Hour)},
	}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlite.UnpackPostings(ctx, db); err != nil {
		t.Fatal(err)
	}
	var qs []string
	for _, col := range drop {
		qs = append(qs, "ALTER TABLE rows DROP COLUMN "+col)
	}
	qs = append(qs, fmt.Sprintf("PRAGMA user_version=%d", version), "DELETE FROM items WHERE coll = 'index'")
	for _, q := range qs {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	format := func() int {
		t.Helper()
		db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.FileName))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var v int
		if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	r := open(t, dir, sqlite.Options{ReadOnly: true})
	got, err := r.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact, Filter: store.Filter{NotExpired: true}, Order: store.OrderUpdated})
	if err != nil || len(got) != 2 || got[0].RecordID() != "older" {
		t.Errorf("a reader of version %d lists by update %v, %v; want older, then old", version, got, err)
	}
	if hits, err := r.Search(ctx, store.View{}, store.SearchQuery{Text: "canteen", Mode: store.Keyword, WindowWeight: -1}); err != nil || len(hits) != 1 {
		t.Errorf("a reader of version %d searching for canteen: %d hits, %v; want old", version, len(hits), err)
	}
	r.Close()
	if v := format(); v != version {
		t.Fatalf("a reader changed the format to %d", v)
	}

	// A reader that opened the file before a writer upgraded it finds what the writer
	// writes since (checked below).
	before := open(t, dir, sqlite.Options{ReadOnly: true})
	defer before.Close()
	w := open(t, dir, sqlite.Options{NoSync: true})
	defer w.Close()
	if v := format(); v != 4 {
		t.Errorf("format after a writer opened it: %d; want 4", v)
	}
	if _, err := w.Put(ctx, store.DefaultBranch, []store.Record{
		store.Fact{ID: "new", Text: "the canteen closes at two", CreatedAt: at, ExpiresAt: at.Add(time.Hour)},
		store.Fact{ID: "older", Text: "the library opens at ten", CreatedAt: at.Add(-3 * time.Hour), UpdatedAt: at.Add(time.Minute)},
	}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	live, err := w.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact, Filter: store.Filter{LiveAt: at.Add(2 * time.Hour)}})
	if err != nil || len(live) != 2 || live[0].RecordID() != "older" || live[1].RecordID() != "old" {
		t.Errorf("facts live two hours later: %v, %v; want older and old", live, err)
	}
	byUpdate, err := w.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact, Order: store.OrderUpdated})
	var ids []string
	for _, r := range byUpdate {
		ids = append(ids, r.RecordID())
	}
	if err != nil || !slices.Equal(ids, []string{"old", "new", "older"}) {
		t.Errorf("facts by update: %v, %v; want old (kept without an update time), new, older (updated last)", ids, err)
	}
	hits, err := w.Search(ctx, store.View{}, store.SearchQuery{Text: "canteen", Mode: store.Keyword, WindowWeight: -1})
	ids = ids[:0]
	for _, h := range hits {
		ids = append(ids, h.Record.RecordID())
	}
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, []string{"new", "old"}) {
		t.Errorf("keyword search for canteen after the upgrade: %v, %v; want the old fact and the new", ids, err)
	}
	hits, err = before.Search(ctx, store.View{}, store.SearchQuery{Text: "canteen", Mode: store.Keyword, WindowWeight: -1})
	if err != nil || len(hits) != 2 {
		t.Errorf("a reader opened before the upgrade searching for canteen: %d hits, %v; want the old fact and the new", len(hits), err)
	}
}
