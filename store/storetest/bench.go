package storetest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/benchdata"
	"github.com/day1ai/day1/internal/cputime"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// BenchDims is the length of the embeddings of the benchmark corpus: the local
// embedder's default, as a Client writes them.
const BenchDims = 384

// Shape of the benchmark corpus and workloads.
const (
	benchSeed = 1
	// spareFacts are corpus facts beyond the largest store, used as new texts: the
	// first churnFacts for the updates a loaded store gets after its snapshot, the
	// others for the changes that diff and merge benchmarks write.
	spareFacts   = 2_000
	churnFacts   = 1_000
	benchQueries = 200 // distinct queries a search benchmark cycles through
	benchChanges = 100 // changes a diff or merge benchmark handles
	putWindow    = 5_000
	// loadedSnapshot is the snapshot a loaded store takes after loading its facts.
	loadedSnapshot = "loaded"
)

// BenchHarness makes stores for RunBenchmarks.
type BenchHarness struct {
	// New returns a new, empty store holding only the default branch, able to keep
	// embeddings of BenchDims dimensions. The benchmarks close it. A store may serve
	// several sub-benchmarks: tb's Cleanup and TempDir belong to the benchmark that
	// called RunBenchmarks, so what the store needs (a folder, a database) outlives
	// the sub-benchmark that made it.
	New func(tb testing.TB) store.Store
	// Sizes are the numbers of facts the read benchmarks load, in increasing order,
	// from 1,000 to MaxBenchSize. Default 1,000, 10,000 and 100,000. The variable
	// DAY1_BENCH_SIZES (comma-separated, e.g. 1000,10000), when set, replaces them.
	Sizes []int
	// Branches are the numbers of other branches PutBesideBranches writes beside.
	// Default 0, 100 and 400; a store whose forks copy tables wants fewer.
	Branches []int
}

// RunBenchmarks measures the operations every store serves, on the same workloads for
// every backend, so that stores can be compared row by row (go test -bench, in each
// backend's package). The corpus is internal/benchdata's agent memories embedded by
// the local embedder into BenchDims dimensions, computed once per process, outside
// every timed loop: the figures are the store's.
//
//   - Put: batches of 100 and 500 new facts onto a store of 10,000 facts (the largest
//     size, when that is smaller), with near-duplicate detection at 0.92 and without;
//     facts/s and facts/cpu-s.
//   - PutBesideBranches: 100 facts on a new branch of a 1,000-fact main while other
//     branches (BenchHarness.Branches) hold the same texts.
//   - Search: top-10 hybrid search at every size; keyword and vector at the largest.
//   - SearchAt: hybrid search at main's head, at a snapshot and at an instant.
//   - CreateBranch: a fork of main at the smallest and the largest size.
//   - Diff and Merge: 100 changes (50 updates, 50 additions) against the largest
//     store; Merge as the whole merge.Engine.Merge and as Store.ApplyMerge alone.
//   - SearchMessages: hybrid search over 10,000 messages in conversations of 50,
//     without and with a window.
//
// Latency benchmarks report p50-ns, p95-ns and cpu-p50-ns (the CPU time of the process,
// garbage collection included) besides ns/op. The loaded stores are built once per
// size and shared by the read benchmarks, which only read them or add branches.
func RunBenchmarks(b *testing.B, h BenchHarness) {
	if h.New == nil {
		b.Fatal("storetest: BenchHarness.New is required")
	}
	sizes := h.Sizes
	if env := os.Getenv("DAY1_BENCH_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("storetest: DAY1_BENCH_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	if len(sizes) == 0 {
		sizes = []int{1_000, 10_000, MaxBenchSize}
	}
	if !slices.IsSorted(sizes) || sizes[0] < 1_000 || sizes[len(sizes)-1] > MaxBenchSize {
		b.Fatalf("storetest: BenchHarness.Sizes %v: want increasing sizes from 1,000 to %d", sizes, MaxBenchSize)
	}
	r := &benchRun{h: h, b: b, sizes: sizes, loaded: map[string]store.Store{}}
	defer r.close()
	largest := sizes[len(sizes)-1]
	b.Run("Put", r.benchPut)
	b.Run("PutBesideBranches", r.benchPutBesideBranches)
	b.Run("Search", func(b *testing.B) {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("hybrid/n=%d", n), func(b *testing.B) {
				r.search(b, r.store(b, "read", n), store.View{}, store.Hybrid, queries(b, n))
			})
		}
		for _, mode := range []store.SearchMode{store.Keyword, store.Vector} {
			b.Run(fmt.Sprintf("%s/n=%d", mode, largest), func(b *testing.B) {
				r.search(b, r.store(b, "read", largest), store.View{}, mode, queries(b, largest))
			})
		}
	})
	b.Run("SearchAt", func(b *testing.B) { r.benchSearchAt(b, largest) })
	b.Run("CreateBranch", func(b *testing.B) {
		for _, n := range []int{sizes[0], largest} {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { r.benchCreateBranch(b, n) })
			if n == largest {
				break
			}
		}
	})
	b.Run("Diff", func(b *testing.B) { r.benchDiff(b, largest) })
	b.Run("Merge", func(b *testing.B) { r.benchMerge(b, largest) })
	b.Run("SearchMessages", r.benchSearchMessages)
}

