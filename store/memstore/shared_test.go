package memstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/filelock"

	"github.com/day1ai/day1/store"
)

// procChildEnv names the directory TestProcChild writes; procModeEnv says how:
//
//	hook PREFIX N   N times: open the store, write PREFIX-i and a fact of the shared
//	                text, close it (a hook, or a command line)
//	hold PREFIX N   open the store once and write as hook does, N times (a server)
//
// After each acknowledged write it prints "ack PREFIX-i OUTCOME", OUTCOME being what
// Put said of the shared fact.
const (
	procChildEnv = "DAY1_MEMSTORE_PROC_CHILD"
	procModeEnv  = "DAY1_MEMSTORE_PROC_MODE"
)

// sharedText is the text every writer writes once a round under its own id: only the
// first write of it across all processes creates a fact.
const sharedText = "The build cache lives in /var/cache/build"

func TestProcChild(t *testing.T) {
	dir := os.Getenv(procChildEnv)
	if dir == "" {
		t.Skip("helper process for the tests of many processes on one store; runs only as their child")
	}
	var mode, prefix string
	var n int
	if _, err := fmt.Sscan(os.Getenv(procModeEnv), &mode, &prefix, &n); err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	var s *Store
	open := func() {
		var err error
		if s, err = New(Options{Path: dir, LockTimeout: time.Minute}); err != nil {
			fmt.Fprintln(out, "error: open:", err)
			out.Flush()
			os.Exit(3)
		}
	}
	if mode == "hold" {
		open()
	}
	for i := range n {
		if mode == "hook" {
			open()
		}
		id := fmt.Sprintf("%s-%d", prefix, i)
		res, err := s.Put(ctx, store.DefaultBranch, []store.Record{
			store.Fact{ID: id, Text: fmt.Sprintf("fact %d written by %s", i, prefix)},
			store.Fact{ID: id + "-shared", Text: sharedText},
		}, store.PutOptions{})
		if err != nil {
			fmt.Fprintln(out, "error:", err)
			out.Flush()
			os.Exit(3)
		}
		fmt.Fprintln(out, "ack", id, res[1].Outcome)
		out.Flush()
		if mode == "hook" {
			if err := s.Close(); err != nil {
				fmt.Fprintln(out, "error: close:", err)
				out.Flush()
				os.Exit(3)
			}
		}
	}
	if mode == "hold" {
		s.Close()
	}
}

// procRun is one child process of TestProcChild and the writes it acknowledged.
type procRun struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	acked  map[string]store.Outcome
	failed []string
	done   chan struct{}
}

func startProc(t *testing.T, dir, mode, prefix string, n int) *procRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), procChildEnv+"="+dir, procModeEnv+"="+fmt.Sprint(mode, " ", prefix, " ", n))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &procRun{cmd: cmd, acked: map[string]store.Outcome{}, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			p.mu.Lock()
			if len(f) == 3 && f[0] == "ack" {
				p.acked[f[1]] = store.Outcome(f[2])
			} else if len(f) > 0 && f[0] != "PASS" && f[0] != "ok" {
				p.failed = append(p.failed, sc.Text())
			}
			p.mu.Unlock()
		}
		cmd.Wait()
	}()
	return p
}

func skipProcs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes; skipped with -short")
	}
}

