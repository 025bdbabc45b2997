package simhash

import (
	"math"
	"math/bits"
	"runtime"
	"slices"

	"github.com/day1ai/day1/internal/parallel"
)

// MinBandWords is the shortest code, in uint64 words, worth a band index: below 256
// bits, codes tell vectors apart too poorly for
// bands to narrow anything down, and candidates are found by a scan of every code.
const MinBandWords = 4

// Near-duplicate candidates come from locality-sensitive hashing of the sign-bit codes:
// each 16-bit slice of a code (a band) is a bucket key, and two vectors are candidates
// when they share a bucket in any band. Two vectors at angle θ agree on a bit with
// probability 1-θ/π, so at cosine 0.92 a band matches with probability 0.87^16 ≈ 0.11
// and one of 32 bands with probability ≈ 0.97 (0.998 at cosine 0.95), while unrelated
// vectors share a band about 32 times in 65536. Codes are taken after a random rotation
// (vecmath.Rotation), which makes their bits independent of how sparse embeddings are.
// A bucket keeps beside each vector its tag, 16 more bits of its code, in the bits of
// its entry that the vector's index leaves (all 16 up to 65,536 vectors, 12 at a
// million), so a look-up lets through only those whose tag is close to the query's
// (TagBound): at a million vectors, about one in five of the 500 that share a band by
// chance, at a cost of 0.1 points of recall at 0.92.
//
// A bucket is read once per band for every new fact, so its layout decides the cost of
// a write. Most vectors sit in sorted buckets: per band, one array of vector indexes
// ordered by bucket, and a directory of where each bucket starts, so a bucket is one
// contiguous read. Vectors added since the buckets were last sorted are in linked
// buckets threaded through flat arrays, which take an addition in constant time; when
// they grow to a fraction of the sorted ones, they are merged into them in one linear
// pass per band (fold). No maps: a few bytes per vector and band.
const (
	bandBits = 16
	bandKeys = 1 << bandBits
	maxBands = 32
	// A fold is due when the linked vectors number minFold and 1/foldShare of the
	// sorted ones: the sorted buckets are rewritten after every growth by half, so the
	// cost of folds per vector added stays constant. A caller folds when FoldDue says
	// so, at a moment of its choosing: the memory store after each write, so that a
	// merge, whose latency counts more than its throughput, rarely has to.
	minFold   = 16384
	foldShare = 2
	// maxLinked is the most linked vectors there can be: links are 16 bits. Past it,
	// adding a vector folds first.
	maxLinked = 1<<16 - 1
	// The directory of a band locates the buckets of a group of 1<<dirShift keys by an
	// offset, and each bucket within its group by a 16-bit offset from the group's, half
	// the memory of an offset per bucket. A group holding 1<<16 vectors or more (some
	// million vectors per store) makes the directory fall back to one offset per bucket.
	dirShift = 4
)

// Bands finds the vectors that may be near a query among many, by their codes: a
// locality-sensitive index over bands of the codes. A vector is known by its position
// in the order it was added, and the caller keeps the codes, back to back in that
// order. Bands is not safe for concurrent use, but any number of goroutines may call
// AppendCandidates while nothing adds.
type Bands struct {
	bands int
	words int // uint64 words per code
	// Vectors [0, sorted) are in sorted buckets: those of bucket k of band b are
	// ents[b][dirs[b].start(k):dirs[b].start(k+1)], newest first. An entry holds a
	// vector's index in its low idBitsFor(sorted) bits and, above them, the first
	// tagBits() bits of its tag in the band: the bits an index leaves, so that tags
	// cost no memory. Nil until the first fold.
	dirs   []bucketDir
	ents   [][]uint32
	sorted int
	// Vectors [sorted, n) are in linked buckets, known by their position among the
	// linked ones, v-sorted: heads[b][k] is 1 + the position of the newest of bucket k of
	// band b, 0 if none; the low 16 bits of next[(v-sorted)*bands+b] are 1 + the
	// position of the vector before v in its bucket, 0 at the last linked one, and the
	// high 16 bits v's tag in band b. A vector's links sit together, so adding one
	// touches a cache line rather than one per band.
	heads [][]uint16
	next  []uint32
	// hshift is how far keys are shifted right to index heads: 0, or smallHeadsShift
	// while at most smallHeadsMax vectors were ever linked, when heads of 1<<16
	// entries per band would be mostly empty memory to fault in. Then a linked bucket
	// holds the vectors of several keys, told apart by their codes.
	hshift uint
	n      int // vectors added
}

