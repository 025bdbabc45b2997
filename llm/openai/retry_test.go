package openai_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	goopenai "github.com/sashabaranov/go-openai"

	"github.com/day1ai/day1/llm/openai"
)

// backoffWait stands for a wait computed by the exponential policy, which is
// randomised; any other value in wantWaits is a wait the response asked for.
const backoffWait = -1

func TestRetries(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	rateLimited := errorBody("Rate limit reached for requests", "requests", "rate_limit_exceeded")
	serverError := errorBody("The server had an error while processing your request.", "server_error", "")
	tests := []struct {
		name       string
		script     []reply
		cfg        func(*openai.Config)
		wantCalls  int
		wantWaits  []time.Duration
		wantErr    error // nil for success
		wantStatus int
	}{
		{
			name:      "429 with Retry-After seconds, then success",
			script:    []reply{{status: 429, header: map[string]string{"Retry-After": "2"}, body: rateLimited}},
			wantCalls: 2, wantWaits: []time.Duration{2 * time.Second},
		},
		{
			name:      "429 with Retry-After as an HTTP date",
			script:    []reply{{status: 429, header: map[string]string{"Retry-After": now.Add(5 * time.Second).Format(http.TimeFormat)}, body: rateLimited}},
			wantCalls: 2, wantWaits: []time.Duration{5 * time.Second},
		},
		{
			name:      "Retry-After date in the past retries at once",
			script:    []reply{{status: 429, header: map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, body: rateLimited}},
			wantCalls: 2, wantWaits: []time.Duration{0},
		},
		{
			name:      "retry-after-ms wins over Retry-After",
			script:    []reply{{status: 429, header: map[string]string{"Retry-After": "2", "retry-after-ms": "1500"}, body: rateLimited}},
			wantCalls: 2, wantWaits: []time.Duration{1500 * time.Millisecond},
		},
		{
			name:      "unreadable Retry-After falls back to the policy",
			script:    []reply{{status: 429, header: map[string]string{"Retry-After": "soon"}, body: rateLimited}},
			wantCalls: 2, wantWaits: []time.Duration{backoffWait},
		},
		{
			name:      "500 then success",
			script:    []reply{{status: 500, body: serverError}},
			wantCalls: 2, wantWaits: []time.Duration{backoffWait},
		},
		{
			name:      "503 with Retry-After",
			script:    []reply{{status: 503, header: map[string]string{"Retry-After": "1"}, body: serverError}},
			wantCalls: 2, wantWaits: []time.Duration{time.Second},
		},
		{
			name:      "a proxy's HTML 502, a 408, then success",
			script:    []reply{{status: 502, body: "<html>Bad gateway</html>"}, {status: 408, body: "timeout"}},
			wantCalls: 3, wantWaits: []time.Duration{backoffWait, backoffWait},
		},
		{
			name:      "400 is not retried",
			script:    []reply{{status: 400, body: errorBody("Invalid input", "invalid_request_error", "")}},
			wantCalls: 1, wantErr: openai.ErrBadRequest, wantStatus: 400,
		},
		{
			name:      "401 is not retried",
			script:    []reply{{status: 401, body: errorBody("Incorrect API key provided", "invalid_request_error", "invalid_api_key")}},
			wantCalls: 1, wantErr: openai.ErrUnauthorized, wantStatus: 401,
		},
		{
			name:      "403 is not retried",
			script:    []reply{{status: 403, body: errorBody("Project does not have access to model", "invalid_request_error", "model_not_found")}},
			wantCalls: 1, wantErr: openai.ErrUnauthorized, wantStatus: 403,
		},
		{
			name:      "404 is not retried",
			script:    []reply{{status: 404, body: errorBody("The model does not exist", "invalid_request_error", "model_not_found")}},
			wantCalls: 1, wantErr: openai.ErrBadRequest, wantStatus: 404,
		},
		{
			name:      "422 is not retried",
			script:    []reply{{status: 422, body: "unprocessable"}},
			wantCalls: 1, wantErr: openai.ErrBadRequest, wantStatus: 422,
		},
		{
			name:      "retries run out",
			script:    []reply{{status: 503}, {status: 503}, {status: 503}, {status: 503}},
			wantCalls: 4, wantWaits: []time.Duration{backoffWait, backoffWait, backoffWait},
			wantErr: openai.ErrUnavailable, wantStatus: 503,
		},
		{
			name:      "retries run out on 429",
			script:    []reply{{status: 429, body: rateLimited}, {status: 429, body: rateLimited}},
			cfg:       func(c *openai.Config) { c.MaxRetries = 1 },
			wantCalls: 2, wantWaits: []time.Duration{backoffWait},
			wantErr: openai.ErrRateLimited, wantStatus: 429,
		},
		{
			name:      "retries turned off",
			script:    []reply{{status: 500, body: serverError}},
			cfg:       func(c *openai.Config) { c.MaxRetries = -1 },
			wantCalls: 1, wantErr: openai.ErrUnavailable, wantStatus: 500,
		},
		{
			name:      "Retry-After beyond MaxRetryDelay gives up at once",
			script:    []reply{{status: 429, header: map[string]string{"Retry-After": "120"}, body: rateLimited}},
			wantCalls: 1, wantErr: openai.ErrRateLimited, wantStatus: 429,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, tt.script...)
			var waits waitLog
			cfg := f.config(&waits)
			cfg.Test.Now = func() time.Time { return now }
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			e := newEmbedder(t, cfg)
			got, err := e.Embed(context.Background(), []string{"hello"})
			if n := len(f.Calls()); n != tt.wantCalls {
				t.Errorf("%d requests, want %d", n, tt.wantCalls)
			}
			gotWaits := waits.Waits()
			if len(gotWaits) != len(tt.wantWaits) {
				t.Errorf("waits %v, want %d of them", gotWaits, len(tt.wantWaits))
			} else {
				for i, w := range tt.wantWaits {
					if w == backoffWait {
						// RetryDelay is 1ms, randomised by ±50% and growing 1.5 times.
						if gotWaits[i] < time.Millisecond/2 || gotWaits[i] > 4*time.Millisecond {
							t.Errorf("wait %d = %v, want a short computed wait", i, gotWaits[i])
						}
					} else if gotWaits[i] != w {
						t.Errorf("wait %d = %v, want %v", i, gotWaits[i], w)
					}
				}
			}
			if tt.wantErr == nil {
				if err != nil || len(got) != 1 {
					t.Fatalf("Embed = %v, %v; want success", got, err)
				}
				return
			}
			var apiErr *openai.Error
			if got != nil || !errors.Is(err, tt.wantErr) || !errors.As(err, &apiErr) {
				t.Fatalf("Embed = %v, %v; want nil and an *openai.Error matching %v", got, err, tt.wantErr)
			}
			if apiErr.StatusCode != tt.wantStatus || apiErr.Attempts != tt.wantCalls {
				t.Errorf("StatusCode, Attempts = %d, %d; want %d, %d", apiErr.StatusCode, apiErr.Attempts, tt.wantStatus, tt.wantCalls)
			}
		})
	}
}