// TestManyProcessesWriteOneStore runs 8 processes that each open the store, write and
// close it 25 times, beside a store this process holds open for the whole run and
// writes through: no write waits for a holder to close, every write lands exactly
// once, and every process decides on what the others committed before it (the shared
// text is created once in all).
func TestManyProcessesWriteOneStore(t *testing.T) {
	skipProcs(t)
	dir := t.TempDir()
	ctx := context.Background()
	holder, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	const procs, rounds = 8, 25
	var runs []*procRun
	for p := range procs {
		runs = append(runs, startProc(t, dir, "hook", "p"+strconv.Itoa(p), rounds))
	}
	outcomes := map[store.Outcome]int{}
	want := map[string]bool{}
	for i := 0; ; i++ {
		busy := false
		for _, r := range runs {
			select {
			case <-r.done:
			default:
				busy = true
			}
		}
		if !busy && i >= rounds {
			break
		}
		id := fmt.Sprintf("holder-%d", i)
		res, err := holder.Put(ctx, store.DefaultBranch, []store.Record{
			store.Fact{ID: id, Text: fmt.Sprintf("fact %d written by the holder", i)},
			store.Fact{ID: id + "-shared", Text: sharedText},
		}, store.PutOptions{})
		if err != nil {
			t.Fatalf("holder's write %d: %v", i, err)
		}
		outcomes[res[1].Outcome]++
		want[id] = true
		time.Sleep(5 * time.Millisecond) // a server's pace, not a loop's
	}
	for p, r := range runs {
		if len(r.failed) > 0 {
			t.Fatalf("process %d: %q", p, r.failed)
		}
		if len(r.acked) != rounds {
			t.Fatalf("process %d acknowledged %d writes; want %d", p, len(r.acked), rounds)
		}
		for id, o := range r.acked {
			want[id] = true
			outcomes[o]++
		}
	}
	if outcomes[store.Created] != 1 {
		t.Errorf("the shared text was created %d times across the processes (%v); want once", outcomes[store.Created], outcomes)
	}
	// The holder sees every write of the others without reopening.
	if err := holder.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	checkFacts(t, holder, want, want)
	t.Logf("%d writes from %d processes and a holder; shared fact: %v", len(want), procs, outcomes)
}

// checkFacts checks that s holds every fact of must (acknowledged writes), apart from
// the copies of the shared text, and none outside may (attempted writes): nothing
// lost, nothing phantom.
func checkFacts(t *testing.T, s *Store, must, may map[string]bool) {
	t.Helper()
	got, err := s.List(context.Background(), store.View{}, store.ListQuery{Kind: store.KindFact})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	shared := 0
	for _, r := range got {
		f := r.(store.Fact)
		if f.Text == sharedText {
			shared++
			continue
		}
		if have[f.ID] {
			t.Errorf("fact %s is there twice", f.ID)
		}
		have[f.ID] = true
		if !may[f.ID] {
			t.Errorf("fact %s is there, but no process wrote it", f.ID)
		}
	}
	for id := range must {
		if !have[id] {
			t.Errorf("acknowledged fact %s is missing", id)
		}
	}
	if shared != 1 {
		t.Errorf("%d facts hold the shared text; want 1", shared)
	}
}

