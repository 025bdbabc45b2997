package memstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/day1ai/day1/store"
)

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

var day0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func day(d float64) time.Time { return day0.Add(time.Duration(d * 24 * float64(time.Hour))) }

// reads is what a set of views of a store read: every kind listed, a keyword and a
// vector search, and a diff.
func reads(t *testing.T, s *Store, views []store.View) map[string]any {
	t.Helper()
	ctx := t.Context()
	out := map[string]any{}
	for _, v := range views {
		name := fmt.Sprintf("%s@%s%s", v.Branch, v.At.Snapshot, v.At.Time.Format(time.RFC3339))
		for _, k := range store.Kinds {
			rs, err := s.List(ctx, v, store.ListQuery{Kind: k, Order: store.OrderID})
			if err != nil {
				t.Fatalf("List %s %s: %v", name, k, err)
			}
			out["list "+string(k)+" "+name] = rs
		}
		hs, err := s.Search(ctx, v, store.SearchQuery{Text: "text fact", Mode: store.Keyword, Limit: 50})
		if err != nil {
			t.Fatalf("Search %s: %v", name, err)
		}
		out["keyword "+name] = hs
		hs, err = s.Search(ctx, v, store.SearchQuery{Vector: []float32{1, 2, 3}, Mode: store.Vector, Limit: 50})
		if err != nil {
			t.Fatalf("Search %s: %v", name, err)
		}
		out["vector "+name] = hs
	}
	for _, pair := range [][2]string{{"old", store.DefaultBranch}, {store.DefaultBranch, "old"}} {
		d, err := s.Diff(ctx, pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		d.SourceRev, d.TargetHead = 0, 0
		out["diff "+pair[0]] = d
	}
	bs, err := s.ListBranches(ctx, store.BranchFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out["branches"] = bs
	return out
}

func sameReads(t *testing.T, what string, want, got map[string]any) {
	t.Helper()
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); d != "" {
		t.Fatalf("%s: reads differ (-want +got):\n%s", what, d)
	}
}

func tooOld(t *testing.T, what string, s *Store, at time.Time) {
	t.Helper()
	_, err := s.List(t.Context(), store.View{At: store.Point{Time: at}}, store.ListQuery{Kind: store.KindFact})
	if !errors.Is(err, store.ErrTooOld) {
		t.Fatalf("%s: a read at %s = %v; want store.ErrTooOld", what, at, err)
	}
}

// fillHistory writes eleven days of history on a clock: updates, a snapshot, a branch
// forked in the past, a deleted branch, deletions.
func fillHistory(t *testing.T, s *Store, clk *testClock) {
	t.Helper()
	ctx := t.Context()
	put := func(branch string, d float64, from, to int, text string) {
		t.Helper()
		clk.set(day(d))
		var recs []store.Record
		for i := from; i < to; i++ {
			recs = append(recs, store.Fact{ID: fmt.Sprint("f", i), Text: fmt.Sprintf("fact %d text %s", i, text), Embedding: []float32{1, float32(i), float32(d)}})
		}
		if _, err := s.Put(ctx, branch, recs, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	main := store.DefaultBranch
	put(main, 0, 0, 20, "v0")
	if _, err := s.CreateSnapshot(ctx, main, "s0", ""); err != nil {
		t.Fatal(err)
	}
	put(main, 0.5, 0, 20, "v0.5") // seen by no pin: dropped
	put(main, 1, 0, 20, "v1")
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "old"}); err != nil {
		t.Fatal(err)
	}
	put("old", 1.5, 15, 17, "on old")
	put(main, 2, 0, 10, "v2a") // replaced the same day: dropped
	put(main, 2.2, 0, 10, "v2")
	clk.set(day(2.3))
	if err := s.Delete(ctx, main, []store.Ref{{Kind: store.KindFact, ID: "f19"}}); err != nil {
		t.Fatal(err)
	}
	// old merged into main before the horizon: the merge base of later diffs.
	clk.set(day(2.5))
	d, err := s.Diff(ctx, "old", main)
	if err != nil {
		t.Fatal(err)
	}
	var puts []store.Record
	for _, c := range d.SourceChanges {
		puts = append(puts, c.After)
	}
	if _, err := s.ApplyMerge(ctx, store.MergePlan{Source: "old", Target: main, ExpectHead: d.TargetHead, SourceRev: d.SourceRev, Puts: puts,
		Record: store.MergeRecord{ID: "m1", Strategy: store.Native}}); err != nil {
		t.Fatal(err)
	}
	put("old", 2.6, 15, 16, "on old after the merge")
	// And main merged into old: main as merged is a merge base from then on.
	put(main, 2.65, 5, 7, "v2.65 merged into old")
	clk.set(day(2.7))
	d, err = s.Diff(ctx, main, "old")
	if err != nil {
		t.Fatal(err)
	}
	puts = puts[:0]
	for _, c := range d.SourceChanges {
		if c.After != nil {
			puts = append(puts, c.After)
		}
	}
	if _, err := s.ApplyMerge(ctx, store.MergePlan{Source: main, Target: "old", ExpectHead: d.TargetHead, SourceRev: d.SourceRev, Puts: puts,
		Record: store.MergeRecord{ID: "m2", Strategy: store.Native}}); err != nil {
		t.Fatal(err)
	}
	put(main, 2.8, 5, 6, "v2.8") // replaces v2.65 of f5 before the horizon
	put(main, 2.9, 5, 6, "v2.9")
	put("old", 5, 15, 17, "on old after the horizon")
	clk.set(day(4))
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "tmp"}); err != nil {
		t.Fatal(err)
	}
	put("tmp", 4, 0, 5, "on tmp") // on a branch deleted: dropped
	if err := s.DeleteBranch(ctx, "tmp"); err != nil {
		t.Fatal(err)
	}
	put(main, 4, 0, 5, "v3")
	put(main, 9, 0, 1, "v4")
	clk.set(day(10))
}

