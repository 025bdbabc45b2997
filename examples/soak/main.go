// Command soak runs agents against one day1 memory for a while and then checks that
// memory holds exactly what they were told it holds.
//
// Each of -agents agents works on branches of its own through the public Client. It
// first does every operation once, then at random until -duration has passed: it
// creates a task (its branch forks from main) and joins it, writes facts,
// observations, relations, conversations and messages on its member branch, updates
// facts (its own and the ones main held when the agents started, which every agent
// shares, so that merges into main conflict and accept-source settles it), repeats
// a write (which must be deduplicated), searches, diffs its branch with main, and
// merges it into main while it keeps writing to it. Now and then it merges a branch
// into its task's branch and hands the task to the next agent, who accepts it on a
// branch of its own forked from the task's, or merges a branch into main once more
// and completes its task. Task changes happen at most once per -duration/40 (at
// least 100ms) per agent, and a task older than eight such periods is completed
// rather than handed on, so that a long run keeps a bounded number of live branches.
//
// # The model
//
// Beside memory the command keeps a model built from acknowledged writes and merges
// only: each branch's records, and the versions in its history (written on it, on its
// parent up to the fork, on the branches merged into it up to each merge). Every
// write's content is unique, so a version names the point where it was written, as a
// commit does in git. Every merge uses the native strategy with the accept-source
// conflict policy, which makes its outcome computable: a merge of src into dst carries
// exactly the records whose version on src differs from dst's and is not in dst's
// history (when it is, dst took it in already and may have changed it since), each
// with src's content, whatever dst did meanwhile. Merges into main run one at a time
// (the merge engine queues them anyway), so the last merge of a shared fact wins; a
// task's branch is created under the same lock, so the model knows which main it
// forked from. Main is kept with its whole past, one revision per merge, and a
// branch's model is main at the revision its task forked from plus what changed on it.
//
// A merge is a point in time. The agent keeps writing to src while its merge runs: a
// racing write may or may not be in the merge (its plan says which, and a record in
// the plan that the model does not expect is a phantom); one it missed stays out of
// dst's history and is expected in the next merge. Diffs, search hits (and a keyword
// search for a word only one fact holds) and handoff packets are compared with the
// model as they happen. At the end every branch is read whole and compared: record
// ids per kind (nothing lost, no phantom) and contents. A durable store is then
// closed, reopened and compared again.
//
// Near-duplicate detection is off (Config.DedupeThreshold -1) and every text is
// unique, so that each acknowledged write is one record: supersession is tested
// elsewhere. Writes whose call failed are counted as faults and their records
// accepted either way.
//
// # Leaks
//
// Before the memory is opened and after it is closed, the command forces a garbage
// collection and reads runtime.NumGoroutine and the heap in use (runtime.MemStats
// HeapInuse). Afterwards the goroutines may exceed the baseline by -goroutine-slack
// (default 2: the runtime and the MySQL driver may keep a short-lived one) once they
// have had up to 10 seconds to end, and the heap by -heap-slack (default 16 MiB, the
// allocator's retained spans and the report's own figures).
//
// # Output
//
// A markdown table of every operation (count, throughput, p50, p99 and max latency of
// the successful calls, expected errors and faults), the errors by kind (classified
// with errors.Is against the sentinels of errors.go; ErrStale and ErrConflict are the
// expected ones, everything else is a fault), and the checks. The exit status is 0
// when every check passes, 1 on a model difference, a fault or a leak, printing what
// differs, and 2 for bad flags or a memory that cannot be opened.
//
//	go run ./examples/soak                                 # 8 agents, 1 minute, in memory
//	go run ./examples/soak -store durable -duration 10m    # a durable store in a temporary folder
//	go run ./examples/soak -store matrixone -dsn 'root:111@tcp(127.0.0.1:6001)/'
//	go run ./examples/soak -store durable -processes 8 -duration 10m   # 8 processes on one folder
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1"
)

