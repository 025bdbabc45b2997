package memstore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/internal/vectest"
	"github.com/day1ai/day1/store"
)

// TestLargeBatchDedupe checks that a batch large enough to be searched for
// near-duplicates in parallel decides every fact exactly as writing the facts one at a
// time does: matches against earlier facts, against facts earlier in the same batch,
// and against a fact that the batch itself updates or supersedes first.
func TestLargeBatchDedupe(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const dims = 384
	rng := rand.New(rand.NewPCG(7, 11))
	random := func() []float32 { return vectest.Unit(rng, dims) }
	near := func(v []float32) []float32 { return nearVec(rng, v) }
	var existing []store.Record
	var embs [][]float32
	for i := range 300 {
		e := random()
		embs = append(embs, e)
		existing = append(existing, store.Fact{ID: fmt.Sprintf("old-%03d", i), Text: fmt.Sprintf("existing fact %d", i), Embedding: e})
	}
	var batch []store.Record
	for i := range 200 {
		f := store.Fact{ID: fmt.Sprintf("new-%03d", i), Text: fmt.Sprintf("new fact %d", i)}
		switch i % 5 {
		case 0: // a near-duplicate of an earlier fact
			f.Embedding = near(embs[i])
		case 1: // a near-duplicate of a fact earlier in the batch
			f.Embedding = near(batch[i-1].(store.Fact).Embedding)
		case 2: // an update of an earlier fact, whose near-duplicate follows
			f = store.Fact{ID: fmt.Sprintf("old-%03d", i), Text: fmt.Sprintf("rewritten fact %d", i), Embedding: random()}
		case 3: // a near-duplicate of the fact updated just before
			f.Embedding = near(embs[i-1])
		default:
			f.Embedding = random()
		}
		batch = append(batch, f)
	}

	type outcome struct {
		ID, Replaced string
		Outcome      store.Outcome
		Similarity   float32
	}
	run := func(batchSize int) ([]outcome, []string) {
		s := openInMemory(t)
		ctx := context.Background()
		opts := store.PutOptions{DedupeThreshold: 0.92}
		if _, err := s.Put(ctx, store.DefaultBranch, existing, opts); err != nil {
			t.Fatal(err)
		}
		var out []outcome
		for lo := 0; lo < len(batch); lo += batchSize {
			res, err := s.Put(ctx, store.DefaultBranch, batch[lo:min(lo+batchSize, len(batch))], opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				out = append(out, outcome{r.Record.RecordID(), r.Replaced, r.Outcome, float32(r.Similarity)})
			}
		}
		live, err := s.List(ctx, store.View{Branch: store.DefaultBranch}, store.ListQuery{Kind: store.KindFact, Filter: store.Filter{Status: store.FactActive}, Order: store.OrderID})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range live {
			ids = append(ids, r.RecordID())
		}
		return out, ids
	}
	oneByOne, liveOne := run(1)
	whole, liveWhole := run(len(batch))
	if diff := cmp.Diff(oneByOne, whole); diff != "" {
		t.Errorf("outcomes of one batch differ from one write at a time (-one +batch):\n%s", diff)
	}
	if diff := cmp.Diff(liveOne, liveWhole); diff != "" {
		t.Errorf("active facts differ (-one +batch):\n%s", diff)
	}
	// Two batches: the second searches its own facts in the band index the first
	// held and left emptied.
	halves, liveHalves := run(len(batch) / 2)
	if diff := cmp.Diff(oneByOne, halves); diff != "" {
		t.Errorf("outcomes of two batches differ from one write at a time (-one +batches):\n%s", diff)
	}
	if diff := cmp.Diff(liveOne, liveHalves); diff != "" {
		t.Errorf("active facts differ (-one +batches):\n%s", diff)
	}
	counts := map[store.Outcome]int{}
	for _, o := range whole {
		counts[o.Outcome]++
	}
	if counts[store.Superseded] < 60 || counts[store.Updated] != 40 {
		t.Errorf("outcomes %v: want at least 60 superseded and 40 updated, or the test no longer exercises the near-duplicate paths", counts)
	}
}

