package simhash

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/internal/vectest"
)

// testSeed is the rotation of the tests' codes.
const testSeed = 0x6461793120

// TestBandIndexCandidates checks the band index against a scan of every vector: the
// candidates of a code are the vectors sharing one of its bands whose tag there is
// within the tag bound, once per such band, whether they sit in linked or sorted
// buckets, across several folds, for every starting index, and with the tag test off
// or at the bound of the default threshold, and past 65,536 vectors, where the entries
// of the sorted buckets keep a bit fewer of each tag. Codes come from few distinct
// band values, so that buckets hold many vectors and tags differ in few bits.
func TestBandIndexCandidates(t *testing.T) {
	t.Parallel()
	const words = 8
	rng := rand.New(rand.NewPCG(3, 5))
	code := func() []uint64 {
		c := make([]uint64, words)
		for w := range c {
			for part := range 4 {
				// Few values per band: many vectors share buckets.
				c[w] |= uint64(rng.IntN(40)) << (16 * part)
			}
		}
		return c
	}
	tagged := NewBands(words)
	want := func(codes []uint64, q []uint64, from, maxTag int, tagBits uint) []int32 {
		var out []int32
		n := len(codes) / words
		for b := range maxBands {
			for v := n - 1; v >= from; v-- {
				tags := bits.OnesCount16((tagged.tag(codes[v*words:], b) ^ tagged.tag(q, b)) >> (bandBits - tagBits))
				if bandKey(codes[v*words:], b) == bandKey(q, b) && tags <= maxTag {
					out = append(out, int32(v))
				}
			}
		}
		return out
	}
	var codes []uint64
	bi := NewBands(words)
	var queries [][]uint64
	for range 2 {
		queries = append(queries, code())
	}
	folds := 0
	const last = 74_000 // past the fold at 73,728 vectors, the first with 17 bits of index
	for i := range last {
		codes = append(codes, code()...)
		bi.Add(codes)
		if bi.FoldDue(1) {
			bi.Fold(codes)
			folds++
		}
		n := i + 1
		switch n {
		case 1000, smallHeadsMax + 1, minFold + 1, 2*minFold + 1, 3 * minFold, last:
		default:
			continue
		}
		tagBits := bi.TagBits()
		// Whole tags up to 65,536 sorted vectors; the fold at 73,728 takes one bit.
		wantBits := uint(bandBits)
		if n == last {
			wantBits--
		}
		if tagBits != wantBits {
			t.Fatalf("after %d vectors (%d sorted), %d tag bits; want %d", n, bi.sorted, tagBits, wantBits)
		}
		for _, q := range queries {
			for _, maxTag := range []int{bandBits, TagBound(0.92, tagBits)} {
				all := want(codes, q, 0, maxTag, tagBits)
				for _, from := range []int{0, 1, n / 3, bi.sorted - 1, bi.sorted, bi.sorted + 1, n - 1, n} {
					if from < 0 {
						continue
					}
					got, _ := bi.AppendCandidates(nil, codes, q, from, maxTag)
					w := slices.DeleteFunc(slices.Clone(all), func(v int32) bool { return int(v) < from })
					if diff := cmp.Diff(sortedIDs(w), sortedIDs(got)); diff != "" {
						t.Fatalf("after %d vectors (%d sorted), candidates from %d, tag bound %d (-want +got):\n%s", n, bi.sorted, from, maxTag, diff)
					}
				}
			}
		}
	}
	if folds < 4 || bi.TagBits() != bandBits-1 {
		t.Fatalf("%d folds, %d tag bits; the test should cross at least 4, the last to 17 bits of index", folds, bi.TagBits())
	}
	// An index built at once from every code finds the same candidates.
	all := NewBands(words)
	all.AddAll(codes)
	if all.sorted != len(codes)/words {
		t.Errorf("addAll left %d of %d vectors linked", len(codes)/words-all.sorted, len(codes)/words)
	}
	for _, q := range queries {
		for _, maxTag := range []int{bandBits, TagBound(0.92, all.TagBits())} {
			added, _ := bi.AppendCandidates(nil, codes, q, 0, maxTag)
			built, _ := all.AppendCandidates(nil, codes, q, 0, maxTag)
			if diff := cmp.Diff(sortedIDs(added), sortedIDs(built)); diff != "" {
				t.Errorf("tag bound %d: addAll candidates differ from added ones (-added +addAll):\n%s", maxTag, diff)
			}
		}
	}
}

