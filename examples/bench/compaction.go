package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store/memstore"
)

// compactionPause is the target for how long a compaction may hold writers.
const compactionPause = 10 * time.Millisecond

// compaction measures the compaction of a durable store of n facts, each written three
// times ten days apart on a clock that ends thirty days after the first write, with a
// retention of seven days: the files on disk before and after, the time and heap of an
// Open before and after, how long the compaction took, and how long it held a writer
// that writes all through it.
func (b *bench) compaction(ctx context.Context, n int, texts []string) error {
	b.progress("%d facts: compaction (three versions of each fact, 7-day retention)", n)
	dir, err := os.MkdirTemp("", "day1-bench-compact-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var mu sync.Mutex
	now := time.Now().UTC().AddDate(0, 0, -30)
	cfg := day1.Config{Backend: memstore.Options{Path: dir, Retention: 7 * 24 * time.Hour, CompactRatio: -1}, DedupeThreshold: b.o.dedupe,
		Test: day1.TestConfig{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }}}
	later := func(days int) { mu.Lock(); defer mu.Unlock(); now = now.AddDate(0, 0, days) }
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { c.Close() }()
	ids, _, err := b.load(ctx, c, "", texts)
	if err != nil {
		return err
	}
	once, err := dirSize(dir)
	if err != nil {
		return err
	}
	for round := 1; round <= 2; round++ {
		later(10)
		for lo := 0; lo < n; lo += b.o.batch {
			batch := make([]day1.Fact, 0, b.o.batch)
			for i := lo; i < min(lo+b.o.batch, n); i++ {
				batch = append(batch, day1.Fact{ID: ids[i], Text: fmt.Sprintf("%s (revision %d)", texts[i], round), Category: "bench"})
			}
			if _, err := c.WriteFacts(ctx, batch); err != nil {
				return fmt.Errorf("rewriting facts: %w", err)
			}
		}
	}
	later(10)
	if err := c.Close(); err != nil {
		return err
	}
	before, err := dirSize(dir)
	if err != nil {
		return err
	}
	openBefore, heapBefore, peakBefore, err := timedOpen(ctx, cfg)
	if err != nil {
		return err
	}
	c = openBefore.Client

	// A writer writes batches of ten new facts all through the compaction.
	var longest atomic.Int64
	var writes atomic.Int64
	stop := make(chan struct{})
	werr := make(chan error, 1)
	go func() {
		defer close(werr)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			batch := make([]day1.Fact, 10)
			for j := range batch {
				batch[j] = day1.Fact{ID: fmt.Sprintf("during-%d-%d", i, j), Text: fmt.Sprintf("written during the compaction, %d of batch %d", j, i)}
			}
			start := time.Now()
			if _, err := c.WriteFacts(ctx, batch); err != nil {
				werr <- err
				return
			}
			if d := time.Since(start).Nanoseconds(); d > longest.Load() {
				longest.Store(d)
			}
			writes.Add(1)
		}
	}()
	time.Sleep(20 * time.Millisecond)
	longest.Store(0)
	st, err := c.Compact(ctx)
	close(stop)
	if werr := <-werr; err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if err := c.Close(); err != nil {
		return err
	}
	after, err := dirSize(dir)
	if err != nil {
		return err
	}
	openAfter, heapAfter, peakAfter, err := timedOpen(ctx, cfg)
	if err != nil {
		return err
	}
	c = openAfter.Client
	facts, err := c.ListFacts(ctx, day1.ListOptions{Limit: 1})
	if err != nil || len(facts) == 0 {
		return errors.Join(errors.New("no facts after reopening the compacted store"), err)
	}

	mb := func(x int64) float64 { return float64(x) / (1 << 20) }
	b.add("compaction: files on disk before → after (3 versions per fact, 7-day retention)", n,
		fmt.Sprintf("%.0f MB → %.0f MB (the facts written once: %.0f MB); %d versions kept, %d dropped",
			mb(before), mb(after), mb(once), st.Versions, st.Dropped),
		"after ≤ 2× written once", ok(after <= 2*once))
	b.add("compaction: Compact time; writer pause (lock held) and longest write during it", n,
		fmt.Sprintf("%s; pause %s, longest write %s (%d writes of 10 facts during it)",
			round(st.Duration), st.Pause.Round(10*time.Microsecond), time.Duration(longest.Load()).Round(10*time.Microsecond), writes.Load()),
		fmt.Sprintf("pause < %s", dur(compactionPause)), ok(st.Pause < compactionPause))
	b.add("compaction: Open before → after (time; heap growth after GC, peak during Open)", n,
		fmt.Sprintf("%s, heap %.0f MB, peak %.0f MB → %s, heap %.0f MB, peak %.0f MB",
			round(openBefore.elapsed), heapBefore, peakBefore, round(openAfter.elapsed), heapAfter, peakAfter),
		"after < before", ok(openAfter.elapsed < openBefore.elapsed && heapAfter < heapBefore))
	return nil
}

// opened is a Client and how long its Open took.
type opened struct {
	*day1.Client
	elapsed time.Duration
}

// timedOpen opens cfg and returns the Client, the time Open took, the growth of the
// heap in use it left after a garbage collection and its peak during Open, in MB.
func timedOpen(ctx context.Context, cfg day1.Config) (*opened, float64, float64, error) {
	base, _ := settledHeap()
	var c *day1.Client
	var err error
	var elapsed time.Duration
	peak := peakHeapDuring(func() {
		start := time.Now()
		c, err = day1.Open(ctx, cfg)
		elapsed = time.Since(start)
	})
	if err != nil {
		return nil, 0, 0, err
	}
	inuse, _ := settledHeap()
	return &opened{c, elapsed}, float64(int64(inuse)-int64(base)) / (1 << 20), peak, nil
}