// benchRun is one RunBenchmarks: its harness and the stores it loaded.
type benchRun struct {
	h      BenchHarness
	b      *testing.B // the benchmark that called RunBenchmarks
	sizes  []int
	mu     sync.Mutex
	loaded map[string]store.Store
}

// newStore returns a new store of the harness for tb.
func (r *benchRun) newStore(tb testing.TB) store.Store {
	tb.Helper()
	s := r.h.New(keeper{TB: tb, parent: r.b})
	if s == nil {
		tb.Fatal("storetest: BenchHarness.New returned a nil store")
	}
	return s
}

// keeper is the TB of a sub-benchmark whose Cleanup and TempDir belong to the
// benchmark that called RunBenchmarks.
type keeper struct {
	testing.TB
	parent *testing.B
}

func (k keeper) Cleanup(f func()) { k.parent.Cleanup(f) }
func (k keeper) TempDir() string  { return k.parent.TempDir() }

func (r *benchRun) close() {
	for _, s := range r.loaded {
		s.Close()
	}
}

// MaxBenchSize is the largest store size RunBenchmarks loads.
const MaxBenchSize = 100_000

// corpusSize is how many texts the benchmark corpus holds: MaxBenchSize facts to load
// and spareFacts new texts after them.
const corpusSize = MaxBenchSize + spareFacts

// The benchmark corpus: texts generated once per process, and the embeddings of a
// prefix of them, extended on demand.
var (
	corpusMu    sync.Mutex
	corpusTexts []string
	corpusVecs  [][]float32 // embeddings of corpusTexts[:len(corpusVecs)]
)

// Corpus returns the first n texts of the benchmark corpus (internal/benchdata's
// agent memories; n at most MaxBenchSize plus 2,000) and their embeddings by the local
// embedder in BenchDims dimensions, computed once per process. Backends use it for
// measurements of their own beside RunBenchmarks, such as recall against an exact
// scan.
func Corpus(tb testing.TB, n int) ([]string, [][]float32) {
	tb.Helper()
	if n < 0 || n > corpusSize {
		tb.Fatalf("storetest: Corpus(%d): the corpus holds %d texts", n, corpusSize)
	}
	corpusMu.Lock()
	defer corpusMu.Unlock()
	if corpusTexts == nil {
		corpusTexts = benchdata.Facts(corpusSize, benchSeed)
	}
	if have := len(corpusVecs); n > have {
		vecs, err := llm.NewLocalEmbedder(BenchDims).Embed(context.Background(), corpusTexts[have:n])
		if err != nil {
			tb.Fatal(err)
		}
		corpusVecs = append(corpusVecs, vecs...)
	}
	return corpusTexts[:n], corpusVecs[:n]
}