// TestBandIndexAddUpTo checks that adding vectors in runs, as Put does after a batch,
// leaves the band index as adding them one at a time does: across the growth of the
// heads at smallHeadsMax linked vectors and the fold at maxLinked.
func TestBandIndexAddUpTo(t *testing.T) {
	t.Parallel()
	const words, n = 8, maxLinked + 5_000
	rng := rand.New(rand.NewPCG(5, 8))
	codes := make([]uint64, n*words)
	for i := range codes {
		codes[i] = rng.Uint64()
	}
	one, runs := NewBands(words), NewBands(words)
	for runs.n < n {
		to := min(n, runs.n+1+rng.IntN(600))
		runs.AddUpTo(codes, to)
		for one.n < to {
			one.Add(codes[:(one.n+1)*words])
		}
		if runs.n != one.n || runs.sorted != one.sorted || runs.hshift != one.hshift || !slices.Equal(runs.next, one.next) {
			t.Fatalf("after %d vectors: n %d, sorted %d, hshift %d, %d links; one at a time: %d, %d, %d, %d (links equal: %v)",
				to, runs.n, runs.sorted, runs.hshift, len(runs.next), one.n, one.sorted, one.hshift, len(one.next), slices.Equal(runs.next, one.next))
		}
		for b := range one.bands {
			if !slices.Equal(runs.heads[b], one.heads[b]) {
				t.Fatalf("after %d vectors: the heads of band %d differ", to, b)
			}
			if one.ents != nil && !slices.Equal(runs.ents[b], one.ents[b]) {
				t.Fatalf("after %d vectors: the sorted buckets of band %d differ", to, b)
			}
		}
	}
	if one.sorted == 0 || one.hshift != 0 {
		t.Fatalf("sorted %d, hshift %d: the test should cross a fold and the growth of the heads", one.sorted, one.hshift)
	}
}

// TestBandIndexFindsNearVectors checks the recall the band index is designed for:
// a vector at cosine 0.92 from an indexed one finds it among its candidates 97% of the
// time, at cosine 0.95 99.8%, while few unrelated vectors are candidates. The vectors
// are random and seeded, so the rates are the same on every run; the floors leave
// room for the spread of 2,000 trials.
func TestBandIndexFindsNearVectors(t *testing.T) {
	t.Parallel()
	const dims, n, trials = 384, 20_000, 2_000
	rng := rand.New(rand.NewPCG(11, 13))
	random := func() []float32 { return vectest.Unit(rng, dims) }
	at := func(v []float32, c float64) []float32 { return vectest.AtCosine(rng, v, c) }
	rot := vecmath.NewRotation(dims, testSeed)
	bi := NewBands(rot.Words())
	vecs := make([][]float32, n)
	var codes []uint64
	for i := range vecs {
		vecs[i] = random()
		codes = rot.AppendCode(codes, vecs[i], nil)
		bi.Add(codes)
		if bi.FoldDue(1) {
			bi.Fold(codes)
		}
	}
	for _, tc := range []struct {
		cos, floor float64
	}{{0.92, 0.96}, {0.95, 0.995}} {
		found, cands := 0, 0
		for range trials {
			i := rng.IntN(n)
			q := rot.AppendCode(nil, at(vecs[i], tc.cos), nil)
			got, _ := bi.AppendCandidates(nil, codes, q, 0, TagBound(tc.cos, bi.TagBits()))
			if slices.Contains(got, int32(i)) {
				found++
			}
			cands += len(got)
		}
		rate := float64(found) / trials
		t.Logf("cosine %.2f: found %.2f%% of %d; %.1f candidates a query", tc.cos, 100*rate, trials, float64(cands)/trials)
		if rate < tc.floor {
			t.Errorf("cosine %.2f: the band index found %.2f%% of near vectors, want at least %.1f%%", tc.cos, 100*rate, 100*tc.floor)
		}
		// Unrelated vectors share one of 32 bands with probability 32/65536: about 10
		// of 20,000 a query, beside the near one, found in a few bands.
		if per := float64(cands) / trials; per > 25 {
			t.Errorf("cosine %.2f: %.1f candidates a query among %d random vectors, want about 15", tc.cos, per, n)
		}
	}
}

