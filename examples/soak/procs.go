package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/day1ai/day1"
)

// Several processes on one durable memory (-processes N). The command starts N copies
// of itself on one folder, in three roles taken in turn, as the processes of agents'
// sessions are:
//
//	server  opens the memory once, like an MCP server, and until the run ends writes
//	        a fact, an observation and now and then the shared text, and searches
//	hook    opens the memory, writes one observation and closes it, again and again,
//	        like the hooks of parallel tool calls
//	reader  opens the memory, counts its facts and searches, and closes it, like the
//	        command line; the count never goes down
//
// Each child prints a line for every acknowledged write ("ack KIND ID"), for every
// failed operation ("fail OP: ERROR") and, last, how many writes it attempted
// ("tried KIND N"). The parent then opens the memory and checks it against the
// acknowledged writes: every one is there (nothing lost), no record is there that no
// child tried (nothing phantom), the shared text is one fact however many processes
// wrote it, and no operation failed.

// procEnv carries a child's role, name, folder and end time.
const procEnv = "DAY1_SOAK_PROCESS"

// sharedText is the text every server writes now and then: the memory holds it once.
const sharedText = "Every agent of this run shares one memory through its own process"

// runProcesses runs the multi-process soak and prints its table.
func runProcesses(ctx context.Context, o options, stdout, stderr io.Writer) int {
	cfg, cleanup, err := config(o)
	if err != nil {
		fmt.Fprintln(stderr, "soak:", err)
		return 2
	}
	defer cleanup()
	path := cfg.Path
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "soak:", err)
		return 2
	}
	// The memory exists before the children start, as it does for agents' sessions.
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "soak:", err)
		return 2
	}
	c.Close()
	fmt.Fprintf(stderr, "soak: %d processes on %s for %s\n", o.processes, path, o.duration)
	end := time.Now().Add(o.duration)
	roles := []string{"server", "hook", "reader"}
	// The children's standard errors are copied to stderr each by its own goroutine.
	stderr = &lockedWriter{w: stderr}
	tallies := make([]*procTally, o.processes)
	var wg sync.WaitGroup
	for i := range o.processes {
		role := roles[i%len(roles)]
		name := fmt.Sprintf("%s%d", role, i)
		cmd := exec.CommandContext(ctx, exe)
		cmd.Env = append(os.Environ(), procEnv+"="+strings.Join([]string{role, name, path, end.Format(time.RFC3339Nano)}, "|"))
		out, err := cmd.StdoutPipe()
		if err != nil {
			fmt.Fprintln(stderr, "soak:", err)
			return 2
		}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(stderr, "soak:", err)
			return 2
		}
		t := &procTally{role: role, name: name, acked: map[string]string{}, tried: map[string]int{}}
		tallies[i] = t
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.read(out)
			if err := cmd.Wait(); err != nil {
				t.fails = append(t.fails, "exit: "+err.Error())
			}
		}()
	}
	wg.Wait()
	return checkProcesses(ctx, path, tallies, stdout)
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// procTally is what one child reported.
type procTally struct {
	role, name string
	acked      map[string]string // id -> kind
	tried      map[string]int    // kind -> writes attempted
	ops        int
	fails      []string
}

func (t *procTally) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 3)
		switch {
		case len(f) == 3 && f[0] == "ack":
			t.acked[f[2]] = f[1]
			t.ops++
		case len(f) == 3 && f[0] == "tried":
			n, _ := strconv.Atoi(f[2])
			t.tried[f[1]] = n
		case len(f) >= 2 && f[0] == "read":
			t.ops++
		case len(f) >= 1 && f[0] == "fail":
			t.fails = append(t.fails, sc.Text())
		}
	}
}

