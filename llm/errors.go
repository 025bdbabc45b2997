package llm

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrEmptyText is returned, wrapped, by an [Embedder] for a text that has nothing to
// embed: empty, only whitespace and punctuation, or only stopwords. Callers that embed
// records keep such records keyword-searchable without a vector.
var ErrEmptyText = errors.New("day1: nothing to embed: text has no words")

// maxErrorContent bounds MalformedOutputError.Content, in bytes.
const maxErrorContent = 500

// MalformedOutputError reports a model reply that [CompleteJSON] could not decode.
type MalformedOutputError struct {
	// Model is the Name of the model that replied.
	Model string
	// Content is the start of the reply, at most 500 bytes, cut at a character boundary.
	Content string
	// Err is the decoding error.
	Err error
}

// Error says which model replied with what and why it could not be decoded.
func (e *MalformedOutputError) Error() string {
	return fmt.Sprintf("day1: model %q replied with malformed JSON: %v; reply starts %q (make the prompt ask for one JSON object matching the expected fields)",
		e.Model, e.Err, e.Content)
}

// Unwrap returns the decoding error.
func (e *MalformedOutputError) Unwrap() error { return e.Err }

// shorten cuts s to at most n bytes without splitting a UTF-8 sequence.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}