// bucketDir says where each bucket of one band starts in the band's sorted ids.
type bucketDir struct {
	// base[g] is where the buckets of keys g<<shift and after start; rel[k] is where
	// bucket k starts, from base[k>>shift]. shift is dirShift, or 0 with rel all zeros.
	base  []int32
	rel   []uint16
	shift uint
}

// start returns where bucket k (0 to bandKeys, bandKeys being the end) starts.
func (d *bucketDir) start(k int) int {
	return int(d.base[k>>d.shift]) + int(d.rel[k])
}

// set makes d describe buckets that start at starts[k], for k from 0 to bandKeys-1,
// the last ending at total.
func (d *bucketDir) set(starts []uint32, total uint32) {
	d.shift = dirShift
	for g := 0; g < bandKeys; g += 1 << dirShift {
		end := total
		if next := g + 1<<dirShift; next < bandKeys {
			end = starts[next]
		}
		if end-starts[g] > 1<<16-1 {
			d.shift = 0
			break
		}
	}
	groups := bandKeys>>d.shift + 1
	if cap(d.base) < groups {
		d.base = make([]int32, groups)
	}
	d.base = d.base[:groups]
	if d.rel == nil {
		d.rel = make([]uint16, bandKeys+1)
	}
	mask := 1<<d.shift - 1
	for k, st := range starts[:bandKeys] {
		if k&mask == 0 {
			d.base[k>>d.shift] = int32(st)
			d.rel[k] = 0
		} else {
			d.rel[k] = uint16(st - uint32(d.base[k>>d.shift]))
		}
	}
	d.base[bandKeys>>d.shift] = int32(total)
	d.rel[bandKeys] = 0
}

// NewBands returns an empty index for codes of words uint64 words.
func NewBands(words int) *Bands {
	n := min(words*64/bandBits, maxBands)
	bi := &Bands{bands: n, words: words, hshift: smallHeadsShift}
	bi.makeHeads()
	return bi
}

// smallHeadsShift is hshift for the first smallHeadsMax linked vectors: 4096 linked
// buckets per band.
const (
	smallHeadsShift = 4
	smallHeadsMax   = 4096
)

// makeHeads gives every band empty heads for the current hshift.
func (bi *Bands) makeHeads() {
	bi.heads = make([][]uint16, bi.bands)
	for b := range bi.heads {
		bi.heads[b] = make([]uint16, bandKeys>>bi.hshift)
	}
}

func bandKey(code []uint64, b int) uint16 {
	return uint16(code[b/4] >> (uint(b%4) * bandBits))
}

// tag returns the tag of code in band b: the key of the band half the bands away, 16
// bits of the code that band b's key does not hold. A bucket keeps each vector's tag
// beside its index, so that a look-up turns away most of a bucket's vectors, which
// share a band with the query by chance, without reading their codes: see TagBound.
func (bi *Bands) tag(code []uint64, b int) uint16 {
	return bandKey(code, (b+bi.bands/2)%bi.bands)
}

// minIDBits is the fewest bits an entry of a sorted bucket gives a vector's index.
const minIDBits = 16

// idBitsFor is how many bits the entries of sorted buckets holding sorted vectors give
// an index: enough for the last, and minIDBits at the least.
func idBitsFor(sorted int) uint { return max(minIDBits, uint(bits.Len(uint(max(sorted, 1)-1)))) }

// tagBitsFor is how many bits of a tag an entry holds beside idBits of index.
func tagBitsFor(idBits uint) uint { return min(bandBits, 32-idBits) }

// TagBits is how many bits of a tag a look-up compares: as many as the entries of the
// sorted buckets hold beside an index, 16 up to 65,536 vectors, 12 at a million.
func (bi *Bands) TagBits() uint { return tagBitsFor(idBitsFor(bi.sorted)) }

