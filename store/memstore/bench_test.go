package memstore_test

// Store-level benchmarks of the embedded store, on a synthetic corpus of agent memories
// (internal/benchdata) embedded by the local embedder into 384 dimensions. Embeddings are
// computed once, outside every timed loop: these benchmarks measure the store. The
// end-to-end figures, embedding included, come from examples/bench.
//
//	go test -run '^$' -bench . -benchmem ./store/memstore/
//
// Latency benchmarks report p50-ns and p95-ns (wall clock) and cpu-p50-ns (the CPU time
// the process spent, garbage collection included) besides ns/op; write benchmarks report
// facts/s. On a machine shared with other work the CPU figures are the steadier ones.

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/benchdata"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/memstore"
)

const (
	benchSeed = 1
	benchDims = 384
	// benchFacts is the largest store the benchmarks build.
	benchFacts = 100_000
	// spareFacts are corpus facts beyond benchFacts, used as new texts: the first
	// churnFacts for the updates a loaded store gets after its snapshot, the others for
	// the changes that diff and merge benchmarks write.
	spareFacts = 2_000
	churnFacts = 1_000
	// benchQueries is the number of distinct queries a search benchmark cycles through.
	benchQueries = 200
	// changes is the number of changes a diff or merge benchmark handles.
	changes = 100
)

// corpus is the benchmark corpus: facts with their embeddings. The texts are generated
// once per process and embedded on demand, a prefix at a time.
type corpus struct {
	texts []string
	vecs  [][]float32 // embeddings of texts[:len(vecs)]
}

var (
	corpusMu  sync.Mutex
	theCorpus corpus
)

// getCorpus returns the corpus with at least its first n texts embedded.
func getCorpus(tb testing.TB, n int) corpus {
	tb.Helper()
	corpusMu.Lock()
	defer corpusMu.Unlock()
	if theCorpus.texts == nil {
		theCorpus.texts = benchdata.Facts(benchFacts+spareFacts, benchSeed)
	}
	if have := len(theCorpus.vecs); n > have {
		vecs, err := llm.NewLocalEmbedder(benchDims).Embed(context.Background(), theCorpus.texts[have:n])
		if err != nil {
			tb.Fatal(err)
		}
		theCorpus.vecs = append(theCorpus.vecs, vecs...)
	}
	return theCorpus
}

// allFacts is the number of corpus texts the benchmarks use: every one.
const allFacts = benchFacts + spareFacts

func factID(i int) string { return fmt.Sprintf("f%06d", i) }

// fact returns corpus fact i under id.
func (c corpus) fact(id string, i int) store.Fact {
	return store.Fact{ID: id, Text: c.texts[i], Embedding: c.vecs[i], Category: "bench"}
}

// searchQuery is a query with its embedding.
type searchQuery struct {
	text string
	vec  []float32
}

// queries returns benchQueries paraphrases of the first n corpus facts, embedded.
func queries(tb testing.TB, n int) []searchQuery {
	tb.Helper()
	c := getCorpus(tb, 0)
	e := llm.NewLocalEmbedder(benchDims)
	var out []searchQuery
	for _, q := range benchdata.Queries(c.texts[:n], benchQueries, benchSeed+1) {
		v, err := e.EmbedOne(q.Text)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, searchQuery{q.Text, v})
	}
	return out
}

