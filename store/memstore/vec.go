package memstore

import (
	"math"
	"math/bits"
	"slices"

	"github.com/day1ai/day1/internal/vecmath"
)

// packed is an embedding as the store keeps it. Records are stored without their
// embeddings; each version holds its embedding packed instead, in one of two forms,
// both lossless. The first element is the embedding's length, negated for the sparse
// form.
//   - Dense: the coordinates follow.
//   - Sparse: maskWords(dims) mask words follow, each an integer below 2¹⁶ held
//     exactly as a float32, with bit b of word k set when coordinate 16k+b is not
//     zero; then those coordinates, in order.
//
// Embeddings of short texts from a lexical embedder fill a third of their coordinates
// or less: the sparse form keeps them in well under half the memory. pack chooses the
// smaller form. A packed embedding points into the store's arena and never changes.
type packed []float32

// maskBits is the number of coordinates one mask word covers: two blocks of eight, as
// vecmath.Dot takes them, and few enough to be held exactly by a float32.
const maskBits = 16

// maskWords is the number of mask words of a sparse embedding of dims coordinates.
func maskWords(dims int) int { return (dims + maskBits - 1) / maskBits }

// dims returns the embedding's length, 0 for none.
func (p packed) dims() int {
	switch {
	case len(p) == 0:
		return 0
	case p[0] < 0:
		return int(-p[0])
	}
	return int(p[0])
}

// sparse reports whether p is in the sparse form.
func (p packed) sparse() bool { return len(p) > 0 && p[0] < 0 }

// parts returns the mask words (nil for the dense form) and the coordinates held. p
// must not be empty.
func (p packed) parts() (mask, vals []float32) {
	if p[0] >= 0 {
		return nil, p[1:]
	}
	mw := 1 + maskWords(int(-p[0]))
	return p[1:mw], p[mw:]
}

// unpack returns the embedding as a new slice; nil for none.
func (p packed) unpack() []float32 {
	if len(p) == 0 {
		return nil
	}
	return p.appendTo(make([]float32, 0, p.dims()))
}

// appendTo appends the embedding's coordinates to dst.
func (p packed) appendTo(dst []float32) []float32 {
	if len(p) == 0 {
		return dst
	}
	mask, vals := p.parts()
	if mask == nil {
		return append(dst, vals...)
	}
	n := len(dst)
	dst = slices.Grow(dst, p.dims())[:n+p.dims()]
	out := dst[n:]
	clear(out)
	j := 0
	for w, f := range mask {
		for m := uint32(f); m != 0; m &= m - 1 {
			out[w*maskBits+bits.TrailingZeros32(m)] = vals[j]
			j++
		}
	}
	return dst
}

// equal reports whether the embedding equals e coordinate by coordinate, as
// slices.Equal compares them.
func (p packed) equal(e []float32) bool {
	if p.dims() != len(e) {
		return false
	}
	c := p.coords()
	for _, x := range e {
		if c.next() != x {
			return false
		}
	}
	return true
}

// same reports whether p and o hold equal embeddings, as equal compares them.
func (p packed) same(o packed) bool {
	switch {
	case p.dims() != o.dims():
		return false
	case len(p) == 0 || &p[0] == &o[0]:
		return true
	}
	a, b := p.coords(), o.coords()
	for range p.dims() {
		if a.next() != b.next() {
			return false
		}
	}
	return true
}

// coords returns a reader of the coordinates of a packed embedding, in order.
func (p packed) coords() coordReader {
	if len(p) == 0 {
		return coordReader{}
	}
	mask, vals := p.parts()
	return coordReader{mask: mask, vals: vals}
}

// coordReader reads the coordinates of a packed embedding one at a time, without
// unpacking it.
type coordReader struct {
	mask, vals []float32
	i, j       int
}

// next returns the next coordinate.
func (c *coordReader) next() float32 {
	i := c.i
	c.i++
	if c.mask != nil && uint32(c.mask[i/maskBits])&(1<<(i%maskBits)) == 0 {
		return 0
	}
	x := c.vals[c.j]
	c.j++
	return x
}

// dot returns the dot product of q, a dense vector of the embedding's length, with
// the embedding. The sparse form adds the same products as the dense one, in another
// order: the two agree to the rounding of float32 sums, and one embedding, always
// packed in the same form, always gets the same score.
func (p packed) dot(q []float32) float32 {
	mask, vals := p.parts()
	if mask == nil {
		return vecmath.Dot(q, vals)
	}
	// Two sums, fed alternately, so that their additions overlap.
	var s0, s1 float32
	j := 0
	for w, f := range mask {
		base := w * maskBits
		for m := uint32(f); m != 0; {
			i0 := base + bits.TrailingZeros32(m)
			if m &= m - 1; m == 0 {
				s0 += q[i0] * vals[j]
				j++
				break
			}
			i1 := base + bits.TrailingZeros32(m)
			m &= m - 1
			v := vals[j : j+2 : j+2]
			s0 += q[i0] * v[0]
			s1 += q[i1] * v[1]
			j += 2
		}
	}
	return s0 + s1
}

// arena holds packed embeddings in large chunks. Embeddings live as long as the
// store, so packing them together spares the collector one object per record and
// keeps their size classes free for short-lived copies.
type arena struct {
	chunk []float32
}

// arenaFloats is the size of one chunk of the arena.
const arenaFloats = 64 << 10

// pack copies e into the arena in the smaller of the two forms; nil for an empty e.
func (a *arena) pack(e []float32) packed {
	if len(e) == 0 {
		return nil
	}
	nz := 0
	for _, x := range e {
		// Negative zeros are held, so that the embedding comes back bit for bit.
		if math.Float32bits(x) != 0 {
			nz++
		}
	}
	mw := maskWords(len(e))
	if nz+mw >= len(e) {
		p := a.alloc(1 + len(e))
		p[0] = float32(len(e))
		copy(p[1:], e)
		return p
	}
	p := a.alloc(1 + mw + nz)
	p[0] = -float32(len(e))
	mask, vals := p[1:1+mw], p[1+mw:]
	j := 0
	for i, x := range e {
		if math.Float32bits(x) != 0 {
			mask[i/maskBits] = float32(uint32(mask[i/maskBits]) | 1<<(i%maskBits))
			vals[j] = x
			j++
		}
	}
	return p
}

// alloc returns n zeroed floats of the arena, capped so that appending to them cannot
// reach the next embedding's.
func (a *arena) alloc(n int) packed {
	if cap(a.chunk)-len(a.chunk) < n {
		a.chunk = make([]float32, 0, max(arenaFloats, n))
	}
	i := len(a.chunk)
	a.chunk = a.chunk[:i+n]
	return packed(a.chunk[i : i+n : i+n])
}
