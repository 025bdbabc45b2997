package handoff

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

func mustCompile(t testing.TB, src string) *Expr {
	t.Helper()
	e, err := Compile(src)
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	return e
}

func TestTriggerValidate(t *testing.T) {
	t.Parallel()
	cond := mustCompile(t, "x > 1")
	tests := []struct {
		name      string
		trig      Trigger
		wantField string // "" means valid
	}{
		{"condition", Trigger{Kind: TriggerCondition, Condition: cond}, ""},
		{"condition allowing missing keys", Trigger{Kind: TriggerCondition, Condition: cond, AllowMissing: true}, ""},
		{"event", Trigger{Kind: TriggerEvent, Event: "build_failed"}, ""},
		{"explicit", Trigger{Kind: TriggerExplicit}, ""},
		{"timeout", Trigger{Kind: TriggerTimeout, Timeout: time.Minute}, ""},
		{"any error", Trigger{Kind: TriggerError}, ""},
		{"some errors", Trigger{Kind: TriggerError, ErrorTypes: []string{"rate_limit", "timeout"}}, ""},
		{"capability", Trigger{Kind: TriggerCapability, Capabilities: []string{"oauth2"}}, ""},

		{"zero", Trigger{}, "Trigger.Kind"},
		{"unknown kind", Trigger{Kind: "cron"}, "Trigger.Kind"},
		{"condition missing", Trigger{Kind: TriggerCondition}, "Trigger.Condition"},
		{"zero condition", Trigger{Kind: TriggerCondition, Condition: &Expr{}}, "Trigger.Condition"},
		{"event missing", Trigger{Kind: TriggerEvent}, "Trigger.Event"},
		{"event blank", Trigger{Kind: TriggerEvent, Event: "  "}, "Trigger.Event"},
		{"timeout missing", Trigger{Kind: TriggerTimeout}, "Trigger.Timeout"},
		{"timeout negative", Trigger{Kind: TriggerTimeout, Timeout: -time.Second}, "Trigger.Timeout"},
		{"error type blank", Trigger{Kind: TriggerError, ErrorTypes: []string{"x", ""}}, "Trigger.ErrorTypes[1]"},
		{"capabilities missing", Trigger{Kind: TriggerCapability}, "Trigger.Capabilities"},
		{"capability blank", Trigger{Kind: TriggerCapability, Capabilities: []string{""}}, "Trigger.Capabilities[0]"},
		{"capability padded", Trigger{Kind: TriggerCapability, Capabilities: []string{"go", " sql"}}, "Trigger.Capabilities[1]"},
		{"event on a timeout trigger", Trigger{Kind: TriggerTimeout, Timeout: time.Second, Event: "x"}, "Trigger.Event"},
		{"condition on an event trigger", Trigger{Kind: TriggerEvent, Event: "x", Condition: cond}, "Trigger.Condition"},
		{"allow missing on an error trigger", Trigger{Kind: TriggerError, AllowMissing: true}, "Trigger.AllowMissing"},
		{"capabilities on an explicit trigger", Trigger{Kind: TriggerExplicit, Capabilities: []string{"go"}}, "Trigger.Capabilities"},
		{"error types on a capability trigger", Trigger{Kind: TriggerCapability, Capabilities: []string{"go"}, ErrorTypes: []string{"x"}}, "Trigger.ErrorTypes"},
		{"timeout on a condition trigger", Trigger{Kind: TriggerCondition, Condition: cond, Timeout: 1}, "Trigger.Timeout"},
	}
	for _, tc := range tests {
		err := tc.trig.Validate()
		if tc.wantField == "" {
			if err != nil {
				t.Errorf("%s: Validate() = %v, want nil", tc.name, err)
			}
			continue
		}
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.wantField {
			t.Errorf("%s: Validate() = %v, want a ValidationError on %s", tc.name, err, tc.wantField)
		}
		// An invalid trigger never fires.
		if fired, _, err := tc.trig.Evaluate(Signal{}); fired || err == nil {
			t.Errorf("%s: Evaluate = %v, %v; want false and the validation error", tc.name, fired, err)
		}
	}
}