func TestErrorDetails(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t,
		reply{status: 401, body: errorBody("Incorrect API key provided: sk-wrong.", "invalid_request_error", "invalid_api_key")},
		reply{status: 429, header: map[string]string{"Retry-After": "90"}, body: errorBody("You exceeded your current quota", "insufficient_quota", "insufficient_quota")},
		reply{status: 502, body: "<html>Bad gateway</html>"},
	)
	cfg := f.config(&waitLog{})
	cfg.APIKey, cfg.MaxRetries = "sk-wrong", -1
	m, err := openai.NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ignoreErr := cmpopts.IgnoreFields(openai.Error{}, "Err")
	tests := []struct {
		want       openai.Error
		wantString string
		wantInner  any // a pointer to the go-openai error type Err must hold
	}{
		{
			want: openai.Error{Op: "chat completion", Model: "gpt-4o-mini", StatusCode: 401, Message: "Incorrect API key provided: sk-wrong.",
				Type: "invalid_request_error", Code: "invalid_api_key", Attempts: 1},
			wantString: `day1: openai: chat completion with model "gpt-4o-mini": HTTP 401 Unauthorized: Incorrect API key provided: sk-wrong. (type invalid_request_error, code invalid_api_key); 1 attempt; check Config.APIKey (or OPENAI_API_KEY) and that the key may use this model`,
			wantInner:  new(*goopenai.APIError),
		},
		{
			want: openai.Error{Op: "chat completion", Model: "gpt-4o-mini", StatusCode: 429, Message: "You exceeded your current quota",
				Type: "insufficient_quota", Code: "insufficient_quota", RetryAfter: 90 * time.Second, Attempts: 1},
			wantString: `day1: openai: chat completion with model "gpt-4o-mini": HTTP 429 Too Many Requests: You exceeded your current quota (type insufficient_quota, code insufficient_quota); 1 attempt; the endpoint asked to retry after 1m30s; send fewer requests, raise the account's limits, or allow more Config.MaxRetries`,
			wantInner:  new(*goopenai.APIError),
		},
		{
			want:       openai.Error{Op: "chat completion", Model: "gpt-4o-mini", StatusCode: 502, Message: "<html>Bad gateway</html>", Attempts: 1},
			wantString: `day1: openai: chat completion with model "gpt-4o-mini": HTTP 502 Bad Gateway: <html>Bad gateway</html>; 1 attempt; check that Config.BaseURL is reachable and the service is up`,
			wantInner:  new(*goopenai.RequestError),
		},
	}
	for _, tt := range tests {
		_, err := m.Complete(context.Background(), userRequest("hi"))
		var got *openai.Error
		if !errors.As(err, &got) {
			t.Fatalf("Complete = %v, want an *openai.Error", err)
		}
		if diff := cmp.Diff(tt.want, *got, ignoreErr); diff != "" {
			t.Errorf("Error (-want +got):\n%s", diff)
		}
		if err.Error() != tt.wantString {
			t.Errorf("Error() = %s\nwant      %s", err, tt.wantString)
		}
		if !errors.As(err, tt.wantInner) {
			t.Errorf("the go-openai error %T is not reachable from %v", tt.wantInner, err)
		}
	}
}

