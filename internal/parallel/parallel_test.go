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

func TestEachCoversEveryItemOnce(t *testing.T) {
	for _, c := range []struct{ n, chunk, workers int }{{0, 4, 2}, {1, 4, 2}, {10, 1, 1}, {10, 3, 3}, {100, 7, 2}, {7, 7, 7}, {5, 0, 9}, {64, 8, 16}} {
		seen := make([]int, c.n)
		var mu sync.Mutex
		workers := map[int]bool{}
		Each(c.n, c.chunk, c.workers, func(w, lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			workers[w] = true
			if hi-lo > max(1, c.chunk) || hi <= lo {
				t.Errorf("n=%d chunk=%d: a call on [%d, %d)", c.n, c.chunk, lo, hi)
			}
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, k := range seen {
			if k != 1 {
				t.Errorf("n=%d chunk=%d workers=%d: item %d seen %d times", c.n, c.chunk, c.workers, i, k)
			}
		}
		for w := range workers {
			if w < 0 || w >= max(1, c.workers) {
				t.Errorf("n=%d chunk=%d workers=%d: a call from worker %d", c.n, c.chunk, c.workers, w)
			}
		}
	}
}

func TestEachSharesWork(t *testing.T) {
	// A worker held back does not keep the chunks it would have had in a fixed split:
	// the other takes them.
	release := make(chan struct{})
	var mu sync.Mutex
	by := map[int]int{}
	Each(8, 1, 2, func(w, lo, hi int) {
		mu.Lock()
		first := len(by) == 0
		by[w]++
		mu.Unlock()
		if first {
			<-release // the first call waits until every other chunk is done
			return
		}
		mu.Lock()
		total := 0
		for _, k := range by {
			total += k
		}
		mu.Unlock()
		if total == 8 {
			close(release)
		}
	})
	if len(by) != 2 {
		t.Fatalf("calls by worker: %v; want both workers", by)
	}
	for w, k := range by {
		if k != 1 && k != 7 {
			t.Errorf("worker %d made %d calls; want 1 (held back) or 7", w, k)
		}
	}
}
