package memstore

import (
	"math"
	"math/bits"
	"slices"

	"github.com/day1ai/day1/internal/vecmath"
)

// packed is an embedding as the store keeps it. Records are stored without their
// embeddings; each version holds its embedding packed instead, in one of four forms,
// all lossless. The first element is a header: the embedding's length, plus halfFlag
// for the half forms, negated for the sparse forms.
//   - Dense: the coordinates follow.
//   - Sparse: maskWords(dims) mask words follow, each an integer below 2¹⁶ held
//     exactly as a float32, with bit b of word k set when coordinate 16k+b is not
//     zero; then those coordinates, in order.
//   - Dense half and sparse half: as dense and sparse, but the coordinates are held two
//     to an element. They are used when every coordinate is a bfloat16 value, a float32
//     whose low 16 bits are zero (the local embedders round their output so), and hold
//     such a coordinate by its high 16 bits: an element holds coordinate 2k in its
//     high half and coordinate 2k+1 in its low half, zero past the last one. The high
//     half gives the element its sign and exponent, so an element is as finite as the
//     coordinate it holds first: it never is a NaN.
//
// Embeddings of short texts from a lexical embedder fill a third of their coordinates
// or less: the sparse forms keep them in well under half the memory, the sparse half
// form in a quarter. pack chooses the smallest form. A packed embedding points into
// the store's arena and never changes.
type packed []float32

// maskBits is the number of coordinates one mask word covers: two blocks of eight, as
// vecmath.Dot takes them, and few enough to be held exactly by a float32.
const maskBits = 16

// halfFlag marks the half forms in the header: above every length an embedding may
// have (store.MaxEmbeddingDims), and low enough that the header stays an integer a
// float32 holds exactly.
const halfFlag = 1 << 14

// maskWords is the number of mask words of a sparse embedding of dims coordinates.
func maskWords(dims int) int { return (dims + maskBits - 1) / maskBits }

// header returns the header's magnitude: the length, plus halfFlag for a half form.
func (p packed) header() int {
	if p[0] < 0 {
		return int(-p[0])
	}
	return int(p[0])
}

// dims returns the embedding's length, 0 for none.
func (p packed) dims() int {
	if len(p) == 0 {
		return 0
	}
	return p.header() &^ halfFlag
}

// sparse reports whether p is in a sparse form.
func (p packed) sparse() bool { return len(p) > 0 && p[0] < 0 }

// half reports whether p is in a half form.
func (p packed) half() bool { return len(p) > 0 && p.header()&halfFlag != 0 }

// parts returns the mask words (nil for a dense form) and the elements that hold the
// coordinates: one per coordinate, or two coordinates per element in a half form. p
// must not be empty.
func (p packed) parts() (mask, vals []float32) {
	if p[0] >= 0 {
		return nil, p[1:]
	}
	mw := 1 + maskWords(p.dims())
	return p[1:mw], p[mw:]
}

// hi and lo return the coordinates an element of a half form holds first and second.
func hi(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ 0xffff) }
func lo(x float32) float32 { return math.Float32frombits(math.Float32bits(x) << 16) }

// pair returns the element of a half form holding a and then b.
func pair(a, b float32) float32 {
	return math.Float32frombits(math.Float32bits(a) | math.Float32bits(b)>>16)
}

