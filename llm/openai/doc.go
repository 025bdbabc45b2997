// Package openai implements llm.Embedder and llm.Model over any OpenAI-compatible
// HTTP API: OpenAI itself, Azure-style gateways that speak the same wire format,
// Ollama, vLLM, LM Studio, llama.cpp's server and the like. It is built on
// github.com/sashabaranov/go-openai.
//
//	e, err := openai.NewEmbedder(openai.Config{}) // OpenAI, key from OPENAI_API_KEY
//	m, err := openai.NewModel(openai.Config{
//		BaseURL:   "http://localhost:11434/v1", // Ollama: no key needed
//		ChatModel: "llama3.2",
//	})
//
// # Configuration
//
// One [Config] serves both constructors; every field documents its default, and
// NewEmbedder and NewModel fill the defaults, then validate, failing with a
// *llm.ValidationError that names the field. The defaults talk to OpenAI:
// base URL https://api.openai.com/v1, embedding model text-embedding-3-small with
// 1536 dimensions, chat model gpt-4o-mini, 256 texts per embeddings request.
//
// Two environment variables fill empty fields: OPENAI_BASE_URL for Config.BaseURL and
// OPENAI_API_KEY for Config.APIKey. A key is required only for api.openai.com; a
// local endpoint works without one and then gets no Authorization header.
//
// Embedding models other than OpenAI's need Config.Dimensions. When Dimensions is
// set it is also sent as the "dimensions" parameter, which text-embedding-3 models
// use to shorten their vectors; set Config.OmitDimensions for endpoints that reject
// it. Every vector is checked to have exactly Dimensions components.
//
// # Embeddings
//
// [Embedder.Embed] splits long lists into requests of Config.BatchSize texts, puts
// each response back in input order by its "index", and fails as a whole: either
// every text gets its vector or the call returns an error and no vectors. A text that
// is empty or only white space is refused before any request, with an error wrapping
// llm.ErrEmptyText. [Embedder.Name] ("openai-text-embedding-3-small-1536") names the
// model and dimensions, so vectors of different configurations are never compared.
//
// # Chat
//
// [Model.Complete] sends llm.Request as one chat completion: System as a leading
// system message, then Messages, with Temperature and MaxTokens when they are not
// zero. Request.JSON asks for OpenAI's JSON mode (response_format json_object).
// Decode JSON answers with llm.CompleteJSON, which turns a malformed reply into an
// *llm.MalformedOutputError.
//
// # Retries and errors
//
// Each request is retried with exponential backoff (github.com/cenkalti/backoff/v4)
// on HTTP 408, 429 and 5xx and on transport errors (no response, or an attempt that
// ran past Config.Timeout), up to Config.MaxRetries times (default 3). Waits start at
// Config.RetryDelay (500ms) and grow up to Config.MaxRetryDelay (30s); a Retry-After
// header, in seconds or as an HTTP date, or OpenAI's retry-after-ms header, sets the
// wait instead, and a Retry-After longer than MaxRetryDelay ends the call at once.
// Other statuses (400, 401, 403, 404, 422 ...) are never retried. The caller's
// context bounds the whole call, waits included: once it is done the call returns an
// error wrapping ctx.Err(), with the last failure still reachable.
//
// A request that fails for good returns an [*Error] carrying the HTTP status, the
// API's error message, type and code (from its {"error": {...}} body), the
// Retry-After it asked for and the number of attempts. It matches one sentinel:
// [ErrUnauthorized] for 401 and 403, [ErrRateLimited] for 429, [ErrUnavailable] for
// 408, 5xx and transport errors, [ErrBadRequest] for other 4xx. It unwraps to
// go-openai's *APIError (or *RequestError when the body was not an OpenAI error
// object), or to the transport error. A successful response that cannot be used
// gives an error wrapping [ErrBadResponse]; a model's refusal gives one wrapping
// [ErrRefused].
//
// # Caching embeddings
//
// Wrap an Embedder in llm.NewCachedEmbedder so the same text is never sent twice:
// the cache is keyed by embedder name and text, bounded (least recently used entries
// go first), shared safely between goroutines, sends only the uncached texts of a
// batch, and reports its hits and misses with Stats.
//
//	e, err := openai.NewEmbedder(openai.Config{})
//	cached := llm.NewCachedEmbedder(e, 50_000)
package openai
