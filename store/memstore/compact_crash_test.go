package memstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
)

// compactChildEnv names the directory TestCompactCrashChild writes; compactStepEnv the
// step of a compaction at which it kills itself, and compactRoundEnv which of its two
// compactions (1 or 2) that is. The child writes facts, a snapshot, a branch and a
// merge, compacts once, writes more, and compacts again, with a goroutine writing new
// facts all through the compactions. It prints "ack ID TEXT" for each acknowledged
// put, "at STEP" just before it kills itself with SIGKILL, and "finished" if it never
// reached the step.
const (
	compactChildEnv = "DAY1_MEMSTORE_COMPACT_CHILD"
	compactStepEnv  = "DAY1_MEMSTORE_COMPACT_STEP"
	compactRoundEnv = "DAY1_MEMSTORE_COMPACT_ROUND"
)

func TestCompactCrashChild(t *testing.T) {
	dir := os.Getenv(compactChildEnv)
	if dir == "" {
		t.Skip("helper process for TestCompactCrashAtEachStep; runs only as its child")
	}
	step, round := os.Getenv(compactStepEnv), os.Getenv(compactRoundEnv)
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	fail := func(what string, err error) {
		say("error: %s: %v", what, err)
		os.Exit(3)
	}
	compactions := 0
	opts := Options{Path: dir, Retention: time.Nanosecond, CompactRatio: -1}
	opts.compactHook = func(at string) {
		if at == step && fmt.Sprint(compactions) == round {
			say("at %s", at)
			p, _ := os.FindProcess(os.Getpid())
			p.Kill()
			select {}
		}
	}
	s, err := New(opts)
	if err != nil {
		fail("open", err)
	}
	ctx := context.Background()
	put := func(branch, id, text string) {
		if _, err := s.Put(ctx, branch, []store.Record{store.Fact{ID: id, Text: text, Embedding: []float32{1, float32(len(text) % 7), 2}}}, store.PutOptions{}); err != nil {
			fail("put", err)
		}
		if branch == store.DefaultBranch {
			say("ack %s %s", id, text)
		}
	}
	for i := range 300 {
		put(store.DefaultBranch, fmt.Sprint("p", i), fmt.Sprintf("first text of p%d", i))
	}
	if _, err := s.CreateSnapshot(ctx, store.DefaultBranch, "s1", ""); err != nil {
		fail("snapshot", err)
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "side"}); err != nil {
		fail("branch", err)
	}
	put("side", "q1", "written on the side branch")
	for i := range 150 {
		put(store.DefaultBranch, fmt.Sprint("p", i), fmt.Sprintf("second text of p%d", i))
	}
	d, err := s.Diff(ctx, "side", store.DefaultBranch)
	if err != nil {
		fail("diff", err)
	}
	if _, err := s.ApplyMerge(ctx, store.MergePlan{Source: "side", Target: store.DefaultBranch, ExpectHead: d.TargetHead, SourceRev: d.SourceRev,
		Puts: []store.Record{d.SourceChanges[0].After}, Record: store.MergeRecord{ID: "merge-1", Strategy: store.Native}}); err != nil {
		fail("merge", err)
	}
	say("ack q1 written on the side branch")
	for c := 1; c <= 2; c++ {
		compactions = c
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				put(store.DefaultBranch, fmt.Sprintf("w%d-%d", c, i), fmt.Sprintf("written during compaction %d, number %d", c, i))
			}
		}()
		// Let the writer get going, so that the compaction meets it at every step.
		time.Sleep(20 * time.Millisecond)
		if _, err := s.Compact(ctx); err != nil {
			fail("compact", err)
		}
		close(stop)
		<-done
		// Updates that leave versions for the next compaction to drop.
		for i := range 100 {
			put(store.DefaultBranch, fmt.Sprint("p", i), fmt.Sprintf("text %d of p%d", c+2, i))
		}
	}
	say("finished")
	s.Close()
}