func main() {
	if runProcessChild() {
		return
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command's flags.
type options struct {
	agents         int
	duration       time.Duration
	store          string
	dsn            string
	path           string
	seed           uint64
	opTimeout      time.Duration
	goroutineSlack int
	heapSlack      uint64
	cpuprofile     string
	processes      int // > 0: the multi-process soak (procs.go)
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.IntVar(&o.agents, "agents", 8, "number of concurrent agents, 1 to 64")
	fs.DurationVar(&o.duration, "duration", time.Minute, "how long the agents work")
	fs.StringVar(&o.store, "store", "mem", "memory to soak: mem (embedded, in memory), durable (embedded with a log in -path) or matrixone (a new database on the server at -dsn, dropped afterwards)")
	fs.StringVar(&o.dsn, "dsn", envOr("DAY1_DSN", "root:111@tcp(127.0.0.1:6001)/"), "MatrixOne server for -store matrixone (default $DAY1_DSN, else the local one scripts/matrixone.sh starts)")
	fs.StringVar(&o.path, "path", "", "folder of the durable store: missing or empty (default: a temporary folder, removed afterwards)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the agents' choices")
	fs.DurationVar(&o.opTimeout, "op-timeout", 2*time.Minute, "time limit of one operation; a call that takes longer fails as a timeout fault (a hang)")
	fs.IntVar(&o.goroutineSlack, "goroutine-slack", 2, "goroutines allowed above the baseline after the run")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the agents' work to this file")
	fs.IntVar(&o.processes, "processes", 0, "run this many processes on one durable memory instead of agents in one process (servers, hooks and readers in turn; see procs.go), 3 to 64")
	heap := fs.Int("heap-slack", 16, "heap in use allowed above the baseline after the run, in MiB")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if o.store == "memory" {
		o.store = "mem"
	}
	switch {
	case o.agents < 1 || o.agents > 64:
		return options{}, errors.New("-agents must be between 1 and 64")
	case o.duration <= 0:
		return options{}, errors.New("-duration must be positive")
	case o.opTimeout <= 0:
		return options{}, errors.New("-op-timeout must be positive")
	case o.goroutineSlack < 0 || *heap < 0:
		return options{}, errors.New("-goroutine-slack and -heap-slack must not be negative")
	case o.store != "mem" && o.store != "durable" && o.store != "matrixone":
		return options{}, fmt.Errorf("-store: %q is not mem, durable or matrixone", o.store)
	case o.path != "" && o.store != "durable":
		return options{}, errors.New("-path applies to -store durable only")
	case o.processes != 0 && (o.processes < 3 || o.processes > 64):
		return options{}, errors.New("-processes must be between 3 and 64")
	case o.processes != 0 && o.store != "durable":
		return options{}, errors.New("-processes needs -store durable: processes share a memory through its folder")
	}
	o.heapSlack = uint64(*heap) << 20
	return o, nil
}

// run runs the command and returns its exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "soak:", err)
		return 2
	}
	if o.processes > 0 {
		return runProcesses(ctx, o, stdout, stderr)
	}
	goroutines, heap := settle()
	rep, err := soakOnce(ctx, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "soak:", err)
		return 2
	}
	rep.leak = leaks(goroutines, heap, o)
	rep.print(stdout)
	if !rep.ok() {
		return 1
	}
	return 0
}

// soakOnce opens the memory, runs the agents, compares memory with the model and
// closes everything it opened. Only the report outlives it, so that the heap measured
// afterwards holds neither the memory nor the model. An error means the memory could
// not be opened or read.
func soakOnce(ctx context.Context, o options, log io.Writer) (*report, error) {
	cfg, cleanup, err := config(o)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	s := &soak{c: c, m: newModel(), st: newStats(), agents: o.agents, opTimeout: o.opTimeout,
		churnEvery: max(o.duration/40, 100*time.Millisecond)}
	if err := s.seed(ctx); err != nil {
		return nil, fmt.Errorf("seeding main: %w", err)
	}
	fmt.Fprintf(log, "soak: store %s, %d agents for %s, seed %d\n", o.store, o.agents, o.duration, o.seed)
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	s.deadline = start.Add(o.duration)
	var wg, ready sync.WaitGroup
	ready.Add(o.agents)
	for i := range o.agents {
		a := newAgent(s, i, o.seed)
		wg.Go(func() { a.run(ctx, &ready) })
	}
	agentsDone := make(chan struct{})
	go func() { wg.Wait(); close(agentsDone) }()
	if err := watch(s, log, start, agentsDone, 2*o.opTimeout); err != nil {
		// The agents are stuck: report it with their stacks and leave the memory open
		// under them.
		buf := make([]byte, 4<<20)
		fmt.Fprintf(log, "soak: %v; the goroutines:\n%s\n", err, buf[:runtime.Stack(buf, true)])
		c = nil
		rep := &report{store: o.store, agents: o.agents, elapsed: time.Since(start), stats: s.st,
			mismatch: []string{err.Error()}, nmismatch: 1}
		return rep, nil
	}
	rep := &report{store: o.store, agents: o.agents, elapsed: time.Since(start), stats: s.st}
	fmt.Fprintf(log, "soak: agents done after %s; reading every branch\n", rep.elapsed.Round(time.Millisecond))
	if err := s.m.verify(ctx, c, "final"); err != nil {
		return nil, err
	}
	if cfg.Path != "" {
		if err := c.Close(); err != nil {
			return nil, err
		}
		c = nil
		if c, err = day1.Open(ctx, cfg); err != nil {
			return nil, fmt.Errorf("reopening: %w", err)
		}
		if err = s.m.verify(ctx, c, "after reopen"); err != nil {
			return nil, err
		}
		rep.reopened = true
	}
	if err := c.Close(); err != nil {
		return nil, err
	}
	c = nil
	rep.mismatch, rep.nmismatch = s.m.mismatches, s.m.nmismatch
	rep.branches, rep.records = s.m.verified, s.m.verifiedRecords
	rep.faultErrs = s.faultErrs
	return rep, nil
}

