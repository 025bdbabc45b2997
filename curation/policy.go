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
	// StrictVerifyAt and StrictInvalidateBelow are the fact thresholds of StrictPolicy.
	StrictVerifyAt        = 0.7
	StrictInvalidateBelow = 0.4
	// StrictConversationVerifyAt is the conversation threshold of StrictPolicy: the
	// design verifies conversations at 0.6 while it verifies facts at 0.7.
	StrictConversationVerifyAt = 0.6
)

// Policy turns a judge's overall score (0 to 1) into a verification status: verified
// at the verify threshold or above, invalidated below the invalidate threshold, and
// pending (judged, but left for review) in between.
//
// Facts and conversations have thresholds of their own. VerifyAt and InvalidateBelow
// judge facts, and conversations too unless ConversationVerifyAt or
// ConversationInvalidateBelow is set (non-zero); then those two judge conversations.
//
// The zero Policy means DefaultPolicy: both kinds verified at 0.6, invalidated under
// 0.3, the thresholds of the running design. StrictPolicy follows the stricter phase
// design: facts verified at 0.7 and invalidated under 0.4, conversations verified at
// 0.6 and invalidated under 0.4. Every threshold must lie in 0..1 and an invalidate
// threshold must not exceed its verify threshold; Validate says which field is wrong.
type Policy struct {
	// VerifyAt is the lowest overall score that verifies a fact (and a conversation,
	// when the conversation thresholds are unset).
	VerifyAt float64 `json:"verify_at"`
	// InvalidateBelow is the score under which a fact (and a conversation, when the
	// conversation thresholds are unset) is invalidated.
	InvalidateBelow float64 `json:"invalidate_below"`
	// ConversationVerifyAt and ConversationInvalidateBelow are the thresholds of
	// conversations. Both zero means VerifyAt and InvalidateBelow apply.
	ConversationVerifyAt        float64 `json:"conversation_verify_at,omitempty"`
	ConversationInvalidateBelow float64 `json:"conversation_invalidate_below,omitempty"`
}

// DefaultPolicy returns the default thresholds: facts and conversations verified at
// 0.6 or more, invalidated under 0.3.
func DefaultPolicy() Policy {
	return Policy{VerifyAt: DefaultVerifyAt, InvalidateBelow: DefaultInvalidateBelow}
}

// StrictPolicy returns the stricter thresholds: facts verified at 0.7 or more,
// conversations at 0.6 or more, both invalidated under 0.4.
func StrictPolicy() Policy {
	return Policy{
		VerifyAt: StrictVerifyAt, InvalidateBelow: StrictInvalidateBelow,
		ConversationVerifyAt: StrictConversationVerifyAt, ConversationInvalidateBelow: StrictInvalidateBelow,
	}
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

// ForKind returns the thresholds that judge records of kind k as a Policy whose
// VerifyAt and InvalidateBelow are those thresholds (the zero Policy acting as
// DefaultPolicy): the conversation thresholds for store.KindConversation when they
// are set, VerifyAt and InvalidateBelow otherwise.
func (p Policy) ForKind(k store.Kind) Policy {
	p = p.OrDefault()
	if k == store.KindConversation && (p.ConversationVerifyAt != 0 || p.ConversationInvalidateBelow != 0) {
		return Policy{VerifyAt: p.ConversationVerifyAt, InvalidateBelow: p.ConversationInvalidateBelow}
	}
	return Policy{VerifyAt: p.VerifyAt, InvalidateBelow: p.InvalidateBelow}
}

// WithFactThreshold returns p with facts verified at verifyAt: the fact threshold a
// batch or a tool names. The fact invalidate threshold drops to verifyAt when it was
// higher. The conversation thresholds keep p's (or VerifyAt's and InvalidateBelow's
// as they were, when p had none), so naming a fact threshold leaves conversations as
// they were judged.
func (p Policy) WithFactThreshold(verifyAt float64) Policy {
	p = p.OrDefault()
	conv := p.ForKind(store.KindConversation)
	p.ConversationVerifyAt, p.ConversationInvalidateBelow = conv.VerifyAt, conv.InvalidateBelow
	p.VerifyAt = verifyAt
	p.InvalidateBelow = min(p.InvalidateBelow, verifyAt)
	return p
}

// Validate checks the thresholds. field names the policy in the error, such as
// "Config.Verification"; empty means "Policy". It returns a *store.ValidationError
// when a threshold is outside 0..1 (or NaN) or an invalidate threshold exceeds its
// verify threshold. The zero Policy is valid.
func (p Policy) Validate(field string) error {
	if field == "" {
		field = "Policy"
	}
	for _, t := range []struct {
		name string
		v    float64
	}{
		{"VerifyAt", p.VerifyAt}, {"InvalidateBelow", p.InvalidateBelow},
		{"ConversationVerifyAt", p.ConversationVerifyAt}, {"ConversationInvalidateBelow", p.ConversationInvalidateBelow},
	} {
		if math.IsNaN(t.v) || t.v < 0 || t.v > 1 {
			return store.Invalid(field+"."+t.name, "must be between 0 and 1", t.v)
		}
	}
	if p.InvalidateBelow > p.VerifyAt {
		return store.Invalid(field+".InvalidateBelow",
			fmt.Sprintf("must not exceed VerifyAt (%g); scores between the two are left pending", p.VerifyAt), p.InvalidateBelow)
	}
	if p.ConversationInvalidateBelow > p.ConversationVerifyAt {
		return store.Invalid(field+".ConversationInvalidateBelow",
			fmt.Sprintf("must not exceed ConversationVerifyAt (%g); scores between the two are left pending", p.ConversationVerifyAt), p.ConversationInvalidateBelow)
	}
	return nil
}

// Status returns the verification status of a fact's overall score under p (the
// zero Policy acting as DefaultPolicy): store.Verified, store.Invalidated or
// store.Pending. StatusFor judges other kinds.
func (p Policy) Status(score float64) store.VerificationStatus {
	return p.StatusFor(store.KindFact, score)
}

// StatusFor returns the verification status of an overall score of a record of kind
// k under p's thresholds for that kind (see ForKind).
func (p Policy) StatusFor(k store.Kind, score float64) store.VerificationStatus {
	t := p.ForKind(k)
	switch {
	case score >= t.VerifyAt:
		return store.Verified
	case score < t.InvalidateBelow:
		return store.Invalidated
	}
	return store.Pending
}
