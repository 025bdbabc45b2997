package matrixone

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/internal/vecmath"
)

func randomUnit(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var n float64
	for i := range v {
		v[i] = float32(r.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// near returns a unit vector at cosine about cos from v.
func near(r *rand.Rand, v []float32, cos float64) []float32 {
	noise := randomUnit(r, len(v))
	var d float64
	for i := range v {
		d += float64(v[i]) * float64(noise[i])
	}
	// noise orthogonal to v, then mix.
	out := make([]float32, len(v))
	var n float64
	for i := range v {
		o := float64(noise[i]) - d*float64(v[i])
		out[i] = float32(o)
		n += o * o
	}
	s := math.Sqrt(1 - cos*cos)
	for i := range out {
		out[i] = float32(cos*float64(v[i]) + s*float64(out[i])/math.Sqrt(n))
	}
	return out
}

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

// TestDupCodesStable pins the stored form of a few codes: rows keep the codes they
// were written with, so the rotation, the bit order and the encoding may change only
// with dupCodeVersion.
func TestDupCodesStable(t *testing.T) {
	t.Parallel()
	got := map[int]string{}
	for _, dims := range []int{3, 100, 1000} {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(math.Sin(float64(i + 1)))
		}
		c := newDupCoder(dims)
		got[dims] = c.column(v)
	}
	want := map[int]string{
		3:    "1:0000000000000002",
		100:  "1:f81ccc8e92108ea134385a1292d81ab2",
		1000: "1:aa2f6dc211b4d6a3297ae453262190bda7980f57a9c4c645fcb8dbb0efd912a8f83dc4f1dbdab2348fbe35c650723e366758ca4e7a486a143cefce0c3c081e63",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stored codes changed without a new dupCodeVersion (-want +got):\n%s", d)
	}
}

func TestDupCodes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, dims := range []int{8, 64, 384, 1536} {
		c := newDupCoder(dims)
		wantBits := min(maxDupBits, 1<<int(math.Ceil(math.Log2(float64(dims)))))
		if c.bits != wantBits {
			t.Errorf("dims %d: %d bits, want %d", dims, c.bits, wantBits)
		}
		v := randomUnit(r, dims)
		code := c.code(v)
		// Codes are stored: the same vector always gives the same code, in every coder.
		if d := cmp.Diff(code, newDupCoder(dims).code(v)); d != "" {
			t.Errorf("dims %d: codes differ between coders: %s", dims, d)
		}
		got, ok := c.decode(c.encode(code))
		if !ok || !cmp.Equal(got, code) {
			t.Errorf("dims %d: decode(encode) = %v, %v", dims, got, ok)
		}
		for _, bad := range []string{"", "0:" + c.encode(code)[2:], dupCodeVersion + "zz", c.encode(code)[:len(c.encode(code))-2]} {
			if _, ok := c.decode(bad); ok {
				t.Errorf("dims %d: decode(%q) accepted", dims, bad)
			}
		}
		if c.column(nil) != "" {
			t.Errorf("no embedding must give no code")
		}
	}
	// Near-duplicates fall within the bound; unrelated vectors mostly do not.
	c := newDupCoder(384)
	bound := c.bound(0.92)
	missed, passed := 0, 0
	for range 500 {
		v := randomUnit(r, 384)
		w := near(r, v, 0.92+0.07*r.Float64())
		if cosine(v, w) < 0.92 {
			continue
		}
		if vecmath.Hamming(c.code(v), c.code(w)) > bound {
			missed++
		}
		if vecmath.Hamming(c.code(v), c.code(randomUnit(r, 384))) <= bound {
			passed++
		}
	}
	if missed > 0 {
		t.Errorf("%d near-duplicates fell outside the bound %d", missed, bound)
	}
	if passed > 5 {
		t.Errorf("%d of 500 unrelated vectors fell within the bound %d", passed, bound)
	}
	if b := newDupCoder(8).bound(0.92); b < 8 {
		t.Errorf("8-bit codes must not exclude anything at 0.92: bound %d", b)
	}
}

func TestCodeIndex(t *testing.T) {
	t.Parallel()
	ix := &codeIndex{slot: map[string]int{}}
	ix.set("a", 1, []uint64{0b1111}, true, 1)
	ix.set("b", 2, []uint64{0b0000}, true, 1)
	ix.set("c", 3, nil, false, 1)
	ix.remove("b")
	ix.set("d", 4, []uint64{0b1110}, true, 1)
	ix.set("a", 5, []uint64{0b0001}, true, 1) // a new version of a
	ix.set("d", 6, []uint64{0b1110}, true, 1) // a new version of d, with the same code
	got := ix.candidates([]uint64{0b1111}, 1, 1)
	if d := cmp.Diff([]string{"c", "d"}, got); d != "" {
		t.Errorf("candidates (-want +got):\n%s", d)
	}
	if ix.dead != 2 || len(ix.slot) != 3 {
		t.Errorf("dead slots %d, live %d; want 2 and 3", ix.dead, len(ix.slot))
	}
	vids := func() map[string]int64 {
		out := map[string]int64{}
		for _, id := range []string{"a", "b", "c", "d"} {
			if v, ok := ix.vid(id); ok {
				out[id] = v
			}
		}
		return out
	}
	want := map[string]int64{"a": 5, "c": 3, "d": 6}
	if d := cmp.Diff(want, vids()); d != "" {
		t.Errorf("vids (-want +got):\n%s", d)
	}
	// A compaction renumbers the slots: each fact keeps its vid.
	for i := range minCompact {
		ix.set("x", int64(100+i), []uint64{uint64(i)}, true, 1)
	}
	ix.remove("x")
	if len(ix.ids) >= minCompact {
		t.Fatalf("%d slots after %d versions of one fact: want a compaction", len(ix.ids), minCompact)
	}
	if d := cmp.Diff(want, vids()); d != "" {
		t.Errorf("vids after a compaction (-want +got):\n%s", d)
	}
}

// TestCodeBands checks that the band index finds what a scan of every code finds:
// every near-duplicate, and candidates within the bound only, while it meets a small
// share of the facts; and that it stays right as facts change, go and the index
// compacts.
func TestCodeBands(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	c := newDupCoder(384)
	bound := c.bound(0.92)
	banded := &codeIndex{slot: map[string]int{}}
	scanned := &codeIndex{slot: map[string]int{}}
	const n = 20000
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = randomUnit(r, 384)
		id := fmt.Sprint("f", i)
		code := c.code(vecs[i])
		banded.set(id, int64(i), code, true, c.words)
		scanned.set(id, int64(i), code, true, c.words)
	}
	// Facts that go, and facts that change, past the point where the index compacts.
	for i := 0; i < n; i += 2 {
		id := fmt.Sprint("f", i)
		if i%4 == 0 {
			banded.remove(id)
			scanned.remove(id)
			continue
		}
		vecs[i] = randomUnit(r, 384)
		code := c.code(vecs[i])
		banded.set(id, int64(i), code, true, c.words)
		scanned.set(id, int64(i), code, true, c.words)
	}
	if banded.bands == nil || banded.dead >= len(banded.ids)/2+1 {
		t.Fatalf("bands %v, dead %d of %d slots: want bands and a compacted index", banded.bands != nil, banded.dead, len(banded.ids))
	}
	scanned.bands = nil // the reference scans
	met := 0
	for q := 0; q < 300; q++ {
		i := 1 + 2*r.IntN(n/2) // a live fact
		v := near(r, vecs[i], 0.93)
		code := c.code(v)
		got := banded.candidates(code, bound, c.words)
		want := scanned.candidates(code, bound, c.words)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Contains(got, fmt.Sprint("f", i)) {
			t.Errorf("query %d: the near-duplicate f%d is not a candidate", q, i)
		}
		for _, id := range got {
			if !slices.Contains(want, id) {
				t.Errorf("query %d: candidate %s is beyond the bound", q, id)
			}
		}
		banded.bands.each(code, func(int) { met++ })
	}
	if per := met / 300; per > n/20 {
		t.Errorf("the bands met %d facts per query of %d: want a small share", per, len(banded.slot))
	}
}