// spare is the index of the first corpus text beyond every loaded store.
const spare = MaxBenchSize

func benchFactID(i int) string { return fmt.Sprintf("f%06d", i) }

// corpusFact returns corpus fact i under id; the corpus must be embedded that far.
func corpusFact(id string, i int) store.Fact {
	corpusMu.Lock()
	defer corpusMu.Unlock()
	return store.Fact{ID: id, Text: corpusTexts[i], Embedding: corpusVecs[i], Category: "bench"}
}

// allCorpus embeds the whole corpus.
func allCorpus(tb testing.TB) { Corpus(tb, corpusSize) }

// benchQuery is a query with its embedding.
type benchQuery struct {
	text string
	vec  []float32
}

// queries returns benchQueries paraphrases of the first n corpus facts, embedded.
func queries(tb testing.TB, n int) []benchQuery {
	tb.Helper()
	Corpus(tb, 0)
	e := llm.NewLocalEmbedder(BenchDims)
	var out []benchQuery
	for _, q := range benchdata.Queries(corpusTexts[:n], benchQueries, benchSeed+1) {
		v, err := e.EmbedOne(q.Text)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, benchQuery{q.Text, v})
	}
	return out
}

// load writes the first n corpus facts to main of s in batches of 1000, with
// near-duplicate detection off: loading is setup, and the cost of detection is
// measured by Put.
func load(tb testing.TB, s store.Store, n int) {
	tb.Helper()
	Corpus(tb, n)
	const batch = 1000
	recs := make([]store.Record, 0, batch)
	for lo := 0; lo < n; lo += batch {
		recs = recs[:0]
		for i := lo; i < min(lo+batch, n); i++ {
			recs = append(recs, corpusFact(benchFactID(i), i))
		}
		if _, err := s.Put(context.Background(), store.DefaultBranch, recs, store.PutOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
}

// store returns a store holding the first n corpus facts on main, built once per run,
// size and purpose. After loading, it takes the snapshot "loaded" and updates 1% of
// the facts with new texts, so that main's head and the snapshot differ as they do in
// a store in use.
func (r *benchRun) store(tb testing.TB, purpose string, n int) store.Store {
	tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	k := purpose + "/" + strconv.Itoa(n)
	if s, ok := r.loaded[k]; ok {
		return s
	}
	allCorpus(tb)
	ctx := context.Background()
	s := r.newStore(tb)
	load(tb, s, n)
	if _, err := s.CreateSnapshot(ctx, store.DefaultBranch, loadedSnapshot, ""); err != nil {
		tb.Fatal(err)
	}
	churn := n / 100
	recs := make([]store.Record, 0, churn)
	for j := range churn {
		recs = append(recs, corpusFact(benchFactID(j*100), spare+j%churnFacts))
	}
	if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
		tb.Fatal(err)
	}
	r.loaded[k] = s
	return s
}

// latencies records the wall-clock and CPU time of each operation and reports their
// percentiles.
type latencies struct {
	wall, cpu []time.Duration
}

func (l *latencies) time(fn func()) {
	c := cputime.Process()
	t := time.Now()
	fn()
	l.wall = append(l.wall, time.Since(t))
	l.cpu = append(l.cpu, cputime.Process()-c)
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

var branchSeq atomic.Int64

// newBranchName returns a branch name no other benchmark of the process uses.
func newBranchName(prefix string) string {
	return "bench/" + prefix + "-" + strconv.FormatInt(branchSeq.Add(1), 10)
}

func (r *benchRun) benchPut(b *testing.B) {
	base := min(10_000, r.sizes[len(r.sizes)-1])
	for _, c := range []struct {
		batch  int
		dedupe float64
	}{{100, 0.92}, {500, 0.92}, {500, 0}} {
		dd := "0.92"
		if c.dedupe == 0 {
			dd = "off"
		}
		b.Run(fmt.Sprintf("batch=%d/base=%d/dedupe=%s", c.batch, base, dd), func(b *testing.B) {
			r.put(b, c.batch, base, c.dedupe)
		})
	}
}

// put writes batches of new facts onto a store that holds base facts. The cost of a
// write grows with the store, so the store never grows past base+putWindow: the
// benchmark then starts again from a fresh store loaded with base facts, outside the
// timer.
func (r *benchRun) put(b *testing.B, batch, base int, dedupe float64) {
	allCorpus(b)
	ctx := context.Background()
	var s store.Store
	next := 0
	reopen := func() {
		if s != nil {
			s.Close()
		}
		s = r.newStore(b)
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
			recs[j] = corpusFact(benchFactID(next+j), next+j)
		}
		next += batch
		cs := cputime.Process()
		t := time.Now()
		res, err := s.Put(ctx, store.DefaultBranch, recs, opts)
		busy += time.Since(t)
		cpu += cputime.Process() - cs
		if err != nil {
			b.Fatal(err)
		}
		written += len(res)
	}
	b.ReportMetric(float64(written)/busy.Seconds(), "facts/s")
	b.ReportMetric(float64(written)/cpu.Seconds(), "facts/cpu-s")
}

// benchPutBesideBranches writes 100 facts, with near-duplicate detection, on a new
// branch of a 1k-fact main while other branches already hold facts of the same texts:
// agents on many task branches learning the same things. The new branch sees none of
// them, and the check should not pay much for them.
func (r *benchRun) benchPutBesideBranches(b *testing.B) {
	branches := r.h.Branches
	if len(branches) == 0 {
		branches = []int{0, 100, 400}
	}
	for _, others := range branches {
		b.Run(fmt.Sprintf("branches=%d", others), func(b *testing.B) {
			allCorpus(b)
			ctx := context.Background()
			s := r.newStore(b)
			defer s.Close()
			load(b, s, 1000)
			put := func(branch string) {
				recs := make([]store.Record, 0, benchChanges)
				for j := range benchChanges {
					recs = append(recs, corpusFact(fmt.Sprintf("%s-%03d", strings.TrimPrefix(branch, "bench/"), j), spare+j))
				}
				if _, err := s.Put(ctx, branch, recs, store.PutOptions{DedupeThreshold: 0.92}); err != nil {
					b.Fatal(err)
				}
			}
			fork := func() string {
				name := newBranchName("task")
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

// search runs top-10 searches of facts, one query an op, cycling through qs.
func (r *benchRun) search(b *testing.B, s store.Store, v store.View, mode store.SearchMode, qs []benchQuery) {
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

// benchSearchAt compares a hybrid top-10 search at main's head with the same search at
// the snapshot "loaded" and at the instant of that snapshot (1% of the facts were
// updated after it).
func (r *benchRun) benchSearchAt(b *testing.B, n int) {
	s := r.store(b, "read", n)
	snap, err := s.GetSnapshot(context.Background(), loadedSnapshot)
	if err != nil {
		b.Fatal(err)
	}
	qs := queries(b, n)
	for _, at := range []struct {
		name string
		v    store.View
	}{
		{"head", store.View{}},
		{"snapshot", store.View{At: store.Point{Snapshot: snap.Name}}},
		{"time", store.View{At: store.Point{Time: snap.At}}},
	} {
		b.Run(fmt.Sprintf("%s/n=%d", at.name, n), func(b *testing.B) {
			r.search(b, s, at.v, store.Hybrid, qs)
		})
	}
}

// benchCreateBranch forks main of a store holding n facts.
func (r *benchRun) benchCreateBranch(b *testing.B, n int) {
	s := r.store(b, "read", n)
	ctx := context.Background()
	lat := &latencies{}
	for b.Loop() {
		name := newBranchName("branch")
		var err error
		lat.time(func() { _, err = s.CreateBranch(ctx, store.BranchSpec{Name: name}) })
		if err != nil {
			b.Fatal(err)
		}
	}
	lat.report(b)
}

// writeChanges forks target into a new branch and writes benchChanges changes there:
// half of them update facts of the store's n with new texts, half add new facts. It
// returns the branch name.
func writeChanges(tb testing.TB, s store.Store, target string, n, offset int) string {
	tb.Helper()
	ctx := context.Background()
	name := newBranchName("changes")
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: name, From: target}); err != nil {
		tb.Fatal(err)
	}
	recs := make([]store.Record, 0, benchChanges)
	for j := range benchChanges {
		text := spare + churnFacts + (offset+j)%(spareFacts-churnFacts)
		id := benchFactID(j * (n / benchChanges)) // spread the updates over the store
		if j%2 == 1 {
			id = fmt.Sprintf("new-%s-%03d", name[len("bench/"):], j)
		}
		recs = append(recs, corpusFact(id, text))
	}
	if _, err := s.Put(ctx, name, recs, store.PutOptions{}); err != nil {
		tb.Fatal(err)
	}
	return name
}

// benchDiff diffs a branch holding 100 changes against main holding n facts.
func (r *benchRun) benchDiff(b *testing.B, n int) {
	b.Run(fmt.Sprintf("changes=%d/n=%d", benchChanges, n), func(b *testing.B) {
		s := r.store(b, "read", n)
		src := writeChanges(b, s, store.DefaultBranch, n, 0)
		ctx := context.Background()
		lat := &latencies{}
		for b.Loop() {
			var d *store.Diff
			var err error
			lat.time(func() { d, err = s.Diff(ctx, src, store.DefaultBranch) })
			if err != nil {
				b.Fatal(err)
			}
			if len(d.SourceChanges) != benchChanges {
				b.Fatalf("diff holds %d source changes, want %d", len(d.SourceChanges), benchChanges)
			}
		}
		lat.report(b)
	})
}

// benchMerge merges 100 changes into a branch of a store holding n facts: the target
// is a fresh fork of main and the source a fork of the target with the changes, both
// made outside the timer. "engine" is the whole merge.Engine.Merge (diff, plan,
// apply); "apply" is Store.ApplyMerge of a plan the engine computed beforehand.
func (r *benchRun) benchMerge(b *testing.B, n int) {
	for _, sub := range []string{"engine", "apply"} {
		b.Run(fmt.Sprintf("%s/changes=%d/n=%d", sub, benchChanges, n), func(b *testing.B) {
			s := r.store(b, "merge", n)
			eng := &merge.Engine{Store: s}
			ctx := context.Background()
			lat := &latencies{}
			i := 0
			for b.Loop() {
				b.StopTimer()
				target := newBranchName("target")
				if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: target}); err != nil {
					b.Fatal(err)
				}
				src := writeChanges(b, s, target, n, i*benchChanges)
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
				if merged != benchChanges {
					b.Fatalf("merged %d records, want %d", merged, benchChanges)
				}
			}
			lat.report(b)
		})
	}
}

// benchSearchMessages searches 10,000 messages, the corpus texts as the turns of
// conversations of 50, by hybrid search over every searchable kind (the default
// Kinds), without a window and with one of two messages on each side.
func (r *benchRun) benchSearchMessages(b *testing.B) {
	const n, per = 10_000, 50
	texts, vecs := Corpus(b, n)
	s := r.newStore(b)
	defer s.Close()
	ctx := context.Background()
	recs := make([]store.Record, 0, n+n/per)
	for i := range n {
		conv := fmt.Sprintf("c%04d", i/per)
		if i%per == 0 {
			recs = append(recs, store.Conversation{ID: conv, Title: "conversation " + conv})
		}
		recs = append(recs, store.Message{ID: fmt.Sprintf("m%06d", i), ConversationID: conv, Seq: i%per + 1,
			Role: store.RoleUser, Content: texts[i], Embedding: vecs[i]})
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
