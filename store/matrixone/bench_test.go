package matrixone_test

import (
	"context"
	"testing"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
	"github.com/day1ai/day1/store/storetest"
)

// BenchmarkStore runs the store benchmarks every backend runs on the MatrixOne server
// of DAY1_TEST_DSN, each store in a database of its own, at 1k and 10k facts, with up to
// 20 branches beside a write (a fork of the CI server's build copies tables, and a
// database of hundreds of branches takes minutes to drop):
//
//	DAY1_TEST_DSN='root:111@tcp(127.0.0.1:6001)/' go test -run '^$' -bench Store -benchtime 20x ./store/matrixone/
func BenchmarkStore(b *testing.B) {
	testDSN(b)
	storetest.RunBenchmarks(b, storetest.BenchHarness{Sizes: []int{1_000, 10_000}, Branches: []int{0, 20}, New: func(tb testing.TB) store.Store {
		s, err := matrixone.Open(context.Background(), matrixone.Options{DSN: testDatabase(tb), Dimensions: storetest.BenchDims, MaxOpenConns: 8})
		if err != nil {
			tb.Fatalf("matrixone.Open: %v", err)
		}
		return s
	}})
}
