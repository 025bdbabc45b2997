package llmfake

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/day1ai/day1/llm"
)

// Model is a scriptable llm.Model. Rules added with On and OnFunc are tried in the order
// they were added; the first whose pattern matches the prompt answers. The prompt a
// pattern sees is the system prompt and the content of every message, joined by
// newlines.
//
// The zero value is ready to use and answers nothing until given rules; NewModel is
// the same. Methods are safe for concurrent use and return the Model for chaining.
type Model struct {
	mu         sync.Mutex
	rules      []rule
	def        string
	hasDefault bool
	failN      int
	failErr    error
	calls      []llm.Request
}

type rule struct {
	re *regexp.Regexp
	fn func(llm.Request) (string, error)
}

var _ llm.Model = (*Model)(nil)

// NewModel returns a Model with no rules.
func NewModel() *Model { return &Model{} }

// On adds a rule: when pattern, a regular expression (regexp syntax), matches the
// prompt, Complete replies response. It panics if pattern does not compile, like
// regexp.MustCompile: a bad pattern is a bug in the test.
func (m *Model) On(pattern, response string) *Model {
	return m.OnFunc(pattern, func(llm.Request) (string, error) { return response, nil })
}

// OnFunc adds a rule: when pattern matches the prompt, Complete replies what f returns
// for the request, or f's error. f runs without the Model's lock held, so it may call
// the Model's methods. It panics if pattern does not compile.
func (m *Model) OnFunc(pattern string, f func(req llm.Request) (string, error)) *Model {
	re := regexp.MustCompile(pattern)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules = append(m.rules, rule{re: re, fn: f})
	return m
}

// Default sets the reply for prompts no rule matches, replacing any earlier default.
func (m *Model) Default(response string) *Model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.def, m.hasDefault = response, true
	return m
}

// FailNext makes the next n calls of Complete fail with err, or with ErrInjected when
// err is nil, before any rule is consulted. It replaces an earlier FailNext; n <= 0
// cancels it.
func (m *Model) FailNext(n int, err error) *Model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failN, m.failErr = max(n, 0), orInjected(err)
	return m
}

// Calls returns a copy of every request Complete received, in order, including those
// failed by FailNext or ErrNoRule. Calls made with a context already done are not
// recorded.
func (m *Model) Calls() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]llm.Request, len(m.calls))
	for i, r := range m.calls {
		out[i] = cloneRequest(r)
	}
	return out
}

// CallCount returns the number of requests Calls would return.
func (m *Model) CallCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

// Name returns "llmfake".
func (m *Model) Name() string { return "llmfake" }

// Complete records req and answers it: with ctx.Err() if ctx is done, with the error of
// a pending FailNext, with the reply of the first matching rule, with the default
// reply, or else with an error wrapping ErrNoRule that quotes the start of the prompt.
// Token counts in the Response are the numbers of whitespace-separated words of the
// prompt and of the reply.
func (m *Model) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	prompt := Prompt(req)

	m.mu.Lock()
	m.calls = append(m.calls, cloneRequest(req))
	if m.failN > 0 {
		m.failN--
		err := m.failErr
		m.mu.Unlock()
		return llm.Response{}, err
	}
	var fn func(llm.Request) (string, error)
	for _, r := range m.rules {
		if r.re.MatchString(prompt) {
			fn = r.fn
			break
		}
	}
	def, hasDefault := m.def, m.hasDefault
	m.mu.Unlock()

	var content string
	switch {
	case fn != nil:
		var err error
		if content, err = fn(cloneRequest(req)); err != nil {
			return llm.Response{}, err
		}
	case hasDefault:
		content = def
	default:
		return llm.Response{}, fmt.Errorf("%w: prompt starts %q; add a rule with On or a reply with Default",
			ErrNoRule, shorten(prompt, 120))
	}
	return llm.Response{
		Content:          content,
		PromptTokens:     len(strings.Fields(prompt)),
		CompletionTokens: len(strings.Fields(content)),
	}, nil
}

// Prompt returns the text a Model's patterns are matched against: the system prompt
// and the content of each message, joined by newlines (an empty system prompt is left
// out).
func Prompt(req llm.Request) string {
	var b strings.Builder
	if req.System != "" {
		b.WriteString(req.System)
	}
	for _, msg := range req.Messages {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(msg.Content)
	}
	return b.String()
}
