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
//	holder W T open once; until the Unix time T (in nanoseconds) write facts W-0,
//	           W-1, ..., acknowledging each, and read between writes (a server)
//	hooks W T  until T: open, write fact W-i, acknowledge it, close (hooks firing)
//	reader W T until T: open read-only, count the facts and search, close (a
//	           command line): the count never goes down
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
	case "holder", "hooks", "reader":
		ns, _ := strconv.ParseInt(args[2], 10, 64)
		soak(t, dir, args[0], args[1], time.Unix(0, ns), put, fail)
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
			// The child is killed (SIGKILL: no chance to finish anything) a while
			// after its first acknowledged write, however slowly it starts on a
			// loaded machine; one that acknowledges nothing in 30 s is killed too.
			kill := func() { cmd.Process.Kill() }
			after := time.Duration(200+rng.IntN(600)) * time.Millisecond
			stuck := time.AfterFunc(30*time.Second, kill)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for out.Scan() {
					if id, ok := strings.CutPrefix(out.Text(), "ack "); ok {
						mu.Lock()
						acked[id] = true
						mu.Unlock()
						// Stop reports true once: at the first acknowledgement.
						if stuck.Stop() {
							time.AfterFunc(after, kill)
						}
					}
				}
			}()
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

// soak is the life of one process of TestSoak until the deadline: every write is
// acknowledged on stdout once it has returned, every failure ends it with "error:".
func soak(t *testing.T, dir, role, name string, deadline time.Time, put func(store.Store, string) error, fail func(error)) {
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	ack := func(id string) {
		fmt.Fprintln(out, "ack", id)
		out.Flush()
	}
	var s store.Store
	if role == "holder" {
		s = open(t, dir, sqlite.Options{})
		defer s.Close()
	}
	seen := 0
	for i := 0; time.Now().Before(deadline); i++ {
		id := fmt.Sprintf("%s-%d", name, i)
		switch role {
		case "holder":
			if err := put(s, id); err != nil {
				fail(err)
			}
			ack(id)
			if _, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "fact written by " + name, Limit: 5}); err != nil {
				fail(err)
			}
		case "hooks":
			h, err := sqlite.Options{Path: dir}.OpenStore(ctx, store.OpenEnv{})
			if err != nil {
				fail(err)
			}
			if err := put(h, id); err != nil {
				fail(err)
			}
			ack(id)
			if err := h.Close(); err != nil {
				fail(err)
			}
		case "reader":
			r, err := sqlite.Options{Path: dir, ReadOnly: true}.OpenStore(ctx, store.OpenEnv{})
			if err != nil {
				fail(err)
			}
			facts, err := r.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
			if err != nil {
				fail(err)
			}
			if len(facts) < seen {
				fail(fmt.Errorf("read %d facts after %d", len(facts), seen))
			}
			seen = len(facts)
			if _, err := r.Search(ctx, store.View{}, store.SearchQuery{Text: "fact written", Limit: 5}); err != nil {
				fail(err)
			}
			if err := r.Close(); err != nil {
				fail(err)
			}
		}
	}
	fmt.Fprintln(out, "done")
	out.Flush()
}

// TestSoak runs 8 processes on one memory for DAY1_SOAK (a Go duration; 3s when
// unset): two servers that hold it open, write and search, four hook processes that
// open it, write one fact and close it, again and again, and two command-line
// readers that open it read-only and read. No process may fail, and at the end the
// memory holds every acknowledged write exactly once and nothing else.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 8 processes")
	}
	d := 3 * time.Second
	if env := os.Getenv("DAY1_SOAK"); env != "" {
		var err error
		if d, err = time.ParseDuration(env); err != nil {
			t.Fatalf("DAY1_SOAK: %v", err)
		}
	}
	dir := t.TempDir()
	s := open(t, dir, sqlite.Options{}) // made before the processes start
	deadline := time.Now().Add(d).UnixNano()
	var mu sync.Mutex
	acked := map[string]int{}
	var wg sync.WaitGroup
	for i, role := range []string{"holder", "holder", "hooks", "hooks", "hooks", "hooks", "reader", "reader"} {
		name := fmt.Sprintf("%s%d", role, i)
		cmd, out := startChild(t, dir, fmt.Sprintf("%s %s %d", role, name, deadline))
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, n := false, 0
			var last string
			for out.Scan() {
				line := out.Text()
				if id, ok := strings.CutPrefix(line, "ack "); ok {
					mu.Lock()
					acked[id]++
					mu.Unlock()
					n++
					continue
				}
				done = done || line == "done"
				last = line
			}
			if err := cmd.Wait(); err != nil || !done {
				t.Errorf("%s: %v; last line %q", name, err, last)
			}
			if role != "reader" && n == 0 {
				t.Errorf("%s acknowledged no write", name)
			}
		}()
	}
	wg.Wait()
	facts, err := s.List(context.Background(), store.View{}, store.ListQuery{Kind: store.KindFact})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]int{}
	for _, f := range facts {
		have[f.RecordID()]++
	}
	for id, n := range acked {
		if n != 1 || have[id] != 1 {
			t.Errorf("fact %s: acknowledged %d times, stored %d times; want once each", id, n, have[id])
		}
	}
	for id := range have {
		if acked[id] == 0 {
			t.Errorf("fact %s is stored but was never acknowledged", id)
		}
	}
	t.Logf("%v: %d writes acknowledged by 6 writing processes, each stored once", d, len(acked))
}