func TestCompactKeepsRetainedHistory(t *testing.T) {
	dir := t.TempDir()
	clk := &testClock{t: day0}
	opts := Options{Path: dir, Now: clk.now, Retention: 7 * 24 * time.Hour, CompactRatio: -1}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	fillHistory(t, s, clk)
	main := store.DefaultBranch
	views := []store.View{
		{Branch: main}, {Branch: "old"}, {At: store.Point{Snapshot: "s0"}},
		{At: store.Point{Time: day(3)}}, {At: store.Point{Time: day(5)}}, {At: store.Point{Time: day(9.5)}},
		{Branch: "old", At: store.Point{Time: day(3.5)}},
	}
	before := reads(t, s, views)
	tooOld(t, "before compaction", s, day(2.9))
	// A reader in this process, which keeps all history, and loads the checkpoint.
	r, err := New(Options{Path: dir, ReadOnly: true, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.List(t.Context(), store.View{At: store.Point{Time: day(2.1)}}, store.ListQuery{Kind: store.KindFact}); err != nil {
		t.Fatalf("a reader without retention reads day 2.1 before the compaction: %v", err)
	}
	logBytes, err := storeBytes(dir)
	if err != nil {
		t.Fatal(err)
	}

	st, err := s.Compact(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", st)
	if !st.Horizon.Equal(day(3)) {
		t.Errorf("horizon %s; want day 3 (now, day 10, less 7 days)", st.Horizon)
	}
	// v0.5 (20), v2a (10), v2 of f5 and f6 (2), f5 at day 2.8 (1); the versions of
	// tmp went with the branch. f5 at day 2.65 is main as merged into old, f15 on old
	// at day 2.6 what old holds at the horizon: kept.
	if st.Dropped != 33 {
		t.Errorf("dropped %d versions; want 33", st.Dropped)
	}
	if st.BytesAfter >= logBytes || st.BytesBefore != logBytes {
		t.Errorf("bytes %d before, %d after; the log held %d", st.BytesBefore, st.BytesAfter, logBytes)
	}
	if !st.Reloaded {
		t.Error("the compaction dropped versions but did not rebuild the writer's memory")
	}
	s.mu.RLock()
	inMemory := len(s.branches[main].log) + len(s.branches["old"].log)
	s.mu.RUnlock()
	if inMemory != st.Versions {
		t.Errorf("the writer holds %d versions after compacting; the checkpoint %d", inMemory, st.Versions)
	}
	sameReads(t, "the writer after compacting", before, reads(t, s, views))
	tooOld(t, "the writer after compacting", s, day(2.9))

	if err := r.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	sameReads(t, "a reader after the writer compacted", before, reads(t, r, views))
	// The reader keeps no retention of its own, but what the writer dropped is gone:
	// too old, never a wrong answer.
	tooOld(t, "a reader without retention after the writer compacted", r, day(2.9))

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	opts.Retention = 0
	s, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sameReads(t, "after reopening", before, reads(t, s, views))
	tooOld(t, "reopened without retention", s, day(2.9))

	// The reopened store writes, merges and compacts again.
	ctx := t.Context()
	d, err := s.Diff(ctx, "old", main)
	if err != nil {
		t.Fatal(err)
	}
	var puts []store.Record
	for _, c := range d.SourceChanges {
		puts = append(puts, c.After)
	}
	if _, err := s.ApplyMerge(ctx, store.MergePlan{Source: "old", Target: main, ExpectHead: d.TargetHead, SourceRev: d.SourceRev, Puts: puts,
		Record: store.MergeRecord{Strategy: store.Native}}); err != nil {
		t.Fatalf("merge after reopening: %v", err)
	}
	if got, err := s.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: "f16"}); err != nil || got.(store.Fact).Text != "fact 16 text on old after the horizon" {
		t.Fatalf("f16 after the merge: %v, %v", got, err)
	}
	if _, err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestCompactWhileWriting(t *testing.T) {
	t.Run("all history", func(t *testing.T) { compactWhileWriting(t, 0) })
	// Each compaction drops versions, and rebuilds the store's memory while the
	// writers write.
	t.Run("a nanosecond of history", func(t *testing.T) { compactWhileWriting(t, time.Nanosecond) })
}

func compactWhileWriting(t *testing.T, retention time.Duration) {
	dir := t.TempDir()
	s, err := New(Options{Path: dir, Sync: SyncNever, CompactRatio: -1, Retention: retention})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const writers, batches = 4, 150
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range batches {
				f := store.Fact{ID: fmt.Sprintf("w%d-%d", w, i%50), Text: fmt.Sprintf("writer %d batch %d", w, i)}
				if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{f}, store.PutOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var pause time.Duration
	reloads := 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// At least three compactions while the writers write, and until one rebuilds the
	// memory (the writers must first replace versions) or the writers are done.
	for i := 0; ; i++ {
		time.Sleep(5 * time.Millisecond)
		st, err := s.Compact(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pause = max(pause, st.Pause)
		if st.Reloaded {
			reloads++
		}
		select {
		case <-done:
		default:
			if i < 2 || retention > 0 && reloads == 0 {
				continue
			}
		}
		break
	}
	wg.Wait()
	if retention > 0 && reloads == 0 {
		// The writers finished during the last one: every replaced version is there now.
		if st, err := s.Compact(ctx); err != nil {
			t.Fatal(err)
		} else if st.Reloaded {
			reloads++
		}
	}
	if retention > 0 && reloads == 0 {
		t.Error("no compaction rebuilt the store's memory")
	}
	t.Logf("longest pause of the writers: %v", pause)
	want := map[string]string{}
	for w := range writers {
		for i := batches - 50; i < batches; i++ {
			want[fmt.Sprintf("w%d-%d", w, i%50)] = fmt.Sprintf("writer %d batch %d", w, i)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	facts, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range facts {
		got[r.RecordID()] = r.(store.Fact).Text
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("after compactions during writes and a reopen (-want +got):\n%s", d)
	}
	// All history was kept: every write is a version.
	if n := len(s.branches[store.DefaultBranch].log); retention == 0 && n != writers*batches {
		t.Errorf("%d versions on main; want %d", n, writers*batches)
	}
}

func TestAutomaticCompaction(t *testing.T) {
	dir := t.TempDir()
	// A retention of a nanosecond keeps each checkpoint to the latest versions.
	s, err := New(Options{Path: dir, Sync: SyncNever, CompactMinBytes: 16 << 10, CompactRatio: 1, Retention: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := range 400 {
		f := store.Fact{ID: fmt.Sprint("f", i%100), Text: fmt.Sprintf("fact %d, round %d, with some words to fill the log", i%100, i/100)}
		if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{f}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			// Each round of 100 puts fills the log past the threshold once; the next
			// starts once the compaction it started is done.
			for running := true; running; time.Sleep(time.Millisecond) {
				s.mu.RLock()
				running = s.auto.running
				s.mu.RUnlock()
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := listFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files.ckpts) == 0 || files.ckpts[len(files.ckpts)-1] < 2 {
		t.Fatalf("files %+v; want checkpoints of two automatic compactions or more", files)
	}
	s, err = New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 100 {
		r, err := s.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: fmt.Sprint("f", i)})
		if err != nil || r.(store.Fact).Text != fmt.Sprintf("fact %d, round 3, with some words to fill the log", i) {
			t.Fatalf("f%d after automatic compactions: %v, %v", i, r, err)
		}
	}
}

func TestCompactOptionsAndRefusals(t *testing.T) {
	for _, o := range []Options{
		{Path: t.TempDir(), Retention: -time.Second},
		{Path: t.TempDir(), CompactMinBytes: -1},
	} {
		if _, err := New(o); !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("New(%+v) = %v; want a validation error", o, err)
		}
	}
	mem, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Compact(t.Context()); !errors.Is(err, store.ErrNotSupported) {
		t.Errorf("Compact in memory = %v; want store.ErrNotSupported", err)
	}
	dir := t.TempDir()
	writeLoggedFacts(t, dir, 3)
	r, err := New(Options{Path: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Compact(t.Context()); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Compact read-only = %v; want store.ErrReadOnly", err)
	}
	s, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Compact(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Compact with a cancelled context = %v; want context.Canceled", err)
	}
	if files, _ := listFiles(dir); len(files.logs) != 1 || len(files.ckpts) != 0 {
		t.Errorf("a cancelled compaction left %+v", files)
	}
	s.Close()
	if _, err := s.Compact(t.Context()); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Compact after Close = %v; want store.ErrClosed", err)
	}
	// A checkpoint cut short is refused, not read as a smaller store.
	s, err = New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Compact(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Truncate(ckptPath(dir, st.Generation), st.CheckpointBytes-10); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Path: dir}); err == nil {
		t.Error("open of a store whose checkpoint lost its end succeeded")
	}
}

func TestReadersInOtherProcessesAcrossCompactions(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	w, err := New(Options{Path: dir, Retention: time.Nanosecond, CompactRatio: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	put := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			if _, err := w.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: fmt.Sprint(prefix, i), Text: fmt.Sprintf("fact %d of %s", i, prefix)}}, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	compact := func() {
		t.Helper()
		if _, err := w.Compact(ctx); err != nil {
			t.Fatal(err)
		}
	}
	put("a", 3)
	r1 := startChild(t, "TestReaderChild", readerChildEnv, dir)
	r2 := startChild(t, "TestReaderChild", readerChildEnv, dir)
	r1.send(t, "count")
	r1.expect(t, "count 3")
	// One compaction: r1 follows the switch into the new log, and loads the
	// checkpoint once it is there.
	compact()
	put("b", 2)
	r1.send(t, "refresh")
	r1.expect(t, "count 5")
	// Writes after the switch and before the checkpoint: the reader reads them from
	// the new log.
	put("c", 1)
	r1.send(t, "refresh")
	r1.expect(t, "count 6")
	// Three compactions with writes between, while r2 does not refresh: the logs it
	// was reading are gone, and it loads the newest checkpoint.
	for i := range 3 {
		put(fmt.Sprint("d", i), 2)
		compact()
	}
	put("e", 1)
	r2.send(t, "refresh")
	r2.expect(t, "count 13")
	r1.send(t, "refresh")
	r1.expect(t, "count 13")
	// A reader opened after the compactions starts from the checkpoint.
	r3 := startChild(t, "TestReaderChild", readerChildEnv, dir)
	r3.send(t, "count")
	r3.expect(t, "count 13")
	// The writer closes and another one opens, at the checkpoint; the readers follow.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = New(Options{Path: dir, CompactRatio: -1})
	if err != nil {
		t.Fatal(err)
	}
	put("f", 2)
	compact()
	for _, r := range []*child{r1, r2, r3} {
		r.send(t, "refresh")
		r.expect(t, "count 15")
		r.stop(t)
	}
}

func TestRefreshWhileAnotherProcessWritesAndCompacts(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	w := startChild(t, "TestWriterChild", writerChildEnv, dir)
	w.send(t, "put a 3")
	w.expect(t, "ack a")
	r, err := New(Options{Path: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Refreshing while the writer appends and compacts: every refresh succeeds and
	// sees whole batches only, never fewer than the last.
	w.send(t, "compact c 400")
	last, refreshes := 3, 0
	for done := false; !done; {
		select {
		case line := <-w.lines:
			if line != "ack c" {
				t.Fatalf("child: %q", line)
			}
			done = true
		default:
		}
		if err := r.Refresh(ctx); err != nil {
			t.Fatalf("refresh %d during appends and compactions: %v", refreshes, err)
		}
		refreshes++
		n := countFacts(t, r)
		if n < last {
			t.Fatalf("refresh %d sees %d facts, fewer than the %d before", refreshes, n, last)
		}
		last = n
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countFacts(t, r); n != 403 {
		t.Fatalf("after the writer's last ack the reader sees %d facts; want 403", n)
	}
	r.mu.RLock()
	gen := r.ro.gen
	r.mu.RUnlock()
	if gen != 8 {
		t.Errorf("the reader follows generation %d; want 8, after the writer's 8 compactions", gen)
	}
	t.Logf("%d refreshes during 400 appends and 8 compactions", refreshes)
	w.stop(t)
}

// TestCompactKeepsAliases: the checkpoint carries aliases and their deletes, so a
// reopened store resolves the same ids.
func TestCompactKeepsAliases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []store.Fact{{ID: "canon", Text: "kept by the checkpoint"}, {ID: "mine", Text: "Kept by the checkpoint"}, {ID: "gone", Text: "kept by the checkpoint"}} {
		if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{f}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, store.DefaultBranch, []store.Ref{store.FactRef("gone")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Get(ctx, store.View{}, store.FactRef("mine")); err != nil || got.RecordID() != "canon" {
		t.Errorf("Get(mine) after compaction and reopen = %v, %v; want canon", got, err)
	}
	if _, err := s.Get(ctx, store.View{}, store.FactRef("gone")); err == nil {
		t.Errorf("Get(gone) after compaction found the deleted alias")
	}
}
