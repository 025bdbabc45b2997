package sqlite_test

// The store-level benchmarks every backend runs (storetest.RunBenchmarks), on the
// portable store over a SQLite file in a temporary folder:
//
//	go test -run '^$' -bench . -benchmem ./store/sqlite/
//
// DAY1_BENCH_SIZES (comma-separated, e.g. 1000,10000,100000) sets the sizes; the
// default, 1,000 and 10,000, keeps a run to minutes.

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/sqlite"
	"github.com/day1ai/day1/store/storetest"
)

func BenchmarkStore(b *testing.B) {
	sizes := []int{1_000, 10_000}
	if env := os.Getenv("DAY1_BENCH_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("DAY1_BENCH_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	storetest.RunBenchmarks(b, storetest.BenchHarness{Sizes: sizes, New: func(tb testing.TB) store.Store {
		return open(tb, tb.TempDir(), sqlite.Options{Dimensions: storetest.BenchDims})
	}})
}
