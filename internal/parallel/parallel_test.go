package parallel

import (
	"runtime"
	"sync"
	"testing"
)

func TestDoCoversEveryItemOnce(t *testing.T) {
	for _, c := range []struct{ n, parts int }{{0, 1}, {1, 4}, {10, 1}, {10, 3}, {100, 2}, {7, 7}, {5, 9}} {
		seen := make([]int, c.n)
		var mu sync.Mutex
		calls := 0
		Do(c.n, c.parts, func(part, lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, k := range seen {
			if k != 1 {
				t.Errorf("n=%d parts=%d: item %d seen %d times", c.n, c.parts, i, k)
			}
		}
		if want := max(1, min(c.parts, c.n)); calls != want {
			t.Errorf("n=%d parts=%d: %d calls, want %d", c.n, c.parts, calls, want)
		}
	}
}

func TestParts(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, c := range []struct{ n, minPart, want int }{
		{10, 64, 1},
		{0, 8, 1},
		{64 * procs, 64, procs},
		{64*procs - 1, 64, max(1, procs-1)},
		{1000 * procs, 0, procs},
	} {
		if got := Parts(c.n, c.minPart); got != c.want {
			t.Errorf("Parts(%d, %d) = %d, want %d (GOMAXPROCS %d)", c.n, c.minPart, got, c.want, procs)
		}
	}
}
