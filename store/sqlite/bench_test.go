package sqlite_test

// The store-level benchmarks every backend runs (storetest.RunBenchmarks), on the
// portable store over a SQLite file in a temporary folder:
//
//	go test -run '^$' -bench . -benchmem ./store/sqlite/
//
// The sizes are 1,000 and 10,000, which keep a run to minutes; DAY1_BENCH_SIZES
// (comma-separated, e.g. 1000,10000,100000) sets others.

import (
	"testing"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/sqlite"
	"github.com/day1ai/day1/store/storetest"
)

func BenchmarkStore(b *testing.B) {
	storetest.RunBenchmarks(b, storetest.BenchHarness{Sizes: []int{1_000, 10_000}, New: func(tb testing.TB) store.Store {
		return open(tb, tb.TempDir(), sqlite.Options{Dimensions: storetest.BenchDims})
	}})
}