func TestCancelDuringRetryWait(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{status: 503, body: errorBody("overloaded", "server_error", "")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := f.config(&waitLog{})
	var asked time.Duration
	cfg.Test.After = func(d time.Duration) <-chan time.Time {
		asked = d
		cancel()                    // the caller gives up while the call waits
		return make(chan time.Time) // a wait that never ends by itself
	}
	cfg.RetryDelay = time.Hour
	cfg.MaxRetryDelay = time.Hour
	e := newEmbedder(t, cfg)
	got, err := e.Embed(ctx, []string{"hello"})
	if got != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Embed = %v, %v; want nil and context.Canceled", got, err)
	}
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 {
		t.Errorf("the last failure is not reachable: %v", err)
	}
	if !strings.Contains(err.Error(), "stopped while retrying") {
		t.Errorf("error %q should say the call stopped while retrying", err)
	}
	if asked < 30*time.Minute {
		t.Errorf("the wait was %v, want about an hour", asked)
	}
	if n := len(f.Calls()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestCancelDuringRequest(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{block: true})
	e := newEmbedder(t, f.config(&waitLog{}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.Embed(ctx, []string{"hello"})
		done <- err
	}()
	<-f.blocked
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Embed = %v, want context.Canceled", err)
	}
	if n := len(f.Calls()); n != 1 {
		t.Errorf("%d requests, want 1 (no retry once the caller gave up)", n)
	}
}

func TestDoneContextSendsNothing(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	cfg := f.config(&waitLog{})
	e := newEmbedder(t, cfg)
	m, err := openai.NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"hello"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed = %v, want context.Canceled", err)
	}
	if _, err := m.Complete(ctx, userRequest("hi")); !errors.Is(err, context.Canceled) {
		t.Errorf("Complete = %v, want context.Canceled", err)
	}
	if n := len(f.Calls()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

func TestAttemptTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, reply{block: true})
	cfg := f.config(&waitLog{})
	cfg.Timeout = 250 * time.Millisecond
	e := newEmbedder(t, cfg)
	got, err := e.Embed(context.Background(), []string{"hello"})
	if err != nil || len(got) != 1 {
		t.Fatalf("Embed = %v, %v; want success on the second attempt", got, err)
	}
	if n := len(f.Calls()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestUnreachableEndpoint(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL + "/v1"
	srv.Close()
	var waits waitLog
	e := newEmbedder(t, openai.Config{
		BaseURL: base, MaxRetries: 2, RetryDelay: time.Millisecond,
		Test: openai.TestConfig{Getenv: env(nil), After: waits.after},
	})
	_, err := e.Embed(context.Background(), []string{"hello"})
	var apiErr *openai.Error
	var urlErr *url.Error
	if !errors.Is(err, openai.ErrUnavailable) || !errors.As(err, &apiErr) || !errors.As(err, &urlErr) {
		t.Fatalf("Embed = %v; want an *openai.Error matching ErrUnavailable over a *url.Error", err)
	}
	if apiErr.StatusCode != 0 || apiErr.Attempts != 3 || len(waits.Waits()) != 2 {
		t.Errorf("StatusCode %d, Attempts %d, %d waits; want 0, 3, 2", apiErr.StatusCode, apiErr.Attempts, len(waits.Waits()))
	}
	if !strings.Contains(err.Error(), "no response: ") {
		t.Errorf("error %q should say no response arrived", err)
	}
}