// TagBound is the largest Hamming distance between the first n bits of the tags of
// two vectors whose cosine is at least threshold that a look-up lets through: the
// smallest for which a pair at the threshold passes in a band with a probability of
// at least 0.98, by the binomial law of the n bits. At the default threshold of 0.92
// it is 5 of 16 bits and 4 of 12: a pair there passes with a probability of 0.989, so
// the bands find it with one of 0.976 rather than 0.977, while of the vectors that
// share a band by chance, whose tags differ in each bit with a probability of one
// half, one in ten passes (one in five with 12 bits).
func TagBound(threshold float64, n uint) int {
	p := math.Acos(max(-1, min(1, threshold))) / math.Pi
	nb := int(n)
	cdf, term := 0.0, math.Pow(1-p, float64(nb)) // P(0 bits differ)
	for t := 0; t < nb; t++ {
		cdf += term
		if cdf >= 0.98 {
			return t
		}
		term *= float64(nb-t) / float64(t+1) * p / (1 - p)
	}
	return nb
}

// Add adds the vector whose code ends codes, the codes of every vector added so far
// back to back, to the linked buckets.
func (bi *Bands) Add(codes []uint64) {
	switch linked := bi.n - bi.sorted; {
	case linked == maxLinked:
		bi.Fold(codes[:len(codes)-bi.words])
	case linked == smallHeadsMax && bi.hshift != 0:
		bi.growHeads(codes[:len(codes)-bi.words])
	}
	bi.next = slices.Grow(bi.next, bi.bands)[:len(bi.next)+bi.bands]
	bi.link(codes[len(codes)-bi.words:], bi.n, bi.next[len(bi.next)-bi.bands:], 0, bi.bands)
	bi.n++
}

// link puts vector v, whose code is code, at the head of its linked buckets in bands
// [lo, hi), writing its links there to links, the bands' entries of next for v.
func (bi *Bands) link(code []uint64, v int, links []uint32, lo, hi int) {
	pos := uint16(v - bi.sorted + 1)
	for b := lo; b < hi; b++ {
		k := bandKey(code, b) >> bi.hshift
		links[b] = uint32(bi.heads[b][k]) | uint32(bi.tag(code, b))<<16
		bi.heads[b][k] = pos
	}
}

// minSharedAdd is the fewest vectors AddUpTo shares between processors.
const minSharedAdd = 64

// AddUpTo adds to the linked buckets the vectors from bi.n up to n, whose codes are in
// codes, as Add would one at a time. Runs of them that no fold or growth of the heads
// interrupts are added band by band on every processor: the bands' buckets are apart,
// and the links of a vector in half the bands fill a cache line of their own.
func (bi *Bands) AddUpTo(codes []uint64, n int) {
	parts := min(runtime.GOMAXPROCS(0), 2)
	for bi.n < n {
		linked := bi.n - bi.sorted
		room := maxLinked - linked
		if bi.hshift != 0 {
			room = min(room, smallHeadsMax-linked)
		}
		run := min(n-bi.n, room)
		if parts < 2 || run < minSharedAdd {
			bi.Add(codes[:(bi.n+1)*bi.words])
			continue
		}
		first, base, nb := bi.n, len(bi.next), bi.bands
		bi.next = slices.Grow(bi.next, run*nb)[:base+run*nb]
		parallel.Do(nb, parts, func(_, lo, hi int) {
			for i := range run {
				v := first + i
				bi.link(codes[v*bi.words:][:bi.words], v, bi.next[base+i*nb:][:nb], lo, hi)
			}
		})
		bi.n += run
	}
}

// growHeads gives the linked buckets one key each: full heads, and every linked
// vector linked again in its new bucket, oldest first. codes holds the codes of
// every vector, back to back.
func (bi *Bands) growHeads(codes []uint64) {
	linked := bi.n - bi.sorted
	bi.hshift = 0
	bi.makeHeads()
	bi.next, bi.n = bi.next[:0], bi.sorted
	for i := range linked {
		bi.Add(codes[:(bi.sorted+i+1)*bi.words])
	}
}

// FoldDue reports whether the linked vectors are worth folding: slack times minFold of
// them at least, and slack/foldShare of the sorted ones.
func (bi *Bands) FoldDue(slack int) bool {
	linked := bi.n - bi.sorted
	return linked >= slack*minFold && linked >= slack*bi.sorted/foldShare
}

// AddAll adds the vectors whose codes are codes, back to back, to an empty index.
func (bi *Bands) AddAll(codes []uint64) {
	n := len(codes) / bi.words
	if n < minFold {
		for i := range n {
			bi.Add(codes[:(i+1)*bi.words])
		}
		return
	}
	bi.n = n
	bi.Fold(codes)
}

