package handoff

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/day1ai/day1/store"
)

// TriggerKind says what makes a Trigger fire.
type TriggerKind string

// Trigger kinds.
const (
	// TriggerCondition fires when Trigger.Condition is true over Signal.Context.
	TriggerCondition TriggerKind = "condition"
	// TriggerEvent fires when Signal.Event equals Trigger.Event.
	TriggerEvent TriggerKind = "event"
	// TriggerExplicit fires when Signal.Explicit is set: someone asked for the
	// handoff directly.
	TriggerExplicit TriggerKind = "explicit"
	// TriggerTimeout fires when the time since Signal.LastActivity reaches
	// Trigger.Timeout.
	TriggerTimeout TriggerKind = "timeout"
	// TriggerError fires when Signal.ErrorType is set and is one of
	// Trigger.ErrorTypes (any error type when that list is empty).
	TriggerError TriggerKind = "error"
	// TriggerCapability fires when the current agent (Signal.Capabilities) lacks any
	// of Trigger.Capabilities.
	TriggerCapability TriggerKind = "capability"
)

var allTriggerKinds = []TriggerKind{TriggerCondition, TriggerEvent, TriggerExplicit,
	TriggerTimeout, TriggerError, TriggerCapability}

// ParseTriggerKind reads a trigger kind, ignoring surrounding spaces and case. Anything
// else is a *store.ValidationError naming the allowed values.
func ParseTriggerKind(s string) (TriggerKind, error) {
	k := TriggerKind(normalizeName(s))
	if !k.Valid() {
		return "", store.Invalid("Trigger.Kind", oneOf(allTriggerKinds), s)
	}
	return k, nil
}

// Valid reports whether k is a known trigger kind, spelt exactly.
func (k TriggerKind) Valid() bool {
	for _, v := range allTriggerKinds {
		if k == v {
			return true
		}
	}
	return false
}

// Trigger decides when a handoff should happen. Kind selects the rule; only the
// parameters of that kind may be set. The zero Trigger is invalid. A Trigger is plain
// data with JSON tags (the condition marshals as its source text) and is safe for
// concurrent use.
type Trigger struct {
	// Kind selects the rule. Required.
	Kind TriggerKind `json:"kind"`
	// Condition is the expression of a TriggerCondition. Required for that kind.
	Condition *Expr `json:"condition,omitempty"`
	// AllowMissing evaluates Condition with EvalOptions.MissingAsNull: a context key
	// that is absent reads as null instead of failing. Default false.
	AllowMissing bool `json:"allow_missing,omitempty"`
	// Event is the event name of a TriggerEvent, compared exactly. Required for that
	// kind.
	Event string `json:"event,omitempty"`
	// Timeout is the idle time after which a TriggerTimeout fires; it must be
	// positive. In JSON it is a number of nanoseconds.
	Timeout time.Duration `json:"timeout,omitempty"`
	// ErrorTypes lists the error types a TriggerError fires on, compared exactly;
	// empty means any error.
	ErrorTypes []string `json:"error_types,omitempty"`
	// Capabilities lists what the current agent must have, or a TriggerCapability
	// fires. Required for that kind; names compare case-insensitively.
	Capabilities []string `json:"capabilities,omitempty"`
}

// Signal is what a Trigger is evaluated against: the observable state of the agent
// that holds the task.
type Signal struct {
	// Context is the map conditions read; nil is empty.
	Context map[string]any
	// Event is the name of the event just observed; empty when none.
	Event string
	// Explicit is set when someone asked for the handoff directly.
	Explicit bool
	// Now is the current time; a timeout trigger needs it.
	Now time.Time
	// LastActivity is when the agent last made progress; a timeout trigger needs it.
	LastActivity time.Time
	// ErrorType is the type of the error just observed; empty when none.
	ErrorType string
	// Capabilities are the current agent's capability names.
	Capabilities []string
}

