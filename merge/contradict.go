package merge

import (
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
	if d == nil || contradicts == nil {
		return
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
		return
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
		for _, i := range met {
			need := 2
			if min(len(terms), sizes[i]) <= 1 {
				need = 1
			}
			n := shared[i]
			shared[i] = 0
			if n < need || n < bestShared || n == bestShared && best >= 0 && i > int32(best) {
				continue
			}
			if contradicts(f.Text, targets[i].After.(store.Fact).Text) {
				best, bestShared = int(i), n
			}
		}
		if best < 0 {
			continue
		}
		tc := targets[best]
		d.Conflicts = append(d.Conflicts, store.Conflict{Ref: tc.Ref, Reason: store.Contradictory, Source: ch, Target: tc})
		busy[ch.Ref] = true
	}
}
