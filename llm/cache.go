package llm

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
)

// DefaultCacheEntries is the number of vectors a CachedEmbedder keeps when made with
// maxEntries <= 0. At 1536 dimensions that is about 60 MB of vectors.
const DefaultCacheEntries = 10000

// errNoInner is returned by a CachedEmbedder made without an inner Embedder.
var errNoInner = errors.New("day1: CachedEmbedder has no inner Embedder; pass one to NewCachedEmbedder")

// CachedEmbedder is an [Embedder] that remembers the vectors of another Embedder, so
// that the same text is embedded only once while it stays in the cache.
//
// Entries are keyed by the inner embedder's Name and the exact text, and the least
// recently used entry is dropped when the cache is full. A batch sends only its
// uncached texts to the inner embedder, each once however often it repeats in the
// batch; a text that another call is embedding at the same moment is waited for
// rather than embedded twice. Vectors are copied on the way out, so callers may
// modify what they get.
//
// CachedEmbedder has the contract of the embedder it wraps: the same Name and
// Dimensions, the same vectors, errors of the inner embedder returned as they are,
// failure as a whole. It is safe for concurrent use.
type CachedEmbedder struct {
	inner Embedder
	max   int

	mu      sync.Mutex
	lru     *list.List // of *cacheEntry, most recently used first
	entries map[cacheKey]*list.Element
	pending map[cacheKey]*pendingEmbed
	hits    uint64
	misses  uint64
	evicted uint64
}

var _ Embedder = (*CachedEmbedder)(nil)

type cacheKey struct {
	name string
	text string
}

type cacheEntry struct {
	key cacheKey
	vec []float32
}

// pendingEmbed is a text being embedded by one call, which other calls may wait for.
// vec and err are set before done is closed.
type pendingEmbed struct {
	done chan struct{}
	vec  []float32
	err  error
}

// CacheStats counts what a CachedEmbedder did since it was made.
type CacheStats struct {
	// Hits is the number of texts answered without asking the inner embedder: found in
	// the cache, repeated earlier in the same batch, or embedded by a concurrent call.
	Hits uint64
	// Misses is the number of texts sent to the inner embedder, failed calls included.
	Misses uint64
	// Entries is the number of vectors in the cache now.
	Entries int
	// Evictions is the number of vectors dropped to make room for newer ones.
	Evictions uint64
}

// NewCachedEmbedder returns a CachedEmbedder over e keeping at most maxEntries
// vectors; maxEntries <= 0 means DefaultCacheEntries (10000). A nil e gives an
// embedder whose Embed fails with an error saying so.
func NewCachedEmbedder(e Embedder, maxEntries int) *CachedEmbedder {
	if maxEntries <= 0 {
		maxEntries = DefaultCacheEntries
	}
	return &CachedEmbedder{
		inner:   e,
		max:     maxEntries,
		lru:     list.New(),
		entries: make(map[cacheKey]*list.Element),
		pending: make(map[cacheKey]*pendingEmbed),
	}
}

// Dimensions returns the inner embedder's Dimensions, or 0 without one.
func (c *CachedEmbedder) Dimensions() int {
	if c.inner == nil {
		return 0
	}
	return c.inner.Dimensions()
}

// Name returns the inner embedder's Name, or "" without one: cached vectors are the
// inner embedder's and compare with them.
func (c *CachedEmbedder) Name() string {
	if c.inner == nil {
		return ""
	}
	return c.inner.Name()
}

// Quality returns the inner embedder's quality (see QualityOf).
func (c *CachedEmbedder) Quality() Quality { return QualityOf(c.inner) }

// Stats returns the hit and miss counts and the current size of the cache.
func (c *CachedEmbedder) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Misses: c.misses, Entries: c.lru.Len(), Evictions: c.evicted}
}

// Embed returns one vector per text, from the cache where it can and from the inner
// embedder for the rest, which it then caches. It fails as a whole with the inner
// embedder's error, or with an error wrapping ctx.Err() once ctx is done, including
// while it waits for a text another call is embedding. Failed texts are not cached.
func (c *CachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.inner == nil {
		return nil, errNoInner
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := c.inner.Name()
	found := make(map[string][]float32, len(texts))
	// todo holds the distinct texts still without a vector, in first-seen order.
	todo := make([]string, 0, len(texts))
	for _, t := range texts {
		if _, seen := found[t]; !seen {
			found[t] = nil
			todo = append(todo, t)
		}
	}
	c.mu.Lock()
	c.hits += uint64(len(texts) - len(todo))
	c.mu.Unlock()

	// Each round embeds what nobody else is embedding and waits for the rest. A text
	// whose embedder failed (its caller's context may have ended) goes round again and
	// is embedded here.
	for len(todo) > 0 {
		var mine []string
		var waits []string
		var waitOn []*pendingEmbed
		c.mu.Lock()
		for _, t := range todo {
			k := cacheKey{name, t}
			if el, ok := c.entries[k]; ok {
				c.lru.MoveToFront(el)
				found[t] = el.Value.(*cacheEntry).vec
				c.hits++
				continue
			}
			if p, ok := c.pending[k]; ok {
				waits, waitOn = append(waits, t), append(waitOn, p)
				continue
			}
			c.pending[k] = &pendingEmbed{done: make(chan struct{})}
			mine = append(mine, t)
		}
		c.misses += uint64(len(mine))
		c.mu.Unlock()

		if len(mine) > 0 {
			vecs, err := c.embedMine(ctx, name, mine)
			if err != nil {
				return nil, err
			}
			for i, t := range mine {
				found[t] = vecs[i]
			}
		}

		todo = todo[:0]
		for i, p := range waitOn {
			select {
			case <-p.done:
			case <-ctx.Done():
				return nil, fmt.Errorf("day1: waiting for a cached embedding: %w", ctx.Err())
			}
			if p.err != nil {
				todo = append(todo, waits[i])
				continue
			}
			found[waits[i]] = p.vec
			c.mu.Lock()
			c.hits++
			c.mu.Unlock()
		}
	}

	// Copy into one backing array, capping each vector so that appending to one cannot
	// overwrite the next.
	out := make([][]float32, len(texts))
	backing := make([]float32, 0, len(texts)*max(c.inner.Dimensions(), 0))
	for i, t := range texts {
		v := found[t]
		start := len(backing)
		backing = append(backing, v...)
		out[i] = backing[start:len(backing):len(backing)]
	}
	return out, nil
}

// embedMine asks the inner embedder for texts, which this call has marked pending,
// then caches the vectors and releases the waiters, on success and on failure alike.
func (c *CachedEmbedder) embedMine(ctx context.Context, name string, texts []string) (vecs [][]float32, err error) {
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, t := range texts {
			k := cacheKey{name, t}
			p := c.pending[k]
			delete(c.pending, k)
			if err != nil {
				p.err = err
			} else {
				p.vec = vecs[i]
				c.store(k, vecs[i])
			}
			close(p.done)
		}
	}()
	vecs, err = c.inner.Embed(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		vecs, err = nil, fmt.Errorf("day1: embedder %q returned %d vectors for %d texts", name, len(vecs), len(texts))
	}
	return vecs, err
}

// store adds or refreshes an entry and drops the least recently used ones beyond the
// bound. c.mu must be held.
func (c *CachedEmbedder) store(k cacheKey, vec []float32) {
	if el, ok := c.entries[k]; ok {
		el.Value.(*cacheEntry).vec = vec
		c.lru.MoveToFront(el)
		return
	}
	c.entries[k] = c.lru.PushFront(&cacheEntry{key: k, vec: vec})
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.entries, last.Value.(*cacheEntry).key)
		c.evicted++
	}
}
