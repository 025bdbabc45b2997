package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/sqlite"
)

// childEnv names the folder TestChild opens; childModeEnv what it does there:
//
//	hook W N   N times: open the memory, write fact W-i, close it (a hook's life)
//	stream W   open once, then write facts W-0, W-1, ... until killed, printing
//	           "ack ID" once each write has returned
const (
	childEnv     = "DAY1_SQLITE_CHILD"
	childModeEnv = "DAY1_SQLITE_CHILD_MODE"
)

func TestChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		t.Skip("helper process for the many-process tests; runs only as their child")
	}
	ctx := context.Background()
	args := strings.Fields(os.Getenv(childModeEnv))
	fail := func(err error) {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	put := func(s store.Store, id string) error {
		_, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: id, Text: "fact written by " + id}}, store.PutOptions{})
		return err
	}
	switch args[0] {
	case "hook":
		n, _ := strconv.Atoi(args[2])
		for i := range n {
			s := open(t, dir, sqlite.Options{})
			if err := put(s, fmt.Sprintf("%s-%d", args[1], i)); err != nil {
				fail(err)
			}
			if err := s.Close(); err != nil {
				fail(err)
			}
		}
		fmt.Println("done")
	case "stream":
		s := open(t, dir, sqlite.Options{})
		out := bufio.NewWriter(os.Stdout)
		for i := 0; ; i++ {
			id := fmt.Sprintf("%s-%d", args[1], i)
			if err := put(s, id); err != nil {
				fail(err)
			}
			fmt.Fprintln(out, "ack", id)
			out.Flush()
		}
	}
}

// startChild starts this test binary as TestChild in dir.
func startChild(t *testing.T, dir, mode string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+dir, childModeEnv+"="+mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}

// TestManyProcesses has 8 processes each open the memory, write one fact and close
// it, 25 times, while this process holds the memory open and writes too: every write
// lands exactly once, and the holder sees the others' without reopening.
func TestManyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 8 processes")
	}
	dir := t.TempDir()
	holder := open(t, dir, sqlite.Options{})
	defer holder.Close()
	ctx := context.Background()
	const procs, per = 8, 25
	var wg sync.WaitGroup
	errs := make(chan string, procs+1)
	for w := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd, out := startChild(t, dir, fmt.Sprintf("hook p%d %d", w, per))
			var lines []string
			done := false
			for out.Scan() {
				lines = append(lines, out.Text())
				done = done || out.Text() == "done"
			}
			if err := cmd.Wait(); err != nil || !done {
				errs <- fmt.Sprintf("process %d: %v, output %q", w, err, lines)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range per {
			f := store.Fact{ID: fmt.Sprintf("holder-%d", i), Text: fmt.Sprintf("fact written by holder-%d", i)}
			if _, err := holder.Put(ctx, store.DefaultBranch, []store.Record{f}, store.PutOptions{}); err != nil {
				errs <- fmt.Sprintf("holder: %v", err)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	facts, err := holder.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, f := range facts {
		seen[f.RecordID()]++
	}
	if len(facts) != (procs+1)*per {
		t.Errorf("the holder sees %d facts; want %d", len(facts), (procs+1)*per)
	}
	for w := range procs {
		for i := range per {
			if id := fmt.Sprintf("p%d-%d", w, i); seen[id] != 1 {
				t.Errorf("fact %s is there %d times; want once", id, seen[id])
			}
		}
	}
	// The holder's search sees the others' facts too.
	hits, err := holder.Search(ctx, store.View{}, store.SearchQuery{Text: "p3-7", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Record.RecordID() != "p3-7" {
		t.Errorf("the holder's search for p3-7 found %v", hits)
	}
}

// TestKilledWriters kills writing processes with SIGKILL at random moments, three
// rounds of three at once, and checks after each round that every write they had
// acknowledged is there, that nothing they did not try is, and that the database is
// whole and takes new writes.
func TestKilledWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	dir := t.TempDir()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	acked := map[string]bool{}
	for round := range 3 {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := range 3 {
			name := fmt.Sprintf("r%dw%d", round, w)
			cmd, out := startChild(t, dir, "stream "+name)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for out.Scan() {
					if id, ok := strings.CutPrefix(out.Text(), "ack "); ok {
						mu.Lock()
						acked[id] = true
						mu.Unlock()
					}
				}
			}()
			time.AfterFunc(time.Duration(200+rng.IntN(600))*time.Millisecond, func() {
				cmd.Process.Kill() // SIGKILL: no chance to finish anything
			})
			defer cmd.Wait()
		}
		wg.Wait()
		s := open(t, dir, sqlite.Options{})
		facts, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, f := range facts {
			have[f.RecordID()] = true
		}
		for id := range acked {
			if !have[id] {
				t.Errorf("round %d: acknowledged fact %s is lost", round, id)
			}
		}
		for id := range have {
			var r, w, i int
			if strings.HasPrefix(id, "after-") {
				continue
			}
			if _, err := fmt.Sscanf(id, "r%dw%d-%d", &r, &w, &i); err != nil || r > round {
				t.Errorf("round %d: fact %s was never written", round, id)
			}
		}
		if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: fmt.Sprint("after-", round), Text: "written after the kills"}}, store.PutOptions{}); err != nil {
			t.Errorf("round %d: a write after the kills: %v", round, err)
		}
		s.Close()
		if len(acked) == 0 {
			t.Fatalf("round %d: no write was acknowledged before the kills", round)
		}
	}
	t.Logf("%d writes acknowledged before the kills, none lost", len(acked))
}
