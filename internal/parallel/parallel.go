// Package parallel splits work over the processors.
package parallel

import (
	"runtime"
	"sync"
)

// Parts returns how many parts n items should be split into when each part should
// hold at least minPart items: at most GOMAXPROCS, at least 1.
func Parts(n, minPart int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/max(1, minPart)))
}

// Do splits [0, n) into parts contiguous ranges of nearly equal size and calls fn on
// each, the last one on the calling goroutine and the others on goroutines of their
// own, and returns when every call has returned. With one part, fn(0, 0, n) runs
// alone, on the calling goroutine.
func Do(n, parts int, fn func(part, lo, hi int)) {
	parts = max(1, min(parts, n))
	var wg sync.WaitGroup
	for p := range parts - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(p, p*n/parts, (p+1)*n/parts)
		}()
	}
	fn(parts-1, (parts-1)*n/parts, n)
	wg.Wait()
}