// foldRun is how many linked vectors a processor takes at a time when fold reads their
// keys and tags: runs of whole cache lines of both arrays in every band.
const foldRun = 4096

// Fold moves every linked vector into the sorted buckets. Per band, the sorted
// vectors of each bucket move right by the number of linked vectors of the buckets
// before it and of its own, walking the buckets from the last so that nothing is
// overwritten before it is moved; the linked vectors then fill the gap at the front of
// their bucket, newest first. codes holds the codes of every vector, back to back.
func (bi *Bands) Fold(codes []uint64) {
	if bi.dirs == nil {
		bi.dirs = make([]bucketDir, bi.bands)
		bi.ents = make([][]uint32, bi.bands)
		empty := make([]uint32, bandKeys)
		for b := range bi.dirs {
			bi.dirs[b].set(empty, 0) // every bucket empty
		}
	}
	linked := bi.n - bi.sorted
	// The keys and tags of the linked vectors, band by band: each band's passes then
	// read four bytes per vector rather than a code's cache line.
	// Runs of vectors are split on every processor.
	workers := parallel.Parts(bi.bands, 1)
	if bi.n < 8192 {
		workers = 1 // too little work to share
	}
	keys := make([]uint16, bi.bands*linked)
	tags := make([]uint16, bi.bands*linked)
	parallel.Each(linked, foldRun, workers, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			code := codes[(bi.sorted+i)*bi.words:][:bi.words]
			for b := range bi.bands {
				keys[b*linked+i] = bandKey(code, b)
				tags[b*linked+i] = bi.tag(code, b)
			}
		}
	})
	// Indexes past those the entries hold take bits from the tags of every entry.
	idBits := idBitsFor(bi.n)
	// Bands are folded independently, on every processor, a band at a time.
	scratch := make([][2][]uint32, workers) // each worker's count and fill
	parallel.Each(bi.bands, 1, workers, func(w, b, _ int) {
		sc := &scratch[w]
		if sc[0] == nil {
			sc[0], sc[1] = make([]uint32, bandKeys), make([]uint32, bandKeys)
		}
		bi.foldBand(b, keys[b*linked:(b+1)*linked], tags[b*linked:(b+1)*linked], idBits, sc[0], sc[1])
	})
	if bi.hshift != 0 {
		bi.hshift = 0
		bi.makeHeads()
	}
	bi.sorted = bi.n
	bi.next = bi.next[:0]
}

// foldBand folds the linked vectors of band b, whose keys are col and tags tcol, into
// entries of idBits bits of index, using count and fill, bandKeys entries each, as
// scratch.
func (bi *Bands) foldBand(b int, col, tcol []uint16, idBits uint, count, fill []uint32) {
	sorted, n := uint32(bi.sorted), uint32(bi.n)
	dir := &bi.dirs[b]
	base, rel, shift := dir.base, dir.rel, dir.shift
	clear(count)
	for _, k := range col {
		count[k]++
	}
	// fill[k]: where bucket k starts after the fold, the place of its newest linked
	// vector.
	var before uint32 // linked vectors in the buckets before k
	for k, c := range count {
		fill[k] = uint32(base[k>>shift]) + uint32(rel[k]) + before
		before += c
	}
	ents := slices.Grow(bi.ents[b], bi.n-len(bi.ents[b]))[:bi.n]
	oldIDBits := idBitsFor(bi.sorted)
	oldBits, newBits := tagBitsFor(oldIDBits), tagBitsFor(idBits)
	if idBits != oldIDBits {
		// Fewer tag bits: each entry keeps the first newBits of those it had.
		mask := uint32(1)<<oldIDBits - 1
		for i, e := range ents[:sorted] {
			ents[i] = e&mask | e>>oldIDBits>>(oldBits-newBits)<<idBits
		}
	}
	// Each bucket's sorted vectors move right by the linked vectors of the buckets up
	// to its own, from the last bucket to the first so that nothing is overwritten
	// before it moves. Buckets between two that gained linked vectors move by the
	// same amount: one copy for all of them.
	runEnd, runShift := sorted, n-sorted // the run of old positions [lo, runEnd)
	lo := sorted
	for k := bandKeys - 1; k >= 0; k-- {
		start := uint32(base[k>>shift]) + uint32(rel[k])
		if d := fill[k] - start + count[k]; d != runShift {
			moveRight(ents, lo, runEnd, runShift)
			runEnd, runShift = lo, d
		}
		lo = start
	}
	moveRight(ents, lo, runEnd, runShift)
	dir.set(fill, n)
	for i := len(col) - 1; i >= 0; i-- {
		k := col[i]
		ents[fill[k]] = uint32(bi.sorted+i) | uint32(tcol[i]>>(bandBits-newBits))<<idBits
		fill[k]++
	}
	bi.ents[b] = ents
	if bi.hshift == 0 {
		clear(bi.heads[b])
	}
}

