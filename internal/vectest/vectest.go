// Package vectest makes random embeddings for tests of vector search and of
// near-duplicate detection: unit vectors, dense or sparse, and vectors at a chosen
// cosine from another. Every function draws from the generator it is given, so a
// seeded generator gives the same vectors on every run.
package vectest

import (
	"math"
	"math/rand/v2"
)

// Unit returns a random unit vector of dims coordinates, its direction uniform on the
// sphere. With nonzero, only that many coordinates drawn at random are set, as in the
// sparse embeddings a feature-hashing embedder makes.
func Unit(rng *rand.Rand, dims int, nonzero ...int) []float32 {
	return narrow(unit64(rng, dims, nonzero...))
}

// AtCosine returns a unit vector whose cosine with the unit vector v is c: v turned
// towards a random direction orthogonal to it.
func AtCosine(rng *rand.Rand, v []float32, c float64) []float32 {
	u := unit64(rng, len(v))
	var d float64
	for i := range u {
		d += u[i] * float64(v[i])
	}
	for i := range u {
		u[i] -= d * float64(v[i])
	}
	normalize(u)
	s := math.Sqrt(1 - c*c)
	w := make([]float64, len(v))
	for i := range w {
		w[i] = c*float64(v[i]) + s*u[i]
	}
	return narrow(w)
}

// Cosine returns the cosine similarity of a and b, computed in float64.
func Cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

func unit64(rng *rand.Rand, dims int, nonzero ...int) []float64 {
	v := make([]float64, dims)
	if len(nonzero) == 0 {
		for i := range v {
			v[i] = rng.NormFloat64()
		}
	} else {
		for range nonzero[0] {
			v[rng.IntN(dims)] = rng.NormFloat64()
		}
	}
	normalize(v)
	return v
}

func normalize(v []float64) {
	var s float64
	for _, x := range v {
		s += x * x
	}
	if s == 0 {
		return
	}
	s = math.Sqrt(s)
	for i := range v {
		v[i] /= s
	}
}

func narrow(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}