func TestTriggerEvaluate(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	ctx := map[string]any{"context": map[string]any{"tokens_used": 150000}, "agent": map[string]any{"error_count": 1}}
	type out struct {
		Fired  bool
		Reason string
	}
	tests := []struct {
		name string
		trig Trigger
		sig  Signal
		want out
	}{
		{"condition true", Trigger{Kind: TriggerCondition, Condition: mustCompile(t, "context.tokens_used > 100000")}, Signal{Context: ctx},
			out{true, `condition "context.tokens_used > 100000" is true`}},
		{"condition false", Trigger{Kind: TriggerCondition, Condition: mustCompile(t, "agent.error_count >= 3")}, Signal{Context: ctx}, out{}},
		{"condition with a missing key allowed", Trigger{Kind: TriggerCondition, Condition: mustCompile(t, "agent.stuck == true or agent.error_count > 0"), AllowMissing: true},
			Signal{Context: ctx}, out{true, `condition "agent.stuck == true or agent.error_count > 0" is true`}},
		{"event matches", Trigger{Kind: TriggerEvent, Event: "tests_failed"}, Signal{Event: "tests_failed"}, out{true, `event "tests_failed" observed`}},
		{"event differs", Trigger{Kind: TriggerEvent, Event: "tests_failed"}, Signal{Event: "tests_passed"}, out{}},
		{"event case matters", Trigger{Kind: TriggerEvent, Event: "tests_failed"}, Signal{Event: "Tests_Failed"}, out{}},
		{"no event", Trigger{Kind: TriggerEvent, Event: "tests_failed"}, Signal{}, out{}},
		{"explicit asked", Trigger{Kind: TriggerExplicit}, Signal{Explicit: true}, out{true, "handoff requested explicitly"}},
		{"explicit not asked", Trigger{Kind: TriggerExplicit}, Signal{}, out{}},
		{"timeout reached", Trigger{Kind: TriggerTimeout, Timeout: 5 * time.Minute}, Signal{Now: t0.Add(5 * time.Minute), LastActivity: t0},
			out{true, "no activity for 5m0s, timeout 5m0s"}},
		{"timeout passed", Trigger{Kind: TriggerTimeout, Timeout: 5 * time.Minute}, Signal{Now: t0.Add(6 * time.Minute), LastActivity: t0},
			out{true, "no activity for 6m0s, timeout 5m0s"}},
		{"timeout not reached", Trigger{Kind: TriggerTimeout, Timeout: 5 * time.Minute}, Signal{Now: t0.Add(5*time.Minute - 1), LastActivity: t0}, out{}},
		{"activity after now", Trigger{Kind: TriggerTimeout, Timeout: time.Second}, Signal{Now: t0, LastActivity: t0.Add(time.Hour)}, out{}},
		{"any error", Trigger{Kind: TriggerError}, Signal{ErrorType: "rate_limit"}, out{true, `error "rate_limit" observed`}},
		{"no error", Trigger{Kind: TriggerError}, Signal{}, out{}},
		{"listed error", Trigger{Kind: TriggerError, ErrorTypes: []string{"timeout", "rate_limit"}}, Signal{ErrorType: "rate_limit"}, out{true, `error "rate_limit" matches`}},
		{"unlisted error", Trigger{Kind: TriggerError, ErrorTypes: []string{"timeout"}}, Signal{ErrorType: "rate_limit"}, out{}},
		{"capabilities present", Trigger{Kind: TriggerCapability, Capabilities: []string{"go", "SQL"}}, Signal{Capabilities: []string{"sql", "Go", "docker"}}, out{}},
		{"capabilities lacking", Trigger{Kind: TriggerCapability, Capabilities: []string{"go", "oauth2", "sql", "OAuth2"}}, Signal{Capabilities: []string{"go"}},
			out{true, "agent lacks capabilities: oauth2, sql"}},
		{"no capabilities at all", Trigger{Kind: TriggerCapability, Capabilities: []string{"go"}}, Signal{}, out{true, "agent lacks capabilities: go"}},
	}
	for _, tc := range tests {
		fired, reason, err := tc.trig.Evaluate(tc.sig)
		if err != nil {
			t.Errorf("%s: Evaluate error %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, out{fired, reason}); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, diff)
		}
	}
}

func TestTriggerEvaluateErrors(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		trig      Trigger
		sig       Signal
		wantErr   error
		wantField string
	}{
		{"missing key", Trigger{Kind: TriggerCondition, Condition: mustCompile(t, "agent.stuck")}, Signal{}, ErrMissingKey, ""},
		{"type mismatch", Trigger{Kind: TriggerCondition, Condition: mustCompile(t, "n > 1")}, Signal{Context: map[string]any{"n": "x"}}, ErrTypeMismatch, ""},
		{"no now", Trigger{Kind: TriggerTimeout, Timeout: time.Second}, Signal{LastActivity: t0}, store.ErrInvalidArgument, "Signal.Now"},
		{"no last activity", Trigger{Kind: TriggerTimeout, Timeout: time.Second}, Signal{Now: t0}, store.ErrInvalidArgument, "Signal.LastActivity"},
	}
	for _, tc := range tests {
		fired, reason, err := tc.trig.Evaluate(tc.sig)
		if fired || reason != "" || !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: Evaluate = %v, %q, %v; want false, \"\", %v", tc.name, fired, reason, err, tc.wantErr)
		}
		var ve *store.ValidationError
		if tc.wantField != "" && (!errors.As(err, &ve) || ve.Field != tc.wantField) {
			t.Errorf("%s: error %v does not name %s", tc.name, err, tc.wantField)
		}
	}
}

