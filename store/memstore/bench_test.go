package memstore_test

// The store-level benchmarks every backend runs (storetest.RunBenchmarks), on the
// embedded store in memory and durable (a log in a temporary directory, fsync after
// every batch):
//
//	go test -run '^$' -bench . -benchmem ./store/memstore/
//
// Embeddings are computed once, outside every timed loop: these benchmarks measure the
// store. The end-to-end figures, embedding included, come from examples/bench.

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/memstore"
	"github.com/day1ai/day1/store/storetest"
)

// BenchmarkStore runs the store benchmarks on the in-memory store.
func BenchmarkStore(b *testing.B) {
	storetest.RunBenchmarks(b, storetest.BenchHarness{New: func(tb testing.TB) store.Store {
		return newBenchStore(tb, memstore.Options{})
	}})
}

// BenchmarkStoreDurable runs the store benchmarks on the durable store.
func BenchmarkStoreDurable(b *testing.B) {
	storetest.RunBenchmarks(b, storetest.BenchHarness{New: func(tb testing.TB) store.Store {
		return newBenchStore(tb, memstore.Options{Path: tb.TempDir()})
	}})
}

func newBenchStore(tb testing.TB, opts memstore.Options) *memstore.Store {
	tb.Helper()
	opts.Dimensions = storetest.BenchDims
	s, err := memstore.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestVectorRecall checks that the store's vector search, which ranks candidates by
// sign-bit Hamming distance before scoring them exactly, finds what an exact scan over
// the same vectors finds: recall@10 averaged over 50 paraphrase queries must be at least
// 0.9. It runs at 20k facts; DAY1_RECALL_SIZES, a comma-separated list of sizes, picks
// others (DAY1_RECALL_SIZES=20000,100000 also measures 100k). Skipped with -short, and
// with -race: recall does not depend on concurrency, and the race detector makes the
// exact scans take over a minute.
func TestVectorRecall(t *testing.T) {
	t.Parallel()
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
			if err != nil || n < 100 || n > storetest.MaxBenchSize {
				t.Fatalf("DAY1_RECALL_SIZES: %q is not a size between 100 and %d", f, storetest.MaxBenchSize)
			}
			sizes = append(sizes, n)
		}
	}
	storetest.RunRecall(t, func(tb testing.TB) store.Store { return newBenchStore(tb, memstore.Options{}) }, sizes)
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