// checkProcesses compares the memory with what the children acknowledged and prints
// the table; it returns the exit status.
func checkProcesses(ctx context.Context, path string, tallies []*procTally, w io.Writer) int {
	c, err := day1.Open(ctx, day1.Config{Path: path})
	if err != nil {
		fmt.Fprintln(w, "soak:", err)
		return 2
	}
	defer c.Close()
	facts, err := c.ListFacts(ctx, day1.ListOptions{})
	if err != nil {
		fmt.Fprintln(w, "soak:", err)
		return 2
	}
	obs, err := c.ListObservations(ctx, day1.ListOptions{})
	if err != nil {
		fmt.Fprintln(w, "soak:", err)
		return 2
	}
	have := map[string]string{}
	shared := 0
	for _, f := range facts {
		if f.Text == sharedText {
			shared++
			continue
		}
		have[f.ID] = "fact"
	}
	for _, o := range obs {
		have[o.ID] = "observation"
	}
	// tried[name/kind]: the ids a child may have written are NAME-KIND-i, i < tried.
	may := func(id string) bool {
		for _, t := range tallies {
			for kind, n := range t.tried {
				rest, ok := strings.CutPrefix(id, t.name+"-"+kind+"-")
				if i, err := strconv.Atoi(rest); ok && err == nil && i < n {
					return true
				}
			}
		}
		return false
	}
	lost, phantom, fails, ops := 0, 0, 0, 0
	var notes []string
	fmt.Fprintln(w, "| process | role | operations | acknowledged writes | failed |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, t := range tallies {
		for id, kind := range t.acked {
			if kind == "shared" {
				continue
			}
			if have[id] != kind {
				lost++
				if len(notes) < 10 {
					notes = append(notes, fmt.Sprintf("lost: %s %s of %s", kind, id, t.name))
				}
			}
		}
		fails += len(t.fails)
		ops += t.ops
		for _, f := range t.fails {
			if len(notes) < 10 {
				notes = append(notes, t.name+": "+f)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d |\n", t.name, t.role, t.ops, len(t.acked), len(t.fails))
	}
	for id := range have {
		if !may(id) {
			phantom++
			if len(notes) < 10 {
				notes = append(notes, "phantom: "+id)
			}
		}
	}
	fmt.Fprintf(w, "\n%d operations; %d facts and %d observations in memory; lost %d, phantom %d, failed %d, shared text held by %d facts\n",
		ops, len(facts)-shared, len(obs), lost, phantom, fails, shared)
	for _, n := range notes {
		fmt.Fprintln(w, "-", n)
	}
	if lost > 0 || phantom > 0 || fails > 0 || shared != 1 {
		return 1
	}
	return 0
}

// runProcessChild runs the child this process was started as, if it was one, and
// reports whether it was.
func runProcessChild() bool {
	spec := os.Getenv(procEnv)
	if spec == "" {
		return false
	}
	f := strings.Split(spec, "|")
	if len(f) != 4 {
		fmt.Println("fail spec: malformed", spec)
		return true
	}
	end, err := time.Parse(time.RFC3339Nano, f[3])
	if err != nil {
		fmt.Println("fail spec:", err)
		return true
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	p := &procChild{name: f[1], cfg: day1.Config{Path: f[2], DedupeThreshold: -1}, end: end, out: out, tried: map[string]int{}}
	switch f[0] {
	case "server":
		p.server(context.Background())
	case "hook":
		p.hook(context.Background())
	case "reader":
		p.reader(context.Background())
	}
	for kind, n := range p.tried {
		fmt.Fprintf(out, "tried %s %d\n", kind, n)
	}
	return true
}

// procChild is one process of the multi-process soak.
type procChild struct {
	name  string
	cfg   day1.Config
	end   time.Time
	out   *bufio.Writer
	tried map[string]int
}

func (p *procChild) fail(op string, err error) {
	fmt.Fprintf(p.out, "fail %s: %v\n", op, err)
	p.out.Flush()
}

// next returns the id of the next write of kind, counted as tried.
func (p *procChild) next(kind string) string {
	id := fmt.Sprintf("%s-%s-%d", p.name, kind, p.tried[kind])
	p.tried[kind]++
	return id
}

func (p *procChild) ack(kind, id string) {
	fmt.Fprintf(p.out, "ack %s %s\n", kind, id)
	p.out.Flush()
}

func (p *procChild) server(ctx context.Context) {
	c, err := day1.Open(ctx, p.cfg)
	if err != nil {
		p.fail("open", err)
		return
	}
	defer c.Close()
	for i := 0; time.Now().Before(p.end); i++ {
		id := p.next("fact")
		if _, err := c.WriteFact(ctx, day1.Fact{ID: id, Text: fmt.Sprintf("%s learned lesson %d of the run", p.name, i)}); err != nil {
			p.fail("write fact", err)
		} else {
			p.ack("fact", id)
		}
		id = p.next("observation")
		if _, err := c.WriteObservation(ctx, day1.Observation{ID: id, Type: "tool_use", Tool: "Bash", Summary: fmt.Sprintf("%s ran step %d", p.name, i)}); err != nil {
			p.fail("write observation", err)
		} else {
			p.ack("observation", id)
		}
		if i%10 == 0 {
			id = p.next("shared")
			if _, err := c.WriteFact(ctx, day1.Fact{ID: id, Text: sharedText}); err != nil {
				p.fail("write shared", err)
			} else {
				p.ack("shared", id)
			}
			if _, err := c.Search(ctx, day1.SearchQuery{Text: "lesson of the run", Limit: 5}); err != nil {
				p.fail("search", err)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *procChild) hook(ctx context.Context) {
	for i := 0; time.Now().Before(p.end); i++ {
		c, err := day1.Open(ctx, p.cfg)
		if err != nil {
			p.fail("open", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		id := p.next("observation")
		if _, err := c.WriteObservation(ctx, day1.Observation{ID: id, Type: "tool_use", Tool: "Edit", Summary: fmt.Sprintf("%s edited file %d", p.name, i)}); err != nil {
			p.fail("write observation", err)
		} else {
			p.ack("observation", id)
		}
		if err := c.Close(); err != nil {
			p.fail("close", err)
		}
	}
}

func (p *procChild) reader(ctx context.Context) {
	last := 0
	for time.Now().Before(p.end) {
		c, err := day1.Open(ctx, p.cfg)
		if err != nil {
			p.fail("open", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		facts, err := c.ListFacts(ctx, day1.ListOptions{})
		switch {
		case err != nil:
			p.fail("list", err)
		case len(facts) < last:
			p.fail("list", errors.New("fewer facts than the last read saw: "+strconv.Itoa(len(facts))+" < "+strconv.Itoa(last)))
		default:
			last = len(facts)
			fmt.Fprintf(p.out, "read %d\n", last)
		}
		if _, err := c.Search(ctx, day1.SearchQuery{Text: "edited file", Limit: 5}); err != nil {
			p.fail("search", err)
		}
		if err := c.Close(); err != nil {
			p.fail("close", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