// sortedIDs returns a sorted copy of ids, nil when empty.
func sortedIDs(ids []int32) []int32 { return slices.Sorted(slices.Values(ids)) }

// TestHammingBoundKeepsNearPairs checks the code test that near-duplicate candidates
// pass before an exact cosine: pairs at the threshold itself pass it but for a
// negligible share, dense vectors and sparse ones alike, while most pairs well below
// the threshold are turned away.
func TestHammingBoundKeepsNearPairs(t *testing.T) {
	t.Parallel()
	const dims, pairs, threshold = 384, 10_000, 0.92
	rng := rand.New(rand.NewPCG(5, 8))
	rot := vecmath.NewRotation(dims, testSeed)
	bound := HammingBound(threshold, rot.Bits())
	for _, nonzero := range [][]int{nil, {24}} {
		var over, below int
		for range pairs {
			v := vectest.Unit(rng, dims, nonzero...)
			a := rot.AppendCode(nil, v, nil)
			if vecmath.Hamming(a, rot.AppendCode(nil, vectest.AtCosine(rng, v, threshold), nil)) > bound {
				over++
			}
			if vecmath.Hamming(a, rot.AppendCode(nil, vectest.AtCosine(rng, v, 0.8), nil)) <= bound {
				below++
			}
		}
		t.Logf("nonzero %v: bound %d of %d bits; %d of %d pairs at %.2f over it, %d at 0.80 within it", nonzero, bound, rot.Bits(), over, pairs, threshold, below)
		// Four standard deviations: about 3 pairs in 100,000 at the threshold.
		if over > 2 {
			t.Errorf("nonzero %v: %d of %d pairs at cosine %.2f differ in more than %d bits, want at most 2", nonzero, over, pairs, threshold, bound)
		}
		if below > pairs/2 {
			t.Errorf("nonzero %v: %d of %d pairs at cosine 0.80 pass the bound of %d bits, want under half", nonzero, below, pairs, bound)
		}
	}
}

// TestTagBound checks the tag test of the band index on rotated codes, with whole
// tags and with the 12 bits of them a million vectors leave: at each threshold, pairs
// at that cosine whose keys match in a band pass its tag test 97.5% of the time or
// more, as the bound is chosen for, while unrelated vectors, which the bands meet by
// chance, pass it about as often as the binomial law says (each of their bits differs
// with probability one half): one time in ten at 0.92 with 16 bits. The vectors are
// seeded, so the counts are the same on every run.
func TestTagBound(t *testing.T) {
	t.Parallel()
	if a, b := TagBound(0.92, 16), TagBound(0.92, 12); a != 5 || b != 4 {
		t.Errorf("TagBound(0.92, 16), (0.92, 12) = %d, %d; want 5, 4", a, b)
	}
	if TagBound(1, 16) != 0 || TagBound(-1, 16) != 16 || TagBound(0.8, 16) < TagBound(0.95, 16) {
		t.Errorf("TagBound(1), (-1), (0.8), (0.95) of 16 bits = %d, %d, %d, %d; want 0, 16, then not increasing with the threshold",
			TagBound(1, 16), TagBound(-1, 16), TagBound(0.8, 16), TagBound(0.95, 16))
	}
	// chance is the probability that n bits of unrelated tags differ in at most t.
	chance := func(n uint, t int) float64 {
		term, c := math.Pow(0.5, float64(n)), 0.0 // term: the probability of k bits
		for k := 0; k <= t; k++ {
			c += term
			term *= float64(int(n)-k) / float64(k+1)
		}
		return c
	}
	const dims, pairs = 384, 4_000
	rng := rand.New(rand.NewPCG(21, 23))
	rot := vecmath.NewRotation(dims, testSeed)
	bi := NewBands(rot.Words())
	for _, tagBits := range []uint{16, 12} {
		drop := bandBits - tagBits
		for _, threshold := range []float64{0.85, 0.92, 0.95} {
			bound := TagBound(threshold, tagBits)
			dist := func(a, b []uint64, band int) int {
				return bits.OnesCount16((bi.tag(a, band) ^ bi.tag(b, band)) >> drop)
			}
			var matched, passed, far, farPassed int
			for range pairs {
				v := vectest.Unit(rng, dims)
				a := rot.AppendCode(nil, v, nil)
				b := rot.AppendCode(nil, vectest.AtCosine(rng, v, threshold), nil)
				c := rot.AppendCode(nil, vectest.Unit(rng, dims), nil)
				for band := range bi.bands {
					if bandKey(a, band) == bandKey(b, band) {
						matched++
						if dist(a, b, band) <= bound {
							passed++
						}
					}
					far++
					if dist(a, c, band) <= bound {
						farPassed++
					}
				}
			}
			rate, farRate := float64(passed)/float64(matched), float64(farPassed)/float64(far)
			t.Logf("%d bits, threshold %.2f: tag bound %d; %d of %d matching bands pass (%.4f); of unrelated pairs, %.4f (by the law %.4f)",
				tagBits, threshold, bound, passed, matched, rate, farRate, chance(tagBits, bound))
			if rate < 0.975 {
				t.Errorf("%d bits, threshold %.2f: %.4f of the bands where a pair at the threshold matches pass the tag bound %d, want at least 0.975", tagBits, threshold, rate, bound)
			}
			if want := chance(tagBits, bound) + 0.01; farRate > want {
				t.Errorf("%d bits, threshold %.2f: %.4f of unrelated pairs pass the tag bound %d, want at most %.4f", tagBits, threshold, farRate, bound, want)
			}
		}
	}
}

