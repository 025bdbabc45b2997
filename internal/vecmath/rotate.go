package vecmath

import "math/rand/v2"

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
	signs [1][]float32
}

// NewRotation returns the rotation for vectors of dims coordinates. The same dims and
// seed always give the same rotation.
func NewRotation(dims int, seed uint64) *Rotation {
	n := 1
	for n < dims {
		n <<= 1
	}
	r := &Rotation{n: n, dims: dims}
	rng := rand.New(rand.NewPCG(seed, uint64(dims)))
	for round := range r.signs {
		s := make([]float32, n)
		for i := range s {
			if rng.IntN(2) == 0 {
				s[i] = 1
			} else {
				s[i] = -1
			}
		}
		r.signs[round] = s
	}
	return r
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
	copy(x, v)
	clear(x[min(len(v), r.n):])
	for _, s := range r.signs {
		for i := range x {
			x[i] *= s[i]
		}
		fwht(x)
	}
	return AppendSignBits(dst, x)
}

// fwht is the in-place, unnormalised fast Walsh-Hadamard transform; len(x) is a power
// of two.
func fwht(x []float32) {
	// The first two levels work on pairs and quads; doing them in one pass avoids the
	// per-group slicing that dominates at small strides.
	for i := 0; i+3 < len(x); i += 4 {
		a, b, c, d := x[i], x[i+1], x[i+2], x[i+3]
		a, b = a+b, a-b
		c, d = c+d, c-d
		x[i], x[i+2] = a+c, a-c
		x[i+1], x[i+3] = b+d, b-d
	}
	h := 4
	if len(x) < 4 {
		h = 1
	}
	for ; h < len(x); h <<= 1 {
		for i := 0; i < len(x); i += h << 1 {
			a, b := x[i:i+h], x[i+h:i+2*h]
			b = b[:len(a)] // lets the compiler drop the bounds checks below
			for j := range a {
				u, v := a[j], b[j]
				a[j], b[j] = u+v, u-v
			}
		}
	}
}