// TestKilledWritersLoseNothing kills writer processes with SIGKILL at random moments
// while they and others write one store: every acknowledged write is there, nothing
// else is, and a dead process's hold on the commit lock never stops the others.
func TestKilledWritersLoseNothing(t *testing.T) {
	skipProcs(t)
	dir := t.TempDir()
	// The last process runs to its end: a server, whose commits come fast.
	const procs, rounds = 5, 300
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var runs []*procRun
	for p := range procs {
		mode := "hold"
		if p%2 == 1 {
			mode = "hook"
		}
		runs = append(runs, startProc(t, dir, mode, "k"+strconv.Itoa(p), rounds))
	}
	for p, r := range runs {
		if p == procs-1 {
			break // one runs to its end
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		r.cmd.Process.Kill()
	}
	must, may := map[string]bool{}, map[string]bool{}
	for p, r := range runs {
		<-r.done
		r.mu.Lock()
		for _, line := range r.failed {
			t.Errorf("process %d: %s", p, line)
		}
		for id := range r.acked {
			must[id] = true
		}
		r.mu.Unlock()
		for i := range rounds {
			may[fmt.Sprintf("k%d-%d", p, i)] = true
		}
	}
	if len(runs[procs-1].acked) != rounds {
		t.Fatalf("the process left to run acknowledged %d writes; want %d", len(runs[procs-1].acked), rounds)
	}
	s, err := New(Options{Path: dir, LockTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	if _, err := s.Put(context.Background(), store.DefaultBranch, []store.Record{store.Fact{ID: "after", Text: "written after the kills"}}, store.PutOptions{}); err != nil {
		t.Fatalf("a write after the kills: %v", err)
	}
	t.Logf("%d acknowledged writes survived %d kills; the next write took %v", len(must), procs-1, time.Since(start))
	may["after"], must["after"] = true, true
	checkFacts(t, s, must, may)
}

// lockChildEnv names the directory whose commit lock TestLockChild takes, as a
// process in the middle of a long commit would, and holds until its standard input
// closes.
const lockChildEnv = "DAY1_MEMSTORE_LOCK_CHILD"

func TestLockChild(t *testing.T) {
	dir := os.Getenv(lockChildEnv)
	if dir == "" {
		t.Skip("helper process for TestCommitWaitsForAnotherProcess; runs only as its child")
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err == nil {
		err = filelock.LockFile(f)
	}
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	fmt.Println("opened")
	bufio.NewReader(os.Stdin).ReadString('\n')
}

func TestCommitWaitsForAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Options{Path: dir, LockTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	put := func(ctx context.Context, s *Store, id string) error {
		_, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: id, Text: "fact " + id}}, store.PutOptions{})
		return err
	}
	holder := startChild(t, "TestLockChild", lockChildEnv, dir)

	// Opening and reading need no lock.
	r, err := New(Options{Path: dir})
	if err != nil {
		t.Fatalf("open while another process commits: %v", err)
	}
	defer r.Close()
	if _, err := r.GetBranch(ctx, store.DefaultBranch); err != nil {
		t.Fatalf("read while another process commits: %v", err)
	}

	start := time.Now()
	err = put(ctx, s, "a")
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "LockTimeout") {
		t.Fatalf("a write while another process holds the lock past the timeout = %v; want store.ErrLocked naming LockTimeout", err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond || waited > 10*time.Second {
		t.Fatalf("gave up after %v; want about the 300ms timeout", waited)
	}

	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := put(cctx, r, "b"); !errors.Is(err, store.ErrLocked) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a write whose context ends while waiting = %v; want store.ErrLocked and context.DeadlineExceeded", err)
	}

	// The holder dies while a write waits: the write goes on at once.
	got := make(chan error, 1)
	start = time.Now()
	go func() { got <- put(ctx, r, "c") }()
	time.Sleep(100 * time.Millisecond)
	holder.cmd.Process.Kill()
	if err := <-got; err != nil {
		t.Fatalf("a write waiting for a process that died holding the lock: %v", err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Fatalf("the write took %v; it cannot have waited for the holder", waited)
	}
	if err := put(ctx, s, "d"); err != nil {
		t.Fatal(err)
	}
	waitFacts(t, s, 2)
	waitFacts(t, r, 2)
}

// TestStoresInOneProcessShareAPath opens one directory twice in this process: both
// write, each decides on the other's commits, and closing one leaves the other open.
func TestStoresInOneProcessShareAPath(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{Path: dir + "/."})
	if err != nil {
		t.Fatalf("a second open in the same process: %v", err)
	}
	if _, err := a.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "a1", Text: sharedText}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := b.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "b1", Text: sharedText}}, store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != store.Deduplicated || res[0].Replaced != "a1" {
		t.Fatalf("the second store wrote the text the first had committed: %s (replaced %q); want deduplicated against a1", res[0].Outcome, res[0].Replaced)
	}
	if _, err := b.CreateBranch(ctx, store.BranchSpec{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateBranch(ctx, store.BranchSpec{Name: "x"}); !errors.Is(err, store.ErrBranchExists) {
		t.Fatalf("creating the branch the other store made = %v; want store.ErrBranchExists", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "b2", Text: "after the other closed"}}, store.PutOptions{}); err != nil {
		t.Fatalf("a write after the other store closed: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n := countFacts(t, c); n != 2 {
		t.Fatalf("reopened: %d facts; want 2 (a1, b2)", n)
	}
}

// TestProcessesCompactWhileOthersWrite runs three writer processes that each compact
// the store after every 50 of their commits, beside this process, which writes and
// reads too: every write lands once, whoever compacted last, and a fresh open reads
// the same store.
func TestProcessesCompactWhileOthersWrite(t *testing.T) {
	skipProcs(t)
	dir := t.TempDir()
	ctx := context.Background()
	s, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var kids []*child
	for i := range 3 {
		c := startChild(t, "TestWriterChild", writerChildEnv, dir)
		c.send(t, fmt.Sprintf("compact w%d 300", i))
		kids = append(kids, c)
	}
	mine := 0
	for done := 0; done < len(kids); {
		done = 0
		for _, c := range kids {
			select {
			case line := <-c.lines:
				if !strings.HasPrefix(line, "ack ") {
					t.Fatalf("child: %q", line)
				}
				c.lines = nil // acknowledged: read no more from it
			default:
			}
			if c.lines == nil {
				done++
			}
		}
		if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: fmt.Sprintf("mine%d", mine), Text: fmt.Sprintf("fact %d of this process", mine)}}, store.PutOptions{}); err != nil {
			t.Fatalf("write %d beside the compactions: %v", mine, err)
		}
		mine++
		countFacts(t, s)
	}
	for _, c := range kids {
		c.stop(t)
	}
	want := 3*300 + mine
	if err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countFacts(t, s); n != want {
		t.Fatalf("this process sees %d facts; want %d", n, want)
	}
	if _, err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n := countFacts(t, again); n != want {
		t.Fatalf("a fresh open sees %d facts; want %d", n, want)
	}
	files, err := listFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files.ckpts) != 1 || len(files.tmps) != 0 {
		t.Errorf("after the last compaction the directory holds checkpoints %v and temporary files %v; want one checkpoint", files.ckpts, files.tmps)
	}
	t.Logf("%d facts, %d of them from this process; generation %d", want, mine, files.maxGen())
}