// load writes the first n corpus facts to branch main of s in batches of 1000, with
// near-duplicate detection off: loading is setup, and the cost of detection is measured
// by BenchmarkPut.
func load(tb testing.TB, s *memstore.Store, n int) {
	tb.Helper()
	c := getCorpus(tb, n)
	ctx := context.Background()
	const batch = 1000
	recs := make([]store.Record, 0, batch)
	for lo := 0; lo < n; lo += batch {
		recs = recs[:0]
		for i := lo; i < min(lo+batch, n); i++ {
			recs = append(recs, c.fact(factID(i), i))
		}
		if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
}

func newStore(tb testing.TB, opts memstore.Options) *memstore.Store {
	tb.Helper()
	opts.Dimensions = benchDims
	s, err := memstore.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// loadedSnapshot is the snapshot a loaded store takes after loading its facts.
const loadedSnapshot = "loaded"

// loaded returns an in-memory store holding the first n corpus facts on main, built once
// per process and per purpose and never closed: benchmarks that share one only read it
// or add branches. After loading, the store takes the snapshot "loaded" and then
// updates 1% of the facts with new texts, so that main's head and the snapshot differ
// as they do in a store in use.
func loaded(tb testing.TB, purpose string, n int) *memstore.Store {
	tb.Helper()
	loadedMu.Lock()
	defer loadedMu.Unlock()
	k := purpose + "/" + strconv.Itoa(n)
	if s, ok := loadedStores[k]; ok {
		return s
	}
	c := getCorpus(tb, allFacts)
	ctx := context.Background()
	s := newStore(tb, memstore.Options{})
	load(tb, s, n)
	if _, err := s.CreateSnapshot(ctx, store.DefaultBranch, loadedSnapshot, ""); err != nil {
		tb.Fatal(err)
	}
	churn := n / 100
	recs := make([]store.Record, 0, churn)
	for j := range churn {
		recs = append(recs, c.fact(factID(j*100), benchFacts+j%churnFacts))
	}
	if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
		tb.Fatal(err)
	}
	loadedStores[k] = s
	return s
}

var (
	loadedMu     sync.Mutex
	loadedStores = map[string]*memstore.Store{}
)

// latencies records the wall-clock and CPU time of each operation and reports their
// percentiles.
type latencies struct {
	wall, cpu []time.Duration
}

func (l *latencies) time(fn func()) {
	c := cpuTime()
	t := time.Now()
	fn()
	l.wall = append(l.wall, time.Since(t))
	l.cpu = append(l.cpu, cpuTime()-c)
}

func (l *latencies) report(b *testing.B) {
	if len(l.wall) == 0 {
		return
	}
	b.ReportMetric(float64(percentile(l.wall, 50)), "p50-ns")
	b.ReportMetric(float64(percentile(l.wall, 95)), "p95-ns")
	b.ReportMetric(float64(percentile(l.cpu, 50)), "cpu-p50-ns")
}

// percentile returns the p-th percentile of ds (nearest rank), sorting ds.
func percentile(ds []time.Duration, p int) time.Duration {
	slices.Sort(ds)
	return ds[max((p*len(ds)+99)/100-1, 0)]
}

// cpuTime returns the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPut writes batches of new facts, in memory and durable (a log in a
// temporary directory, fsync after every batch), with near-duplicate detection at the
// client's default threshold 0.92 unless the name says dedupe=off. One op is one batch;
// facts/s is the write rate in wall-clock time, facts/cpu-s per second of CPU time.
//
// The cost of a write grows with the number of facts the store holds, so each
// sub-benchmark writes onto a store that holds base facts and never lets it grow past
// base+putWindow: it then starts again from a fresh store loaded with base facts,
// outside the timer.
func BenchmarkPut(b *testing.B) {
	for _, c := range []struct {
		durable bool
		batch   int
		base    int
		dedupe  float64
	}{
		{false, 100, 10_000, 0.92},
		{false, 500, 10_000, 0.92},
		{true, 100, 10_000, 0.92},
		{true, 500, 10_000, 0.92},
		{false, 500, 10_000, 0},
		{false, 500, 1_000, 0.92},
		{false, 500, 30_000, 0.92},
	} {
		mode := "memory"
		if c.durable {
			mode = "durable"
		}
		dd := "0.92"
		if c.dedupe == 0 {
			dd = "off"
		}
		b.Run(fmt.Sprintf("%s/batch=%d/base=%d/dedupe=%s", mode, c.batch, c.base, dd), func(b *testing.B) {
			benchPut(b, c.durable, c.batch, c.base, c.dedupe)
		})
	}
}

// putWindow is how many facts a Put benchmark writes onto one store before it starts
// again from a fresh one.
const putWindow = 5_000

func benchPut(b *testing.B, durable bool, batch, base int, dedupe float64) {
	c := getCorpus(b, allFacts)
	ctx := context.Background()
	var s *memstore.Store
	next := 0
	reopen := func() {
		if s != nil {
			s.Close()
		}
		opts := memstore.Options{}
		if durable {
			opts.Path = b.TempDir()
		}
		s = newStore(b, opts)
		load(b, s, base)
		next = base
	}
	reopen()
	defer func() { s.Close() }()
	opts := store.PutOptions{DedupeThreshold: dedupe}
	recs := make([]store.Record, batch)
	written := 0
	var busy, cpu time.Duration
	for b.Loop() {
		if next+batch > base+putWindow {
			b.StopTimer()
			reopen()
			b.StartTimer()
		}
		for j := range recs {
			recs[j] = c.fact(factID(next+j), next+j)
		}
		next += batch
		cs := cpuTime()
		t := time.Now()
		res, err := s.Put(ctx, store.DefaultBranch, recs, opts)
		busy += time.Since(t)
		cpu += cpuTime() - cs
		if err != nil {
			b.Fatal(err)
		}
		written += len(res)
	}
	b.ReportMetric(float64(written)/busy.Seconds(), "facts/s")
	b.ReportMetric(float64(written)/cpu.Seconds(), "facts/cpu-s")
}

// BenchmarkPutBesideBranches writes 100 facts, with near-duplicate detection, on a
// new branch of a 1k-fact main while other branches already hold facts of the same
// texts: agents on many task branches learning the same things. The new branch sees
// none of them, and the check should not pay much for them.
func BenchmarkPutBesideBranches(b *testing.B) {
	for _, others := range []int{0, 100, 400} {
		b.Run(fmt.Sprintf("branches=%d", others), func(b *testing.B) {
			c := getCorpus(b, allFacts)
			ctx := context.Background()
			s := newStore(b, memstore.Options{})
			defer s.Close()
			load(b, s, 1000)
			put := func(branch string) {
				recs := make([]store.Record, 0, changes)
				for j := range changes {
					recs = append(recs, c.fact(fmt.Sprintf("%s-%03d", branch, j), benchFacts+j))
				}
				if _, err := s.Put(ctx, branch, recs, store.PutOptions{DedupeThreshold: 0.92}); err != nil {
					b.Fatal(err)
				}
			}
			fork := func() string {
				name := "task-" + strconv.FormatInt(branchSeq.Add(1), 10)
				if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: name}); err != nil {
					b.Fatal(err)
				}
				return name
			}
			for range others {
				put(fork())
			}
			for b.Loop() {
				b.StopTimer()
				name := fork()
				b.StartTimer()
				put(name)
			}
		})
	}
}

