package llmfake

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/day1ai/day1/llm"
)

// Embedder is an llm.Embedder that returns the vectors of llm.LocalEmbedder and can be
// told to fail. It records every call.
//
// The zero value embeds with 384 dimensions; NewEmbedder chooses. Methods are safe for
// concurrent use and the setters return the Embedder for chaining.
type Embedder struct {
	inner *llm.LocalEmbedder

	mu       sync.Mutex
	failN    int
	failErr  error
	failWhen func(text string) bool
	calls    int
	texts    []string
}

var _ llm.Embedder = (*Embedder)(nil)

var defaultLocal = llm.NewLocalEmbedder(0)

// NewEmbedder returns an Embedder whose vectors have dims components; dims <= 0 means
// llm.DefaultDimensions.
func NewEmbedder(dims int) *Embedder {
	return &Embedder{inner: llm.NewLocalEmbedder(dims)}
}

func (e *Embedder) local() *llm.LocalEmbedder {
	if e.inner == nil {
		return defaultLocal
	}
	return e.inner
}

// FailNext makes the next n calls of Embed fail with err, or with ErrInjected when err
// is nil. It replaces an earlier FailNext; n <= 0 cancels it.
func (e *Embedder) FailNext(n int, err error) *Embedder {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failN, e.failErr = max(n, 0), orInjected(err)
	return e
}

// FailWhen makes Embed fail with an error wrapping ErrInjected whenever f reports true
// for one of its texts; nil removes the condition. f runs without the Embedder's lock
// held.
func (e *Embedder) FailWhen(f func(text string) bool) *Embedder {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failWhen = f
	return e
}

// Calls returns the number of Embed calls made with a live context, failed ones
// included.
func (e *Embedder) Calls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}

// Texts returns a copy of every text passed to Embed in the calls Calls counts, in
// order.
func (e *Embedder) Texts() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.texts)
}

// Dimensions returns the length of the vectors.
func (e *Embedder) Dimensions() int { return e.local().Dimensions() }

// Quality returns llm.QualityLexical, the quality of llm.LocalEmbedder's vectors.
func (e *Embedder) Quality() llm.Quality { return llm.QualityLexical }

// Name returns the name of the wrapped llm.LocalEmbedder, such as "local-hash-384":
// the vectors are the same, so they may be compared with each other.
func (e *Embedder) Name() string { return e.local().Name() }

// Embed records the call and returns the vectors llm.LocalEmbedder gives, or ctx.Err()
// if ctx is done, or the error of a pending FailNext, or an error wrapping ErrInjected
// when the FailWhen condition holds for a text. Like every llm.Embedder it fails as a
// whole.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.calls++
	e.texts = append(e.texts, texts...)
	if e.failN > 0 {
		e.failN--
		err := e.failErr
		e.mu.Unlock()
		return nil, err
	}
	failWhen := e.failWhen
	e.mu.Unlock()

	if failWhen != nil {
		for i, t := range texts {
			if failWhen(t) {
				return nil, fmt.Errorf("%w: FailWhen holds for texts[%d] %q", ErrInjected, i, shorten(t, 80))
			}
		}
	}
	return e.local().Embed(ctx, texts)
}
