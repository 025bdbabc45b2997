package merge

import (
	"context"
	"fmt"

	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/store"
)

// AddContradictions adds to d a store.Contradictory conflict for each live fact the
// source added since the merge base that contradicts a live fact the target added, by
// contradicts (given the source's text first): at most one per source fact, with the
// target's fact that shares the most search terms with it. Facts already in a
// conflict are left out, and so are pairs that share no two search terms (one, when a
// text has only one), which no test of the same subject would pair.
func AddContradictions(d *store.Diff, contradicts func(source, target string) bool) {
	if contradicts == nil {
		return
	}
	_ = addCompeting(d, store.Contradictory, func(source, target string) (bool, error) {
		return contradicts(source, target), nil
	})
}

// AddDuplicates adds to d a store.Duplicate conflict for each live fact the source
// added since the merge base that says what a live fact the target added says, in
// other words, by duplicates (a near-duplicate test, such as the cosine of the two
// texts' embeddings against a threshold), which answers for every candidate pair at
// once, each given as the source's text and the target's: the pairs are chosen as
// AddContradictions chooses them, after it, so a pair is one conflict at most. Facts of
// the same text are never asked about: a merge deduplicates them. An error of
// duplicates is returned, and d is left as it was.
func AddDuplicates(ctx context.Context, d *store.Diff, duplicates func(ctx context.Context, pairs [][2]string) ([]bool, error)) error {
	if duplicates == nil {
		return nil
	}
	// The candidate pairs first, with a test that takes none; then one question.
	index := map[[2]string]int{}
	var pairs [][2]string
	_ = addCompeting(d, store.Duplicate, func(source, target string) (bool, error) {
		p := [2]string{source, target}
		if _, ok := index[p]; !ok && store.NormText(source) != store.NormText(target) {
			index[p] = len(pairs)
			pairs = append(pairs, p)
		}
		return false, nil
	})
	if len(pairs) == 0 {
		return nil
	}
	same, err := duplicates(ctx, pairs)
	if err != nil {
		return err
	}
	if len(same) != len(pairs) {
		return fmt.Errorf("day1: merge: the near-duplicate test answered %d of %d pairs", len(same), len(pairs))
	}
	return addCompeting(d, store.Duplicate, func(source, target string) (bool, error) {
		i, ok := index[[2]string{source, target}]
		return ok && same[i], nil
	})
}

// addCompeting adds to d a conflict of reason for each live fact the source added
// that test pairs with a live fact the target added, trying the target's facts that
// share the most search terms with it first and keeping the first that test accepts.
func addCompeting(d *store.Diff, reason store.ConflictReason, test func(source, target string) (bool, error)) error {
	if d == nil {
		return nil
	}
	busy := map[store.Ref]bool{}
	for _, c := range d.Conflicts {
		busy[c.Ref], busy[c.Source.Ref], busy[c.Target.Ref] = true, true, true
	}
	added := func(ch store.Change) (store.Fact, bool) {
		f, ok := ch.After.(store.Fact)
		return f, ok && ch.Op == store.OpAdded && f.Status.Live() && !busy[ch.Ref]
	}
	var targets []store.Change
	var sizes []int
	byTerm := map[string][]int32{}
	for _, ch := range d.TargetChanges {
		f, ok := added(ch)
		if !ok {
			continue
		}
		terms := textsearch.TermFreqs(textsearch.Terms(f.Text))
		for t := range terms {
			byTerm[t] = append(byTerm[t], int32(len(targets)))
		}
		targets = append(targets, ch)
		sizes = append(sizes, len(terms))
	}
	if len(targets) == 0 {
		return nil
	}
	shared := make([]int, len(targets))
	var met []int32
	for _, ch := range d.SourceChanges {
		f, ok := added(ch)
		if !ok {
			continue
		}
		terms := textsearch.TermFreqs(textsearch.Terms(f.Text))
		met = met[:0]
		for t := range terms {
			for _, i := range byTerm[t] {
				if shared[i] == 0 {
					met = append(met, i)
				}
				shared[i]++
			}
		}
		best, bestShared := -1, 0
		var err error
		for _, i := range met {
			need := 2
			if min(len(terms), sizes[i]) <= 1 {
				need = 1
			}
			n := shared[i]
			shared[i] = 0
			if err != nil || n < need || n < bestShared || n == bestShared && best >= 0 && i > int32(best) || busy[targets[i].Ref] {
				continue
			}
			var ok bool
			if ok, err = test(f.Text, targets[i].After.(store.Fact).Text); ok {
				best, bestShared = int(i), n
			}
		}
		if err != nil {
			return err
		}
		if best < 0 {
			continue
		}
		tc := targets[best]
		d.Conflicts = append(d.Conflicts, store.Conflict{Ref: tc.Ref, Reason: reason, Source: ch, Target: tc})
		busy[ch.Ref] = true
	}
	return nil
}
