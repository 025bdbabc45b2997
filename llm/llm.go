package llm

import "context"

// Embedder turns texts into vectors.
//
// Contract for implementations:
//   - Embed returns exactly one vector per text, in the order of texts, each of
//     Dimensions() components; any other shape is a bug in the implementation.
//   - Embed honours ctx: it returns promptly with an error wrapping ctx.Err() once ctx
//     is done.
//   - Embed fails as a whole: on error it returns a nil slice, never a partial result.
//     A text that yields nothing to embed is an error wrapping [ErrEmptyText].
//   - Equal texts give equal vectors for the lifetime of the Embedder, so that stored
//     vectors stay comparable with query vectors.
//   - Methods are safe for concurrent use.
type Embedder interface {
	// Embed returns one vector per text.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimensions returns the length of every vector Embed returns.
	Dimensions() int
	// Name identifies the embedder and its configuration, such as "local-hash-384".
	// Vectors from embedders with different names must not be compared.
	Name() string
}

// Model is a chat-completion language model.
//
// Contract for implementations:
//   - Complete honours ctx, returning an error wrapping ctx.Err() once ctx is done.
//   - When req.JSON is set, Complete asks the model for a single JSON object (a JSON
//     mode or a prompt instruction); the caller still validates what comes back.
//   - Zero Temperature and MaxTokens in req mean the implementation's defaults.
//   - Methods are safe for concurrent use.
type Model interface {
	// Complete sends the conversation in req and returns the model's reply.
	Complete(ctx context.Context, req Request) (Response, error)
	// Name identifies the model, such as "gpt-4o-mini".
	Name() string
}

// Message roles.
const (
	// RoleSystem carries instructions that frame the whole conversation.
	RoleSystem = "system"
	// RoleUser carries the user's, or the calling engine's, turn.
	RoleUser = "user"
	// RoleAssistant carries an earlier reply of the model.
	RoleAssistant = "assistant"
)

// Request is one chat completion request.
type Request struct {
	// System is the system prompt, sent before Messages. Empty sends none.
	System string
	// Messages is the conversation so far, oldest first.
	Messages []Message
	// JSON asks the model to answer with a single JSON object.
	JSON bool
	// Temperature is the sampling temperature; 0 means the implementation's default.
	Temperature float64
	// MaxTokens bounds the reply's length in tokens; 0 means the implementation's
	// default.
	MaxTokens int
}

// Message is one turn of a conversation.
type Message struct {
	// Role is RoleSystem, RoleUser or RoleAssistant.
	Role string
	// Content is the text of the turn.
	Content string
}

// Response is a model's reply.
type Response struct {
	// Content is the text of the reply.
	Content string
	// PromptTokens is the number of tokens the request used, as the model reports it;
	// 0 when unknown.
	PromptTokens int
	// CompletionTokens is the number of tokens in the reply, as the model reports it;
	// 0 when unknown.
	CompletionTokens int
}