// moveRight moves ents[lo:hi] to start at lo+by, by ≥ 0.
func moveRight(ents []uint32, lo, hi, by uint32) {
	if hi-lo > 16 {
		copy(ents[lo+by:hi+by], ents[lo:hi])
		return
	}
	for i := hi; i > lo; i-- { // short runs, the common case: no call
		ents[i-1+by] = ents[i-1]
	}
}

// AppendCandidates appends to dst the index, from or more, of every vector sharing a
// band with code whose tag in that band differs from code's in at most maxTag of its
// first tagBits() bits (TagBound; tagBits() or more lets every one through), possibly
// more than once: newest first within a band, so a walk ends at the first index below
// from. codes holds the codes of every vector, back to back.
//
// Each band's lookups are cache misses, so they are made for every band before any
// bucket is read, and the first link of each linked bucket and the first entry of each
// sorted bucket are read (touched) before any is walked or copied: the processor then
// overlaps the misses instead of taking them one after the other. The linked buckets
// are walked a step of every band at a time for the same reason. The sum of the
// entries touched is returned for the caller to keep, so that the reads are not
// optimised away.
func (bi *Bands) AppendCandidates(dst []int32, codes, code []uint64, from, maxTag int) ([]int32, int32) {
	var keys, heads, qtags [maxBands]uint16
	var lo, hi [maxBands]int32
	nb := bi.bands
	sorted := from < bi.sorted
	idBits := idBitsFor(bi.sorted)
	drop := bandBits - tagBitsFor(idBits) // the tag bits not compared
	for b := range nb {
		k := bandKey(code, b)
		keys[b] = k
		qtags[b] = bi.tag(code, b) >> drop
		heads[b] = bi.heads[b][k>>bi.hshift]
		if sorted {
			d := &bi.dirs[b]
			lo[b], hi[b] = int32(d.start(int(k))), int32(d.start(int(k)+1))
		}
	}
	var touched int32
	for b := range nb {
		if j := int(heads[b]); j > 0 {
			touched += int32(bi.next[(j-1)*nb+b])
		}
		if sorted && lo[b] < hi[b] {
			touched += int32(bi.ents[b][lo[b]])
		}
	}
	if sorted {
		mask := uint32(1)<<idBits - 1
		for b := range nb {
			ents := bi.ents[b][lo[b]:hi[b]]
			dst = slices.Grow(dst, len(ents))
			n, out, qt := len(dst), dst[:cap(dst)], uint32(qtags[b])
			for _, e := range ents {
				v := int32(e & mask)
				if int(v) < from {
					break
				}
				// No branch on the tag test, whose outcome is a coin toss to the
				// processor: v is written, and kept when it passes.
				out[n] = v
				n += 1 - int(uint(maxTag-bits.OnesCount32(e>>idBits^qt))>>(bits.UintSize-1))
			}
			dst = out[:n]
		}
	}
	for live := true; live; {
		live = false
		for b := range nb {
			j := int(heads[b])
			if j == 0 {
				continue
			}
			v := bi.sorted + j - 1
			if v < from {
				heads[b] = 0
				continue
			}
			e := bi.next[(j-1)*nb+b]
			heads[b], live = uint16(e), true
			if bits.OnesCount16(uint16(e>>16)>>drop^qtags[b]) > maxTag {
				continue
			}
			if bi.hshift != 0 && bandKey(codes[v*bi.words:], b) != keys[b] {
				continue // another key of the same linked bucket
			}
			dst = append(dst, int32(v))
		}
	}
	return dst, touched
}

// Len is the number of vectors added.
func (bi *Bands) Len() int { return bi.n }

// Reserve makes room for n more vectors, so that adding them does not grow the
// index's arrays.
func (bi *Bands) Reserve(n int) {
	if cap(bi.next)-len(bi.next) < n*bi.bands {
		bi.next = slices.Grow(bi.next, n*bi.bands)
	}
}