// Validate checks the trigger: a known Kind, the parameters that kind requires, and
// no parameter of another kind. It returns a *store.ValidationError naming the field.
func (t Trigger) Validate() error {
	if !t.Kind.Valid() {
		return store.Invalid("Trigger.Kind", oneOf(allTriggerKinds), string(t.Kind))
	}
	type param struct {
		field string
		set   bool
		kind  TriggerKind
	}
	params := []param{
		{"Trigger.Condition", t.Condition != nil, TriggerCondition},
		{"Trigger.AllowMissing", t.AllowMissing, TriggerCondition},
		{"Trigger.Event", t.Event != "", TriggerEvent},
		{"Trigger.Timeout", t.Timeout != 0, TriggerTimeout},
		{"Trigger.ErrorTypes", len(t.ErrorTypes) > 0, TriggerError},
		{"Trigger.Capabilities", len(t.Capabilities) > 0, TriggerCapability},
	}
	for _, p := range params {
		if p.set && p.kind != t.Kind {
			return store.Invalid(p.field, fmt.Sprintf("applies to %s triggers only; leave it empty for a %s trigger", p.kind, t.Kind), nil)
		}
	}
	switch t.Kind {
	case TriggerCondition:
		if t.Condition.IsZero() {
			return store.Invalid("Trigger.Condition", "is required for a condition trigger; build it with Compile", nil)
		}
	case TriggerEvent:
		if strings.TrimSpace(t.Event) == "" {
			return store.Invalid("Trigger.Event", "is required for an event trigger: the event name to wait for", nil)
		}
	case TriggerTimeout:
		if t.Timeout <= 0 {
			return store.Invalid("Trigger.Timeout", "must be a positive duration for a timeout trigger", t.Timeout)
		}
	case TriggerError:
		for i, e := range t.ErrorTypes {
			if strings.TrimSpace(e) == "" {
				return store.Invalid(fmt.Sprintf("Trigger.ErrorTypes[%d]", i), "must not be empty", nil)
			}
		}
	case TriggerCapability:
		if len(t.Capabilities) == 0 {
			return store.Invalid("Trigger.Capabilities", "is required for a capability trigger: the capabilities the agent must have", nil)
		}
		for i, c := range t.Capabilities {
			if err := validCapabilityName(fmt.Sprintf("Trigger.Capabilities[%d]", i), c); err != nil {
				return err
			}
		}
	}
	return nil
}

// Evaluate decides whether the trigger fires for s. reason says why when it fires
// (e.g. `no activity for 6m0s, timeout 5m0s`) and is empty when it does not. It
// returns Validate's error for an invalid trigger; for a condition trigger, the
// expression's *MissingKeyError or *TypeError; for a timeout trigger, a
// *store.ValidationError when s.Now or s.LastActivity is zero. On error fired is false.
func (t Trigger) Evaluate(s Signal) (fired bool, reason string, err error) {
	if err := t.Validate(); err != nil {
		return false, "", err
	}
	switch t.Kind {
	case TriggerCondition:
		ok, err := t.Condition.EvalWith(s.Context, EvalOptions{MissingAsNull: t.AllowMissing})
		if err != nil || !ok {
			return false, "", err
		}
		return true, fmt.Sprintf("condition %q is true", t.Condition.String()), nil
	case TriggerEvent:
		if s.Event != t.Event {
			return false, "", nil
		}
		return true, fmt.Sprintf("event %q observed", t.Event), nil
	case TriggerExplicit:
		if !s.Explicit {
			return false, "", nil
		}
		return true, "handoff requested explicitly", nil
	case TriggerTimeout:
		if s.Now.IsZero() {
			return false, "", store.Invalid("Signal.Now", "is required to evaluate a timeout trigger", nil)
		}
		if s.LastActivity.IsZero() {
			return false, "", store.Invalid("Signal.LastActivity", "is required to evaluate a timeout trigger: when the agent last made progress", nil)
		}
		idle := s.Now.Sub(s.LastActivity)
		if idle < t.Timeout {
			return false, "", nil
		}
		return true, fmt.Sprintf("no activity for %s, timeout %s", idle, t.Timeout), nil
	case TriggerError:
		if s.ErrorType == "" {
			return false, "", nil
		}
		if len(t.ErrorTypes) == 0 {
			return true, fmt.Sprintf("error %q observed", s.ErrorType), nil
		}
		for _, e := range t.ErrorTypes {
			if e == s.ErrorType {
				return true, fmt.Sprintf("error %q matches", s.ErrorType), nil
			}
		}
		return false, "", nil
	case TriggerCapability:
		missing := missingCapabilities(t.Capabilities, s.Capabilities)
		if len(missing) == 0 {
			return false, "", nil
		}
		return true, "agent lacks capabilities: " + strings.Join(missing, ", "), nil
	}
	return false, "", nil
}

