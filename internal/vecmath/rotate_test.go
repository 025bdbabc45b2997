package vecmath

import (
	"math"
	"math/rand/v2"
	"slices"
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

// fwhtByLevel is the transform one level of butterflies per pass, the definition
// fwht must match to the bit.
func fwhtByLevel(x []float32) {
	for h := 1; h < len(x); h <<= 1 {
		for i := 0; i < len(x); i += h << 1 {
			for j := i; j < i+h; j++ {
				x[j], x[j+h] = x[j]+x[j+h], x[j]-x[j+h]
			}
		}
	}
}

// TestFWHTMatchesLevelByLevel checks that the radix-4 transform gives exactly, bit for
// bit, what a transform one level at a time gives, for every power of two up to 1024
// (odd and even numbers of levels), on vectors with zeros of both signs.
func TestFWHTMatchesLevelByLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for n := 1; n <= 1024; n <<= 1 {
		for range 20 {
			x := make([]float32, n)
			for i := range x {
				switch rng.IntN(6) {
				case 0:
					x[i] = 0
				case 1:
					x[i] = float32(math.Copysign(0, -1))
				default:
					x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3)))
				}
			}
			want := append([]float32(nil), x...)
			fwhtByLevel(want)
			fwht(x)
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d: element %d is %v, want %v", n, i, x[i], want[i])
				}
			}
		}
	}
}

// TestAppendCodeMatchesDefinition checks codes against their definition: the sign bits
// of the vector, zero-padded, times the signs, transformed level by level.
func TestAppendCodeMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for _, dims := range []int{1, 5, 64, 300, 384, 512, 1000} {
		r := NewRotation(dims, 3)
		for range 20 {
			v := make([]float32, dims)
			for i := range v {
				if rng.IntN(4) > 0 {
					v[i] = float32(rng.NormFloat64())
				}
			}
			x := make([]float32, r.Bits())
			copy(x, v)
			for i := range x {
				x[i] *= r.signs[i]
			}
			fwhtByLevel(x)
			want := SignBits(x)
			got := r.AppendCode(nil, v, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("dims %d: code %x, want %x", dims, got, want)
			}
		}
	}
}

// BenchmarkRotationCodeRandom384 codes random vectors, whose rotated signs are random.
func BenchmarkRotationCodeRandom384(b *testing.B) {
	r := NewRotation(384, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	vs := make([][]float32, 64)
	for k := range vs {
		vs[k] = make([]float32, 384)
		for i := range vs[k] {
			vs[k][i] = float32(rng.NormFloat64())
		}
	}
	buf := make([]float32, r.Bits())
	dst := make([]uint64, 0, r.Words())
	i := 0
	for b.Loop() {
		dst = r.AppendCode(dst[:0], vs[i%len(vs)], buf)
		i++
	}
}