// TestDimensionsAfterABatchWithNothingWritten: a batch large enough to be matched ahead
// whose facts all repeat stored texts writes nothing, so it must not fix the length of
// embeddings; a later fact of another length is still found by vector search.
func TestDimensionsAfterABatchWithNothingWritten(t *testing.T) {
	ctx := context.Background()
	s := openInMemory(t)
	var plain, again []store.Record
	for i := range 200 {
		plain = append(plain, store.Fact{ID: fmt.Sprintf("p%d", i), Text: fmt.Sprintf("text %d", i)})
		e := make([]float32, 384)
		e[i%384] = 1
		again = append(again, store.Fact{ID: fmt.Sprintf("q%d", i), Text: fmt.Sprintf("text %d", i), Embedding: e})
	}
	if _, err := s.Put(ctx, store.DefaultBranch, plain, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Put(ctx, store.DefaultBranch, again, store.PutOptions{DedupeThreshold: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != store.Deduplicated {
		t.Fatalf("a repeated text was %s, want deduplicated", res[0].Outcome)
	}
	e := make([]float32, 768)
	e[0] = 1
	if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "z", Text: "other", Embedding: e}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, store.View{}, store.SearchQuery{Mode: store.Vector, Vector: e, Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].Record.RecordID() != "z" {
		t.Fatalf("vector search for the 768-dimension fact: %d hits, %v", len(hits), err)
	}
}

// TestLargeBatchFindsItsOwnNearDuplicates writes one batch of more new facts than the
// band index links in small buckets, whose last facts are near-duplicates of its
// first: the batch's own vectors are found while the store's band index is held for
// the workers, and join it when the batch ends.
func TestLargeBatchFindsItsOwnNearDuplicates(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const dims, fresh, repeats = 384, 6000, 400
	rng := rand.New(rand.NewPCG(31, 37))
	var recs []store.Record
	var embs [][]float32
	for i := range fresh {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		embs = append(embs, unitVec(v))
		recs = append(recs, store.Fact{ID: fmt.Sprintf("f%04d", i), Text: fmt.Sprintf("fact %d", i), Embedding: embs[i]})
	}
	for i := range repeats {
		w := make([]float32, dims)
		for j := range w {
			w[j] = embs[i*7][j] + 0.2*float32(rng.NormFloat64())/float32(math.Sqrt(dims))
		}
		recs = append(recs, store.Fact{ID: fmt.Sprintf("r%04d", i), Text: fmt.Sprintf("fact %d again", i), Embedding: unitVec(w)})
	}
	s := openInMemory(t)
	ctx := context.Background()
	res, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{DedupeThreshold: 0.92})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for i, r := range res[fresh:] {
		if want := fmt.Sprintf("f%04d", i*7); r.Outcome == store.Superseded && r.Replaced == want {
			found++
		}
	}
	for i, r := range res[:fresh] {
		if r.Outcome != store.Created {
			t.Fatalf("fact %d: %s, want created", i, r.Outcome)
		}
	}
	// At cosine 0.98 a band index finds a pair but for about 1 in 10⁵.
	if found < repeats-2 {
		t.Errorf("%d of %d near-duplicates of facts earlier in the batch found, want nearly all", found, repeats)
	}
	// The batch's vectors joined the store's band index: a repeat in a later batch
	// is found there.
	again, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "later", Text: "later", Embedding: embs[fresh-1]}}, store.PutOptions{DedupeThreshold: 0.92})
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Outcome != store.Superseded || again[0].Replaced != fmt.Sprintf("f%04d", fresh-1) {
		t.Errorf("a later fact equal in embedding to the batch's last: %s replacing %q, want superseded replacing f%04d", again[0].Outcome, again[0].Replaced, fresh-1)
	}
}

// nearVec returns a unit vector at cosine about 0.98 from v, a unit vector.
func nearVec(rng *rand.Rand, v []float32) []float32 {
	w := make([]float32, len(v))
	for i := range w {
		w[i] = v[i] + 0.2*float32(rng.NormFloat64())/float32(math.Sqrt(float64(len(v))))
	}
	return unitVec(w)
}

// unitVec scales v to length 1 in place and returns it.
func unitVec(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}

// TestGeneratedIDsDecideAsLookedUp writes one batch of new facts, some of them near
// duplicates and exact repeats of facts already stored, to two stores: with their ids
// named generated (PutOptions.GeneratedIDs), which lets Put skip looking them up, and
// without. Every outcome is the same, but that a generated id leaves no alias.
func TestGeneratedIDsDecideAsLookedUp(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const dims, stored, batch = 384, 300, 200
	rng := rand.New(rand.NewPCG(41, 43))
	var first []store.Record
	var embs [][]float32
	for i := range stored {
		embs = append(embs, vectest.Unit(rng, dims))
		first = append(first, store.Fact{ID: fmt.Sprintf("s%03d", i), Text: fmt.Sprintf("stored fact %d", i), Embedding: embs[i]})
	}
	var recs []store.Record
	generated := map[string]bool{}
	for i := range batch {
		id := fmt.Sprintf("g%03d", i)
		generated[id] = true
		f := store.Fact{ID: id, Text: fmt.Sprintf("new fact %d", i), Embedding: vectest.Unit(rng, dims)}
		switch i % 4 {
		case 1: // a near-duplicate of a stored fact
			f.Embedding = nearVec(rng, embs[i])
		case 2: // the text of a stored fact
			f.Text = fmt.Sprintf("Stored fact %d", i)
		}
		recs = append(recs, f)
	}
	ctx := context.Background()
	var outcomes [2][]store.PutResult
	for k, opts := range []store.PutOptions{{DedupeThreshold: 0.92}, {DedupeThreshold: 0.92, GeneratedIDs: generated}} {
		s := openInMemory(t)
		if _, err := s.Put(ctx, store.DefaultBranch, first, opts); err != nil {
			t.Fatal(err)
		}
		res, err := s.Put(ctx, store.DefaultBranch, recs, opts)
		if err != nil {
			t.Fatal(err)
		}
		outcomes[k] = res
	}
	kinds := map[store.Outcome]int{}
	for i := range recs {
		a, b := outcomes[0][i], outcomes[1][i]
		kinds[b.Outcome]++
		if a.Outcome != b.Outcome || a.Replaced != b.Replaced || a.Record.RecordID() != b.Record.RecordID() {
			t.Errorf("fact %d: %s (replacing %q) as %s; looked up: %s (replacing %q) as %s",
				i, b.Outcome, b.Replaced, b.Record.RecordID(), a.Outcome, a.Replaced, a.Record.RecordID())
		}
		if b.AliasOf != "" || (a.Outcome == store.Deduplicated) != (a.AliasOf != "") {
			t.Errorf("fact %d: alias %q generated, %q looked up; want none generated, one for each deduplicated caller's id", i, b.AliasOf, a.AliasOf)
		}
	}
	if kinds[store.Created] == 0 || kinds[store.Superseded] < batch/4-2 || kinds[store.Deduplicated] != batch/4 {
		t.Errorf("outcomes %v; want created facts, about %d superseded and %d deduplicated", kinds, batch/4, batch/4)
	}
}
