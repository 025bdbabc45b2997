// Package llmfake holds deterministic, scriptable fakes of llm.Model and llm.Embedder
// for tests.
//
// [Model] answers by rules: a regular expression matched against the prompt chooses a
// canned reply or a function. [Embedder] gives the same vectors as llm.LocalEmbedder.
// Both record what they were asked, can be told to fail, honour their context and are
// safe for concurrent use, so engines can be tested without a network or a real model.
package llmfake

import (
	"errors"
	"slices"
	"unicode/utf8"

	"github.com/day1ai/day1/llm"
)

// Errors the fakes return.
var (
	// ErrNoRule: the Model has no rule matching the prompt and no default reply. Add a
	// rule with On or OnFunc, or a reply with Default.
	ErrNoRule = errors.New("day1: llmfake: no rule matches the prompt")
	// ErrInjected: a failure asked for with FailNext (when given a nil error) or
	// Embedder.FailWhen.
	ErrInjected = errors.New("day1: llmfake: injected failure")
)

func orInjected(err error) error {
	if err == nil {
		return ErrInjected
	}
	return err
}

func cloneRequest(r llm.Request) llm.Request {
	r.Messages = slices.Clone(r.Messages)
	return r
}

// shorten cuts s to at most n bytes without splitting a UTF-8 sequence, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
