package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/day1ai/day1"
)

// The operations, in the order of the table.
var operations = []string{
	"write fact", "write observation", "write relation", "write conversation", "append message",
	"update fact", "repeat write", "search", "diff", "merge", "create task", "join task",
	"handoff", "pending handoffs", "accept handoff", "complete task",
}

// Buckets of the latency histograms: bucket i holds durations in
// [bucketBase*growth^i, bucketBase*growth^(i+1)), so a percentile is exact to 2%.
const (
	bucketBase = time.Microsecond
	growth     = 1.02
	nbuckets   = 1100 // up to about 50 minutes
)

// opStats are the figures of one operation: a histogram of latencies, the error
// counts by kind. Fixed size, whatever the run's length.
type opStats struct {
	count  int64
	sum    time.Duration
	max    time.Duration
	hist   [nbuckets]int64
	errors map[string]int64
}

func (s *opStats) add(d time.Duration) {
	s.count++
	s.sum += d
	s.max = max(s.max, d)
	i := 0
	if d > bucketBase {
		i = int(math.Log(float64(d)/float64(bucketBase)) / math.Log(growth))
	}
	s.hist[min(i, nbuckets-1)]++
}

// percentile returns the upper bound of the bucket holding the p-th percentile.
func (s *opStats) percentile(p float64) time.Duration {
	if s.count == 0 {
		return 0
	}
	rank := int64(math.Ceil(p * float64(s.count)))
	var seen int64
	for i, n := range s.hist {
		seen += n
		if seen >= rank {
			d := time.Duration(float64(bucketBase) * math.Pow(growth, float64(i+1)))
			return min(d, s.max)
		}
	}
	return s.max
}

// stats collect the figures of every operation and the error counts by kind.
type stats struct {
	mu  sync.Mutex
	ops map[string]*opStats
	// conflicts counts the merge conflicts settled by the accept-source policy.
	conflicts int64
}

func newStats() *stats {
	s := &stats{ops: map[string]*opStats{}}
	for _, op := range operations {
		s.ops[op] = &opStats{errors: map[string]int64{}}
	}
	return s
}

// time runs f as one op, recording its latency when it succeeds and its error kind
// when it fails.
func (s *stats) time(op string, f func() error) error {
	start := time.Now()
	err := f()
	d := time.Since(start)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.ops[op]
	if st == nil {
		st = &opStats{errors: map[string]int64{}}
		s.ops[op] = st
	}
	if err != nil {
		st.errors[errorKind(err)]++
		return err
	}
	st.add(d)
	return nil
}

// errorKind names an error by the sentinel of errors.go it matches. The kinds in
// expectedKinds are the conflicts and retries concurrent agents meet by design; every
// other kind is a fault.
func errorKind(err error) string {
	kinds := []struct {
		name string
		err  error
	}{
		{"stale", day1.ErrStale},
		{"conflict", day1.ErrConflict},
		{"merge blocked", day1.ErrMergeBlocked},
		{"branch not found", day1.ErrBranchNotFound},
		{"not found", day1.ErrNotFound},
		{"branch exists", day1.ErrBranchExists},
		{"exists", day1.ErrExists},
		{"branch archived", day1.ErrBranchArchived},
		{"invalid argument", day1.ErrInvalidArgument},
		{"closed", day1.ErrClosed},
		{"not supported", day1.ErrNotSupported},
		{"read only", day1.ErrReadOnly},
		{"too old", day1.ErrTooOld},
		{"locked", day1.ErrLocked},
		{"timeout", context.DeadlineExceeded},
		{"canceled", context.Canceled},
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "other"
}

// expectedKinds are the error kinds a soak expects: a merge whose target moved
// (ErrStale, retried) and a conflict (ErrConflict) that a concurrent agent causes.
var expectedKinds = map[string]bool{"stale": true, "conflict": true}

// calls returns the number of operations that ended, with or without an error.
func (s *stats) calls() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, st := range s.ops {
		n += st.count
		for _, c := range st.errors {
			n += c
		}
	}
	return n
}

// faults returns the number of errors of kinds that are not expected.
func (s *stats) faults() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, st := range s.ops {
		for k, c := range st.errors {
			if !expectedKinds[k] {
				n += c
			}
		}
	}
	return n
}

// report is what a soak prints.
type report struct {
	store     string
	agents    int
	elapsed   time.Duration
	stats     *stats
	branches  int // branch reads compared with the model
	records   int // records they returned
	reopened  bool
	mismatch  []string
	nmismatch int
	leak      leakCheck
	faultErrs []string // the first fault messages, for the log
}

