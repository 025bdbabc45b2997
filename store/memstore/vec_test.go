package memstore

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
	"github.com/google/go-cmp/cmp"
)

// randomVec returns a vector of dims coordinates of which about fill are not zero,
// with a negative zero among the zeros now and then.
func randomVec(rng *rand.Rand, dims int, fill float64) []float32 {
	v := make([]float32, dims)
	for i := range v {
		switch x := rng.Float64(); {
		case x < fill:
			v[i] = float32(rng.NormFloat64())
		case x < fill+0.01:
			v[i] = float32(math.Copysign(0, -1))
		}
	}
	return v
}

func TestPackedRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var a arena
	for _, dims := range []int{1, 2, 3, 8, 15, 16, 17, 31, 100, 384, 1536} {
		for _, fill := range []float64{0, 0.05, 0.35, 0.9, 1} {
			for _, half := range []bool{false, true} {
				e := randomVec(rng, dims, fill)
				if half {
					for i, x := range e {
						e[i] = bfloat16(x)
					}
				}
				testPacked(t, &a, rng, e, fill)
			}
		}
	}
	var none packed
	if none.dims() != 0 || none.unpack() != nil || !none.equal(nil) || !none.same(nil) || none.same(a.pack([]float32{1})) {
		t.Error("the empty packed embedding is not empty")
	}
}

// bfloat16 returns x with its low 16 bits cleared: a coordinate the half forms hold.
func bfloat16(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ 0xffff) }

// testPacked checks the packing of e.
func testPacked(t *testing.T, a *arena, rng *rand.Rand, e []float32, fill float64) {
	t.Helper()
	dims := len(e)
	p := a.pack(e)
	if p.dims() != dims {
		t.Fatalf("dims %d fill %.2f: dims() = %d", dims, fill, p.dims())
	}
	nz, half := 0, true
	for _, x := range e {
		if math.Float32bits(x) != 0 {
			nz++
		}
		if bfloat16(x) != x {
			half = false
		}
	}
	// The sizes of the forms, in elements after the header.
	dense, sparse := dims, maskWords(dims)+nz
	if half {
		dense, sparse = (dims+1)/2, maskWords(dims)+(nz+1)/2
	}
	if want := sparse < dense; p.sparse() != want {
		t.Errorf("dims %d, %d not zero, half %v: sparse = %v, want %v", dims, nz, half, p.sparse(), want)
	}
	if p.half() != half {
		t.Errorf("dims %d, %d not zero: half = %v, want %v", dims, nz, p.half(), half)
	}
	if want := 1 + min(dense, sparse); len(p) != want {
		t.Errorf("dims %d, %d not zero, half %v: %d elements, want %d", dims, nz, half, len(p), want)
	}
	got := p.unpack()
	for i := range e {
		if math.Float32bits(got[i]) != math.Float32bits(e[i]) {
			t.Fatalf("dims %d fill %.2f: coordinate %d = %v, want %v bit for bit", dims, fill, i, got[i], e[i])
		}
	}
	if !p.equal(e) {
		t.Errorf("dims %d fill %.2f: equal(its own embedding) = false", dims, fill)
	}
	if dims > 1 {
		other := slices.Clone(e)
		other[dims/2] += 1
		if p.equal(other) || p.same(a.pack(other)) {
			t.Errorf("dims %d fill %.2f: a changed coordinate is equal", dims, fill)
		}
	}
	if p.equal(e[:dims-1]) {
		t.Errorf("dims %d: a shorter vector is equal", dims)
	}
	if !p.same(a.pack(e)) {
		t.Errorf("dims %d fill %.2f: two packings of one embedding differ", dims, fill)
	}
	// Zeros of the other sign are equal, as slices.Equal has them, though the
	// sparse form holds a negative zero and leaves a positive one out.
	flipped := slices.Clone(e)
	for i, x := range flipped {
		if x == 0 {
			flipped[i] = -x
		}
	}
	if !p.same(a.pack(flipped)) || !p.equal(flipped) || !a.pack(flipped).same(p) {
		t.Errorf("dims %d fill %.2f: zeros of the other sign are not equal", dims, fill)
	}
	buf := make([]float32, 0, dims)
	if allocs := testing.AllocsPerRun(10, func() { buf = p.appendTo(buf[:0]) }); allocs != 0 {
		t.Errorf("dims %d fill %.2f: appendTo into room enough allocates %v times", dims, fill, allocs)
	}
	packedFlipped := a.pack(flipped)
	if allocs := testing.AllocsPerRun(10, func() { p.same(packedFlipped) }); allocs != 0 {
		t.Errorf("dims %d fill %.2f: same allocates %v times", dims, fill, allocs)
	}
	q := randomVec(rng, dims, 1)
	if want, got := vecmath.Dot(q, e), p.dot(q); math.Abs(float64(want-got)) > 1e-5*(1+math.Abs(float64(want))) {
		t.Errorf("dims %d fill %.2f: dot = %v, vecmath.Dot = %v", dims, fill, got, want)
	}
}

