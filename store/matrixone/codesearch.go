package matrixone

import (
	"context"
	"slices"

	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// Vector search through the near-duplicate codes. The store keeps, in memory, a 512-bit
// SimHash code of every live fact's embedding per facts table (codeIndex), for
// deduplication. The Hamming distance between two codes estimates the angle between
// their embeddings, so a search at head ranks every live fact of the table by its
// code's distance to the query's (about a microsecond per thousand facts, in Go), reads
// the closest codeCandidates(k) by id, and lets the server rank those by exact cosine
// similarity. No index is built on the server: nothing waits on a build, a branch
// needs none, and the candidates are the facts the branch sees now.
//
// The path is taken for facts, by a search that leaves out the statuses a code index
// drops (superseded and invalidated facts: the default), at a revision the table's
// index can be brought to: the index moves forward only, so a read of the past, or one
// that raced a newer write, takes the index or the scan, as observations do.

// codeCandidates is how many facts the codes give for a search of k.
func codeCandidates(k int) int { return max(8*k, 256) }

// maxUnknownCodes bounds the facts without a code (rows written before codes) a code
// search accepts: each is always a candidate.
const maxUnknownCodes = 1024

// liveOnly reports whether a filter leaves out every fact a code index drops.
func liveOnly(f store.Filter) bool {
	live := func(st store.FactStatus) bool { return st == "" || st.Live() }
	if f.Status != "" && !live(f.Status) {
		return false
	}
	if f.Status != "" {
		return true
	}
	if len(f.Statuses) > 0 {
		for _, st := range f.Statuses {
			if !live(st) {
				return false
			}
		}
		return true
	}
	for _, st := range store.HistoryStatuses {
		if !slices.Contains(f.ExcludeStatuses, st) {
			return false
		}
	}
	return true
}

// codeSearch ranks the facts p sees by cosine similarity to q.Vector through the code
// index; false when the path does not apply (see above).
func (s *Store) codeSearch(ctx context.Context, p pos, q store.SearchQuery, k int) ([]ranked, bool, error) {
	if !liveOnly(q.Filter) {
		return nil, false, nil
	}
	ix, ok, err := s.codesAt(ctx, p.tab.suffix, p.cut)
	if err != nil || !ok {
		return nil, false, err
	}
	n := codeCandidates(k)
	f := q.Filter
	if conds, _, _ := filterSQL(store.KindFact, f); len(conds) > 1 || f.Status != "" || len(f.Statuses) > 0 || len(f.Metadata) > 0 {
		n *= 4 // a filter beyond the default drops candidates: rank more of them
	}
	ids, all, ok := ix.nearest(s.dup.code(q.Vector), n, s.dup.words)
	if !ok {
		return nil, false, nil
	}
	if len(ids) == 0 {
		return nil, true, nil
	}
	query, args, possible := vectorSQL(store.KindFact, p, q, s.opts.Dimensions, k, nil, ids...)
	if !possible {
		return nil, true, nil
	}
	out, err := s.vectorRows(ctx, store.KindFact, q, query, args)
	if err != nil {
		return nil, false, err
	}
	if len(out) < k && !all {
		return nil, false, nil // the filter left too few: the scan finds the rest
	}
	s.codeQueries.Add(1)
	return topRanked(out, k), true, nil
}

// nearest returns the ids of the n facts whose codes are closest to code (more when
// several are as close as the n-th), and every fact whose code is unknown; all reports
// that they are every fact of the index. ok is false when too many codes are unknown
// for the ranking to mean anything.
func (ix *codeIndex) nearest(code []uint64, n, words int) (ids []string, all, ok bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.unknown > maxUnknownCodes {
		return nil, false, false
	}
	// Distances are at most 512: count them, find the distance that takes n, then
	// collect.
	var hist [maxDupBits + 2]int
	dist := make([]uint16, len(ix.ids))
	var out []string
	for i, id := range ix.ids {
		if id == "" {
			continue
		}
		if !ix.known[i] {
			out = append(out, id)
			continue
		}
		d := vecmath.Hamming(code, ix.codes[i*words:(i+1)*words])
		dist[i] = uint16(d + 1) // 0 marks a free or unknown slot
		hist[d]++
	}
	limit, taken := -1, 0
	for d := range hist {
		if taken >= n {
			break
		}
		taken += hist[d]
		limit = d
	}
	for i, d := range dist {
		if d != 0 && int(d)-1 <= limit {
			out = append(out, ix.ids[i])
		}
	}
	return out, len(out) == len(ix.slot), true
}
