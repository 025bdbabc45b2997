package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/day1ai/day1"
)

// The rows of a durable store shared by several processes run this program again as
// a child, told what to do by childEnv ("open-search" or "commits") and the store's
// folder by childPathEnv; the child prints one JSON childReport on its standard
// output.
const (
	childEnv      = "DAY1_BENCH_CHILD"
	childPathEnv  = "DAY1_BENCH_CHILD_PATH"
	childQueryEnv = "DAY1_BENCH_CHILD_QUERY"
	childIDEnv    = "DAY1_BENCH_CHILD_ID"
	// childCommitsEnv is how many commits a child in the commits mode makes.
	childCommitsEnv = "DAY1_BENCH_CHILD_COMMITS"
	// childProfEnv names the file a child writes a CPU profile of its work to: the
	// run's -cpuprofile, with the child's mode after it.
	childProfEnv = "DAY1_BENCH_CHILD_CPUPROFILE"
)

// procWriters is how many processes the multi-process row runs beside the holder, and
// procCommits how many commits of one fact each makes (in a -quick run, quickCommits).
const (
	procWriters  = 8
	procCommits  = 25
	quickCommits = 5
)

// childReport is what a child measured.
type childReport struct {
	Open    time.Duration   `json:"open"`              // day1.Open
	Search  time.Duration   `json:"search,omitempty"`  // the first hybrid search
	PeakRSS uint64          `json:"peak_rss"`          // VmHWM at the end
	Commits []time.Duration `json:"commits,omitempty"` // each commit's latency
	First   time.Time       `json:"first,omitzero"`    // when the first commit started
	Last    time.Time       `json:"last,omitzero"`     // when the last one ended
	Error   string          `json:"error,omitempty"`
}

// runChild runs the child this process was started as, when it was, and reports
// whether it was.
func runChild() bool {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return false
	}
	var r childReport
	if err := child(context.Background(), mode, &r); err != nil {
		r.Error = err.Error()
	}
	r.PeakRSS = peakRSSBytes()
	json.NewEncoder(os.Stdout).Encode(r)
	return true
}

func child(ctx context.Context, mode string, r *childReport) error {
	if path := os.Getenv(childProfEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	c, err := day1.Open(ctx, day1.Config{Path: os.Getenv(childPathEnv)})
	if err != nil {
		return err
	}
	defer c.Close()
	r.Open = time.Since(start)
	switch mode {
	case "open-search":
		start = time.Now()
		hits, err := c.Search(ctx, day1.SearchQuery{Text: os.Getenv(childQueryEnv), Limit: 10})
		if err != nil {
			return err
		}
		if len(hits) == 0 {
			return fmt.Errorf("the first search found nothing")
		}
		r.Search = time.Since(start)
	case "commits":
		id := os.Getenv(childIDEnv)
		commits, err := strconv.Atoi(os.Getenv(childCommitsEnv))
		if err != nil || commits < 1 {
			return fmt.Errorf("%s=%q: want a count of commits", childCommitsEnv, os.Getenv(childCommitsEnv))
		}
		r.First = time.Now()
		for i := range commits {
			t := time.Now()
			if _, err := c.WriteFact(ctx, day1.Fact{Text: fmt.Sprintf("process %s wrote commit %d of the shared-memory run, marker %s-%d", id, i, id, i)}); err != nil {
				return err
			}
			r.Commits = append(r.Commits, time.Since(t))
		}
		r.Last = time.Now()
	default:
		return fmt.Errorf("unknown child mode %q", mode)
	}
	return nil
}

// startChild runs this program as a child in mode on the store at path.
func startChild(ctx context.Context, mode, path string, env ...string) (childReport, error) {
	exe, err := os.Executable()
	if err != nil {
		return childReport{}, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(append(os.Environ(), childEnv+"="+mode, childPathEnv+"="+path), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return childReport{}, fmt.Errorf("child %s: %v: %s", mode, err, errOut.String())
	}
	var r childReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return childReport{}, fmt.Errorf("child %s: %v: %q", mode, err, out.String())
	}
	if r.Error != "" {
		return r, fmt.Errorf("child %s: %s", mode, r.Error)
	}
	return r, nil
}

// coldOpen adds the row of a new process that opens the store and answers one hybrid
// search, beside c, the Client that has it open, as an agent's hook or command does.
func (b *bench) coldOpen(ctx context.Context, path string, n int, query string) error {
	b.progress("%d facts: a new process opens the store and searches", n)
	start := time.Now()
	env := []string{childQueryEnv + "=" + query}
	if b.o.cpuprofile != "" {
		env = append(env, childProfEnv+"="+b.o.cpuprofile+".open-search")
	}
	r, err := startChild(ctx, "open-search", path, env...)
	if err != nil {
		return err
	}
	whole := time.Since(start)
	target, rss := 100*time.Millisecond, uint64(200)<<20
	if n >= largeSize {
		target = 300 * time.Millisecond
	}
	got := r.Open + r.Search
	b.add("new process: open + first hybrid search", n,
		fmt.Sprintf("%s (open %s, search %s; process %s; peak RSS %.0f MB)", dur(got), dur(r.Open), dur(r.Search), dur(whole), float64(r.PeakRSS)/(1<<20)),
		fmt.Sprintf("< %s, RSS < %d MB", dur(target), rss>>20), ok(got < target && r.PeakRSS < rss))
	return nil
}

// procWrites adds the row of procWriters processes that each open the store and
// commit b.o.commits facts one at a time, while c, which holds it open, commits too.
func (b *bench) procWrites(ctx context.Context, c *day1.Client, path string, n int) error {
	commits := b.o.commits
	b.progress("%d facts: %d processes commit %d facts each beside the holder", n, procWriters, commits)
	reports := make([]childReport, procWriters)
	g, gctx := errgroup.WithContext(ctx)
	for i := range procWriters {
		g.Go(func() error {
			r, err := startChild(gctx, "commits", path, fmt.Sprintf("%s=p%d", childIDEnv, i), fmt.Sprintf("%s=%d", childCommitsEnv, commits))
			reports[i] = r
			return err
		})
	}
	held := b.samples("proc-commit")
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	var err error
	for i := 0; ; i++ {
		select {
		case err = <-done:
		default:
			if werr := held.time(func() error {
				_, err := c.WriteFact(ctx, day1.Fact{Text: fmt.Sprintf("the holder wrote commit %d of the shared-memory run", i)})
				return err
			}); werr != nil {
				return werr
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		break
	}
	if err != nil {
		return err
	}
	var all []time.Duration
	var first, last time.Time
	var opens []time.Duration
	for _, r := range reports {
		all = append(all, r.Commits...)
		opens = append(opens, r.Open)
		if first.IsZero() || r.First.Before(first) {
			first = r.First
		}
		if r.Last.After(last) {
			last = r.Last
		}
	}
	rate := float64(len(all)) / last.Sub(first).Seconds()
	b.add(fmt.Sprintf("commits from %d processes beside a holder", procWriters), n,
		fmt.Sprintf("%d/%d landed, %s commits/s; per commit p50 %s / p95 %s; the holder's p50 %s / p95 %s; open p50 %s",
			len(all), procWriters*commits, thousands(rate), dur(percentile(all, 50)), dur(percentile(all, 95)),
			dur(percentile(held.wall, 50)), dur(percentile(held.wall, 95)), dur(percentile(opens, 50))),
		"all land", ok(len(all) == procWriters*commits))
	return nil
}