// TestOpenRefusesWhatIsNoMemory: a path that is a file, or a folder of other files,
// is refused with a *store.ValidationError naming Options.Path, and nothing is written
// there.
func TestOpenRefusesWhatIsNoMemory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("my notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{file, dir} {
		_, err := New(Options{Path: path})
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != "Options.Path" {
			t.Errorf("open of %s = %v; want a *store.ValidationError naming Options.Path", path, err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the refused folder holds %d entries; want only the file that was there", len(ents))
	}
	// A folder of hidden files only (a file manager's) is as good as empty.
	hidden := t.TempDir()
	if err := os.WriteFile(filepath.Join(hidden, ".DS_Store"), []byte{0}, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Path: hidden})
	if err != nil {
		t.Fatalf("open of a folder holding a hidden file: %v", err)
	}
	s.Close()
}

// TestDamagedLogIsRefused: damage that is no torn append (a bad entry with whole
// entries after it, a whole entry that does not decode, an entry of an unknown type)
// fails the open with an error naming the file, and leaves the file as it was.
func TestDamagedLogIsRefused(t *testing.T) {
	dir := t.TempDir()
	writeLoggedFacts(t, dir, 5)
	path := filepath.Join(dir, logName)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	future := []byte(`{"q":99,"a":"2030-01-01T00:00:00Z","o":[{"t":250}]}`)
	cases := []struct {
		name   string
		mangle func([]byte) []byte
		want   error // nil: any error naming the file and a newer version
	}{
		{"a damaged entry in the middle", func(b []byte) []byte {
			b = slices.Clone(b)
			b[frameHead+4] ^= 0xff // in the first entry's payload
			return b
		}, ErrCorrupt},
		{"a whole entry that is not one", func(b []byte) []byte { return appendFrame(slices.Clone(b), []byte("not an entry")) }, ErrCorrupt},
		{"an entry of a newer version", func(b []byte) []byte { return appendFrame(slices.Clone(b), future) }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mangled := c.mangle(orig)
			if err := os.WriteFile(path, mangled, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := New(Options{Path: dir})
			if err == nil {
				t.Fatal("the open succeeded")
			}
			if c.want != nil && !errors.Is(err, c.want) || !strings.Contains(err.Error(), dir) && !strings.Contains(err.Error(), "newer version") {
				t.Fatalf("open = %v; want %v naming the file or a newer version", err, c.want)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, mangled) {
				t.Errorf("the refused open changed the log: %d bytes, then %d", len(mangled), len(after))
			}
		})
	}
}

