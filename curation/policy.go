package curation

import (
	"fmt"
	"math"

	"github.com/day1ai/day1/store"
)

// Default thresholds of a Policy.
const (
	// DefaultVerifyAt is the score at or above which a record is verified.
	DefaultVerifyAt = 0.6
	// DefaultInvalidateBelow is the score below which a record is invalidated.
	DefaultInvalidateBelow = 0.3
	// StrictVerifyAt and StrictInvalidateBelow are the thresholds of StrictPolicy.
	StrictVerifyAt        = 0.7
	StrictInvalidateBelow = 0.4
)

// Policy turns a judge's overall score (0 to 1) into a verification status: verified
// at VerifyAt or above, invalidated below InvalidateBelow, and pending (judged, but
// left for review) in between.
//
// The zero Policy means DefaultPolicy: verified at 0.6, invalidated under 0.3.
// StrictPolicy is the stricter 0.7 / 0.4 pair. Both thresholds must lie in 0..1 and
// InvalidateBelow must not exceed VerifyAt; Validate says which field is wrong.
type Policy struct {
	// VerifyAt is the lowest overall score that verifies a record.
	VerifyAt float64 `json:"verify_at"`
	// InvalidateBelow is the score under which a record is invalidated.
	InvalidateBelow float64 `json:"invalidate_below"`
}

// DefaultPolicy returns the default thresholds: verified at 0.6 or more, invalidated
// under 0.3.
func DefaultPolicy() Policy {
	return Policy{VerifyAt: DefaultVerifyAt, InvalidateBelow: DefaultInvalidateBelow}
}

// StrictPolicy returns the stricter thresholds: verified at 0.7 or more, invalidated
// under 0.4.
func StrictPolicy() Policy {
	return Policy{VerifyAt: StrictVerifyAt, InvalidateBelow: StrictInvalidateBelow}
}

// IsZero reports whether p is the zero Policy, which stands for DefaultPolicy.
func (p Policy) IsZero() bool { return p == Policy{} }

// OrDefault returns p, or DefaultPolicy when p is zero.
func (p Policy) OrDefault() Policy {
	if p.IsZero() {
		return DefaultPolicy()
	}
	return p
}

// Validate checks the thresholds. field names the policy in the error, such as
// "Config.Verification"; empty means "Policy". It returns a *store.ValidationError
// when a threshold is outside 0..1 (or NaN) or InvalidateBelow exceeds VerifyAt. The
// zero Policy is valid.
func (p Policy) Validate(field string) error {
	if field == "" {
		field = "Policy"
	}
	for _, t := range []struct {
		name string
		v    float64
	}{{"VerifyAt", p.VerifyAt}, {"InvalidateBelow", p.InvalidateBelow}} {
		if math.IsNaN(t.v) || t.v < 0 || t.v > 1 {
			return store.Invalid(field+"."+t.name, "must be between 0 and 1", t.v)
		}
	}
	if p.InvalidateBelow > p.VerifyAt {
		return store.Invalid(field+".InvalidateBelow",
			fmt.Sprintf("must not exceed VerifyAt (%g); scores between the two are left pending", p.VerifyAt), p.InvalidateBelow)
	}
	return nil
}

// Status returns the verification status of an overall score under p (the zero
// Policy acting as DefaultPolicy): store.Verified, store.Invalidated or store.Pending.
func (p Policy) Status(score float64) store.VerificationStatus {
	p = p.OrDefault()
	switch {
	case score >= p.VerifyAt:
		return store.Verified
	case score < p.InvalidateBelow:
		return store.Invalidated
	}
	return store.Pending
}
