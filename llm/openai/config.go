package openai

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/day1ai/day1/llm"
)

// Defaults of Config.
const (
	// DefaultBaseURL is OpenAI's API, used when Config.BaseURL and OPENAI_BASE_URL are
	// empty.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultEmbeddingModel is the embedding model used when Config.EmbeddingModel is
	// empty.
	DefaultEmbeddingModel = "text-embedding-3-small"
	// DefaultChatModel is the chat model used when Config.ChatModel is empty.
	DefaultChatModel = "gpt-4o-mini"
	// DefaultBatchSize is the number of texts sent per embeddings request when
	// Config.BatchSize is zero.
	DefaultBatchSize = 256
	// MaxBatchSize is the largest Config.BatchSize: OpenAI takes at most 2048 inputs
	// per embeddings request.
	MaxBatchSize = 2048
	// DefaultMaxRetries is the number of retries after a failed attempt when
	// Config.MaxRetries is zero.
	DefaultMaxRetries = 3
	// DefaultTimeout bounds each attempt when Config.Timeout is zero.
	DefaultTimeout = 60 * time.Second
	// DefaultRetryDelay is the wait before the first retry when Config.RetryDelay is
	// zero; later waits grow exponentially, with jitter.
	DefaultRetryDelay = 500 * time.Millisecond
	// DefaultMaxRetryDelay is the longest wait between attempts when
	// Config.MaxRetryDelay is zero.
	DefaultMaxRetryDelay = 30 * time.Second
)

// Environment variables read by Config's defaults.
const (
	// EnvAPIKey names the variable that supplies Config.APIKey when it is empty.
	EnvAPIKey = "OPENAI_API_KEY"
	// EnvBaseURL names the variable that supplies Config.BaseURL when it is empty.
	EnvBaseURL = "OPENAI_BASE_URL"
)

// openAIHost is the host whose endpoint needs an API key.
const openAIHost = "api.openai.com"

// knownDimensions are the native vector lengths of OpenAI's embedding models.
var knownDimensions = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
}

// Config configures an Embedder or a Model. The zero Config talks to OpenAI with the
// key in OPENAI_API_KEY. One Config can make both: NewEmbedder ignores ChatModel and
// NewModel ignores the embedding fields.
type Config struct {
	// BaseURL is the root of the OpenAI-compatible API, up to and including its
	// version, such as "http://localhost:11434/v1" for Ollama or
	// "http://localhost:8000/v1" for vLLM. Requests go to BaseURL + "/embeddings" and
	// BaseURL + "/chat/completions". Default: the OPENAI_BASE_URL environment
	// variable, or DefaultBaseURL ("https://api.openai.com/v1") when that is empty.
	// It must be an absolute http or https URL.
	BaseURL string

	// APIKey is sent as "Authorization: Bearer <APIKey>". Default: the
	// OPENAI_API_KEY environment variable. It is required when BaseURL's host is
	// api.openai.com; other endpoints (local servers) may go without one, and then no
	// Authorization header is sent.
	APIKey string

	// EmbeddingModel is the embedding model's name. Default DefaultEmbeddingModel
	// ("text-embedding-3-small").
	EmbeddingModel string

	// Dimensions is the length of every embedding vector; a response with any other
	// length is an error. Default: the model's native length for OpenAI's models
	// (1536 for text-embedding-3-small and text-embedding-ada-002, 3072 for
	// text-embedding-3-large); other models need it set. When set, it is sent as the
	// request's "dimensions" parameter (text-embedding-3 models shorten their vectors
	// to it) unless OmitDimensions is set. It must be 1 to 8192.
	Dimensions int

	// OmitDimensions leaves the "dimensions" parameter out of embedding requests even
	// when Dimensions is set, for endpoints that reject it. Responses are still checked
	// against Dimensions. Default false.
	OmitDimensions bool

	// ChatModel is the chat model's name. Default DefaultChatModel ("gpt-4o-mini").
	ChatModel string

	// BatchSize is the largest number of texts sent in one embeddings request; longer
	// lists are split into several requests. Default DefaultBatchSize (256). It must be
	// 1 to MaxBatchSize (2048).
	BatchSize int

	// MaxRetries is the number of retries after a failed attempt, for the failures
	// worth retrying: HTTP 408, 429 and 5xx, and transport errors such as a refused
	// connection or an attempt that ran past Timeout. Zero means DefaultMaxRetries
	// (3); a negative value turns retries off.
	MaxRetries int

	// Timeout bounds each attempt, through its context; the caller's context bounds
	// the whole call, retries included. Zero means DefaultTimeout (60s); a negative
	// value sets no per-attempt bound.
	Timeout time.Duration

	// RetryDelay is the wait before the first retry; each later wait is about
	// 1.5 times longer, randomised by ±50%, up to MaxRetryDelay. A Retry-After (or
	// retry-after-ms) response header replaces the computed wait. Zero means
	// DefaultRetryDelay (500ms). It must not be negative nor exceed MaxRetryDelay.
	RetryDelay time.Duration

	// MaxRetryDelay is the longest wait between attempts. When a response's
	// Retry-After asks for a longer wait, the call gives up at once with that
	// response's error rather than wait or retry early. Zero means
	// DefaultMaxRetryDelay (30s). It must not be negative.
	MaxRetryDelay time.Duration

	// HTTPClient sends the requests. Default: a new http.Client without a timeout
	// (Timeout and the caller's context bound each request).
	HTTPClient *http.Client

	// Test holds seams for tests. Leave it zero in production.
	Test TestConfig
}

