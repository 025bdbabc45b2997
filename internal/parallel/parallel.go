// Package parallel splits work over the processors.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
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

// Each splits [0, n) into chunks of chunk items (the last may hold fewer) and calls fn
// on each from up to workers goroutines, the calling one among them, and returns when
// every call has returned. A goroutine takes the next chunk when it is done with one,
// so that one the scheduler holds back delays the others by a chunk at most, where Do
// would leave them waiting for its whole part. worker, from 0 to workers-1, tells the
// goroutines apart, for state of their own. With one worker, or one chunk, every call
// is made on the calling goroutine.
func Each(n, chunk, workers int, fn func(worker, lo, hi int)) {
	chunk = max(1, chunk)
	chunks := (n + chunk - 1) / chunk
	workers = max(1, min(workers, chunks))
	var next atomic.Int64
	run := func(w int) {
		for {
			c := int(next.Add(1)) - 1
			if c >= chunks {
				return
			}
			fn(w, c*chunk, min(n, (c+1)*chunk))
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(w)
		}()
	}
	run(0)
	wg.Wait()
}
