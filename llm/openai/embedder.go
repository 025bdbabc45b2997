package openai

import (
	"context"
	"fmt"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/day1ai/day1/llm"
)

// Embedder is an llm.Embedder that calls the embeddings endpoint of an
// OpenAI-compatible API (POST {BaseURL}/embeddings). It is safe for concurrent use.
type Embedder struct {
	c        *caller
	model    string
	dims     int
	sendDims bool
	batch    int
	name     string
}

var _ llm.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder configured by cfg; see Config for the defaults. It
// sends no request. It fails with a *llm.ValidationError (matching
// llm.ErrInvalidArgument) naming the Config field that is wrong: an invalid
// BaseURL, no API key for api.openai.com, no Dimensions for a model other than
// OpenAI's, a BatchSize or retry delay out of range.
func NewEmbedder(cfg Config) (*Embedder, error) {
	// Only dimensions the caller asked for are sent; a model's native length is not.
	sendDims := cfg.Dimensions != 0 && !cfg.OmitDimensions
	cfg = cfg.withDefaults()
	if err := cfg.validateEmbedder(); err != nil {
		return nil, err
	}
	return &Embedder{
		c:        newCaller(cfg),
		model:    cfg.EmbeddingModel,
		dims:     cfg.Dimensions,
		sendDims: sendDims,
		batch:    cfg.BatchSize,
		name:     fmt.Sprintf("openai-%s-%d", cfg.EmbeddingModel, cfg.Dimensions),
	}, nil
}

// Dimensions returns Config.Dimensions, the length of every vector Embed returns.
func (e *Embedder) Dimensions() int { return e.dims }

// Quality returns llm.QualitySemantic: the vectors come from a trained model.
func (e *Embedder) Quality() llm.Quality { return llm.QualitySemantic }

// Name returns "openai-" followed by the model and the dimensions, such as
// "openai-text-embedding-3-small-1536".
func (e *Embedder) Name() string { return e.name }

// Embed returns one vector of Dimensions components per text, in the order of texts.
//
// Texts are sent in requests of at most Config.BatchSize inputs, one request after
// the other, and each response is put back in order by its "index". Embed fails as a
// whole, returning nil and:
//   - an error wrapping llm.ErrEmptyText, naming its index, for a text that is empty
//     or only white space, before any request is sent;
//   - an *Error (matching ErrUnauthorized, ErrRateLimited, ErrUnavailable or
//     ErrBadRequest) when a request fails after its retries;
//   - an error wrapping ErrBadResponse when a response does not hold exactly one
//     vector of Dimensions components per input;
//   - an error wrapping ctx.Err() once ctx is done.
//
// No texts give an empty result without a request.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("%w (texts[%d] is empty or only white space)", llm.ErrEmptyText, i)
		}
	}
	out := make([][]float32, len(texts))
	for start := 0; start < len(texts); start += e.batch {
		end := min(start+e.batch, len(texts))
		vecs, err := e.embedBatch(ctx, texts[start:end], start)
		if err != nil {
			return nil, err
		}
		copy(out[start:end], vecs)
	}
	return out, nil
}

// embedBatch embeds texts in one request; offset is the index of texts[0] in the
// caller's list, for error messages.
func (e *Embedder) embedBatch(ctx context.Context, texts []string, offset int) ([][]float32, error) {
	req := goopenai.EmbeddingRequest{
		Input:          texts,
		Model:          goopenai.EmbeddingModel(e.model),
		EncodingFormat: goopenai.EmbeddingEncodingFormatFloat,
	}
	if e.sendDims {
		req.Dimensions = e.dims
	}
	var resp goopenai.EmbeddingResponse
	err := e.c.do(ctx, "embeddings", e.model, func(ctx context.Context) error {
		var err error
		resp, err = e.c.client.CreateEmbeddings(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: embeddings with model %q: %s", ErrBadResponse, e.model, fmt.Sprintf(format, args...))
	}
	if len(resp.Data) != len(texts) {
		return nil, bad("%d embeddings for %d inputs", len(resp.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		switch {
		case d.Index < 0 || d.Index >= len(texts):
			return nil, bad("index %d is out of range for a request of %d inputs", d.Index, len(texts))
		case out[d.Index] != nil:
			return nil, bad("index %d appears twice", d.Index)
		case len(d.Embedding) != e.dims:
			return nil, bad("the vector of texts[%d] has %d components, want %d; set Config.Dimensions to the model's vector length",
				offset+d.Index, len(d.Embedding), e.dims)
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}
