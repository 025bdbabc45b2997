package vecmath

import (
	"math"
	"slices"
)

// Scored is an item with its score, as [TopK.Sorted] returns it.
type Scored[T any] struct {
	Score float64
	Item  T
}

// TopK collects the k items with the highest scores out of any number pushed, in
// O(log k) per push and O(k) memory. Among equal scores the item pushed first ranks
// higher and is the one kept, so results are deterministic for a given push order.
//
// The zero value keeps nothing; use [NewTopK]. A TopK is not safe for concurrent use.
type TopK[T any] struct {
	k    int
	seq  uint64
	heap []topKEntry[T] // a min-heap: heap[0] is the worst kept item
}

type topKEntry[T any] struct {
	score float64
	seq   uint64 // push order, to break ties
	item  T
}

// worse reports whether entry a ranks below entry b: a lower score, or an equal score
// pushed later.
func worse[T any](a, b *topKEntry[T]) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.seq > b.seq
}

// NewTopK returns a collector that keeps the k highest-scoring items. A k of zero or
// less keeps nothing.
func NewTopK[T any](k int) *TopK[T] {
	k = max(k, 0)
	return &TopK[T]{k: k, heap: make([]topKEntry[T], 0, min(k, 1024))}
}

// Push offers an item. It is kept when fewer than k items are held or when score beats
// the lowest kept score; an item that only ties the lowest score loses to the earlier
// one. NaN scores are ignored.
func (t *TopK[T]) Push(score float64, item T) {
	if t.k == 0 || math.IsNaN(score) {
		return
	}
	e := topKEntry[T]{score: score, seq: t.seq, item: item}
	t.seq++
	if len(t.heap) < t.k {
		t.heap = append(t.heap, e)
		t.up(len(t.heap) - 1)
		return
	}
	if !worse(&t.heap[0], &e) {
		return
	}
	t.heap[0] = e
	t.down(0)
}

// Len returns the number of items kept, at most k.
func (t *TopK[T]) Len() int { return len(t.heap) }

// Min returns the lowest score kept once k items are held, and -Inf before that: a
// candidate scoring at or below Min cannot enter, so callers can skip computing it.
func (t *TopK[T]) Min() float64 {
	if t.k == 0 || len(t.heap) < t.k {
		return math.Inf(-1)
	}
	return t.heap[0].score
}

// Sorted returns the kept items, highest score first, equal scores in push order. It
// returns a new slice and leaves the collector unchanged, so pushing may continue.
func (t *TopK[T]) Sorted() []Scored[T] {
	es := slices.Clone(t.heap)
	slices.SortFunc(es, func(a, b topKEntry[T]) int {
		switch {
		case worse(&b, &a):
			return -1
		case worse(&a, &b):
			return 1
		}
		return 0
	})
	out := make([]Scored[T], len(es))
	for i, e := range es {
		out[i] = Scored[T]{Score: e.score, Item: e.item}
	}
	return out
}

func (t *TopK[T]) up(i int) {
	h := t.heap
	for i > 0 {
		p := (i - 1) / 2
		if !worse(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (t *TopK[T]) down(i int) {
	h := t.heap
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(&h[r], &h[l]) {
			m = r
		}
		if !worse(&h[m], &h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