// TestBandIndexLargeBuckets fills the buckets of a few keys with more vectors than
// 16-bit links and directory offsets hold: adding past maxLinked linked vectors folds
// first, and a group of buckets holding 1<<16 vectors or more makes the directory keep
// one offset per bucket. The candidates stay those of a scan.
func TestBandIndexLargeBuckets(t *testing.T) {
	t.Parallel()
	const words = 8
	n := maxLinked + 100
	codes := make([]uint64, 0, n*words)
	bi := NewBands(words)
	for i := range n {
		c := make([]uint64, words)
		c[0] = uint64(i%3) << dirShift // band 0: keys in three groups; every other band: key 0
		codes = append(codes, c...)
		bi.Add(codes)
		if i == maxLinked-1 && bi.sorted != 0 {
			t.Fatalf("folded at %d linked vectors, before reaching maxLinked", bi.sorted)
		}
		if i == maxLinked && bi.sorted != maxLinked {
			t.Fatalf("%d vectors sorted after adding past maxLinked; want %d", bi.sorted, maxLinked)
		}
	}
	bi.Fold(codes)
	if bi.dirs[1].shift != 0 || bi.dirs[0].shift != dirShift {
		t.Errorf("directory shifts %d (band 0, buckets of n/3) and %d (band 1, one bucket of n); want %d and 0",
			bi.dirs[0].shift, bi.dirs[1].shift, dirShift)
	}
	q := make([]uint64, words)
	q[0] = 1 << dirShift
	got, _ := bi.AppendCandidates(nil, codes, q, 10, bandBits)
	var want []int32
	for b := range maxBands {
		for v := n - 1; v >= 10; v-- {
			if bandKey(codes[v*words:], b) == bandKey(q, b) {
				want = append(want, int32(v))
			}
		}
	}
	if !slices.Equal(want, got) {
		i := 0
		for i < min(len(want), len(got)) && want[i] == got[i] {
			i++
		}
		t.Errorf("%d candidates, want %d; they differ from position %d", len(got), len(want), i)
	}
}

// BenchmarkBandIndexFold folds 35k linked vectors into 70k sorted ones, the last fold
// before a store reaches 100k facts.
func BenchmarkBandIndexFold(b *testing.B) {
	const words, sorted, linked = 8, 70_000, 35_000
	rng := rand.New(rand.NewPCG(1, 1))
	codes := make([]uint64, (sorted+linked)*words)
	for i := range codes {
		codes[i] = rng.Uint64()
	}
	base := NewBands(words)
	base.AddAll(codes[:sorted*words])
	for b.Loop() {
		b.StopTimer()
		bi := NewBands(words)
		bi.AddAll(codes[:sorted*words])
		for i := sorted; i < sorted+linked; i++ {
			bi.Add(codes[:(i+1)*words])
		}
		b.StartTimer()
		bi.Fold(codes)
	}
}
