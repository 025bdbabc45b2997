package vecmath

import "math"

// Dot returns the dot product of a and b over their first min(len(a), len(b))
// components; extra components of the longer vector are ignored.
//
// The loop is unrolled by eight with four independent accumulators, so the CPU can
// overlap the additions instead of waiting on one running sum. The summation order
// therefore differs from a naive loop and the result may differ in the last bits.
func Dot(a, b []float32) float32 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		// Re-slicing to exactly eight elements lets the compiler drop the bounds checks.
		x := a[i : i+8 : i+8]
		y := b[i : i+8 : i+8]
		s0 += x[0]*y[0] + x[4]*y[4]
		s1 += x[1]*y[1] + x[5]*y[5]
		s2 += x[2]*y[2] + x[6]*y[6]
		s3 += x[3]*y[3] + x[7]*y[7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Norm returns the Euclidean (L2) length of v.
func Norm(v []float32) float32 {
	return float32(math.Sqrt(float64(Dot(v, v))))
}

// Normalize returns a new vector pointing the same way as v with length 1. It returns
// nil when v has zero length or holds no non-zero component, since such a vector has no
// direction. v is not modified.
func Normalize(v []float32) []float32 {
	n := Norm(v)
	if n == 0 || math.IsNaN(float64(n)) {
		return nil
	}
	out := make([]float32, len(v))
	inv := 1 / n
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// Cosine returns the cosine of the angle between a and b, in [-1, 1], over their first
// min(len(a), len(b)) components. The vectors need not be normalised; when either has
// zero norm the result is 0.
func Cosine(a, b []float32) float32 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	var dot, na, nb float32
	var dot1, na1, nb1 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		x := a[i : i+4 : i+4]
		y := b[i : i+4 : i+4]
		dot += x[0]*y[0] + x[2]*y[2]
		dot1 += x[1]*y[1] + x[3]*y[3]
		na += x[0]*x[0] + x[2]*x[2]
		na1 += x[1]*x[1] + x[3]*x[3]
		nb += y[0]*y[0] + y[2]*y[2]
		nb1 += y[1]*y[1] + y[3]*y[3]
	}
	for ; i < n; i++ {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	dot, na, nb = dot+dot1, na+na1, nb+nb1
	if na == 0 || nb == 0 {
		return 0
	}
	c := float64(dot) / math.Sqrt(float64(na)*float64(nb))
	// Rounding can push the cosine of (anti)parallel vectors just past ±1.
	return float32(max(-1, min(1, c)))
}
