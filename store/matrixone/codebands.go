package matrixone

// Near-duplicate candidates from the codes, without a scan of every code. Each 12-bit
// slice of a code (a band) is a bucket key, and a fact is a candidate for a new one
// when their codes share a bucket in any band; the Hamming bound then applies as
// before. Two embeddings at angle θ agree on a bit with probability 1-θ/π, so at
// cosine 0.92 they share a band with probability 0.872^12 ≈ 0.19 and one of 40 bands
// with probability 1-0.81^40 ≈ 0.9998 (0.99995 at cosine 0.93, and higher above),
// while an unrelated fact shares one of the 4096 keys of a band by chance: a new fact
// meets about n/100 candidates in a table of n facts, where the scan checked n.

const (
	codeBandBits  = 12
	codeBandKeys  = 1 << codeBandBits
	codeBandsWord = 64 / codeBandBits // bands per 64-bit word: 5
	// codeBandWords is the code length, in words, from which candidates come from the
	// bands: 512-bit codes (embeddings of more than 256 dimensions). Shorter codes
	// tell facts apart too poorly for bands to narrow anything down.
	codeBandWords = 8
	numCodeBands  = codeBandWords * codeBandsWord // 40 bands
	// minBandSlots is the fewest slots for which an index keeps bands: below it a scan
	// of every code costs less than the buckets' memory.
	minBandSlots = 4096
)

// codeBands holds the slots of a code index by bucket: buckets[b*keys+k] lists, oldest
// first, the slots whose code has key k in band b. A bucket is one array, so that its
// slots are read in sequence and their codes fetched without waiting for one another.
// Dead slots stay listed until the index is compacted. A slot whose code is unknown is
// listed nowhere: the index scans while it holds one.
type codeBands struct {
	buckets [][]int32
}

func newCodeBands() *codeBands {
	return &codeBands{buckets: make([][]int32, numCodeBands*codeBandKeys)}
}

func codeBandKey(code []uint64, b int) int {
	return int(code[b/codeBandsWord]>>(uint(b%codeBandsWord)*codeBandBits)) & (codeBandKeys - 1)
}

// add lists slot i, whose code is code.
func (cb *codeBands) add(code []uint64, i int) {
	for b := range numCodeBands {
		k := b*codeBandKeys + codeBandKey(code, b)
		cb.buckets[k] = append(cb.buckets[k], int32(i))
	}
}

// each calls fn for every slot sharing a bucket with code, once per bucket they share.
func (cb *codeBands) each(code []uint64, fn func(i int)) {
	for b := range numCodeBands {
		for _, i := range cb.buckets[b*codeBandKeys+codeBandKey(code, b)] {
			fn(int(i))
		}
	}
}
