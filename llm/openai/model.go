package openai

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/day1ai/day1/llm"
)

// jsonInstruction is added to the system prompt of a JSON request whose prompt does
// not mention JSON: OpenAI refuses JSON mode otherwise.
const jsonInstruction = "Answer with a single JSON object."

// maxTemperature is the largest sampling temperature OpenAI accepts.
const maxTemperature = 2

// reasoningModel matches the models that take max_completion_tokens instead of
// max_tokens.
var reasoningModel = regexp.MustCompile(`^(o[0-9]|gpt-[5-9])`)

// Model is an llm.Model that calls the chat completions endpoint of an
// OpenAI-compatible API (POST {BaseURL}/chat/completions). It is safe for concurrent
// use.
type Model struct {
	c     *caller
	model string
}

var _ llm.Model = (*Model)(nil)

// NewModel returns a Model configured by cfg; see Config for the defaults. It sends
// no request. It fails with a *llm.ValidationError (matching
// llm.ErrInvalidArgument) naming the Config field that is wrong: an invalid
// BaseURL, no API key for api.openai.com, a retry delay out of range.
func NewModel(cfg Config) (*Model, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validateModel(); err != nil {
		return nil, err
	}
	return &Model{c: newCaller(cfg), model: cfg.ChatModel}, nil
}

// Name returns Config.ChatModel, such as "gpt-4o-mini".
func (m *Model) Name() string { return m.model }

// Complete sends req as one chat completion and returns the first choice's content
// with the token usage the endpoint reports.
//
// req.System becomes a leading "system" message. req.JSON sets response_format to
// {"type": "json_object"}; as OpenAI's JSON mode requires the prompt to mention JSON,
// a prompt that does not gets "Answer with a single JSON object." appended to its
// system message. A zero Temperature or MaxTokens is left out, so the endpoint's
// default applies; MaxTokens is sent as max_tokens, or as max_completion_tokens for
// reasoning models (names starting "o1", "o3", "gpt-5" and the like).
//
// Complete fails with a *llm.ValidationError for a request with neither System
// nor Messages, a message role other than system, user and assistant, a Temperature
// outside 0 to 2, or a negative MaxTokens; with an *Error (matching ErrUnauthorized,
// ErrRateLimited, ErrUnavailable or ErrBadRequest) when the request fails after its
// retries; with an error wrapping ErrBadResponse for a reply without choices; with
// an error wrapping ErrRefused, quoting the reason, when the model refuses; and with
// an error wrapping ctx.Err() once ctx is done. The content itself is not checked:
// use llm.CompleteJSON to decode a JSON answer.
func (m *Model) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	creq, err := m.chatRequest(req)
	if err != nil {
		return llm.Response{}, err
	}
	var resp goopenai.ChatCompletionResponse
	err = m.c.do(ctx, "chat completion", m.model, func(ctx context.Context) error {
		var err error
		resp, err = m.c.client.CreateChatCompletion(ctx, creq)
		return err
	})
	if err != nil {
		return llm.Response{}, err
	}
	if len(resp.Choices) == 0 {
		return llm.Response{}, fmt.Errorf("%w: chat completion with model %q: no choices in the reply", ErrBadResponse, m.model)
	}
	msg := resp.Choices[0].Message
	if msg.Content == "" && msg.Refusal != "" {
		return llm.Response{}, fmt.Errorf("%w: model %q: %q", ErrRefused, m.model, shorten(msg.Refusal, maxMessage))
	}
	return llm.Response{
		Content:          msg.Content,
		PromptTokens:     resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens,
	}, nil
}

// chatRequest checks req and turns it into go-openai's request.
func (m *Model) chatRequest(req llm.Request) (goopenai.ChatCompletionRequest, error) {
	var zero goopenai.ChatCompletionRequest
	if req.System == "" && len(req.Messages) == 0 {
		return zero, llm.Invalid("Request.Messages", "must hold at least one message when Request.System is empty", nil)
	}
	if math.IsNaN(req.Temperature) || req.Temperature < 0 || req.Temperature > maxTemperature {
		return zero, llm.Invalid("Request.Temperature", "must be 0 to 2 (0 means the endpoint's default)", req.Temperature)
	}
	if req.MaxTokens < 0 {
		return zero, llm.Invalid("Request.MaxTokens", "must not be negative (0 means the endpoint's default)", req.MaxTokens)
	}
	system := req.System
	mentionsJSON := containsJSON(system)
	msgs := make([]goopenai.ChatCompletionMessage, 0, len(req.Messages)+1)
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleSystem, llm.RoleUser, llm.RoleAssistant:
		default:
			return zero, llm.Invalid(fmt.Sprintf("Request.Messages[%d].Role", i), "must be system, user or assistant", msg.Role)
		}
		mentionsJSON = mentionsJSON || containsJSON(msg.Content)
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: msg.Role, Content: msg.Content})
	}
	if req.JSON && !mentionsJSON {
		if system != "" {
			system += "\n\n"
		}
		system += jsonInstruction
	}
	if system != "" {
		msgs = append([]goopenai.ChatCompletionMessage{{Role: llm.RoleSystem, Content: system}}, msgs...)
	}
	creq := goopenai.ChatCompletionRequest{
		Model:       m.model,
		Messages:    msgs,
		Temperature: float32(req.Temperature),
	}
	if req.MaxTokens > 0 {
		if reasoningModel.MatchString(m.model) {
			creq.MaxCompletionTokens = req.MaxTokens
		} else {
			// Most OpenAI-compatible servers (Ollama, vLLM, llama.cpp) read only
			// max_tokens, which OpenAI keeps for its non-reasoning models.
			//lint:ignore SA1019 the field the compatible endpoints understand
			creq.MaxTokens = req.MaxTokens
		}
	}
	if req.JSON {
		creq.ResponseFormat = &goopenai.ChatCompletionResponseFormat{Type: goopenai.ChatCompletionResponseFormatTypeJSONObject}
	}
	return creq, nil
}

// containsJSON reports whether s mentions JSON in any letter case.
func containsJSON(s string) bool {
	return strings.Contains(strings.ToLower(s), "json")
}