// TestEmbeddingsComeBack checks that records keep their embeddings through every
// path that reads them out of a store that holds them packed: get, list, search,
// TestLargeBatchEmbeddingsComeBack checks that a batch large enough to be packed in
// parallel ahead of its writes (prepareAll) stores every embedding bit for bit, in
// each of the four packed forms, negative zeros included, for facts and observations.
func TestLargeBatchEmbeddingsComeBack(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	ctx := context.Background()
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 4 * minPrepareAll
	halve := func(v []float32) []float32 {
		for i, x := range v {
			v[i] = math.Float32frombits(math.Float32bits(x) &^ 0xffff)
		}
		return v
	}
	var recs []store.Record
	want := map[store.Ref][]float32{}
	for i := range n {
		var e []float32
		switch i % 4 {
		case 0:
			e = randomVec(rng, 96, 1)
		case 1:
			e = halve(randomVec(rng, 96, 1))
		case 2:
			e = randomVec(rng, 96, 0.1)
		default:
			e = halve(randomVec(rng, 96, 0.1))
		}
		var r store.Record = store.Fact{ID: fmt.Sprintf("f%d", i), Text: fmt.Sprintf("fact number %d", i), Embedding: e}
		if i%5 == 0 {
			r = store.Observation{ID: fmt.Sprintf("o%d", i), Summary: fmt.Sprintf("seen %d", i), Type: store.ObsDiscovery, Embedding: e}
		}
		recs = append(recs, r)
		want[store.RefOf(r)] = slices.Clone(e)
	}
	if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{DedupeThreshold: 0.99}); err != nil {
		t.Fatal(err)
	}
	for ref, w := range want {
		r, err := s.Get(ctx, store.View{Branch: store.DefaultBranch}, ref)
		if err != nil {
			t.Fatal(err)
		}
		got := store.EmbeddingOf(r)
		if len(got) != len(w) {
			t.Fatalf("%s: %d coordinates, want %d", ref, len(got), len(w))
		}
		for k := range w {
			if math.Float32bits(got[k]) != math.Float32bits(w[k]) {
				t.Fatalf("%s: coordinate %d is %v, want %v", ref, k, got[k], w[k])
			}
		}
	}
}

