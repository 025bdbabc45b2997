package memstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
)

// writerChildEnv names the directory TestWriterChild opens for writing. The child reads
// commands on its standard input, one a line, and answers each on its standard output
// once every write of it is acknowledged:
//
//	put PREFIX N     one batch of N facts PREFIX0..; answers "ack PREFIX"
//	stream PREFIX N  N batches of one fact each; answers "ack PREFIX"
//	compact PREFIX N stream, compacting the store after every 50 batches
//
// It closes the store and exits when its standard input closes.
const writerChildEnv = "DAY1_MEMSTORE_WRITER_CHILD"

func TestWriterChild(t *testing.T) {
	dir := os.Getenv(writerChildEnv)
	if dir == "" {
		t.Skip("helper process for the read-only tests; runs only as their child")
	}
	s, err := New(Options{Path: dir})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	fmt.Println("opened")
	ctx := context.Background()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var cmd, prefix string
		var n int
		if _, err := fmt.Sscan(sc.Text(), &cmd, &prefix, &n); err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
		var batches [][]store.Record
		for i := range n {
			f := store.Fact{ID: fmt.Sprint(prefix, i), Text: fmt.Sprintf("fact %d of %s", i, prefix), Embedding: []float32{1, float32(i%7) + 1, 2}}
			if cmd == "put" && len(batches) == 1 {
				batches[0] = append(batches[0], f)
			} else {
				batches = append(batches, []store.Record{f})
			}
		}
		for i, b := range batches {
			if _, err := s.Put(ctx, store.DefaultBranch, b, store.PutOptions{}); err != nil {
				fmt.Println("error:", err)
				os.Exit(3)
			}
			if cmd == "compact" && i%50 == 49 {
				if _, err := s.Compact(ctx); err != nil {
					fmt.Println("error:", err)
					os.Exit(3)
				}
			}
		}
		fmt.Println("ack", prefix)
	}
	if err := s.Close(); err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
}

// child is a helper process started from this test binary.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

// startChild runs the test named test as a child process with env set to dir, and
// waits for it to print "opened".
func startChild(t *testing.T, test, env, dir string) *child {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a child process; skipped with -short")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		c.stdin.Close()
		c.cmd.Wait()
	})
	c.expect(t, "opened")
	return c
}

// expect waits for the child's next line and fails unless it is want.
func (c *child) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok || line != want {
			t.Fatalf("child said %q (running: %v); want %q", line, ok, want)
		}
	case <-time.After(time.Minute):
		t.Fatalf("child did not say %q within a minute", want)
	}
}

func (c *child) send(t *testing.T, line string) {
	t.Helper()
	if _, err := fmt.Fprintln(c.stdin, line); err != nil {
		t.Fatal(err)
	}
}

// stop closes the child's input and waits for it to exit cleanly.
func (c *child) stop(t *testing.T) {
	t.Helper()
	c.stdin.Close()
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
}

// waitFacts waits, for up to a second, until s sees want facts without a Refresh:
// reads look at the log by themselves.
func waitFacts(t *testing.T, s *Store, want int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		n := countFacts(t, s)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a second the store sees %d facts; want %d", n, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func countFacts(t *testing.T, s *Store) int {
	t.Helper()
	got, err := s.List(context.Background(), store.View{}, store.ListQuery{Kind: store.KindFact})
	if err != nil {
		t.Fatal(err)
	}
	return len(got)
}