// missingCapabilities returns the names in required that have lacks, in order, each
// once, compared case-insensitively.
func missingCapabilities(required, has []string) []string {
	have := make(map[string]bool, len(has))
	for _, h := range has {
		have[capabilityKey(h)] = true
	}
	var missing []string
	for _, r := range required {
		k := capabilityKey(r)
		if !have[k] {
			have[k] = true // report each once
			missing = append(missing, r)
		}
	}
	return missing
}

// PolicyKind says how a handoff proceeds once requested.
type PolicyKind string

// Handoff policies.
const (
	// PolicyImmediate hands over at once, interrupting the source.
	PolicyImmediate PolicyKind = "immediate"
	// PolicyGraceful waits, up to Policy.Timeout, for the source to report idle, then
	// hands over. The design's default.
	PolicyGraceful PolicyKind = "graceful"
	// PolicyConditional hands over only when Policy.Trigger fires, then proceeds
	// gracefully; when it does not fire the handoff fails.
	PolicyConditional PolicyKind = "conditional"
)

var allPolicyKinds = []PolicyKind{PolicyImmediate, PolicyGraceful, PolicyConditional}

// Defaults of Policy.
const (
	// DefaultPolicyKind is the policy used when none is given.
	DefaultPolicyKind = PolicyGraceful
	// DefaultGracefulTimeout bounds the wait for the source to become idle.
	DefaultGracefulTimeout = 300 * time.Second
	// DefaultIdlePoll is how often the source is asked whether it is idle.
	DefaultIdlePoll = time.Second
)

// ParsePolicyKind reads a policy, ignoring surrounding spaces and case. Anything else is
// a *store.ValidationError naming the allowed values.
func ParsePolicyKind(s string) (PolicyKind, error) {
	k := PolicyKind(normalizeName(s))
	if !k.Valid() {
		return "", store.Invalid("Policy.Kind", oneOf(allPolicyKinds), s)
	}
	return k, nil
}

// Valid reports whether k is a known policy, spelt exactly.
func (k PolicyKind) Valid() bool {
	for _, v := range allPolicyKinds {
		if k == v {
			return true
		}
	}
	return false
}

// Policy says how a requested handoff proceeds. Use WithDefaults to fill the zero
// fields, then Validate.
type Policy struct {
	// Kind is the policy. Default DefaultPolicyKind (graceful).
	Kind PolicyKind `json:"kind,omitempty"`
	// Timeout bounds the graceful wait for the source to become idle (graceful and
	// conditional). Default DefaultGracefulTimeout (300s); must not be negative. In
	// JSON, nanoseconds.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Poll is how often the source is asked whether it is idle (graceful and
	// conditional). Default DefaultIdlePoll (1s); must not be negative. In JSON,
	// nanoseconds.
	Poll time.Duration `json:"poll,omitempty"`
	// Trigger decides whether a conditional handoff proceeds. Required for
	// PolicyConditional and not allowed for the others.
	Trigger *Trigger `json:"trigger,omitempty"`
}

