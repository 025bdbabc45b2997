package matrixone_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/internal/vectest"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
	"github.com/day1ai/day1/store/memstore"
)

// TestNearDuplicatesAsEmbedded writes batches of facts in clusters, whose codes put
// many facts of a cluster within the bound while their cosine similarities spread on
// both sides of the threshold, with updates of stored facts and near-duplicates within
// a batch, to MatrixOne and to the embedded store, and checks that every write has the
// same outcome on both: the candidates the codes give and the rows read of them do not
// change what is decided.
func TestNearDuplicatesAsEmbedded(t *testing.T) {
	t.Parallel()
	const dims = 64
	mo := openWith(t, testDatabase(t), func(o *matrixone.Options) { o.Dimensions = dims })
	defer mo.Close()
	mem, err := memstore.New(memstore.Options{Dimensions: dims})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	r := rand.New(rand.NewPCG(11, 12))
	centers := make([][]float32, 6)
	for i := range centers {
		centers[i] = vectest.Unit(r, dims)
	}
	// A member of a cluster: its center plus noise of norm 0.15 to 0.5, so that two
	// members' cosine similarity is spread around the threshold.
	member := func() []float32 {
		c := centers[r.IntN(len(centers))]
		noise, s := vectest.Unit(r, dims), 0.15+0.35*r.Float64()
		v := make([]float32, dims)
		var n float64
		for i := range v {
			v[i] = c[i] + float32(s)*noise[i]
			n += float64(v[i]) * float64(v[i])
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(n))
		}
		return v
	}
	opts := store.PutOptions{DedupeThreshold: 0.92}
	type outcome struct {
		ID, Outcome, Replaced string
	}
	var written []string
	superseded, created := 0, 0
	for b := range 6 {
		var batch []store.Record
		for j := range 60 {
			f := store.Fact{ID: fmt.Sprintf("f%d-%02d", b, j), Text: fmt.Sprintf("note %d of batch %d", j, b), Embedding: member()}
			if j%10 == 0 && len(written) > 0 {
				// An update of a stored fact: the batch writes an id that may be a
				// candidate of its other facts.
				f.ID = written[r.IntN(len(written))]
				f.Text += " (revised)"
			}
			batch = append(batch, f)
		}
		batch = firstOfEachID(batch)
		var got, want []outcome
		for _, side := range []struct {
			s   store.Store
			out *[]outcome
		}{{mo, &got}, {mem, &want}} {
			res, err := side.s.Put(t.Context(), "main", batch, opts)
			if err != nil {
				t.Fatalf("batch %d: %v", b, err)
			}
			for _, p := range res {
				*side.out = append(*side.out, outcome{p.Record.RecordID(), string(p.Outcome), p.Replaced})
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("batch %d: MatrixOne's outcomes differ from the embedded store's (-embedded +matrixone):\n%s", b, d)
		}
		for _, o := range got {
			written = append(written, o.ID)
			switch store.Outcome(o.Outcome) {
			case store.Superseded:
				superseded++
			case store.Created:
				created++
			}
		}
	}
	// The data must exercise both decisions, or the comparison says little.
	if superseded < 20 || created < 20 {
		t.Errorf("%d facts superseded and %d created: want at least 20 of each", superseded, created)
	}
}

// firstOfEachID keeps the first record of each id.
func firstOfEachID(recs []store.Record) []store.Record {
	seen := map[string]bool{}
	out := recs[:0]
	for _, r := range recs {
		if !seen[r.RecordID()] {
			seen[r.RecordID()] = true
			out = append(out, r)
		}
	}
	return out
}