func TestReadOnlyBesideWriterProcess(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	w := startChild(t, "TestWriterChild", writerChildEnv, dir)
	w.send(t, "put a 3")
	w.expect(t, "ack a")

	// The writer holds no lock between commits: another writer opens beside it, and
	// so do readers.
	w2, err := New(Options{Path: dir})
	if err != nil {
		t.Fatalf("a writer beside the writer process: %v", err)
	}
	if n := countFacts(t, w2); n != 3 {
		t.Fatalf("the second writer sees %d facts; want 3", n)
	}
	w2.Close()
	r1, err := New(Options{Path: dir, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open beside the writer process: %v", err)
	}
	defer r1.Close()
	r2, err := New(Options{Path: dir, ReadOnly: true})
	if err != nil {
		t.Fatalf("a second read-only open: %v", err)
	}
	defer r2.Close()
	for i, r := range []*Store{r1, r2} {
		if n := countFacts(t, r); n != 3 {
			t.Fatalf("reader %d sees %d facts; want 3", i+1, n)
		}
		hits, err := r.Search(ctx, store.View{}, store.SearchQuery{Text: "fact", Mode: store.Keyword})
		if err != nil || len(hits) != 3 {
			t.Fatalf("reader %d search: %d hits, %v; want 3", i+1, len(hits), err)
		}
	}
	checkWritesRefused(t, r1)

	// A reader sees what the writer commits after the open by itself, and at once
	// after Refresh.
	w.send(t, "put b 2")
	w.expect(t, "ack b")
	waitFacts(t, r2, 5)
	if err := r1.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countFacts(t, r1); n != 5 {
		t.Fatalf("after Refresh the reader sees %d facts; want 5", n)
	}
	if _, err := r1.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: "b1"}); err != nil {
		t.Fatalf("a fact written after the open, read after Refresh: %v", err)
	}

	// Refreshing while the writer appends as fast as it can: every refresh succeeds and
	// sees whole batches only, never fewer than the last.
	w.send(t, "stream c 300")
	last, refreshes := 5, 0
	for done := false; !done; {
		select {
		case line := <-w.lines:
			if line != "ack c" {
				t.Fatalf("child: %q", line)
			}
			done = true
		default:
		}
		if err := r2.Refresh(ctx); err != nil {
			t.Fatalf("refresh %d during appends: %v", refreshes, err)
		}
		refreshes++
		n := countFacts(t, r2)
		if n < last {
			t.Fatalf("refresh %d sees %d facts, fewer than the %d before", refreshes, n, last)
		}
		last = n
	}
	if err := r2.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countFacts(t, r2); n != 305 {
		t.Fatalf("after the writer's last ack the reader sees %d facts; want 305", n)
	}
	t.Logf("%d refreshes during 300 appends", refreshes)
	w.stop(t)
}

// checkWritesRefused tries each kind of write on a read-only store.
func checkWritesRefused(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	_, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "x", Text: "no"}}, store.PutOptions{})
	errs := map[string]error{"Put": err}
	errs["Delete"] = s.Delete(ctx, store.DefaultBranch, []store.Ref{{Kind: store.KindFact, ID: "a0"}})
	_, errs["CreateBranch"] = s.CreateBranch(ctx, store.BranchSpec{Name: "b"})
	_, errs["SetBranchStatus"] = s.SetBranchStatus(ctx, store.DefaultBranch, store.BranchActive)
	errs["DeleteBranch"] = s.DeleteBranch(ctx, "b")
	_, errs["CreateSnapshot"] = s.CreateSnapshot(ctx, store.DefaultBranch, "s", "")
	errs["DeleteSnapshot"] = s.DeleteSnapshot(ctx, "s")
	_, errs["PutSession"] = s.PutSession(ctx, store.Session{ID: "s1"})
	_, errs["ApplyMerge"] = s.ApplyMerge(ctx, store.MergePlan{Source: "b", Target: store.DefaultBranch, Record: store.MergeRecord{Strategy: store.Native}})
	_, errs["WriteDocs"] = s.WriteDocs(ctx, []store.DocWrite{{Doc: store.Doc{Collection: "c", ID: "d", Data: []byte(`{}`)}}})
	for op, err := range errs {
		if !errors.Is(err, store.ErrReadOnly) {
			t.Errorf("%s on a read-only store = %v; want store.ErrReadOnly", op, err)
		}
	}
	if n := countFacts(t, s); n == 0 {
		t.Fatal("the refused writes emptied the store")
	}
}

func TestReadOnlyLeavesTornTailAndReadsItOnceWhole(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	writeLoggedFacts(t, dir, 3)
	path := filepath.Join(dir, logName)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeLoggedFacts2 := func() {
		s, err := New(Options{Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "late", Text: "appended last"}}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	writeLoggedFacts2()
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	frame := after[len(before):]
	// The writer is in the middle of appending that frame: half of it is on disk.
	torn := append(append([]byte(nil), before...), frame[:len(frame)/2]...)
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Path: dir, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open with a torn tail: %v", err)
	}
	defer r.Close()
	if n := countFacts(t, r); n != 3 {
		t.Fatalf("reader sees %d facts; want the 3 before the torn frame", n)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != string(torn) {
		t.Fatalf("the read-only open changed the log: %d bytes, then %d (%v)", len(torn), len(got), err)
	}
	if err := r.Refresh(ctx); err != nil || countFacts(t, r) != 3 {
		t.Fatalf("refresh with the frame still torn: %v, %d facts; want 3", err, countFacts(t, r))
	}
	// The append completes; the next refresh reads the whole frame.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(frame[len(frame)/2:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: "late"}); err != nil {
		t.Fatalf("the completed frame after Refresh: %v", err)
	}
	// A reader does not hold the directory: a writer opens beside it, in this process too.
	w, err := New(Options{Path: dir})
	if err != nil {
		t.Fatalf("a writer beside a reader: %v", err)
	}
	if _, err := w.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "later", Text: "after the reader"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err != nil || countFacts(t, r) != 5 {
		t.Fatalf("refresh after the in-process writer's put: %v, %d facts; want 5", err, countFacts(t, r))
	}
	w.Close()
	// A log shorter than what the reader has read was replaced: the reader says so
	// rather than read from the middle of another log.
	if err := os.Truncate(path, int64(len(before))); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "reopen") {
		t.Fatalf("refresh of a log cut below what was read = %v; want an error saying to reopen", err)
	}
}