// TestConfig holds the test seams of an Embedder or Model. Zero fields use the real
// implementation.
type TestConfig struct {
	// Getenv reads the environment variables OPENAI_API_KEY and OPENAI_BASE_URL.
	// Default os.Getenv.
	Getenv func(key string) string

	// Now is the clock that turns a Retry-After date into a wait. Default time.Now.
	Now func() time.Time

	// After replaces the timer between attempts: it is called with each wait and
	// returns a channel that receives once the wait is over (the retry also stops as
	// soon as the caller's context is done). Default time.After. A test can record the
	// waits and return a channel that fires at once.
	After func(d time.Duration) <-chan time.Time
}

// withDefaults returns a copy of c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.Test.Getenv == nil {
		c.Test.Getenv = os.Getenv
	}
	if c.Test.Now == nil {
		c.Test.Now = time.Now
	}
	if c.BaseURL == "" {
		c.BaseURL = strings.TrimSpace(c.Test.Getenv(EnvBaseURL))
	}
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.APIKey == "" {
		c.APIKey = strings.TrimSpace(c.Test.Getenv(EnvAPIKey))
	}
	if c.EmbeddingModel == "" {
		c.EmbeddingModel = DefaultEmbeddingModel
	}
	if c.Dimensions == 0 {
		c.Dimensions = knownDimensions[c.EmbeddingModel]
	}
	if c.ChatModel == "" {
		c.ChatModel = DefaultChatModel
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	if c.MaxRetryDelay == 0 {
		c.MaxRetryDelay = DefaultMaxRetryDelay
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	return c
}

// validate checks the fields an Embedder and a Model share. It runs after
// withDefaults.
func (c Config) validate() error {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return llm.Invalid("Config.BaseURL", "must be an absolute http or https URL such as "+DefaultBaseURL+" or http://localhost:11434/v1", c.BaseURL)
	}
	if c.APIKey == "" && strings.EqualFold(u.Hostname(), openAIHost) {
		return llm.Invalid("Config.APIKey", fmt.Sprintf("is required for %s; set Config.APIKey or the %s environment variable", c.BaseURL, EnvAPIKey), nil)
	}
	if c.RetryDelay < 0 {
		return llm.Invalid("Config.RetryDelay", "must not be negative (0 means the default 500ms)", c.RetryDelay)
	}
	if c.MaxRetryDelay < 0 {
		return llm.Invalid("Config.MaxRetryDelay", "must not be negative (0 means the default 30s)", c.MaxRetryDelay)
	}
	if c.RetryDelay > c.MaxRetryDelay {
		return llm.Invalid("Config.RetryDelay", fmt.Sprintf("must not exceed Config.MaxRetryDelay (%v)", c.MaxRetryDelay), c.RetryDelay)
	}
	return nil
}

// validateEmbedder checks a Config for NewEmbedder, after withDefaults.
func (c Config) validateEmbedder() error {
	if err := c.validate(); err != nil {
		return err
	}
	if strings.TrimSpace(c.EmbeddingModel) != c.EmbeddingModel {
		return llm.Invalid("Config.EmbeddingModel", "must not start or end with white space", c.EmbeddingModel)
	}
	if c.Dimensions == 0 {
		return llm.Invalid("Config.Dimensions", "is required for an embedding model other than OpenAI's (text-embedding-3-small, text-embedding-3-large, text-embedding-ada-002); set it to the model's vector length", c.EmbeddingModel)
	}
	if c.Dimensions < 1 || c.Dimensions > llm.MaxDimensions {
		return llm.Invalid("Config.Dimensions", fmt.Sprintf("must be 1 to %d", llm.MaxDimensions), c.Dimensions)
	}
	if c.BatchSize < 1 || c.BatchSize > MaxBatchSize {
		return llm.Invalid("Config.BatchSize", fmt.Sprintf("must be 1 to %d (0 means the default %d)", MaxBatchSize, DefaultBatchSize), c.BatchSize)
	}
	return nil
}

// validateModel checks a Config for NewModel, after withDefaults.
func (c Config) validateModel() error {
	if err := c.validate(); err != nil {
		return err
	}
	if strings.TrimSpace(c.ChatModel) != c.ChatModel {
		return llm.Invalid("Config.ChatModel", "must not start or end with white space", c.ChatModel)
	}
	return nil
}
