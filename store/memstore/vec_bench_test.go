package memstore

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/day1ai/day1/internal/vecmath"
)

// packedForms returns an embedding of 384 coordinates for each packed form, and the
// form's name.
func packedForms(rng *rand.Rand) (names []string, embs [][]float32) {
	var a arena
	for _, fill := range []float64{0.34, 1} {
		for _, half := range []bool{false, true} {
			e := randomVec(rng, 384, fill)
			if half {
				for i, x := range e {
					e[i] = bfloat16(x)
				}
			}
			p := a.pack(e)
			name := map[bool]string{true: "sparse", false: "dense"}[p.sparse()]
			if p.half() {
				name += "-half"
			}
			names, embs = append(names, name), append(embs, e)
		}
	}
	return names, embs
}

func BenchmarkPackedDot(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var a arena
	q := randomVec(rng, 384, 1)
	names, embs := packedForms(rng)
	for i, e := range embs {
		p := a.pack(e)
		b.Run(names[i], func(b *testing.B) {
			var s float32
			for b.Loop() {
				s += p.dot(q)
			}
			_ = s
		})
	}
	e := randomVec(rng, 384, 1)
	b.Run("vecmath.Dot", func(b *testing.B) {
		var s float32
		for b.Loop() {
			s += vecmath.Dot(q, e)
		}
		_ = s
	})
}

func BenchmarkPack(b *testing.B) {
	names, embs := packedForms(rand.New(rand.NewPCG(1, 2)))
	for i, e := range embs {
		// Rotations of the embedding, of the same form: packing one vector again and
		// again, the processor would learn where its zeros are.
		var set [][]float32
		for k := range 256 {
			k %= len(e)
			set = append(set, append(slices.Clone(e[k:]), e[:k]...))
		}
		b.Run(names[i], func(b *testing.B) {
			var a arena
			k := 0
			for b.Loop() {
				if len(a.chunk) > arenaFloats/2 {
					a.chunk = a.chunk[:0] // the same memory again: packing, not faulting
				}
				a.pack(set[k%len(set)])
				k++
			}
		})
	}
}
