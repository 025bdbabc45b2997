package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Sparse vectors that share no coordinates are orthogonal; their rotated codes must
// differ in about half the bits, and nearly equal vectors in few.
func TestRotationCodesTrackAngles(t *testing.T) {
	const dims = 384
	r := NewRotation(dims, 1)
	rng := rand.New(rand.NewPCG(7, 7))
	sparse := func() []float32 {
		v := make([]float32, dims)
		for range 20 {
			v[rng.IntN(dims)] = float32(rng.NormFloat64())
		}
		return v
	}
	var far, near float64
	const n = 200
	for range n {
		a, b := sparse(), sparse()
		ca, cb := r.AppendCode(nil, a, nil), r.AppendCode(nil, b, nil)
		far += float64(Hamming(ca, cb))
		c := append([]float32(nil), a...)
		for i := range c {
			c[i] += 0.05 * float32(rng.NormFloat64()) * Norm(a) / float32(math.Sqrt(dims))
		}
		near += float64(Hamming(ca, r.AppendCode(nil, c, nil)))
	}
	far /= n
	near /= n
	bits := float64(r.Bits())
	// Expected Hamming distance is bits * angle / pi.
	if far < 0.4*bits || far > 0.6*bits {
		t.Errorf("unrelated sparse vectors differ in %.1f of %v bits on average; want about half", far, bits)
	}
	if near > 0.1*bits {
		t.Errorf("nearly equal vectors differ in %.1f of %v bits on average; want under 10%%", near, bits)
	}
	// Raw sign bits of unrelated sparse vectors agree on almost every bit (each zero
	// coordinate gives a 0): the reason for rotating.
	a, b := sparse(), sparse()
	if d := Hamming(SignBits(a), SignBits(b)); d > 40 {
		t.Errorf("raw sign bits of unrelated sparse vectors differ in %d of %d bits; want at most 40", d, dims)
	}
}

func TestRotationIsDeterministic(t *testing.T) {
	v := []float32{0.1, -2, 3, 0, 5}
	a := NewRotation(5, 42).AppendCode(nil, v, nil)
	b := NewRotation(5, 42).AppendCode(nil, v, make([]float32, 3))
	if len(a) != 1 || a[0] != b[0] {
		t.Fatalf("codes differ: %x vs %x", a, b)
	}
	if NewRotation(384, 1).Bits() != 512 || NewRotation(384, 1).Words() != 8 {
		t.Fatal("384 dimensions should rotate in 512")
	}
}

func BenchmarkRotationCode384(b *testing.B) {
	r := NewRotation(384, 1)
	v := make([]float32, 384)
	for i := range v {
		v[i] = float32(i%7) - 3
	}
	buf := make([]float32, r.Bits())
	dst := make([]uint64, 0, r.Words())
	for b.Loop() {
		dst = r.AppendCode(dst[:0], v, buf)
	}
}