// leakCheck compares the goroutines and heap after the run with the baseline.
type leakCheck struct {
	goroutinesBefore, goroutinesAfter int
	heapBefore, heapAfter             uint64
	goroutineSlack                    int
	heapSlack                         uint64
	stacks                            string // the goroutines left, when too many
}

func (l leakCheck) goroutinesOK() bool {
	return l.goroutinesAfter <= l.goroutinesBefore+l.goroutineSlack
}

func (l leakCheck) heapOK() bool { return l.heapAfter <= l.heapBefore+l.heapSlack }

// ok reports whether the soak passed: no mismatch, no fault, no leak.
func (r *report) ok() bool {
	return r.nmismatch == 0 && r.stats.faults() == 0 && r.leak.goroutinesOK() && r.leak.heapOK()
}

// print writes the tables.
func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "soak: store %s, %d agents, %s\n\n", r.store, r.agents, r.elapsed.Round(time.Millisecond))
	fmt.Fprintln(w, "| operation | count | ops/s | p50 | p99 | max | expected errors | faults |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	r.stats.mu.Lock()
	var total int64
	kinds := map[string]int64{}
	for _, op := range operations {
		st := r.stats.ops[op]
		var exp, fault int64
		for k, n := range st.errors {
			kinds[k] += n
			if expectedKinds[k] {
				exp += n
			} else {
				fault += n
			}
		}
		total += st.count
		fmt.Fprintf(w, "| %s | %d | %.1f | %s | %s | %s | %d | %d |\n", op, st.count, float64(st.count)/r.elapsed.Seconds(),
			ms(st.percentile(0.50)), ms(st.percentile(0.99)), ms(st.max), exp, fault)
	}
	conflicts := r.stats.conflicts
	r.stats.mu.Unlock()
	fmt.Fprintf(w, "| all | %d | %.1f | | | | | |\n\n", total, float64(total)/r.elapsed.Seconds())

	fmt.Fprintln(w, "| error kind | expected | count |")
	fmt.Fprintln(w, "| --- | --- | ---: |")
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(w, "| %s | %s | %d |\n", k, yesNo(expectedKinds[k]), kinds[k])
	}
	fmt.Fprintf(w, "| merge conflicts settled by accept-source | yes | %d |\n\n", conflicts)

	fmt.Fprintln(w, "| check | measured | allowed | result |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	label := "memory equals the model"
	if r.reopened {
		label += " (before and after a reopen)"
	}
	fmt.Fprintf(w, "| %s | %d branch reads, %d records read, %d differences | 0 differences | %s |\n", label, r.branches, r.records, r.nmismatch, pass(r.nmismatch == 0))
	fmt.Fprintf(w, "| faults (unexpected errors) | %d | 0 | %s |\n", r.stats.faults(), pass(r.stats.faults() == 0))
	l := r.leak
	fmt.Fprintf(w, "| goroutines after the run | %d (baseline %d) | baseline + %d | %s |\n", l.goroutinesAfter, l.goroutinesBefore, l.goroutineSlack, pass(l.goroutinesOK()))
	fmt.Fprintf(w, "| heap in use after the run | %s (baseline %s) | baseline + %s | %s |\n", mib(l.heapAfter), mib(l.heapBefore), mib(l.heapSlack), pass(l.heapOK()))
	if len(r.mismatch) > 0 {
		fmt.Fprintf(w, "\ndifferences (%d, the first %d):\n", r.nmismatch, len(r.mismatch))
		for _, m := range r.mismatch {
			fmt.Fprintln(w, "  "+m)
		}
	}
	if len(r.faultErrs) > 0 {
		fmt.Fprintf(w, "\nfaults (the first %d):\n", len(r.faultErrs))
		for _, m := range r.faultErrs {
			fmt.Fprintln(w, "  "+m)
		}
	}
	if !l.goroutinesOK() && l.stacks != "" {
		fmt.Fprintf(w, "\ngoroutines left:\n%s\n", l.stacks)
	}
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func pass(b bool) string {
	if b {
		return "pass"
	}
	return "FAIL"
}

// keepFirst appends s to list while it holds fewer than n entries.
func keepFirst(list []string, n int, s string) []string {
	if len(list) < n && !slices.Contains(list, s) {
		return append(list, s)
	}
	return list
}
