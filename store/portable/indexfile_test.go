package portable_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/internal/vectest"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
	"github.com/day1ai/day1/store/portable"
	"github.com/day1ai/day1/store/sqlite"
)

func openAt(t *testing.T, dir string) *portable.Store {
	t.Helper()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Options{Path: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := portable.New(ctx, d, portable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSavedIndex writes enough for the index to be saved, branches and deletes past
// the save, and checks that a new store, which loads the saved index and catches up,
// searches and lists by update exactly as the store that built its index row by row,
// expiries and update times included.
func TestSavedIndex(t *testing.T) {
	t.Cleanup(portable.SetSaveMinRows(50)) // after the stores close: their saves read it
	ctx := context.Background()
	dir := t.TempDir()
	a := openAt(t, dir)
	rng := rand.New(rand.NewPCG(7, 7))
	written := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	words := []string{"cache", "token", "redis", "deploy", "schema", "merge", "queue", "retry"}
	var vecs [][]float32
	for b := range 6 {
		var recs []store.Record
		for i := range 40 {
			n := b*40 + i
			v := vectest.Unit(rng, 32)
			vecs = append(vecs, v)
			f := store.Fact{ID: fmt.Sprintf("f%03d", n), Embedding: v,
				Text: fmt.Sprintf("fact %d says %s and %s", n, words[n%8], words[(n/8)%8])}
			if n%5 == 0 {
				f.CreatedAt, f.ExpiresAt = written, written.Add(time.Hour)
			}
			if n%7 == 0 { // versions written later than their records were made
				f.CreatedAt, f.UpdatedAt = written.Add(-time.Hour), written.Add(time.Duration(240-n)*time.Minute)
			}
			recs = append(recs, f)
		}
		if _, err := a.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		// A search between writes keeps a's index caught up, so that a write saves it.
		if _, err := a.Search(ctx, store.View{}, store.SearchQuery{Text: "cache"}); err != nil {
			t.Fatal(err)
		}
	}
	if portable.IndexSaved(a) == 0 {
		t.Fatal("the index was never saved")
	}
	if _, err := a.CreateBranch(ctx, store.BranchSpec{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, store.DefaultBranch, []store.Ref{store.FactRef("f007")}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, "b", []store.Record{store.Fact{ID: "f008", Text: "fact 8 now says cache twice cache"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	b := openAt(t, dir)
	later := store.Filter{LiveAt: written.Add(2 * time.Hour)}
	for _, q := range []store.SearchQuery{
		{Text: "cache redis", Limit: 10, Mode: store.Keyword},
		{Vector: vecs[3], Limit: 10, Mode: store.Vector},
		{Text: "deploy", Vector: vecs[100], Limit: 10},
		{Text: "cache redis", Limit: 10, Mode: store.Keyword, Filter: later},
		{Vector: vecs[5], Limit: 10, Mode: store.Vector, Filter: later},
	} {
		for _, branch := range []string{store.DefaultBranch, "b"} {
			v := store.View{Branch: branch}
			want, err := a.Search(ctx, v, q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.Search(ctx, v, q)
			if err != nil {
				t.Fatal(err)
			}
			if portable.IndexSaved(b) == 0 {
				t.Fatal("the new store did not load the saved index")
			}
			if diff := cmp.Diff(ids(want), ids(got)); diff != "" {
				t.Errorf("Search(%s, %q) with the loaded index differs (-built +loaded):\n%s", branch, q.Text, diff)
			}
			for _, h := range got {
				if h.Record.RecordID() == "f007" && branch == store.DefaultBranch {
					t.Errorf("the deleted f007 was found on main")
				}
				if f := h.Record.(store.Fact); !q.Filter.LiveAt.IsZero() && f.Expired(q.Filter.LiveAt) {
					t.Errorf("the expired %s was found", f.ID)
				}
			}
		}
	}
	for _, branch := range []string{store.DefaultBranch, "b"} {
		v := store.View{Branch: branch}
		q := store.ListQuery{Kind: store.KindFact, Order: store.OrderUpdated, Limit: 300}
		want, err := a.List(ctx, v, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.List(ctx, v, q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(recordIDs(want), recordIDs(got)); diff != "" {
			t.Errorf("List(%s) by update with the loaded index differs (-built +loaded):\n%s", branch, diff)
		}
	}
	want, err := a.Diff(ctx, "b", store.DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Diff(ctx, "b", store.DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}
	changes := func(d *store.Diff) string {
		return fmt.Sprint(len(d.SourceChanges), len(d.TargetChanges), len(d.Conflicts), d.SourceChanges, d.TargetChanges)
	}
	if diff := cmp.Diff(changes(want), changes(got)); diff != "" || len(got.SourceChanges)+len(got.TargetChanges) == 0 {
		t.Errorf("Diff(b, main) with the loaded index differs (-built +loaded), or is empty:\n%s", diff)
	}
}

func recordIDs(rs []store.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.RecordID()
	}
	return out
}

func ids(hs []store.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = fmt.Sprintf("%s %.6f", h.Record.RecordID(), h.Score)
	}
	return out
}

// TestSmallWritesLeaveTheIndexAlone checks that a process whose first act is to write
// a few observations (a hook's) neither builds nor loads the index, and that its first
// search does, and finds them.
func TestSmallWritesLeaveTheIndexAlone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := openAt(t, dir)
	if _, err := a.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "f", Text: "the build cache lives in the gateway"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	b := openAt(t, dir)
	obs := []store.Record{
		store.Observation{ID: "o1", Type: store.ObsToolUse, Tool: "Bash", Summary: "go test ./cache passed"},
		store.Observation{ID: "o2", Type: store.ObsToolUse, Tool: "Edit", Summary: "edited cache/warm.go"},
	}
	if _, err := b.Put(ctx, store.DefaultBranch, obs, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if portable.IndexBuilt(b) {
		t.Error("writing two observations built the index")
	}
	hits, err := b.Search(ctx, store.View{}, store.SearchQuery{Text: "cache", Mode: store.Keyword})
	if err != nil || len(hits) != 3 || !portable.IndexBuilt(b) {
		t.Errorf("the first search: %d hits (%v), index built %v; want the fact and both observations", len(hits), err, portable.IndexBuilt(b))
	}
	// A fact write needs the index (deduplication), whatever its size.
	c := openAt(t, dir)
	if _, err := c.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "g", Text: "the gateway restarts nightly"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if !portable.IndexBuilt(c) {
		t.Error("a fact write left the index unbuilt; it cannot have looked for duplicates")
	}
}

// unsavedMemory makes a memory of 120 facts whose index was never saved, and lets
// indexes be saved past 50 rows from then on, until the test's stores are closed.
func unsavedMemory(t *testing.T) string {
	t.Helper()
	restore := portable.SetSaveMinRows(1 << 30) // the writer never saves
	dir := t.TempDir()
	a := openAt(t, dir)
	var recs []store.Record
	for i := range 120 {
		recs = append(recs, store.Fact{ID: fmt.Sprintf("f%03d", i), Text: fmt.Sprintf("fact %d about the cache", i)})
	}
	if _, err := a.Put(context.Background(), store.DefaultBranch, recs, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	restore()
	t.Cleanup(portable.SetSaveMinRows(50)) // after the test's stores close: their saves read it
	return dir
}

// TestReadersSaveTheIndex checks that a store that only reads saves the index it had
// to build from the rows, in the background (Close waits for it), so that the next
// process maps it, and drops the items an older format saved the index as; a store
// opened read-only leaves both alone.
func TestReadersSaveTheIndex(t *testing.T) {
	ctx := context.Background()
	dir := unsavedMemory(t)
	legacy := func() bool {
		t.Helper()
		d, err := sqlite.Open(ctx, sqlite.Options{Path: dir, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var ok bool
		err = d.Read(ctx, func(r driver.Reader) error {
			_, ok, err = r.Item(ctx, "index", "head")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	d, err := sqlite.Open(ctx, sqlite.Options{Path: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Update(ctx, func(w driver.Writer) error { return w.PutItem(ctx, "index", "head", []byte("d1ix, an older format")) })
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	search := func(s *portable.Store) {
		t.Helper()
		hits, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "cache", Limit: 5})
		if err != nil || len(hits) != 5 {
			t.Fatalf("Search: %d hits, %v", len(hits), err)
		}
	}

	d, err = sqlite.Open(ctx, sqlite.Options{Path: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ro, err := portable.New(ctx, d, portable.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	search(ro)
	ro.Close()
	if len(portable.IndexFiles(dir)) > 0 || !legacy() {
		t.Fatal("a read-only store saved the index, or dropped the older copy")
	}

	b := openAt(t, dir)
	search(b)
	b.Close()
	if len(portable.IndexFiles(dir)) != 1 {
		t.Fatalf("a store that read the memory and built its index saved %d files; want 1", len(portable.IndexFiles(dir)))
	}
	if legacy() {
		t.Error("the index saved in an older format is still in the memory")
	}
	c := openAt(t, dir)
	search(c)
	if portable.IndexSaved(c) != 120 || !portable.IndexMapped(c) {
		t.Errorf("the next store loaded %d rows of a saved index (mapped %v); want 120", portable.IndexSaved(c), portable.IndexMapped(c))
	}
}

// savedMemory makes a memory of 120 facts and saves its index, and returns its
// folder and the saved index's path.
func savedMemory(t *testing.T) (dir, path string) {
	t.Helper()
	t.Cleanup(portable.SetSaveMinRows(50)) // after the stores close: their saves read it
	ctx := context.Background()
	dir = t.TempDir()
	a := openAt(t, dir)
	var recs []store.Record
	for i := range 120 {
		recs = append(recs, store.Fact{ID: fmt.Sprintf("f%03d", i), Text: fmt.Sprintf("fact %d about the cache", i),
			SessionID: fmt.Sprintf("s%d", i%3), Embedding: vectest.Unit(rand.New(rand.NewPCG(uint64(i), 1)), 32)})
	}
	if _, err := a.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Search(ctx, store.View{}, store.SearchQuery{Text: "cache"}); err != nil {
		t.Fatal(err)
	}
	a.Close() // after saving the index the search built
	paths := portable.IndexFiles(dir)
	if len(paths) != 1 {
		t.Fatalf("%d saved indexes; want 1", len(paths))
	}
	return dir, paths[0]
}

// TestDamagedSavedIndex checks that a saved index that is cut short or whose table
// is damaged is passed over: the store builds its index from the rows and searches
// as before, and a later save replaces it.
func TestDamagedSavedIndex(t *testing.T) {
	ctx := context.Background()
	for _, damage := range []struct {
		name string
		fn   func(b []byte) []byte
	}{
		{"cut short", func(b []byte) []byte { return b[:len(b)/2] }},
		{"table", func(b []byte) []byte { b[70] ^= 0xff; return b }},
		{"empty", func(b []byte) []byte { return nil }},
	} {
		t.Run(damage.name, func(t *testing.T) {
			dir, path := savedMemory(t)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, damage.fn(b), 0o644); err != nil {
				t.Fatal(err)
			}
			s := openAt(t, dir)
			hits, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "cache", Limit: 5})
			if err != nil || len(hits) != 5 {
				t.Fatalf("Search over a damaged saved index: %d hits, %v; want 5", len(hits), err)
			}
			if portable.IndexMapped(s) {
				t.Error("the damaged index was read")
			}
		})
	}
}

// TestSavedIndexOfAnotherMemory checks that a saved index copied from another memory
// whose history is as long is not read.
func TestSavedIndexOfAnotherMemory(t *testing.T) {
	ctx := context.Background()
	_, path := savedMemory(t)
	dir, own := savedMemory(t) // the same writes, at other instants
	if err := os.Remove(own); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := openAt(t, dir)
	if _, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "cache", Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if portable.IndexMapped(s) {
		t.Error("the index saved by another memory was read")
	}
}

// TestSavedIndexReplacedWhileRead checks that a store reading a saved index in place
// goes on reading it, and catching up, while another saves a newer one and removes
// it.
func TestSavedIndexReplacedWhileRead(t *testing.T) {
	ctx := context.Background()
	dir, first := savedMemory(t)
	b := openAt(t, dir)
	q := store.SearchQuery{Text: "cache", Limit: 500, Mode: store.Keyword}
	hits, err := b.Search(ctx, store.View{}, q)
	if err != nil || len(hits) != 120 || !portable.IndexMapped(b) {
		t.Fatalf("Search: %d hits, %v, mapped %v; want 120 from the saved index", len(hits), err, portable.IndexMapped(b))
	}
	a := openAt(t, dir)
	var recs []store.Record
	for i := range 100 {
		recs = append(recs, store.Fact{ID: fmt.Sprintf("g%03d", i), Text: fmt.Sprintf("fact %d about the cache, later", i), SessionID: fmt.Sprintf("s%d", i%5)})
	}
	if _, err := a.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Search(ctx, store.View{}, q); err != nil { // catches a's index up: it saves it
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if paths := portable.IndexFiles(dir); len(paths) != 1 || paths[0] == first {
		t.Fatalf("saved indexes after another save: %v; want one, not %s", paths, first)
	}
	hits, err = b.Search(ctx, store.View{}, q)
	if err != nil || len(hits) != 220 {
		t.Fatalf("Search after the saved index was replaced: %d hits, %v; want 220", len(hits), err)
	}
	inSession, err := b.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact, Filter: store.Filter{SessionID: "s1"}, Limit: 100})
	if err != nil || len(inSession) != 60 {
		t.Fatalf("List of a session's facts: %d, %v; want 40 saved and 20 after", len(inSession), err)
	}
	c := openAt(t, dir)
	hits, err = c.Search(ctx, store.View{}, q)
	if err != nil || len(hits) != 220 || portable.IndexSaved(c) != 220 {
		t.Fatalf("a new store: %d hits, %v, %d rows saved; want 220 and 220", len(hits), err, portable.IndexSaved(c))
	}
}

// TestCloseWaitsForReads checks that Close waits for the reads under way, which the
// saved index they read in place must outlive, and that later reads fail with
// store.ErrClosed.
func TestCloseWaitsForReads(t *testing.T) {
	ctx := context.Background()
	dir, _ := savedMemory(t)
	s := openAt(t, dir)
	if _, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "cache"}); err != nil || !portable.IndexMapped(s) {
		t.Fatalf("Search: %v, mapped %v", err, portable.IndexMapped(s))
	}
	errs := make(chan error, 64)
	start := make(chan struct{})
	for range cap(errs) {
		go func() {
			<-start
			_, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "fact cache", Limit: 50})
			errs <- err
		}()
	}
	close(start)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range cap(errs) {
		if err := <-errs; err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("a search beside Close: %v; want none or store.ErrClosed", err)
		}
	}
}

// TestFailedIndexSave checks that a save of the index that cannot write its file
// leaves the index unsaved, and that a later read saves it, not the next one.
func TestFailedIndexSave(t *testing.T) {
	ctx := context.Background()
	dir := unsavedMemory(t)
	d, err := sqlite.Open(ctx, sqlite.Options{Path: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var head int64
	if err := d.Read(ctx, func(r driver.Reader) error { head = r.Head().Seq; return nil }); err != nil {
		t.Fatal(err)
	}
	// A folder where the file goes: the save cannot rename its file there.
	block := portable.IndexFileName(dir, head)
	if err := os.MkdirAll(filepath.Join(block, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := portable.New(ctx, d, portable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Search(ctx, store.View{}, store.SearchQuery{Text: "cache"}); err != nil {
		t.Fatal(err)
	}
	portable.WaitSaves(b)
	if n := portable.IndexSaved(b); n != 0 {
		t.Fatalf("after a save that failed, the index counts %d rows as saved; want 0", n)
	}
	if err := os.RemoveAll(block); err != nil {
		t.Fatal(err)
	}
	// The next read waits before it tries again (saveIndexRetry).
	if _, err := b.Search(ctx, store.View{}, store.SearchQuery{Text: "cache"}); err != nil {
		t.Fatal(err)
	}
	portable.WaitSaves(b)
	if n := portable.IndexSaved(b); n != 0 {
		t.Fatalf("a read right after a failed save saved the index (%d rows); want it to wait", n)
	}
	portable.RetrySavesNow(b)
	if _, err := b.Search(ctx, store.View{}, store.SearchQuery{Text: "cache"}); err != nil {
		t.Fatal(err)
	}
	portable.WaitSaves(b)
	if n := portable.IndexSaved(b); n != 120 {
		t.Errorf("after a save that wrote its file, the index counts %d rows as saved; want 120", n)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) > 0 {
		t.Errorf("the failed save left %v", tmps)
	}
}

// TestOldSavedIndexIsSavedSooner checks that a few rows past a saved index make it
// due once the copy is old, and not before: a new process then has little to
// catch up with even where writes are slow.
func TestOldSavedIndexIsSavedSooner(t *testing.T) {
	t.Cleanup(portable.SetSaveMinRows(10))
	t.Cleanup(portable.SetSaveEvery(time.Hour))
	ctx := context.Background()
	dir := t.TempDir()
	write := func(s *portable.Store, from, n int) {
		t.Helper()
		var recs []store.Record
		for i := from; i < from+n; i++ {
			recs = append(recs, store.Fact{ID: fmt.Sprintf("f%03d", i), Text: fmt.Sprintf("fact %d about the cache", i)})
		}
		if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "cache"}); err != nil {
			t.Fatal(err)
		}
	}
	a := openAt(t, dir)
	write(a, 0, 400)
	a.Close()
	if paths := portable.IndexFiles(dir); len(paths) != 1 {
		t.Fatalf("saved indexes: %v; want one", paths)
	}
	first := portable.IndexFiles(dir)[0]

	b := openAt(t, dir)
	write(b, 400, 20) // past saveMinRows, short of an eighth of 400
	b.Close()
	if paths := portable.IndexFiles(dir); len(paths) != 1 || paths[0] != first {
		t.Fatalf("20 rows past a new copy of 400 saved the index: %v", paths)
	}
	portable.SetSaveEvery(0)
	c := openAt(t, dir)
	if _, err := c.Search(ctx, store.View{}, store.SearchQuery{Text: "cache"}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	d := openAt(t, dir)
	if _, err := d.Search(ctx, store.View{}, store.SearchQuery{Text: "cache"}); err != nil {
		t.Fatal(err)
	}
	if n := portable.IndexSaved(d); n != 420 {
		t.Errorf("after 20 rows past an old copy, the saved index holds %d rows; want 420", n)
	}
}