// BenchmarkSearch runs top-10 searches: hybrid at 1k, 10k and 100k facts, keyword only
// and vector only at 100k. Each op is one query, cycling through 200 paraphrases. The
// stores are those of loaded: 1% of the facts were updated after loading.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("hybrid/n=%d", n), func(b *testing.B) {
			benchSearch(b, loaded(b, "read", n), store.View{}, store.Hybrid, queries(b, n))
		})
	}
	b.Run("keyword/n=100000", func(b *testing.B) {
		benchSearch(b, loaded(b, "read", benchFacts), store.View{}, store.Keyword, queries(b, benchFacts))
	})
	b.Run("vector/n=100000", func(b *testing.B) {
		benchSearch(b, loaded(b, "read", benchFacts), store.View{}, store.Vector, queries(b, benchFacts))
	})
}

func benchSearch(b *testing.B, s *memstore.Store, v store.View, mode store.SearchMode, qs []searchQuery) {
	ctx := context.Background()
	lat := &latencies{}
	i := 0
	for b.Loop() {
		q := qs[i%len(qs)]
		i++
		sq := store.SearchQuery{Mode: mode, Limit: 10, Kinds: []store.Kind{store.KindFact}}
		if mode != store.Vector {
			sq.Text = q.text
		}
		if mode != store.Keyword {
			sq.Vector = q.vec
		}
		var err error
		lat.time(func() { _, err = s.Search(ctx, v, sq) })
		if err != nil {
			b.Fatal(err)
		}
	}
	lat.report(b)
}

var branchSeq atomic.Int64

// BenchmarkCreateBranch forks main of a store holding 1k and 100k facts. Creation must
// not depend on the amount of memory.
func BenchmarkCreateBranch(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := loaded(b, "read", n)
			ctx := context.Background()
			lat := &latencies{}
			for b.Loop() {
				name := "bench/branch-" + strconv.FormatInt(branchSeq.Add(1), 10)
				var err error
				lat.time(func() { _, err = s.CreateBranch(ctx, store.BranchSpec{Name: name}) })
				if err != nil {
					b.Fatal(err)
				}
			}
			lat.report(b)
		})
	}
}

