package llm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/llmfake"
)

func TestCachedEmbedderSendsOnlyUncachedTexts(t *testing.T) {
	t.Parallel()
	type step struct {
		texts    []string
		wantSent []string // texts the inner embedder receives in this call
	}
	tests := []struct {
		name      string
		max       int
		steps     []step
		wantStats llm.CacheStats
	}{
		{
			name: "repeats across calls hit",
			steps: []step{
				{[]string{"alpha", "beta"}, []string{"alpha", "beta"}},
				{[]string{"beta", "gamma", "alpha"}, []string{"gamma"}},
				{[]string{"alpha"}, nil},
			},
			wantStats: llm.CacheStats{Hits: 3, Misses: 3, Entries: 3},
		},
		{
			name: "repeats within a batch are sent once",
			steps: []step{
				{[]string{"alpha", "beta", "alpha", "alpha"}, []string{"alpha", "beta"}},
				{[]string{"beta", "beta"}, nil},
			},
			wantStats: llm.CacheStats{Hits: 4, Misses: 2, Entries: 2},
		},
		{
			name: "least recently used is evicted",
			max:  2,
			steps: []step{
				{[]string{"alpha", "beta"}, []string{"alpha", "beta"}},
				{[]string{"alpha"}, nil},               // alpha is now the most recent
				{[]string{"gamma"}, []string{"gamma"}}, // evicts beta
				{[]string{"alpha", "beta"}, []string{"beta"}},
			},
			wantStats: llm.CacheStats{Hits: 2, Misses: 4, Entries: 2, Evictions: 2},
		},
		{
			name:      "empty batch",
			steps:     []step{{[]string{}, nil}},
			wantStats: llm.CacheStats{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inner := llmfake.NewEmbedder(32)
			ref := llm.NewLocalEmbedder(32)
			c := llm.NewCachedEmbedder(inner, tt.max)
			for i, s := range tt.steps {
				before := len(inner.Texts())
				got, err := c.Embed(context.Background(), s.texts)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				sent := inner.Texts()[before:]
				if diff := cmp.Diff(s.wantSent, sent, cmpEmptyNil); diff != "" {
					t.Errorf("step %d: texts sent to the inner embedder (-want +got):\n%s", i, diff)
				}
				want, err := ref.Embed(context.Background(), s.texts)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("step %d: vectors differ from the inner embedder's (-want +got):\n%s", i, diff)
				}
			}
			if diff := cmp.Diff(tt.wantStats, c.Stats()); diff != "" {
				t.Errorf("Stats (-want +got):\n%s", diff)
			}
		})
	}
}

// cmpEmptyNil treats nil and empty string slices as equal.
var cmpEmptyNil = cmp.Comparer(func(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return cmp.Equal([]string(a), []string(b))
})

func TestCachedEmbedderPassesThrough(t *testing.T) {
	t.Parallel()
	inner := llmfake.NewEmbedder(48)
	c := llm.NewCachedEmbedder(inner, 0)
	if c.Name() != inner.Name() || c.Dimensions() != 48 {
		t.Errorf("Name, Dimensions = %q, %d; want %q, 48", c.Name(), c.Dimensions(), inner.Name())
	}
	var _ llm.Embedder = c
}

func TestCachedEmbedderErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("embedding service down")
	inner := llmfake.NewEmbedder(16).FailNext(1, boom)
	c := llm.NewCachedEmbedder(inner, 0)

	got, err := c.Embed(context.Background(), []string{"alpha", "beta"})
	if !errors.Is(err, boom) || got != nil {
		t.Fatalf("Embed with a failing inner embedder = %v, %v; want nil, the inner error", got, err)
	}
	// Nothing was cached: the next call sends both texts again.
	if _, err := c.Embed(context.Background(), []string{"alpha", "beta"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alpha", "beta", "alpha", "beta"}, inner.Texts()); diff != "" {
		t.Errorf("texts sent (-want +got):\n%s", diff)
	}

	// An empty text fails the whole batch with the inner embedder's ErrEmptyText, and
	// the good text of that batch is not cached either.
	got, err = c.Embed(context.Background(), []string{"gamma", "the and of"})
	if !errors.Is(err, llm.ErrEmptyText) || got != nil {
		t.Fatalf("Embed with an empty text = %v, %v; want nil, ErrEmptyText", got, err)
	}
	if _, err := c.Embed(context.Background(), []string{"gamma"}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(inner.Texts(), "|"), "gamma"); n != 2 {
		t.Errorf("gamma sent %d times, want 2 (the failed batch must not be cached)", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Embed(ctx, []string{"alpha"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context = %v, want context.Canceled", err)
	}

	var none llm.CachedEmbedder
	if _, err := (&none).Embed(context.Background(), []string{"x"}); err == nil {
		t.Error("a CachedEmbedder without an inner embedder must fail")
	}
	if _, err := llm.NewCachedEmbedder(nil, 1).Embed(context.Background(), []string{"x"}); err == nil ||
		!strings.Contains(err.Error(), "NewCachedEmbedder") {
		t.Errorf("Embed without an inner embedder = %v, want an error naming NewCachedEmbedder", err)
	}
}

// shortEmbedder returns one vector too few.
type shortEmbedder struct{ llm.Embedder }

func (e shortEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := e.Embedder.Embed(ctx, texts)
	return vs[:len(vs)-1], err
}

func TestCachedEmbedderChecksInnerShape(t *testing.T) {
	t.Parallel()
	c := llm.NewCachedEmbedder(shortEmbedder{llm.NewLocalEmbedder(8)}, 0)
	got, err := c.Embed(context.Background(), []string{"alpha", "beta"})
	if err == nil || got != nil || !strings.Contains(err.Error(), "returned 1 vectors for 2 texts") {
		t.Fatalf("Embed = %v, %v; want an error about the vector count", got, err)
	}
	if c.Stats().Entries != 0 {
		t.Errorf("a malformed result was cached")
	}
}

func TestCachedEmbedderReturnsCopies(t *testing.T) {
	t.Parallel()
	c := llm.NewCachedEmbedder(llmfake.NewEmbedder(8), 0)
	first, err := c.Embed(context.Background(), []string{"alpha", "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	want := append([]float32(nil), first[0]...)
	first[0][0] = 42
	first[1] = append(first[1], 7) // must not run into another vector
	again, err := c.Embed(context.Background(), []string{"alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again[0]); diff != "" {
		t.Errorf("a caller's change reached the cache (-want +got):\n%s", diff)
	}
}

// gateEmbedder blocks every Embed call until the test releases it, and can fail it.
type gateEmbedder struct {
	llm.Embedder
	started chan []string
	release chan error
}

func (e *gateEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.started <- texts
	if err := <-e.release; err != nil {
		return nil, err
	}
	return e.Embedder.Embed(ctx, texts)
}

func newGate() *gateEmbedder {
	return &gateEmbedder{Embedder: llm.NewLocalEmbedder(8), started: make(chan []string), release: make(chan error)}
}

// signalCtx closes asked the first time Done is called: CachedEmbedder calls Done
// only when it starts waiting for another call's embedding.
type signalCtx struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func newSignalCtx(ctx context.Context) *signalCtx {
	return &signalCtx{Context: ctx, asked: make(chan struct{})}
}

func (c *signalCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}

func TestCachedEmbedderWaitsForConcurrentEmbedding(t *testing.T) {
	t.Parallel()
	g := newGate()
	c := llm.NewCachedEmbedder(g, 0)
	ctx := context.Background()

	first := make(chan error, 1)
	go func() {
		_, err := c.Embed(ctx, []string{"shared"})
		first <- err
	}()
	if sent := <-g.started; !cmp.Equal(sent, []string{"shared"}) {
		t.Fatalf("first call sent %q", sent)
	}
	second := make(chan [][]float32, 1)
	go func() {
		vs, err := c.Embed(ctx, []string{"private note", "shared"})
		if err != nil {
			t.Error(err)
		}
		second <- vs
	}()
	// The second call embeds only its own text and waits for "shared".
	if sent := <-g.started; !cmp.Equal(sent, []string{"private note"}) {
		t.Fatalf("second call sent %q, want only [private note]", sent)
	}
	g.release <- nil // the second call's "private note"
	g.release <- nil // the first call's "shared"
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	vs := <-second
	want, _ := llm.NewLocalEmbedder(8).Embed(ctx, []string{"private note", "shared"})
	if diff := cmp.Diff(want, vs); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(llm.CacheStats{Hits: 1, Misses: 2, Entries: 2}, c.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestCachedEmbedderWaiterEmbedsWhenTheOtherCallFails(t *testing.T) {
	t.Parallel()
	g := newGate()
	c := llm.NewCachedEmbedder(g, 0)
	ctx := context.Background()

	first := make(chan error, 1)
	go func() {
		_, err := c.Embed(ctx, []string{"shared"})
		first <- err
	}()
	<-g.started
	waiting := newSignalCtx(ctx)
	second := make(chan error, 1)
	go func() {
		_, err := c.Embed(waiting, []string{"shared"})
		second <- err
	}()
	<-waiting.asked // the second call waits for the first
	boom := errors.New("first call failed")
	g.release <- boom
	if err := <-first; !errors.Is(err, boom) {
		t.Fatalf("first call = %v, want its inner error", err)
	}
	// The second call now embeds the text itself.
	if sent := <-g.started; !cmp.Equal(sent, []string{"shared"}) {
		t.Fatalf("second call sent %q", sent)
	}
	g.release <- nil
	if err := <-second; err != nil {
		t.Fatalf("second call = %v, want success", err)
	}
}

func TestCachedEmbedderWaiterHonoursContext(t *testing.T) {
	t.Parallel()
	g := newGate()
	c := llm.NewCachedEmbedder(g, 0)

	first := make(chan error, 1)
	go func() {
		_, err := c.Embed(context.Background(), []string{"shared"})
		first <- err
	}()
	<-g.started
	ctx, cancel := context.WithCancel(context.Background())
	waiting := newSignalCtx(ctx)
	second := make(chan error, 1)
	go func() {
		_, err := c.Embed(waiting, []string{"shared"})
		second <- err
	}()
	<-waiting.asked // the second call waits for the first
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("waiting call = %v, want context.Canceled", err)
	}
	g.release <- nil
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

func TestCachedEmbedderConcurrentEmbedsEachTextOnce(t *testing.T) {
	t.Parallel()
	inner := llmfake.NewEmbedder(16)
	c := llm.NewCachedEmbedder(inner, 0)
	const workers, distinct = 8, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range distinct {
				batch := []string{fmt.Sprint("text ", (i+w)%distinct), fmt.Sprint("text ", (i*7+w)%distinct)}
				vs, err := c.Embed(context.Background(), batch)
				if err != nil || len(vs) != 2 || len(vs[0]) != 16 {
					t.Errorf("Embed = %d vectors, %v", len(vs), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	counts := map[string]int{}
	for _, s := range inner.Texts() {
		counts[s]++
	}
	for s, n := range counts {
		if n != 1 {
			t.Errorf("%q embedded %d times, want once", s, n)
		}
	}
	st := c.Stats()
	if len(counts) != distinct || st.Misses != distinct || st.Hits != workers*distinct*2-distinct {
		t.Errorf("%d distinct texts embedded, Stats %+v; want %d misses and %d hits", len(counts), st, distinct, workers*distinct*2-distinct)
	}
}

func ExampleCachedEmbedder() {
	inner := llmfake.NewEmbedder(64)
	e := llm.NewCachedEmbedder(inner, 1000)
	ctx := context.Background()

	_, _ = e.Embed(ctx, []string{"login fails", "cache miss", "login fails"})
	_, _ = e.Embed(ctx, []string{"login fails", "new text"})

	fmt.Println("sent to the model:", inner.Texts())
	fmt.Printf("%+v\n", e.Stats())
	// Output:
	// sent to the model: [login fails cache miss new text]
	// {Hits:2 Misses:3 Entries:3 Evictions:0}
}