// coord returns the jth coordinate held in vals, of a half form or not.
func coord(vals []float32, half bool, j int) float32 {
	switch {
	case !half:
		return vals[j]
	case j%2 == 0:
		return hi(vals[j/2])
	}
	return lo(vals[j/2])
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
	half := p.half()
	if mask == nil && !half {
		return append(dst, vals...)
	}
	n, dims := len(dst), p.dims()
	dst = slices.Grow(dst, dims)[:n+dims]
	out := dst[n:]
	if mask == nil {
		for i := range out {
			out[i] = coord(vals, true, i)
		}
		return dst
	}
	clear(out)
	j := 0
	for w, f := range mask {
		for m := uint32(f); m != 0; m &= m - 1 {
			out[w*maskBits+bits.TrailingZeros32(m)] = coord(vals, half, j)
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
	return coordReader{mask: mask, vals: vals, half: p.half()}
}

// coordReader reads the coordinates of a packed embedding one at a time, without
// unpacking it.
type coordReader struct {
	mask, vals []float32
	half       bool
	i, j       int
}

// next returns the next coordinate.
func (c *coordReader) next() float32 {
	i := c.i
	c.i++
	if c.mask != nil && uint32(c.mask[i/maskBits])&(1<<(i%maskBits)) == 0 {
		return 0
	}
	x := coord(c.vals, c.half, c.j)
	c.j++
	return x
}

// dot returns the dot product of q, a dense vector of the embedding's length, with
// the embedding. Every form adds the same products, in orders of their own: they
// agree to the rounding of float32 sums, and one embedding, always packed in the same
// form, always gets the same score.
func (p packed) dot(q []float32) float32 {
	mask, vals := p.parts()
	switch half := p.half(); {
	case mask == nil && !half:
		return vecmath.Dot(q, vals)
	case mask == nil:
		return dotDenseHalf(q, vals)
	case half:
		return dotSparseHalf(q, mask, vals)
	}
	return dotSparse(q, mask, vals)
}

// dotDenseHalf is dot for the dense half form. Two sums, fed alternately, so that
// their additions overlap.
func dotDenseHalf(q, vals []float32) float32 {
	var s0, s1 float32
	n := len(q) / 2 // the elements holding two coordinates
	for k, x := range vals[:n] {
		v := q[2*k : 2*k+2 : 2*k+2]
		s0 += v[0] * hi(x)
		s1 += v[1] * lo(x)
	}
	if len(q)%2 == 1 {
		s0 += q[len(q)-1] * hi(vals[n])
	}
	return s0 + s1
}

// dotSparseHalf is dot for the sparse half form. The coordinates sit two to an
// element, the first in one sum and the second in the other; a mask word may hold an
// odd number of them, so the mask is read as one run of bits.
func dotSparseHalf(q, mask, vals []float32) float32 {
	var s0, s1 float32
	w, base, m := 0, 0, uint32(0)
	for _, x := range vals {
		for m == 0 {
			base, m = w*maskBits, uint32(mask[w])
			w++
		}
		s0 += q[base+bits.TrailingZeros32(m)] * hi(x)
		m &= m - 1
		for m == 0 {
			if w == len(mask) {
				return s0 + s1 // an odd number of coordinates: x held the last
			}
			base, m = w*maskBits, uint32(mask[w])
			w++
		}
		s1 += q[base+bits.TrailingZeros32(m)] * lo(x)
		m &= m - 1
	}
	return s0 + s1
}

// dotSparse is dot for the sparse form. Two sums, fed alternately, so that their
// additions overlap.
func dotSparse(q, mask, vals []float32) float32 {
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

// pack copies e into the arena in the smallest of the four forms; nil for an empty e.
func (a *arena) pack(e []float32) packed {
	if len(e) == 0 {
		return nil
	}
	n, half := packedLen(e)
	p := a.alloc(n)
	packInto(p, e, half)
	return p
}

// copyOf copies a packed embedding into the arena.
func (a *arena) copyOf(q packed) packed {
	if len(q) == 0 {
		return nil
	}
	p := a.alloc(len(q))
	copy(p, q)
	return p
}

// packedLen returns the length in floats of the smallest form of a non-empty e, and
// whether that form holds halves.
func packedLen(e []float32) (n int, half bool) {
	// Without branches: the coordinates held, and whether any has low bits.
	nz := 0
	var low uint32
	for _, x := range e {
		nz += int(held(x))
		low |= math.Float32bits(x) & 0xffff
	}
	half = low == 0
	mw := maskWords(len(e))
	dense, sparse := len(e), mw+nz
	if half {
		dense, sparse = (len(e)+1)/2, mw+(nz+1)/2
	}
	if sparse >= dense {
		return 1 + dense, half
	}
	return 1 + sparse, half
}

// held is 1 when a packed form holds coordinate x, any but a positive zero (negative
// zeros too, so that the embedding comes back bit for bit), 0 otherwise; without a
// branch.
func held(x float32) uint32 {
	b := math.Float32bits(x)
	return (b | -b) >> 31
}

// packInto writes the form of e that packedLen gave, n floats and half, into p, of
// length n.
func packInto(p packed, e []float32, half bool) {
	head := float32(len(e))
	dense := len(e)
	if half {
		head += halfFlag
		dense = (len(e) + 1) / 2
	}
	if len(p) == 1+dense {
		p[0] = head
		if !half {
			copy(p[1:], e)
			return
		}
		for k := range p[1:] {
			p[1+k] = pair(e[2*k], at(e, 2*k+1))
		}
		return
	}
	p[0] = -head
	mw := maskWords(len(e))
	mask, vals := p[1:1+mw], p[1+mw:]
	// The zeros fall where the processor cannot guess: a branch on each coordinate
	// would be mispredicted every few. So each block's mask is made first, without
	// branches, and the loop that copies runs over its bits set.
	j := 0
	var first float32 // in a half form, a coordinate awaiting its pair
	for w := range mask {
		var m uint32
		block := e[w*maskBits : min(len(e), (w+1)*maskBits)]
		for i, x := range block {
			m |= held(x) << (uint(i) & (maskBits - 1))
		}
		mask[w] = float32(m)
		for ; m != 0; m &= m - 1 {
			x := block[bits.TrailingZeros32(m)]
			switch {
			case !half:
				vals[j] = x
			case j%2 == 0:
				first = x
			default:
				vals[j/2] = pair(first, x)
			}
			j++
		}
	}
	if half && j%2 == 1 {
		vals[j/2] = pair(first, 0)
	}
}

// at returns e[i], or 0 past its end.
func at(e []float32, i int) float32 {
	if i < len(e) {
		return e[i]
	}
	return 0
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