// dedupe, supersede, diff, merge and the log.
func TestEmbeddingsComeBack(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	sparse := randomVec(rng, 64, 0.2)
	dense := randomVec(rng, 64, 1)
	near := slices.Clone(dense)
	near[0] += 0.01
	facts := []store.Record{
		store.Fact{ID: "sparse", Text: "a sparse one", Embedding: sparse},
		store.Fact{ID: "dense", Text: "a dense one", Embedding: dense},
		store.Observation{ID: "obs", Summary: "seen", Type: store.ObsDiscovery, Embedding: sparse},
	}
	if _, err := s.Put(ctx, store.DefaultBranch, facts, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{"sparse": sparse, "dense": dense, "obs": sparse}
	check := func(where string, r store.Record) {
		t.Helper()
		w, ok := want[r.RecordID()]
		if !ok {
			return
		}
		if got := store.EmbeddingOf(r); !slices.Equal(got, w) {
			t.Errorf("%s: %s has embedding %v..., want %v...", where, r.RecordID(), head(got), head(w))
		}
	}
	main := store.View{Branch: store.DefaultBranch}
	for id := range want {
		kind := store.KindFact
		if id == "obs" {
			kind = store.KindObservation
		}
		r, err := s.Get(ctx, main, store.Ref{Kind: kind, ID: id})
		if err != nil {
			t.Fatal(err)
		}
		check("get", r)
	}
	list, err := s.List(ctx, main, store.ListQuery{Kind: store.KindFact})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		check("list", r)
	}
	hits, err := s.Search(ctx, main, store.SearchQuery{Mode: store.Vector, Vector: dense, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Record.RecordID() != "dense" || math.Abs(hits[0].Score-1) > 1e-6 {
		t.Fatalf("vector search for the dense embedding: %+v", hits)
	}
	for _, h := range hits {
		check("search", h.Record)
	}

	// The same text again comes back deduplicated with the stored embedding; a
	// near-duplicate supersedes the dense fact, whose superseded version keeps it.
	res, err := s.Put(ctx, store.DefaultBranch, []store.Record{
		store.Fact{ID: "again", Text: "A sparse one", Embedding: sparse},
	}, store.PutOptions{DedupeThreshold: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != store.Deduplicated {
		t.Fatalf("same text: outcome %v", res[0].Outcome)
	}
	check("dedupe result", res[0].Record)
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	res, err = s.Put(ctx, "b", []store.Record{
		store.Fact{ID: "near", Text: "a dense one, mended", Embedding: near},
	}, store.PutOptions{DedupeThreshold: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != store.Superseded || res[0].Replaced != "dense" {
		t.Fatalf("near-duplicate: outcome %v replacing %q", res[0].Outcome, res[0].Replaced)
	}
	want["near"] = near
	// The superseded copy of the dense fact on b shares the packed embedding and the
	// vector slot of main's version instead of holding one of its own.
	k := key{store.KindFact, "dense"}
	was, onMain := slices.Collect(s.branches["b"].own.all(k)), slices.Collect(s.branches[store.DefaultBranch].own.all(k))
	if len(was) != 1 || len(onMain) != 1 {
		t.Fatalf("versions of the dense fact: %d on b, %d on main; want 1 and 1", len(was), len(onMain))
	}
	if &was[0].emb[0] != &onMain[0].emb[0] || was[0].vi != onMain[0].vi {
		t.Errorf("the superseded copy holds embedding slot %d of its own, not main's %d", was[0].vi, onMain[0].vi)
	}
	d, err := s.Diff(ctx, "b", store.DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.SourceChanges) != 2 {
		t.Fatalf("diff: %d source changes, want the superseded fact and its successor", len(d.SourceChanges))
	}
	for _, c := range d.SourceChanges {
		check("diff after", c.After)
		if c.Before != nil {
			check("diff before", c.Before)
		}
	}
	// A lean plan, whose records come without embeddings: the merged versions share
	// the source's, and the log must hold them.
	d, err = s.DiffLean(ctx, "b", store.DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}
	plan := store.MergePlan{Source: "b", Target: store.DefaultBranch, ExpectHead: d.TargetHead, SourceRev: d.SourceRev, Record: store.MergeRecord{Strategy: store.Native}}
	for _, c := range d.SourceChanges {
		if len(store.EmbeddingOf(c.After)) != 0 {
			t.Fatalf("lean diff: %s has an embedding", c.Ref)
		}
		plan.Puts = append(plan.Puts, c.After)
	}
	if _, err := s.ApplyMerge(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The log gives every embedding back.
	s, err = Open(ctx, Options{Path: s.opts.Path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Get(ctx, main, store.Ref{Kind: store.KindFact, ID: "near"})
	if err != nil {
		t.Fatal(err)
	}
	check("merged, after reopening", r)
	r, err = s.Get(ctx, main, store.Ref{Kind: store.KindFact, ID: "dense"})
	if err != nil {
		t.Fatal(err)
	}
	if f := r.(store.Fact); f.Status != store.FactSuperseded {
		t.Errorf("dense after the merge: status %v, want superseded", f.Status)
	}
	check("superseded, after reopening", r)
}

// TestMergeLogsTheSharedEmbedding merges a record equal to the source's but for the
// sign of a zero: the target's version shares the source's embedding, and the log
// must hold that one, so that a reopened store reads what the open one did.
func TestMergeLogsTheSharedEmbedding(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	negZero := float32(math.Copysign(0, -1))
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "b", []store.Record{store.Fact{ID: "f1", Text: "alpha", Embedding: []float32{1, negZero, 0.5, 0}}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := s.Diff(ctx, "b", store.DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}
	f := d.SourceChanges[0].After.(store.Fact)
	f.Embedding = []float32{1, 0, 0.5, 0}
	if _, err := s.ApplyMerge(ctx, store.MergePlan{Source: "b", Target: store.DefaultBranch, ExpectHead: d.TargetHead,
		SourceRev: d.SourceRev, Puts: []store.Record{f}, Record: store.MergeRecord{Strategy: store.Native}}); err != nil {
		t.Fatal(err)
	}
	bits := func(r store.Record) []uint32 {
		var out []uint32
		for _, x := range store.EmbeddingOf(r) {
			out = append(out, math.Float32bits(x))
		}
		return out
	}
	ref := store.Ref{Kind: store.KindFact, ID: "f1"}
	live, err := s.Get(ctx, store.View{}, ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(ctx, Options{Path: dir}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	again, err := s.Get(ctx, store.View{}, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bits(live), bits(again)) {
		t.Errorf("after a reopen the merged embedding's bits are %x, before %x", bits(again), bits(live))
	}
}

func head(v []float32) []float32 { return v[:min(len(v), 4)] }

// TestLeanMergeLogsAdoptions: a merge of a lean plan (the diff's records without their
// embeddings, as the merge engine makes for native merges) logs each record the
// source holds at its head by reference (opAdopt), not again whole, and a reopen, and
// another store following the log, read the merged records, embeddings and all, as
// the store that merged did.
func TestLeanMergeLogsAdoptions(t *testing.T) {
	for _, landing := range []bool{false, true} {
		name := "merge"
		if landing {
			// Land (store.Lander) adopts the same way, with no plan.
			name = "land"
		}
		t.Run(name, func(t *testing.T) { testLoggedAdoptions(t, landing) })
	}
}

func testLoggedAdoptions(t *testing.T, landing bool) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	follower, err := Open(ctx, Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer follower.Close()
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	var recs []store.Record
	for i := range 50 {
		recs = append(recs, store.Fact{ID: fmt.Sprint("f", i), Text: fmt.Sprintf("fact %d about the cache", i), Embedding: []float32{1, float32(i), 0.5, float32(i % 3)}})
	}
	recs = append(recs, store.Relation{ID: "r1", Source: "cache", Target: "ttl", Type: "has"})
	if _, err := s.Put(ctx, "b", recs, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := store.DiffLean(ctx, s, "b", store.DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}
	var puts []store.Record
	for _, c := range d.SourceChanges {
		puts = append(puts, c.After)
	}
	before, err := os.Stat(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	if landing {
		if _, err := s.Land(ctx, "b", store.DefaultBranch, store.MergeRecord{Strategy: store.Native}); err != nil {
			t.Fatal(err)
		}
	} else if _, err := s.ApplyMerge(ctx, store.MergePlan{Source: "b", Target: store.DefaultBranch, ExpectHead: d.TargetHead,
		SourceRev: d.SourceRev, Puts: puts, Record: store.MergeRecord{Strategy: store.Native}}); err != nil {
		t.Fatal(err)
	}
	// The merge's entry: one adoption per fact, the relation whole.
	f, err := os.Open(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	var last entry
	if _, err := readFrames(io.NewSectionReader(f, before.Size(), 1<<30), before.Size(), func(e *entry) error { last = *e; return nil }); err != nil {
		t.Fatal(err)
	}
	f.Close()
	count := map[opType]int{}
	for _, o := range last.Ops {
		count[o.Type]++
	}
	if count[opAdopt] != 50 || count[opPut] != 1 {
		t.Fatalf("the merge logged %d adoptions and %d puts; want 50 and 1 (the relation)", count[opAdopt], count[opPut])
	}
	want, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
	if err != nil {
		t.Fatal(err)
	}
	q := store.SearchQuery{Text: "fact about the cache", Vector: []float32{1, 7, 0.5, 1}, Mode: store.Hybrid, Limit: 5}
	wantHits, err := s.Search(ctx, store.View{}, q)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := follower.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for name, r := range map[string]*Store{"reopened": again, "follower": follower} {
		got, err := r.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: main's facts differ (-merged +%s):\n%s", name, name, diff)
		}
		hits, err := r.Search(ctx, store.View{}, q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantHits, hits); diff != "" {
			t.Errorf("%s: search differs:\n%s", name, diff)
		}
		if d, err := r.Diff(ctx, "b", store.DefaultBranch); err != nil || len(d.SourceChanges)+len(d.Conflicts) != 0 {
			t.Errorf("%s: the diff after the merge: %+v, %v; want none", name, d, err)
		}
	}
}
