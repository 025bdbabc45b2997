package vecmath

import "math/bits"

// SignBits quantises v to one bit per component: bit i (bit i%64 of word i/64) is set
// when v[i] > 0. The result has ceil(len(v)/64) words; the unused high bits of the last
// word are zero. The Hamming distance between two such codes approximates the angle
// between the vectors, which makes a cheap first pass before exact cosine scoring.
func SignBits(v []float32) []uint64 {
	return AppendSignBits(make([]uint64, 0, (len(v)+63)/64), v)
}

// AppendSignBits appends the sign bits of v, as [SignBits] computes them, to dst and
// returns the extended slice. It lets a caller pack the codes of many vectors into one
// slice.
func AppendSignBits(dst []uint64, v []float32) []uint64 {
	for len(v) >= 64 {
		var w uint64
		for i, x := range v[:64] {
			w |= positive(x) << uint(i)
		}
		dst = append(dst, w)
		v = v[64:]
	}
	if len(v) > 0 {
		var w uint64
		for i, x := range v {
			w |= positive(x) << uint(i)
		}
		dst = append(dst, w)
	}
	return dst
}

// positive returns 1 when x > 0, else 0. It compiles to a conditional move, not a
// branch: the signs of rotated vectors are random, and a branch on them is mispredicted
// half the time.
func positive(x float32) uint64 {
	var b uint64
	if x > 0 {
		b = 1
	}
	return b
}

// Hamming returns the number of bits that differ between a and b over their first
// min(len(a), len(b)) words; extra words of the longer code are ignored.
func Hamming(a, b []uint64) int {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	d := 0
	i := 0
	for ; i+4 <= n; i += 4 {
		x := a[i : i+4 : i+4]
		y := b[i : i+4 : i+4]
		d += bits.OnesCount64(x[0]^y[0]) + bits.OnesCount64(x[1]^y[1]) +
			bits.OnesCount64(x[2]^y[2]) + bits.OnesCount64(x[3]^y[3])
	}
	for ; i < n; i++ {
		d += bits.OnesCount64(a[i] ^ b[i])
	}
	return d
}