// seed writes the facts and observations main holds when the agents start.
func (s *soak) seed(ctx context.Context) error {
	facts := make([]day1.Fact, 40)
	for i := range facts {
		facts[i] = day1.Fact{ID: fmt.Sprintf("seed-f%d", i), Category: "soak", Confidence: 0.9, Status: day1.FactActive,
			Text: fmt.Sprintf("seed %d: %s", i, topics[i%len(topics)]), Metadata: map[string]string{"v": "0"}}
	}
	ws, err := s.c.WriteFacts(ctx, facts)
	if err != nil {
		return err
	}
	obs := make([]day1.Observation, 10)
	for i := range obs {
		obs[i] = day1.Observation{ID: fmt.Sprintf("seed-o%d", i), Type: day1.ObsDiscovery, Summary: fmt.Sprintf("seed observation %d about %s", i, topics[i%len(topics)])}
	}
	wo, err := s.c.WriteObservations(ctx, obs)
	if err != nil {
		return err
	}
	var recs []day1.Record
	for _, w := range ws {
		recs = append(recs, w.Record)
	}
	for _, w := range wo {
		recs = append(recs, w.Record)
	}
	s.m.seed(recs)
	return nil
}

// watch prints the operation count every 30 seconds until done is closed. It returns
// an error when no operation has ended for stall while the agents work: a deadlock
// or a hang.
func watch(s *soak, log io.Writer, start time.Time, done <-chan struct{}, stall time.Duration) error {
	// Look four times a stall, at most each second.
	t := time.NewTicker(min(time.Second, max(stall/4, time.Millisecond)))
	defer t.Stop()
	last, lastAt, nextLog := int64(-1), start, start.Add(30*time.Second)
	for {
		select {
		case <-done:
			return nil
		case now := <-t.C:
			n := s.st.calls()
			if n != last {
				last, lastAt = n, now
			}
			if now.Sub(lastAt) > stall {
				return fmt.Errorf("no operation ended for %s while the agents worked: a deadlock or a hang", stall)
			}
			if now.After(nextLog) {
				nextLog = nextLog.Add(30 * time.Second)
				fmt.Fprintf(log, "soak: %s: %d operations, %d faults, %d differences so far\n",
					now.Sub(start).Round(time.Second), n, s.st.faults(), s.m.count())
			}
		}
	}
}

func (m *model) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nmismatch
}

// config returns the Config of the memory to soak and what removes it afterwards.
func config(o options) (day1.Config, func(), error) {
	cfg := day1.Config{DedupeThreshold: -1}
	switch o.store {
	case "durable":
		if o.path != "" {
			entries, err := os.ReadDir(o.path)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return cfg, nil, err
			}
			if len(entries) > 0 {
				return cfg, nil, fmt.Errorf("-path %s is not empty; the model starts from an empty memory", o.path)
			}
			cfg.Path = o.path
			return cfg, func() {}, nil
		}
		dir, err := os.MkdirTemp("", "day1-soak-")
		if err != nil {
			return cfg, nil, err
		}
		cfg.Path = dir
		return cfg, func() { os.RemoveAll(dir) }, nil
	case "matrixone":
		mc, err := mysql.ParseDSN(o.dsn)
		if err != nil {
			return cfg, nil, fmt.Errorf("-dsn: %w", err)
		}
		server := mc.FormatDSN()
		mc.DBName = fmt.Sprintf("day1_soak_%d", time.Now().UnixNano())
		cfg.DSN = mc.FormatDSN()
		return cfg, func() {
			if db, err := sql.Open("mysql", server); err == nil {
				db.Exec("DROP DATABASE IF EXISTS " + mc.DBName)
				db.Close()
			}
		}, nil
	}
	return cfg, func() {}, nil
}

// settle forces garbage collections and returns the goroutines and the heap in use.
func settle() (goroutines int, heapInuse uint64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapInuse
}

// leaks waits up to 10 seconds for the goroutines to return to the baseline and
// measures the heap after a forced collection.
func leaks(goroutines int, heap uint64, o options) leakCheck {
	l := leakCheck{goroutinesBefore: goroutines, heapBefore: heap, goroutineSlack: o.goroutineSlack, heapSlack: o.heapSlack}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		l.goroutinesAfter, l.heapAfter = settle()
		if (l.goroutinesOK() && l.heapOK()) || time.Now().After(deadline) {
			break
		}
	}
	if !l.goroutinesOK() {
		buf := make([]byte, 1<<20)
		l.stacks = string(buf[:runtime.Stack(buf, true)])
	}
	return l
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
