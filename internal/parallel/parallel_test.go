package parallel

import (
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
	if got := Parts(10, 64); got != 1 {
		t.Errorf("Parts(10, 64) = %d, want 1", got)
	}
	if got := Parts(1000, 0); got < 1 {
		t.Errorf("Parts(1000, 0) = %d, want at least 1", got)
	}
}
