package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	goopenai "github.com/sashabaranov/go-openai"
)

// caller sends requests through go-openai with the retry policy of a Config.
type caller struct {
	cfg    Config
	client *goopenai.Client
}

func newCaller(cfg Config) *caller {
	cc := goopenai.DefaultConfig(cfg.APIKey)
	cc.BaseURL = cfg.BaseURL
	cc.HTTPClient = headerDoer{cfg.HTTPClient}
	return &caller{cfg: cfg, client: goopenai.NewClientWithConfig(cc)}
}

// attemptKey keys the *attemptInfo of one attempt in its request's context.
type attemptKey struct{}

// attemptInfo receives the response headers of one attempt: go-openai's errors do not
// carry them, and Retry-After lives there.
type attemptInfo struct {
	header http.Header
}

// headerDoer is the HTTP client handed to go-openai. It copies each response's
// headers into the attempt's *attemptInfo.
type headerDoer struct {
	client *http.Client
}

func (d headerDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.client.Do(req)
	if resp != nil {
		if info, ok := req.Context().Value(attemptKey{}).(*attemptInfo); ok {
			info.header = resp.Header
		}
	}
	return resp, err
}

// hintBackOff waits as long as the last response's Retry-After asked, when it asked,
// and otherwise as long as its exponential policy says. A Retry-After longer than max
// stops the retries.
type hintBackOff struct {
	policy  backoff.BackOff
	max     time.Duration
	hint    time.Duration
	hasHint bool
}

func (b *hintBackOff) NextBackOff() time.Duration {
	if b.hasHint {
		b.hasHint = false
		if b.hint > b.max {
			return backoff.Stop
		}
		return b.hint
	}
	return b.policy.NextBackOff()
}

func (b *hintBackOff) Reset() {
	b.hasHint = false
	b.policy.Reset()
}

// afterTimer is a backoff.Timer on top of TestConfig.After.
type afterTimer struct {
	after func(time.Duration) <-chan time.Time
	c     <-chan time.Time
}

func (t *afterTimer) Start(d time.Duration) { t.c = t.after(d) }
func (t *afterTimer) Stop()                 {}
func (t *afterTimer) C() <-chan time.Time   { return t.c }

// do runs call until it succeeds, fails in a way a retry cannot fix, runs out of
// retries, or ctx is done. Each attempt gets its own context, bounded by
// Config.Timeout. op and model name the request in errors.
func (c *caller) do(ctx context.Context, op, model string, call func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return stopped(op, model, err, nil)
	}
	policy := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(c.cfg.RetryDelay),
		backoff.WithMaxInterval(c.cfg.MaxRetryDelay),
		backoff.WithMaxElapsedTime(0), // MaxRetries and ctx bound the retries
	)
	hints := &hintBackOff{policy: policy, max: c.cfg.MaxRetryDelay}
	b := backoff.WithContext(backoff.WithMaxRetries(hints, uint64(max(c.cfg.MaxRetries, 0))), ctx)
	var timer backoff.Timer // nil: a real timer
	if c.cfg.Test.After != nil {
		timer = &afterTimer{after: c.cfg.Test.After}
	}

	attempts := 0
	var last *Error
	attempt := func() error {
		attempts++
		info := &attemptInfo{}
		actx := context.WithValue(ctx, attemptKey{}, info)
		if c.cfg.Timeout > 0 {
			var cancel context.CancelFunc
			actx, cancel = context.WithTimeout(actx, c.cfg.Timeout)
			defer cancel()
		}
		err := call(actx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return backoff.Permanent(ctx.Err())
		}
		e := c.classify(op, model, err, info.header)
		if e == nil {
			return backoff.Permanent(unclassified(op, model, err))
		}
		e.Attempts = attempts
		last = e
		hints.hint, hints.hasHint = retryAfter(info.header, c.cfg.Test.Now)
		if !retryable(e.StatusCode) {
			return backoff.Permanent(e)
		}
		return e
	}
	err := backoff.RetryNotifyWithTimer(attempt, b, nil, timer)
	if err != nil && ctx.Err() != nil {
		return stopped(op, model, ctx.Err(), last)
	}
	return err
}

// stopped reports a call that ended because its context did, with the failure of the
// last attempt, if any, still reachable.
func stopped(op, model string, ctxErr error, last *Error) error {
	if last == nil {
		return fmt.Errorf("day1: openai: %s with model %q stopped: %w", op, model, ctxErr)
	}
	return fmt.Errorf("day1: openai: %s with model %q stopped while retrying: %w; last failure: %w", op, model, ctxErr, last)
}

// unclassified wraps an error that is neither an HTTP error nor a transport error:
// an undecodable success body or a request go-openai refused to send.
func unclassified(op, model string, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %s with model %q: the body is empty", ErrBadResponse, op, model)
	}
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return fmt.Errorf("%w: %s with model %q: the body is not the expected JSON: %w", ErrBadResponse, op, model, err)
	}
	return fmt.Errorf("day1: openai: %s with model %q: %w", op, model, err)
}

// classify turns an HTTP or transport error into an *Error, or returns nil for any
// other error. header holds the response headers, nil without a response.
func (c *caller) classify(op, model string, err error, header http.Header) *Error {
	e := &Error{Op: op, Model: model, Err: err}
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode != 0:
		e.StatusCode = apiErr.HTTPStatusCode
		e.Message = shorten(apiErr.Message, maxMessage)
		e.Type = apiErr.Type
		if apiErr.Code != nil {
			e.Code = fmt.Sprint(apiErr.Code)
		}
	case errors.As(err, &reqErr):
		e.StatusCode = reqErr.HTTPStatusCode
		e.Message = shorten(strings.TrimSpace(string(reqErr.Body)), maxMessage)
		if e.Message == "" {
			e.Message = "(empty body)"
		}
	case isTransport(err):
		e.Message = err.Error()
	default:
		return nil
	}
	if d, ok := retryAfter(header, c.cfg.Test.Now); ok {
		e.RetryAfter = d
	}
	return e
}

// isTransport reports whether err means no complete response arrived: the
// connection failed or broke, or the attempt ran out of time. The caller has already
// ruled out its own context.
func isTransport(err error) bool {
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &urlErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded)
}

// retryAfter reads the wait a response asks for: retry-after-ms (milliseconds, as
// OpenAI sends it), else Retry-After in seconds or as an HTTP date. ok is false when
// neither header is present and valid. A date in the past means no wait.
func retryAfter(h http.Header, now func() time.Time) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e9 {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now()), 0), true
	}
	return 0, false
}
