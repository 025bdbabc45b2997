package openai

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Sentinel errors. An *Error matches the one for its HTTP status; test with errors.Is.
var (
	// ErrUnauthorized: the endpoint refused the API key (HTTP 401) or the key may not
	// use the model (HTTP 403). Never retried.
	ErrUnauthorized = errors.New("day1: openai: unauthorized")
	// ErrRateLimited: the endpoint answered HTTP 429 (too many requests or quota
	// exhausted) on the last attempt.
	ErrRateLimited = errors.New("day1: openai: rate limited")
	// ErrUnavailable: the endpoint failed (HTTP 408 or 5xx) or could not be reached
	// (no HTTP response) on the last attempt.
	ErrUnavailable = errors.New("day1: openai: endpoint unavailable")
	// ErrBadRequest: the endpoint rejected the request (HTTP 400, 404, 422 and other
	// 4xx not listed above), for example an unknown model or a text over the model's
	// token limit. Never retried.
	ErrBadRequest = errors.New("day1: openai: request rejected")
	// ErrBadResponse: the endpoint answered with success but the answer cannot be used:
	// not the expected JSON, a missing or repeated embedding index, a vector of the
	// wrong length, no choices. Never retried.
	ErrBadResponse = errors.New("day1: openai: unusable response")
	// ErrRefused: the chat model refused to answer and gave its reason instead of
	// content.
	ErrRefused = errors.New("day1: openai: the model refused")
)

// maxMessage bounds the error text taken from a response body, in bytes.
const maxMessage = 300

// Error reports a request the endpoint failed or refused after every attempt. It
// matches ErrUnauthorized, ErrRateLimited, ErrUnavailable or ErrBadRequest according
// to StatusCode, and unwraps to the underlying go-openai error
// (*github.com/sashabaranov/go-openai.APIError when the body was an OpenAI error
// object, *github.com/sashabaranov/go-openai.RequestError otherwise) or, without a
// response, to the transport error.
type Error struct {
	// Op is the operation: "embeddings" or "chat completion".
	Op string
	// Model is the model the request named.
	Model string
	// StatusCode is the HTTP status of the last response; 0 when no response arrived.
	StatusCode int
	// Message is the API's error message ("error.message" of the body), the start of
	// a body that is not an OpenAI error object, or the transport error.
	Message string
	// Type is the API's "error.type", such as "invalid_request_error"; may be empty.
	Type string
	// Code is the API's "error.code", such as "invalid_api_key"; may be empty.
	Code string
	// RetryAfter is the wait the last response asked for in its Retry-After or
	// retry-after-ms header; 0 when it asked for none.
	RetryAfter time.Duration
	// Attempts is the number of requests sent, retries included.
	Attempts int
	// Err is the underlying error.
	Err error
}

// Error says what failed, the status and message of the endpoint, how many attempts
// were made and what to do about it.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "day1: openai: %s with model %q: ", e.Op, e.Model)
	if e.StatusCode == 0 {
		b.WriteString("no response: ")
	} else {
		fmt.Fprintf(&b, "HTTP %d %s: ", e.StatusCode, http.StatusText(e.StatusCode))
	}
	b.WriteString(e.Message)
	if e.Type != "" || e.Code != "" {
		b.WriteString(" (")
		if e.Type != "" {
			fmt.Fprintf(&b, "type %s", e.Type)
		}
		if e.Code != "" {
			if e.Type != "" {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "code %s", e.Code)
		}
		b.WriteString(")")
	}
	if e.Attempts == 1 {
		b.WriteString("; 1 attempt")
	} else {
		fmt.Fprintf(&b, "; %d attempts", e.Attempts)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, "; the endpoint asked to retry after %v", e.RetryAfter)
	}
	b.WriteString("; ")
	b.WriteString(e.hint())
	return b.String()
}

func (e *Error) hint() string {
	switch {
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		return "check Config.APIKey (or " + EnvAPIKey + ") and that the key may use this model"
	case e.StatusCode == http.StatusTooManyRequests:
		return "send fewer requests, raise the account's limits, or allow more Config.MaxRetries"
	case e.StatusCode == http.StatusNotFound:
		return "check Config.BaseURL and the model name"
	case e.sentinel() == ErrUnavailable:
		return "check that Config.BaseURL is reachable and the service is up"
	default:
		return "check the model name and the request's parameters"
	}
}

// sentinel returns the sentinel error e matches.
func (e *Error) sentinel() error {
	switch s := e.StatusCode; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return ErrUnauthorized
	case s == http.StatusTooManyRequests:
		return ErrRateLimited
	case s == 0 || s == http.StatusRequestTimeout || s >= 500:
		return ErrUnavailable
	default:
		return ErrBadRequest
	}
}

// Is makes errors.Is(err, ErrUnauthorized), ErrRateLimited, ErrUnavailable or
// ErrBadRequest true according to StatusCode.
func (e *Error) Is(target error) bool { return target == e.sentinel() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// retryable reports whether a failure with this status may succeed when sent again.
func retryable(status int) bool {
	return status == 0 || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
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