// WithDefaults returns p with its zero Kind, Timeout and Poll set to their defaults.
func (p Policy) WithDefaults() Policy {
	if p.Kind == "" {
		p.Kind = DefaultPolicyKind
	}
	if p.Timeout == 0 {
		p.Timeout = DefaultGracefulTimeout
	}
	if p.Poll == 0 {
		p.Poll = DefaultIdlePoll
	}
	return p
}

// Validate checks p as given (call WithDefaults first to accept zero fields): a known
// Kind, non-negative Timeout and Poll, and a valid Trigger exactly when the policy is
// conditional. It returns a *store.ValidationError naming the field.
func (p Policy) Validate() error {
	if !p.Kind.Valid() {
		return store.Invalid("Policy.Kind", oneOf(allPolicyKinds), string(p.Kind))
	}
	if p.Timeout < 0 {
		return store.Invalid("Policy.Timeout", "must not be negative", p.Timeout)
	}
	if p.Poll < 0 {
		return store.Invalid("Policy.Poll", "must not be negative", p.Poll)
	}
	if p.Kind == PolicyConditional {
		if p.Trigger == nil {
			return store.Invalid("Policy.Trigger", "is required for a conditional policy", nil)
		}
		if err := p.Trigger.Validate(); err != nil {
			var ve *store.ValidationError
			if errors.As(err, &ve) {
				c := *ve
				c.Field = "Policy." + ve.Field
				return &c
			}
			return err
		}
	} else if p.Trigger != nil {
		return store.Invalid("Policy.Trigger", fmt.Sprintf("applies to conditional policies only; remove it from a %s policy", p.Kind), nil)
	}
	return nil
}

// Waits reports whether the policy waits for the source to become idle before handing
// over: true for graceful and conditional.
func (p Policy) Waits() bool { return p.Kind == PolicyGraceful || p.Kind == PolicyConditional }

// Ready decides whether a handoff under p may proceed given s. Immediate and graceful
// policies always proceed (a graceful one then waits with WaitIdle); a conditional one
// proceeds when its trigger fires. reason explains a true answer. It returns
// Validate's error for an invalid policy and the trigger's evaluation error.
func (p Policy) Ready(s Signal) (ok bool, reason string, err error) {
	if err := p.Validate(); err != nil {
		return false, "", err
	}
	switch p.Kind {
	case PolicyImmediate:
		return true, "immediate policy", nil
	case PolicyGraceful:
		return true, "graceful policy", nil
	}
	return p.Trigger.Evaluate(s)
}

// WaitIdle waits for the source of a graceful handoff to report idle. It calls idle at
// once, then every poll, until idle returns true (WaitIdle returns nil), idle returns
// an error (returned, wrapped), timeout elapses (an error matching ErrIdleTimeout), or
// ctx ends (ctx.Err()). The ctx passed to idle ends at the timeout, so one slow check
// cannot outlast it. poll and timeout must be positive and idle non-nil, or WaitIdle
// returns a *store.ValidationError without calling idle. It never sleeps past ctx or
// the timeout.
func WaitIdle(ctx context.Context, idle func(ctx context.Context) (bool, error), poll, timeout time.Duration) error {
	switch {
	case idle == nil:
		return store.Invalid("idle", "must not be nil: a function reporting whether the source agent is idle", nil)
	case poll <= 0:
		return store.Invalid("poll", "must be a positive duration", poll)
	case timeout <= 0:
		return store.Invalid("timeout", "must be a positive duration", timeout)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	timedOut := func(checks int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%w: still busy after %s (%d checks)", ErrIdleTimeout, timeout, checks)
	}
	timer := time.NewTimer(poll)
	defer timer.Stop()
	for checks := 1; ; checks++ {
		ok, err := idle(wctx)
		if err == nil && ok {
			return nil
		}
		if wctx.Err() != nil {
			return timedOut(checks)
		}
		if err != nil {
			return fmt.Errorf("day1: checking whether the source agent is idle: %w", err)
		}
		timer.Reset(poll)
		select {
		case <-wctx.Done():
			return timedOut(checks)
		case <-timer.C:
		}
	}
}