// TestDamagedCheckpointIsRefused: a checkpoint damaged or cut short fails the open with
// ErrCorrupt naming it, and is left as it is.
func TestDamagedCheckpointIsRefused(t *testing.T) {
	dir := t.TempDir()
	writeLoggedFacts(t, dir, 20)
	s, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := ckptPath(dir, 1)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, mangled := range map[string][]byte{
		"a flipped byte": func() []byte { b := slices.Clone(orig); b[len(b)/2] ^= 0xff; return b }(),
		"cut short":      orig[:len(orig)-10],
	} {
		if err := os.WriteFile(path, mangled, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := New(Options{Path: dir})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: open = %v; want ErrCorrupt naming %s", name, err, path)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, mangled) {
			t.Errorf("%s: the refused open changed the checkpoint", name)
		}
	}
}

// TestCompactionSupersededByAnotherStore: while one store writes its checkpoint,
// another store on the same directory compacts past it and removes the first one's
// temporary file as left over. The first compaction reports itself superseded, not
// failed, and both stores and a fresh open read every write.
func TestCompactionSupersededByAnotherStore(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	writeLoggedFacts(t, dir, 30)
	b, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var bStats CompactStats
	var bErr error
	a, err := New(Options{Path: dir, compactHook: func(step string) {
		if step == stepCheckpointHalf {
			bStats, bErr = b.Compact(ctx)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := a.Compact(ctx)
	if bErr != nil {
		t.Fatalf("the compaction in between: %v", bErr)
	}
	if err != nil || !st.Superseded || bStats.Generation <= st.Generation {
		t.Fatalf("the compaction overtaken = %+v, %v; want superseded by generation %d", st, err, bStats.Generation)
	}
	if _, err := a.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "after", Text: "written after both compactions"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFacts(t, b, 31)
	c, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n := countFacts(t, c); n != 31 {
		t.Fatalf("a fresh open reads %d facts; want 31", n)
	}
}

// TestReadOnlyReadsBesideReloads reads a read-only store from several goroutines while
// a writer beside it writes and compacts and the reader loads itself again from each
// new checkpoint: under the race detector, reads that look at the log by themselves
// do not race with a reload that replaces what they look at.
func TestReadOnlyReadsBesideReloads(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := New(Options{Path: dir, CompactRatio: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := New(Options{Path: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: "f0"})
				r.ReadOnly()
			}
		}()
	}
	for i := range 20 {
		if _, err := w.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: fmt.Sprint("f", i), Text: fmt.Sprint("fact number ", i)}}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		if err := r.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if n := countFacts(t, r); n != 20 {
		t.Fatalf("the reader sees %d facts; want 20", n)
	}
}

// TestLaggingStoreCatchesUpBeforeTheLock: a store that fell behind reads in what the
// others committed before it waits for the commit lock, not while it holds it, so that
// its catching up holds up no one: with the lock held elsewhere, its write times out,
// and it has read in every commit all the same.
func TestLaggingStoreCatchesUpBeforeTheLock(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	lagging, err := New(Options{Path: dir, LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer lagging.Close()
	busy, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for i := range 20 {
		if _, err := busy.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: fmt.Sprint("f", i), Text: fmt.Sprint("fact number ", i)}}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	startChild(t, "TestLockChild", lockChildEnv, dir)
	_, err = lagging.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "late", Text: "written late"}}, store.PutOptions{})
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("a write while another process holds the lock = %v; want store.ErrLocked", err)
	}
	lagging.mu.RLock()
	seq := lagging.seq
	lagging.mu.RUnlock()
	busy.mu.RLock()
	want := busy.seq
	busy.mu.RUnlock()
	if seq != want {
		t.Fatalf("the lagging store is at sequence %d after its write waited; want %d, read in before the wait", seq, want)
	}
}