func TestReadOnlyOptions(t *testing.T) {
	if _, err := New(Options{ReadOnly: true}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("ReadOnly without Path = %v; want a validation error", err)
	}
	if _, err := New(Options{Path: t.TempDir(), LockTimeout: -time.Second}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("a negative LockTimeout = %v; want a validation error", err)
	}
	dir := filepath.Join(t.TempDir(), "none")
	if _, err := New(Options{Path: dir, ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadOnly where no store is = %v; want os.ErrNotExist", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a read-only open created %s", dir)
	}
	// A log the writer has created but not yet written its first entry to: the reader
	// has no branch until a Refresh after that entry.
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, logName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Path: dir, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of an empty log: %v", err)
	}
	defer r.Close()
	ctx := context.Background()
	if _, err := r.GetBranch(ctx, store.DefaultBranch); !errors.Is(err, store.ErrBranchNotFound) {
		t.Fatalf("main of an empty log = %v; want store.ErrBranchNotFound", err)
	}
	writeLoggedFacts(t, dir, 2)
	if err := r.Refresh(ctx); err != nil || countFacts(t, r) != 2 {
		t.Fatalf("refresh after the writer's first entries: %v, %d facts; want 2", err, countFacts(t, r))
	}
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.ReadOnly() || s.Refresh(context.Background()) != nil {
		t.Error("an in-memory store is read-only, or its Refresh fails")
	}
	s.Close()
	if err := s.Refresh(context.Background()); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Refresh after Close = %v; want store.ErrClosed", err)
	}
}

// readerChildEnv names the directory TestReaderChild opens read-only. It answers each
// line of its standard input: "count" with "count N", the facts it sees; "refresh"
// with the count after a Refresh; "write" with "refused" if a Put fails with
// store.ErrReadOnly.
const readerChildEnv = "DAY1_MEMSTORE_READER_CHILD"

func TestReaderChild(t *testing.T) {
	dir := os.Getenv(readerChildEnv)
	if dir == "" {
		t.Skip("helper process for TestReadersInOtherProcesses; runs only as its child")
	}
	s, err := New(Options{Path: dir, ReadOnly: true})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	defer s.Close()
	fmt.Println("opened")
	ctx := context.Background()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "refresh":
			if err := s.Refresh(ctx); err != nil {
				fmt.Println("error:", err)
				continue
			}
			fallthrough
		case "count":
			got, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
			if err != nil {
				fmt.Println("error:", err)
				continue
			}
			fmt.Println("count", len(got))
		case "write":
			_, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "x", Text: "from a reader"}}, store.PutOptions{})
			if errors.Is(err, store.ErrReadOnly) {
				fmt.Println("refused")
			} else {
				fmt.Println("error:", err)
			}
		}
	}
}

func TestReadersInOtherProcesses(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	w, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	put := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			if _, err := w.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: fmt.Sprint(prefix, i), Text: fmt.Sprintf("fact %d of batch %s, written by the test process", i, prefix)}}, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("a", 3)
	// Two reader processes beside this writing process.
	r1 := startChild(t, "TestReaderChild", readerChildEnv, dir)
	r2 := startChild(t, "TestReaderChild", readerChildEnv, dir)
	for _, r := range []*child{r1, r2} {
		r.send(t, "count")
		r.expect(t, "count 3")
		r.send(t, "write")
		r.expect(t, "refused")
	}
	put("b", 2)
	r1.send(t, "refresh")
	r1.expect(t, "count 5")
	r2.send(t, "refresh")
	r2.expect(t, "count 5")
	// The readers hold no lock: the writer closes and a new one opens at once.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = New(Options{Path: dir})
	if err != nil {
		t.Fatalf("reopening the writer while two reader processes have the store open: %v", err)
	}
	defer w.Close()
	put("c", 1)
	r2.send(t, "refresh")
	r2.expect(t, "count 6")
	// Without a Refresh a reader sees the commit within a moment.
	time.Sleep(50 * time.Millisecond)
	r1.send(t, "count")
	r1.expect(t, "count 6")
	r1.stop(t)
	r2.stop(t)
}
