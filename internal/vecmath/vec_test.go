package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

func naiveDot(a, b []float32) float64 {
	var s float64
	for i := range min(len(a), len(b)) {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func close32(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestDot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b []float32
		want float32
	}{
		{"both empty", nil, nil, 0},
		{"one empty", []float32{1, 2}, nil, 0},
		{"single", []float32{3}, []float32{-2}, -6},
		{"seven, all tail", []float32{1, 2, 3, 4, 5, 6, 7}, []float32{1, 1, 1, 1, 1, 1, 1}, 28},
		{"eight, one block", []float32{1, 2, 3, 4, 5, 6, 7, 8}, []float32{8, 7, 6, 5, 4, 3, 2, 1}, 120},
		{"nine, block and tail", []float32{1, 1, 1, 1, 1, 1, 1, 1, 10}, []float32{1, 1, 1, 1, 1, 1, 1, 1, 2}, 28},
		{"orthogonal", []float32{1, 0, 0}, []float32{0, 5, 0}, 0},
		{"length mismatch uses the shorter", []float32{1, 2, 3}, []float32{1, 1, 1, 100, 100}, 6},
	}
	for _, tt := range tests {
		if got := Dot(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: Dot = %v, want %v", tt.name, got, tt.want)
		}
		if got := Dot(tt.b, tt.a); got != tt.want {
			t.Errorf("%s: Dot (swapped) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDotMatchesNaive(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 70 {
		a, b := randVec(r, n), randVec(r, n)
		want := naiveDot(a, b)
		if got := Dot(a, b); !close32(float64(got), want, 1e-4*float64(n+1)) {
			t.Errorf("n=%d: Dot = %v, want %v", n, got, want)
		}
	}
}

func TestNorm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    []float32
		want float32
	}{
		{nil, 0},
		{[]float32{0, 0, 0}, 0},
		{[]float32{3, 4}, 5},
		{[]float32{-3, -4}, 5},
		{[]float32{1, 1, 1, 1, 1, 1, 1, 1, 1}, 3},
	}
	for _, tt := range tests {
		if got := Norm(tt.v); got != tt.want {
			t.Errorf("Norm(%v) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	in := []float32{3, 0, -4}
	got := Normalize(in)
	want := []float32{0.6, 0, -0.8}
	for i := range want {
		if !close32(float64(got[i]), float64(want[i]), 1e-6) {
			t.Fatalf("Normalize(%v) = %v, want %v", in, got, want)
		}
	}
	if in[0] != 3 || in[2] != -4 {
		t.Errorf("Normalize modified its input: %v", in)
	}
	got[0] = 99
	if in[0] != 3 {
		t.Errorf("Normalize returned its input instead of a new slice")
	}
	for _, v := range [][]float32{nil, {}, {0, 0, 0}} {
		if got := Normalize(v); got != nil {
			t.Errorf("Normalize(%v) = %v, want nil", v, got)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		if n := Norm(Normalize(randVec(r, 384))); !close32(float64(n), 1, 1e-5) {
			t.Errorf("Norm(Normalize(v)) = %v, want 1", n)
		}
	}
}

func TestCosine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b []float32
		want float64
	}{
		{"identical", []float32{1, 2, 3}, []float32{1, 2, 3}, 1},
		{"scaled is still parallel", []float32{1, 2, 3}, []float32{10, 20, 30}, 1},
		{"opposite", []float32{1, 2, 3, 4, 5}, []float32{-1, -2, -3, -4, -5}, -1},
		{"orthogonal", []float32{1, 0, 0, 0}, []float32{0, 0, 7, 0}, 0},
		{"45 degrees", []float32{1, 0}, []float32{1, 1}, math.Sqrt2 / 2},
		{"zero vector", []float32{0, 0, 0}, []float32{1, 2, 3}, 0},
		{"both zero", []float32{0, 0}, []float32{0, 0}, 0},
		{"empty", nil, []float32{1}, 0},
		{"length mismatch uses the shorter", []float32{1, 1}, []float32{1, 1, -50, 3}, 1},
	}
	for _, tt := range tests {
		got := Cosine(tt.a, tt.b)
		if !close32(float64(got), tt.want, 1e-6) {
			t.Errorf("%s: Cosine = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCosineMatchesDefinition(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for n := 1; n < 40; n++ {
		a, b := randVec(r, n), randVec(r, n)
		want := naiveDot(a, b) / math.Sqrt(naiveDot(a, a)*naiveDot(b, b))
		got := float64(Cosine(a, b))
		if !close32(got, want, 1e-5) {
			t.Errorf("n=%d: Cosine = %v, want %v", n, got, want)
		}
		if got < -1 || got > 1 {
			t.Errorf("n=%d: Cosine = %v, outside [-1, 1]", n, got)
		}
		// On normalised vectors the cosine is the dot product.
		if d := Dot(Normalize(a), Normalize(b)); !close32(float64(d), want, 1e-5) {
			t.Errorf("n=%d: Dot of normalised = %v, want %v", n, d, want)
		}
	}
}

var sink32 float32

func BenchmarkDot384(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	x, y := randVec(r, 384), randVec(r, 384)
	b.SetBytes(2 * 384 * 4)
	for b.Loop() {
		sink32 += Dot(x, y)
	}
}

func BenchmarkCosine384(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	x, y := randVec(r, 384), randVec(r, 384)
	b.SetBytes(2 * 384 * 4)
	for b.Loop() {
		sink32 += Cosine(x, y)
	}
}
