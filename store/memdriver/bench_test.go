package memdriver_test

// The store-level benchmarks every backend runs (storetest.RunBenchmarks), on the
// portable store over this driver:
//
//	go test -run '^$' -bench . -benchmem ./store/memdriver/
//
// DAY1_BENCH_SIZES (comma-separated, e.g. 1000,10000,100000) sets the sizes.

import (
	"context"
	"testing"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/memdriver"
	"github.com/day1ai/day1/store/portable"
	"github.com/day1ai/day1/store/storetest"
)

func BenchmarkStore(b *testing.B) {
	storetest.RunBenchmarks(b, storetest.BenchHarness{New: func(tb testing.TB) store.Store {
		s, err := portable.New(context.Background(), memdriver.New(), portable.Options{Name: "memdriver", Dimensions: storetest.BenchDims})
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}})
}
