package vecmath

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestSignBits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    []float32
		want []uint64
	}{
		{"empty", nil, []uint64{}},
		{"positive only", []float32{1, -1, 0, 2}, []uint64{0b1001}},
		{"zero is not positive", []float32{0, 0, 0}, []uint64{0}},
		{"negative zero", []float32{float32(negZero())}, []uint64{0}},
		{"exactly 64", fill(64, 1), []uint64{^uint64(0)}},
		{"65 spills one bit", fill(65, 1), []uint64{^uint64(0), 1}},
		{"bit 63", func() []float32 { v := fill(64, -1); v[63] = 0.5; return v }(), []uint64{1 << 63}},
		{"bit 64 goes to word 1", func() []float32 { v := fill(70, -1); v[64] = 3; return v }(), []uint64{0, 1}},
	}
	for _, tt := range tests {
		got := SignBits(tt.v)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: SignBits = %b, want %b", tt.name, got, tt.want)
		}
	}
}

func negZero() float64 { z := 0.0; return -z }

func fill(n int, x float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = x
	}
	return v
}

func TestSignBitsLength(t *testing.T) {
	t.Parallel()
	for n := range 200 {
		if got, want := len(SignBits(make([]float32, n))), (n+63)/64; got != want {
			t.Errorf("len(SignBits(%d dims)) = %d, want %d", n, got, want)
		}
	}
}

func TestAppendSignBits(t *testing.T) {
	t.Parallel()
	a := []float32{1, -1, 1}
	b := append(fill(64, -1), 1)
	got := AppendSignBits(AppendSignBits([]uint64{42}, a), b)
	want := []uint64{42, 0b101, 0, 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AppendSignBits = %v, want %v", got, want)
	}
}

func TestHamming(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b []uint64
		want int
	}{
		{"empty", nil, nil, 0},
		{"equal", []uint64{0xdeadbeef, 7}, []uint64{0xdeadbeef, 7}, 0},
		{"one bit", []uint64{0}, []uint64{1 << 40}, 1},
		{"all bits", []uint64{0, 0}, []uint64{^uint64(0), ^uint64(0)}, 128},
		{"five words", []uint64{1, 1, 1, 1, 1}, []uint64{0, 0, 0, 0, 3}, 5},
		{"length mismatch uses the shorter", []uint64{0}, []uint64{1, ^uint64(0)}, 1},
	}
	for _, tt := range tests {
		if got := Hamming(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: Hamming = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestHammingTracksAngle(t *testing.T) {
	t.Parallel()
	// Sign codes preserve neighbourhoods: a slightly perturbed vector is much closer in
	// Hamming distance than an unrelated one.
	r := rand.New(rand.NewPCG(9, 10))
	for range 20 {
		q := randVec(r, 384)
		near := make([]float32, len(q))
		for i := range q {
			near[i] = q[i] + 0.2*float32(r.NormFloat64())
		}
		far := randVec(r, 384)
		dn, df := Hamming(SignBits(q), SignBits(near)), Hamming(SignBits(q), SignBits(far))
		if dn >= df/2 {
			t.Errorf("Hamming near=%d far=%d: perturbed vector not clearly closer", dn, df)
		}
	}
	// And matches a bit-by-bit count.
	a, b := SignBits(randVec(r, 300)), SignBits(randVec(r, 300))
	want := 0
	for i := range a {
		for j := range 64 {
			if (a[i]>>j)&1 != (b[i]>>j)&1 {
				want++
			}
		}
	}
	if got := Hamming(a, b); got != want {
		t.Errorf("Hamming = %d, want %d", got, want)
	}
}

var sinkInt int

func BenchmarkHamming384(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	x, y := SignBits(randVec(r, 384)), SignBits(randVec(r, 384))
	for b.Loop() {
		sinkInt += Hamming(x, y)
	}
}

func BenchmarkSignBits384(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	v := randVec(r, 384)
	dst := make([]uint64, 0, 6)
	for b.Loop() {
		dst = AppendSignBits(dst[:0], v)
	}
}
