package vecmath

import (
	"math/rand/v2"
	"slices"
)

// Rotation is a fixed pseudo-random rotation used to make sign-bit codes informative.
// Sign bits of a raw embedding say little when the embedding is sparse (most
// coordinates zero, as feature-hashed ones are): every zero coordinate gives the same
// bit. Rotating first spreads each vector over all coordinates, so the sign bits become
// random-hyperplane hashes whose Hamming distance tracks the angle between vectors
// (SimHash). The rotation is a round of random sign flips followed by a fast
// Walsh-Hadamard transform on the vector zero-padded to a power of two: O(n log n)
// additions, no matrix. (A second round mixes more but doubles the cost, and measured
// recall did not need it.)
type Rotation struct {
	n     int // padded length, a power of two
	dims  int
	signs []float32 // the random sign flip of each coordinate
}

// NewRotation returns the rotation for vectors of dims coordinates. The same dims and
// seed always give the same rotation.
func NewRotation(dims int, seed uint64) *Rotation {
	n := 1
	for n < dims {
		n <<= 1
	}
	r := &Rotation{n: n, dims: dims, signs: make([]float32, n)}
	rng := rand.New(rand.NewPCG(seed, uint64(dims)))
	for i := range r.signs {
		if rng.IntN(2) == 0 {
			r.signs[i] = 1
		} else {
			r.signs[i] = -1
		}
	}
	return r
}

// RotationOf returns the rotation whose sign flips are signs, one per coordinate of
// the padded length: len(signs) is a power of two and each sign is 1 or -1. It serves
// codes stored under a sign sequence of their own, which must never change;
// NewRotation suits every other use.
func RotationOf(signs []float32) *Rotation {
	return &Rotation{n: len(signs), dims: len(signs), signs: slices.Clone(signs)}
}

// Bits is the length of the codes the rotation makes: dims rounded up to a power of two.
func (r *Rotation) Bits() int { return r.n }

// Words is the number of uint64 words of a code.
func (r *Rotation) Words() int { return (r.n + 63) / 64 }

// AppendCode appends the sign bits of the rotated v to dst. buf is scratch space of at
// least Bits() floats (nil allocates).
func (r *Rotation) AppendCode(dst []uint64, v []float32, buf []float32) []uint64 {
	if cap(buf) < r.n {
		buf = make([]float32, r.n)
	}
	x := buf[:r.n]
	// The copy and the sign flips in one pass. The padding is flipped too: a zero
	// times -1 is a negative zero, whose sign bit the code keeps.
	m := min(len(v), r.n)
	for i, c := range v[:m] {
		x[i] = c * r.signs[i]
	}
	for i := m; i < r.n; i++ {
		x[i] = 0 * r.signs[i]
	}
	fwht(x)
	return AppendSignBits(dst, x)
}

// fwht is the in-place, unnormalised fast Walsh-Hadamard transform; len(x) is a power
// of two. It does two levels of butterflies per pass over x (radix 4), and one more
// when the number of levels is odd; each element goes through the same additions, in
// the same order, as one level per pass would give it, so the result is the same to
// the bit.
func fwht(x []float32) {
	n := len(x)
	if n < 4 {
		if n == 2 {
			x[0], x[1] = x[0]+x[1], x[0]-x[1]
		}
		return
	}
	// Levels 1 and 2 on quads, without slicing per group of one.
	for i := 0; i+3 < n; i += 4 {
		q := x[i : i+4 : i+4]
		p0, p1 := q[0]+q[1], q[0]-q[1]
		p2, p3 := q[2]+q[3], q[2]-q[3]
		q[0], q[2] = p0+p2, p0-p2
		q[1], q[3] = p1+p3, p1-p3
	}
	h := 4
	for ; 4*h <= n; h *= 4 {
		for i := 0; i < n; i += 4 * h {
			a := x[i : i+h]
			b := x[i+h : i+2*h]
			c := x[i+2*h : i+3*h]
			d := x[i+3*h : i+4*h]
			b, c, d = b[:len(a)], c[:len(a)], d[:len(a)] // lets the compiler drop bounds checks
			for j := range a {
				p0, p1 := a[j]+b[j], a[j]-b[j]
				p2, p3 := c[j]+d[j], c[j]-d[j]
				a[j], c[j] = p0+p2, p0-p2
				b[j], d[j] = p1+p3, p1-p3
			}
		}
	}
	if h < n {
		a, b := x[:h], x[h:2*h]
		b = b[:len(a)]
		for j := range a {
			u, v := a[j], b[j]
			a[j], b[j] = u+v, u-v
		}
	}
}
