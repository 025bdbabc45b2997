package llm

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrEmptyText is returned, wrapped, by an [Embedder] for a text that has nothing to
// embed: empty, only whitespace and punctuation, or only stopwords. Callers that embed
// records keep such records keyword-searchable without a vector.
var ErrEmptyText = errors.New("day1: nothing to embed: text has no words")

// ErrInvalidArgument is matched by every error that reports unacceptable input: a
// *ValidationError from this package and its subpackages, and the store package's,
// which is the same value (store.ErrInvalidArgument, day1.ErrInvalidArgument).
var ErrInvalidArgument = errors.New("day1: invalid argument")

// MaxDimensions is the largest vector length an embedder may report; stores accept
// embeddings up to this length (store.MaxEmbeddingDims).
const MaxDimensions = 8192

// ValidationError says which input field is wrong and what is allowed. It matches
// ErrInvalidArgument.
type ValidationError struct {
	Field  string // e.g. "Config.Dimensions", "Request.Messages"
	Reason string // what is allowed
	Value  string // the offending value, shortened; may be empty
}

// Error says which field is wrong, with its value, and what is allowed.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("day1: invalid ")
	b.WriteString(e.Field)
	if e.Value != "" {
		fmt.Fprintf(&b, " %q", e.Value)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// Is makes errors.Is(err, ErrInvalidArgument) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidArgument }

// Invalid returns a *ValidationError for field; value, when not nil, is shown
// shortened to 80 bytes.
func Invalid(field, reason string, value any) *ValidationError {
	v := ""
	if value != nil {
		v = fmt.Sprint(value)
		if len(v) > 80 {
			v = v[:77] + "..."
		}
	}
	return &ValidationError{Field: field, Reason: reason, Value: v}
}

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
