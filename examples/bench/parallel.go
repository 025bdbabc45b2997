package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/day1ai/day1"
)

// parallelBranches is how many branches the parallel-write row writes to at once, and
// parallelFacts how many facts it writes to each, twice: one branch after another,
// then all at once.
const (
	parallelBranches = 4
	parallelFacts    = 500
)

// makeParallelBranches forks the branches the parallel-write row writes to, from main
// while it is still empty, so that their forks cost nothing on any path.
func (b *bench) makeParallelBranches(ctx context.Context, c *day1.Client) ([]string, error) {
	names := make([]string, parallelBranches)
	for i := range names {
		names[i] = fmt.Sprintf("bench-writer-%d", i)
		if _, err := c.Branch(ctx, names[i], day1.BranchOptions{}); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// parallelWrites adds the row comparing writes to several branches one after another
// with the same number of writes to them at once: texts holds
// 2*parallelBranches*parallelFacts texts. A store that serialises every write shows a
// ratio near 1; one whose writers of different branches go on together, more.
func (b *bench) parallelWrites(ctx context.Context, c *day1.Client, n int, branches, texts []string) error {
	b.progress("%d facts: %d facts to each of %d branches, one after another, then at once", n, parallelFacts, len(branches))
	part := func(round, i int) []string {
		lo := (round*len(branches) + i) * parallelFacts
		return texts[lo : lo+parallelFacts]
	}
	start := time.Now()
	for i, br := range branches {
		if _, _, err := b.load(ctx, c, br, part(0, i)); err != nil {
			return err
		}
	}
	serial := time.Since(start)
	start = time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for i, br := range branches {
		g.Go(func() error {
			_, _, err := b.load(gctx, c, br, part(1, i))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	parallel := time.Since(start)
	total := float64(len(branches) * parallelFacts)
	sr, pr := total/serial.Seconds(), total/parallel.Seconds()
	b.add(fmt.Sprintf("write: %d branches one after another / at once, %d facts each", len(branches), parallelFacts), n,
		fmt.Sprintf("%s / %s facts/s (%.2fx)", thousands(sr), thousands(pr), pr/sr), "—", nil)
	return nil
}
