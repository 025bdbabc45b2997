package matrixone

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/internal/simhash"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/internal/vectest"
)

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
		v := vectest.Unit(r, dims)
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
		v := vectest.Unit(r, 384)
		w := vectest.AtCosine(r, v, 0.92+0.07*r.Float64())
		if vectest.Cosine(v, w) < 0.92 {
			continue
		}
		if vecmath.Hamming(c.code(v), c.code(w)) > bound {
			missed++
		}
		if vecmath.Hamming(c.code(v), c.code(vectest.Unit(r, 384))) <= bound {
			passed++
		}
	}
	if missed > 0 {
		t.Errorf("%d near-duplicates fell outside the bound %d", missed, bound)
	}
	if passed > 5 {
		t.Errorf("%d of 500 unrelated vectors fell within the bound %d", passed, bound)
	}
	// Short codes: a pair at the threshold differs in more bits than the bound with a
	// negligible probability, by the binomial law of the 8 bits.
	p := math.Acos(0.92) / math.Pi
	b := newDupCoder(8).bound(0.92)
	tail, term := 0.0, math.Pow(1-p, 8) // P(0 bits differ)
	for k := 0; k <= 8; k++ {
		if k > b {
			tail += term
		}
		term *= float64(8-k) / float64(k+1) * p / (1 - p)
	}
	if tail > 1e-4 {
		t.Errorf("8-bit codes at 0.92: bound %d leaves out pairs at the threshold with probability %.2g, want under 1e-4", b, tail)
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
	got := ix.candidates([]uint64{0b1111}, 0.92, 1, 1)
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

// TestCodeBands checks that the band index finds what a scan of every code finds: the
// near-duplicates, but for the small share the bands are designed to miss
// (simhash.Bands), and candidates within the bound only, while it stays right as facts
// change, go and the index compacts.
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
		vecs[i] = vectest.Unit(r, 384)
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
		vecs[i] = vectest.Unit(r, 384)
		code := c.code(vecs[i])
		banded.set(id, int64(i), code, true, c.words)
		scanned.set(id, int64(i), code, true, c.words)
	}
	if banded.bands == nil || banded.dead >= len(banded.ids)/2+1 {
		t.Fatalf("bands %v, dead %d of %d slots: want bands and a compacted index", banded.bands != nil, banded.dead, len(banded.ids))
	}
	scanned.bands = nil // the reference scans
	const queries = 1000
	found, met := 0, 0
	for q := range queries {
		i := 1 + 2*r.IntN(n/2) // a live fact
		code := c.code(vectest.AtCosine(r, vecs[i], 0.93))
		got := banded.candidates(code, 0.93, bound, c.words)
		want := scanned.candidates(code, 0.93, bound, c.words)
		if slices.Contains(got, fmt.Sprint("f", i)) {
			found++
		}
		for _, id := range got {
			if !slices.Contains(want, id) {
				t.Errorf("query %d: candidate %s is beyond the bound", q, id)
			}
		}
		slots, _ := banded.bands.AppendCandidates(nil, banded.codes, code, 0, simhash.TagBound(0.93, banded.bands.TagBits()))
		met += len(slots)
	}
	if rate := float64(found) / queries; rate < 0.97 {
		t.Errorf("the bands found %.1f%% of near-duplicates at cosine 0.93, want at least 97%%", 100*rate)
	}
	if per := met / queries; per > n/100 {
		t.Errorf("the bands met %d facts per query of %d: want a small share", per, len(banded.slot))
	}
}