// writeChanges forks target into a new branch and writes changes there: half of them
// update existing facts with new texts, half add new facts. It returns the branch name.
func writeChanges(tb testing.TB, s *memstore.Store, target string, spare int) string {
	tb.Helper()
	c := getCorpus(tb, allFacts)
	ctx := context.Background()
	name := "bench/changes-" + strconv.FormatInt(branchSeq.Add(1), 10)
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: name, From: target}); err != nil {
		tb.Fatal(err)
	}
	recs := make([]store.Record, 0, changes)
	for j := range changes {
		text := benchFacts + churnFacts + (spare+j)%(spareFacts-churnFacts)
		id := factID(j * (benchFacts / changes)) // spread the updates over the corpus
		if j%2 == 1 {
			id = fmt.Sprintf("new-%s-%03d", name[len("bench/"):], j)
		}
		recs = append(recs, c.fact(id, text))
	}
	if _, err := s.Put(ctx, name, recs, store.PutOptions{}); err != nil {
		tb.Fatal(err)
	}
	return name
}

// BenchmarkDiff diffs a branch holding 100 changes (50 updates, 50 additions) against
// main holding 100k facts.
func BenchmarkDiff(b *testing.B) {
	b.Run(fmt.Sprintf("changes=%d/n=%d", changes, benchFacts), func(b *testing.B) {
		s := loaded(b, "read", benchFacts)
		src := writeChanges(b, s, store.DefaultBranch, 0)
		ctx := context.Background()
		lat := &latencies{}
		for b.Loop() {
			var d *store.Diff
			var err error
			lat.time(func() { d, err = s.Diff(ctx, src, store.DefaultBranch) })
			if err != nil {
				b.Fatal(err)
			}
			if len(d.SourceChanges) != changes {
				b.Fatalf("diff holds %d source changes, want %d", len(d.SourceChanges), changes)
			}
		}
		lat.report(b)
	})
}

// BenchmarkMerge merges 100 changes into a branch of a store holding 100k facts: the
// target is a fresh fork of main and the source a fork of the target with the changes,
// both made outside the timer. "engine" is the whole merge.Engine.Merge (diff, plan,
// apply); "apply" is Store.ApplyMerge of a plan the engine computed beforehand.
func BenchmarkMerge(b *testing.B) {
	for _, sub := range []string{"engine", "apply"} {
		b.Run(fmt.Sprintf("%s/changes=%d/n=%d", sub, changes, benchFacts), func(b *testing.B) {
			s := loaded(b, "merge", benchFacts)
			eng := &merge.Engine{Store: s}
			ctx := context.Background()
			lat := &latencies{}
			i := 0
			for b.Loop() {
				b.StopTimer()
				target := "bench/target-" + strconv.FormatInt(branchSeq.Add(1), 10)
				if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: target}); err != nil {
					b.Fatal(err)
				}
				src := writeChanges(b, s, target, i*changes)
				i++
				req := merge.Request{Source: src, Target: target}
				var plan store.MergePlan
				if sub == "apply" {
					res, err := eng.Merge(ctx, merge.Request{Source: src, Target: target, DryRun: true})
					if err != nil {
						b.Fatal(err)
					}
					plan = res.Plan
				}
				b.StartTimer()
				var err error
				var merged int
				if sub == "engine" {
					lat.time(func() {
						var res merge.Result
						res, err = eng.Merge(ctx, req)
						merged = len(res.Plan.Puts)
					})
				} else {
					lat.time(func() { _, err = s.ApplyMerge(ctx, plan) })
					merged = len(plan.Puts)
				}
				if err != nil {
					b.Fatal(err)
				}
				if merged != changes {
					b.Fatalf("merged %d records, want %d", merged, changes)
				}
			}
			lat.report(b)
		})
	}
}

// BenchmarkSearchAt compares a hybrid top-10 search at main's head with the same search
// at the snapshot "loaded" and at the instant of that snapshot, on the store of
// BenchmarkSearch with 100k facts (1,000 of them updated after the snapshot).
func BenchmarkSearchAt(b *testing.B) {
	s := loaded(b, "read", benchFacts)
	snap, err := s.GetSnapshot(context.Background(), loadedSnapshot)
	if err != nil {
		b.Fatal(err)
	}
	qs := queries(b, benchFacts)
	for _, at := range []struct {
		name string
		v    store.View
	}{
		{"head", store.View{}},
		{"snapshot", store.View{At: store.Point{Snapshot: snap.Name}}},
		{"time", store.View{At: store.Point{Time: snap.At}}},
	} {
		b.Run(fmt.Sprintf("%s/n=%d", at.name, benchFacts), func(b *testing.B) {
			benchSearch(b, s, at.v, store.Hybrid, qs)
		})
	}
}