// crashCompaction runs the child until it kills itself at step of compaction round, and
// returns the last acknowledged text of each fact.
func crashCompaction(t *testing.T, dir, step string, round int) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCompactCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), compactChildEnv+"="+dir, compactStepEnv+"="+step, fmt.Sprintf("%s=%d", compactRoundEnv, round))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]string{}
	reached := false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ack "):
			id, text, _ := strings.Cut(strings.TrimPrefix(line, "ack "), " ")
			acked[id] = text
		case line == "at "+step:
			reached = true
		case strings.HasPrefix(line, "error:"), line == "finished":
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %s", line)
		}
	}
	cmd.Wait()
	if !reached {
		t.Fatalf("the child never reached step %s of compaction %d", step, round)
	}
	return acked
}

func TestCompactCrashAtEachStep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes; skipped with -short")
	}
	steps := []string{stepLogCreated, stepSwitched, stepCheckpointHalf, stepCheckpointWritten, stepCheckpointSynced,
		stepRenamed, stepDirSynced, stepRemovedOne, stepReloaded, stepDone}
	type kill struct {
		step  string
		round int
	}
	var kills []kill
	for _, st := range steps {
		kills = append(kills, kill{st, 2})
	}
	// The first compaction replaces the log every store starts with.
	kills = append(kills, kill{stepSwitched, 1}, kill{stepRenamed, 1}, kill{stepRemovedOne, 1})
	for _, k := range kills {
		t.Run(fmt.Sprintf("%s of compaction %d", k.step, k.round), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			acked := crashCompaction(t, dir, k.step, k.round)
			checkRecovered(t, dir, acked)
			// The recovered store compacts and reopens again.
			s, err := New(Options{Path: dir, Retention: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Compact(t.Context()); err != nil {
				t.Fatalf("compact after recovery: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			checkRecovered(t, dir, acked)
			files, err := listFiles(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(files.ckpts) != 1 || len(files.logs) != 1 || len(files.tmps) != 0 || files.ckpts[0] != files.logs[0] {
				t.Errorf("files after a compaction and a reopen: %+v; want one checkpoint and its log", files)
			}
		})
	}
}

// checkRecovered opens the store in dir and checks that every acknowledged fact reads
// its last acknowledged text, that the snapshot and the merge are there once, that no
// version was applied twice, and that the store takes a write.
func checkRecovered(t *testing.T, dir string, acked map[string]string) {
	t.Helper()
	s, err := New(Options{Path: dir})
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	for id, text := range acked {
		r, err := s.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: id})
		if err != nil {
			t.Fatalf("acknowledged fact %s lost: %v", id, err)
		}
		if got := r.(store.Fact).Text; got != text {
			t.Fatalf("fact %s reads %q; its last acknowledged text is %q", id, got, text)
		}
	}
	facts, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
	if err != nil {
		t.Fatal(err)
	}
	// At most the one put under way when the child died landed unacknowledged.
	if len(facts) < len(acked) || len(facts) > len(acked)+1 {
		t.Errorf("%d facts on main; %d were acknowledged", len(facts), len(acked))
	}
	if _, ok := acked["q1"]; ok {
		ms, err := s.ListMerges(ctx, store.MergeFilter{})
		if err != nil || len(ms) != 1 {
			t.Errorf("merges after recovery: %d, %v; want the one", len(ms), err)
		}
	}
	if _, ok := acked["p299"]; ok {
		r, err := s.Get(ctx, store.View{At: store.Point{Snapshot: "s1"}}, store.Ref{Kind: store.KindFact, ID: "p0"})
		if err != nil || r.(store.Fact).Text != "first text of p0" {
			t.Errorf("p0 at snapshot s1: %v, %v; want its first text", r, err)
		}
	}
	s.mu.RLock()
	main := s.branches[store.DefaultBranch]
	for k := range main.own.first {
		vs := slices.Collect(main.own.all(k))
		for i := 1; i < len(vs); i++ {
			if vs[i].seq <= vs[i-1].seq || vs[i].rec != nil && vs[i-1].rec != nil && store.SameContent(vs[i].plain(), vs[i-1].plain()) {
				t.Errorf("%v: versions %d and %d repeat one write", k, vs[i-1].seq, vs[i].seq)
			}
		}
	}
	s.mu.RUnlock()
	if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "after", Text: "written after recovery"}}, store.PutOptions{}); err != nil {
		t.Fatalf("write after recovery: %v", err)
	}
	acked["after"] = "written after recovery"
}