// TestOpenLeavesACheckpointBeingWritten: while store a writes its checkpoint, store b
// switches to a later generation and, before b's checkpoint is written, a third store
// opens the directory. No checkpoint supersedes a's yet, so the open leaves a's
// temporary file alone; b's finished compaction then supersedes a's, which says so.
func TestOpenLeavesACheckpointBeingWritten(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	writeLoggedFacts(t, dir, 20)
	tmpOf := func(gen uint64) string { return ckptPath(dir, gen) + tmpExt }
	var opened []*Store
	var checked bool
	b, err := New(Options{Path: dir, compactHook: func(step string) {
		if step != stepSwitched {
			return
		}
		c, err := New(Options{Path: dir})
		if err != nil {
			t.Errorf("the open during the compactions: %v", err)
			return
		}
		opened = append(opened, c)
		if _, err := os.Stat(tmpOf(1)); err != nil {
			t.Errorf("after the open, the checkpoint being written: %v", err)
		}
		checked = true
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var bErr error
	a, err := New(Options{Path: dir, compactHook: func(step string) {
		if step == stepCheckpointHalf {
			_, bErr = b.Compact(ctx)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := a.Compact(ctx)
	for _, c := range opened {
		c.Close()
	}
	if bErr != nil || !checked {
		t.Fatalf("the compaction in between: %v (checked: %v)", bErr, checked)
	}
	if err != nil || st.Generation != 1 || !st.Superseded {
		t.Fatalf("the first compaction = %+v, %v; want generation 1, superseded", st, err)
	}
}

// TestLoggerReportsWaitsAndCompactions checks what a durable store logs: a commit
// that waited for another store's commit lock, and a compaction with its figures,
// with the path and never a record's text.
func TestLoggerReportsWaitsAndCompactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	var logged syncBuffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	a, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := New(Options{Path: dir, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	unlock, err := a.lockWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "f1", Text: "a secret text"}}, store.PutOptions{})
		done <- err
	}()
	time.Sleep(2 * SlowLockWait)
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := b.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	l := logged.String()
	for _, want := range []string{"waited for the commit lock", "compacted", "generation=", "path=" + dir} {
		if !strings.Contains(l, want) {
			t.Errorf("the log lacks %q:\n%s", want, l)
		}
	}
	if strings.Contains(l, "secret") {
		t.Errorf("the log holds a record's text:\n%s", l)
	}
}

// syncBuffer is a strings.Builder safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReadOnlyNeedsAMemory checks that a read-only open of a folder that holds no
// memory, or of none at all, fails with store.ErrNotFound and creates nothing.
func TestReadOnlyNeedsAMemory(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	missing := filepath.Join(t.TempDir(), "missing")
	for _, dir := range []string{empty, missing} {
		if _, err := New(Options{Path: dir, ReadOnly: true}); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), dir) {
			t.Errorf("read-only open of %s: %v; want store.ErrNotFound naming it", dir, err)
		}
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("the read-only open wrote %d files into %s", len(ents), empty)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the read-only open made %s", missing)
	}
}