func TestTriggerJSON(t *testing.T) {
	t.Parallel()
	in := Trigger{Kind: TriggerCondition, Condition: mustCompile(t, "agent.error_count >= 3"), AllowMissing: true}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"kind":"condition","condition":"agent.error_count \u003e= 3","allow_missing":true}`; got != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
	var out Trigger
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Condition.String() != in.Condition.String() || out.Kind != in.Kind || !out.AllowMissing {
		t.Errorf("round trip = %+v", out)
	}
	fired, _, err := out.Evaluate(Signal{Context: map[string]any{"agent": map[string]any{"error_count": 4}}})
	if err != nil || !fired {
		t.Errorf("round-tripped trigger Evaluate = %v, %v; want true, nil", fired, err)
	}
	if err := json.Unmarshal([]byte(`{"kind":"condition","condition":"a >= "}`), &out); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("Unmarshal of a bad condition error = %v, want a SyntaxError", err)
	}
}

func TestParseKinds(t *testing.T) {
	t.Parallel()
	if k, err := ParseTriggerKind(" Capability "); err != nil || k != TriggerCapability {
		t.Errorf("ParseTriggerKind = %q, %v", k, err)
	}
	if _, err := ParseTriggerKind("sometimes"); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("ParseTriggerKind(sometimes) error = %v", err)
	}
	if k, err := ParsePolicyKind("GRACEFUL"); err != nil || k != PolicyGraceful {
		t.Errorf("ParsePolicyKind = %q, %v", k, err)
	}
	if _, err := ParsePolicyKind(""); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("ParsePolicyKind(\"\") error = %v", err)
	}
}

func TestPolicy(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(Policy{Kind: PolicyGraceful, Timeout: 300 * time.Second, Poll: time.Second}, Policy{}.WithDefaults()); diff != "" {
		t.Errorf("WithDefaults (-want +got)\n%s", diff)
	}
	kept := Policy{Kind: PolicyImmediate, Timeout: time.Minute, Poll: time.Millisecond}
	if diff := cmp.Diff(kept, kept.WithDefaults()); diff != "" {
		t.Errorf("WithDefaults changed set fields (-want +got)\n%s", diff)
	}

	trig := &Trigger{Kind: TriggerEvent, Event: "stuck"}
	invalid := []struct {
		name  string
		p     Policy
		field string
	}{
		{"zero kind", Policy{}, "Policy.Kind"},
		{"unknown kind", Policy{Kind: "eventually"}, "Policy.Kind"},
		{"negative timeout", Policy{Kind: PolicyGraceful, Timeout: -1}, "Policy.Timeout"},
		{"negative poll", Policy{Kind: PolicyGraceful, Poll: -1}, "Policy.Poll"},
		{"conditional without trigger", Policy{Kind: PolicyConditional}, "Policy.Trigger"},
		{"conditional with a bad trigger", Policy{Kind: PolicyConditional, Trigger: &Trigger{Kind: TriggerEvent}}, "Policy.Trigger.Event"},
		{"trigger on immediate", Policy{Kind: PolicyImmediate, Trigger: trig}, "Policy.Trigger"},
	}
	for _, tc := range invalid {
		err := tc.p.Validate()
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: Validate() = %v, want a ValidationError on %s", tc.name, err, tc.field)
		}
		if ok, _, err := tc.p.Ready(Signal{}); ok || err == nil {
			t.Errorf("%s: Ready = %v, %v; want false and an error", tc.name, ok, err)
		}
	}

	type out struct {
		OK     bool
		Reason string
		Waits  bool
	}
	ready := []struct {
		p    Policy
		sig  Signal
		want out
	}{
		{Policy{Kind: PolicyImmediate}, Signal{}, out{true, "immediate policy", false}},
		{Policy{}.WithDefaults(), Signal{}, out{true, "graceful policy", true}},
		{Policy{Kind: PolicyConditional, Trigger: trig}, Signal{Event: "stuck"}, out{true, `event "stuck" observed`, true}},
		{Policy{Kind: PolicyConditional, Trigger: trig}, Signal{Event: "fine"}, out{false, "", true}},
	}
	for _, tc := range ready {
		ok, reason, err := tc.p.Ready(tc.sig)
		if err != nil {
			t.Errorf("%v: Ready error %v", tc.p.Kind, err)
		}
		if diff := cmp.Diff(tc.want, out{ok, reason, tc.p.Waits()}); diff != "" {
			t.Errorf("%v Ready (-want +got)\n%s", tc.p.Kind, diff)
		}
	}
}

func TestWaitIdle(t *testing.T) {
	t.Parallel()
	bg := context.Background()

	t.Run("idle at once", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		err := WaitIdle(bg, func(context.Context) (bool, error) { calls.Add(1); return true, nil }, time.Hour, time.Hour)
		if err != nil || calls.Load() != 1 {
			t.Errorf("WaitIdle = %v after %d checks; want nil after 1", err, calls.Load())
		}
	})
	t.Run("idle on the third check", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		err := WaitIdle(bg, func(ctx context.Context) (bool, error) {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("the check's context has no deadline")
			}
			return calls.Add(1) == 3, nil
		}, time.Millisecond, time.Hour)
		if err != nil || calls.Load() != 3 {
			t.Errorf("WaitIdle = %v after %d checks; want nil after 3", err, calls.Load())
		}
	})
	t.Run("never idle", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		err := WaitIdle(bg, func(context.Context) (bool, error) { calls.Add(1); return false, nil }, time.Millisecond, 20*time.Millisecond)
		if !errors.Is(err, ErrIdleTimeout) || calls.Load() < 1 {
			t.Errorf("WaitIdle = %v after %d checks; want ErrIdleTimeout after at least 1", err, calls.Load())
		}
	})
	t.Run("a check blocking past the timeout", func(t *testing.T) {
		t.Parallel()
		err := WaitIdle(bg, func(ctx context.Context) (bool, error) {
			<-ctx.Done()
			return false, ctx.Err()
		}, time.Millisecond, 10*time.Millisecond)
		if !errors.Is(err, ErrIdleTimeout) {
			t.Errorf("WaitIdle = %v, want ErrIdleTimeout", err)
		}
	})
	t.Run("check fails", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("agent unreachable")
		var calls atomic.Int32
		err := WaitIdle(bg, func(context.Context) (bool, error) {
			if calls.Add(1) == 2 {
				return false, boom
			}
			return false, nil
		}, time.Millisecond, time.Hour)
		if !errors.Is(err, boom) || calls.Load() != 2 {
			t.Errorf("WaitIdle = %v after %d checks; want the check's error after 2", err, calls.Load())
		}
	})
	t.Run("context already cancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(bg)
		cancel()
		called := false
		err := WaitIdle(ctx, func(context.Context) (bool, error) { called = true; return true, nil }, time.Millisecond, time.Hour)
		if !errors.Is(err, context.Canceled) || called {
			t.Errorf("WaitIdle = %v (called %v); want context.Canceled without a check", err, called)
		}
	})
	t.Run("context cancelled while waiting", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(bg)
		var calls atomic.Int32
		err := WaitIdle(ctx, func(context.Context) (bool, error) {
			if calls.Add(1) == 2 {
				cancel()
			}
			return false, nil
		}, time.Millisecond, time.Hour)
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrIdleTimeout) {
			t.Errorf("WaitIdle = %v, want context.Canceled", err)
		}
	})
	t.Run("invalid arguments", func(t *testing.T) {
		t.Parallel()
		idle := func(context.Context) (bool, error) { return true, nil }
		for _, tc := range []struct {
			idle          func(context.Context) (bool, error)
			poll, timeout time.Duration
			field         string
		}{
			{nil, time.Second, time.Second, "idle"},
			{idle, 0, time.Second, "poll"},
			{idle, -time.Second, time.Second, "poll"},
			{idle, time.Second, 0, "timeout"},
		} {
			err := WaitIdle(bg, tc.idle, tc.poll, tc.timeout)
			var ve *store.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field {
				t.Errorf("WaitIdle(poll %v, timeout %v) = %v, want a ValidationError on %s", tc.poll, tc.timeout, err, tc.field)
			}
		}
	})
}