// TestVectorRecall checks that the store's vector search, which ranks candidates by
// sign-bit Hamming distance before scoring them exactly, finds what an exact scan over
// the same vectors finds: recall@10 averaged over 50 paraphrase queries must be at least
// 0.9. It runs at 20k facts; DAY1_RECALL_SIZES, a comma-separated list of sizes, picks
// others (DAY1_RECALL_SIZES=20000,100000 also measures 100k). Skipped with -short, and
// with -race: recall does not depend on concurrency, and the race detector makes the
// exact scans take over a minute.
func TestVectorRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a store of 20k facts; skipped with -short")
	}
	if raceEnabled() {
		t.Skip("recall does not depend on concurrency; skipped with -race, where it takes over a minute")
	}
	sizes := []int{20_000}
	if env := os.Getenv("DAY1_RECALL_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 100 || n > benchFacts {
				t.Fatalf("DAY1_RECALL_SIZES: %q is not a size between 100 and %d", f, benchFacts)
			}
			sizes = append(sizes, n)
		}
	}
	const k, nq, want = 10, 50, 0.9
	for _, n := range sizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			c := getCorpus(t, n)
			s := newStore(t, memstore.Options{})
			defer s.Close()
			load(t, s, n)
			qs := queries(t, n)[:nq]
			ctx := context.Background()
			var sum float64
			for _, q := range qs {
				hits, err := s.Search(ctx, store.View{}, store.SearchQuery{
					Mode: store.Vector, Vector: q.vec, Limit: k, Kinds: []store.Kind{store.KindFact}})
				if err != nil {
					t.Fatal(err)
				}
				exact := exactTop(c.vecs[:n], q.vec, k)
				got := 0
				for _, h := range hits {
					if exact[h.Record.RecordID()] {
						got++
					}
				}
				sum += float64(got) / float64(k)
			}
			recall := sum / float64(len(qs))
			t.Logf("recall@%d at %d facts over %d queries: %.3f", k, n, len(qs), recall)
			if recall < want {
				t.Errorf("recall@%d = %.3f at %d facts, want at least %.2f", k, recall, n, want)
			}
		})
	}
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, st := range bi.Settings {
		if st.Key == "-race" {
			return st.Value == "true"
		}
	}
	return false
}

// exactTop returns the ids of the k vectors with the highest cosine similarity to q,
// by a full scan.
func exactTop(vecs [][]float32, q []float32, k int) map[string]bool {
	type scored struct {
		i int
		s float32
	}
	all := make([]scored, len(vecs))
	for i, v := range vecs {
		all[i] = scored{i, vecmath.Cosine(q, v)}
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].s != all[b].s {
			return all[a].s > all[b].s
		}
		return all[a].i < all[b].i
	})
	out := make(map[string]bool, k)
	for _, x := range all[:k] {
		out[factID(x.i)] = true
	}
	return out
}

// BenchmarkSearchMessages searches 10,000 messages, the corpus texts as the turns of
// conversations of 50, by hybrid search over every searchable kind (the default
// Kinds), without a window and with one of two messages on each side.
func BenchmarkSearchMessages(b *testing.B) {
	const n, per = 10_000, 50
	c := getCorpus(b, n)
	s := newStore(b, memstore.Options{})
	ctx := context.Background()
	recs := make([]store.Record, 0, n+n/per)
	for i := range n {
		conv := fmt.Sprintf("c%04d", i/per)
		if i%per == 0 {
			recs = append(recs, store.Conversation{ID: conv, Title: "conversation " + conv})
		}
		recs = append(recs, store.Message{ID: fmt.Sprintf("m%06d", i), ConversationID: conv, Seq: i%per + 1,
			Role: store.RoleUser, Content: c.texts[i], Embedding: c.vecs[i]})
	}
	for lo := 0; lo < len(recs); lo += 1000 {
		if _, err := s.Put(ctx, store.DefaultBranch, recs[lo:min(lo+1000, len(recs))], store.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	qs := queries(b, n)
	for _, w := range []int{0, 2} {
		b.Run(fmt.Sprintf("hybrid/window=%d", w), func(b *testing.B) {
			lat := &latencies{}
			i := 0
			for b.Loop() {
				q := qs[i%len(qs)]
				i++
				var err error
				lat.time(func() {
					_, err = s.Search(ctx, store.View{}, store.SearchQuery{Text: q.text, Vector: q.vec, Limit: 10, Window: w})
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			lat.report(b)
		})
	}
}
