package curation

import (
	"context"
	"fmt"

	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// GateName is the name of the curation gate in a *store.MergeBlockedError.
const GateName = "curation"

// StatusOf returns the verification state of a fact or a conversation:
//
//   - store.Invalidated: a fact whose Status is invalidated, or any record whose
//     Verify.Status is;
//   - store.Verified: a fact whose Status is verified or promoted, or any record whose
//     Verify.Status is verified;
//   - store.Pending: judged, with a score between the thresholds;
//   - store.Unverified (empty) otherwise, and for every other kind.
func StatusOf(r store.Record) store.VerificationStatus {
	switch r := r.(type) {
	case store.Fact:
		switch {
		case r.Status == store.FactInvalidated || r.Verify.Status == store.Invalidated:
			return store.Invalidated
		case r.Status == store.FactVerified || r.Status == store.FactPromoted || r.Verify.Status == store.Verified:
			return store.Verified
		case r.Verify.Status == store.Pending:
			return store.Pending
		}
	case store.Conversation:
		switch r.Verify.Status {
		case store.Invalidated, store.Verified, store.Pending:
			return r.Verify.Status
		}
	}
	return store.Unverified
}

// Gate is the curation merge gate (a merge.Gate): it refuses a merge that would write
// an invalidated record to the target, or, unless AllowUnverified, a fact that is not
// verified. A refused merge fails with a *store.MergeBlockedError listing each
// offending record and why, and nothing changes.
//
// The gate looks at what the merge plan writes: facts whose status is live (active,
// verified, promoted) or invalidated, and with Conversations set, conversations.
// Superseded facts (history the merge records) and deletions pass. The zero Gate
// requires verified facts and ignores conversations. A Gate is a value, safe for
// concurrent use.
type Gate struct {
	// AllowUnverified lets unverified and pending facts through; invalidated ones
	// still block. Default false: every fact the merge writes must be verified.
	AllowUnverified bool
	// Conversations checks conversations too: invalidated ones block, and unless
	// AllowUnverified so do those not verified. Default false: conversations and
	// messages pass unchecked.
	Conversations bool
}

var _ merge.Gate = Gate{}

// Name returns GateName.
func (Gate) Name() string { return GateName }

// Check returns the offenses of a merge plan.
func (g Gate) Check(ctx context.Context, plan *store.MergePlan) ([]store.Offense, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []store.Offense
	for _, r := range plan.Puts {
		switch r := r.(type) {
		case store.Fact:
			if r.Status == store.FactSuperseded {
				continue
			}
		case store.Conversation:
			if !g.Conversations {
				continue
			}
		default:
			continue
		}
		if reason := g.offense(r); reason != "" {
			out = append(out, store.Offense{Ref: store.RefOf(r), Reason: reason})
		}
	}
	return out, nil
}

func (g Gate) offense(r store.Record) string {
	st := StatusOf(r)
	switch {
	case st == store.Invalidated:
		return "invalidated" + scoreNote(r)
	case st == store.Verified || g.AllowUnverified:
		return ""
	case st == store.Pending:
		return "not verified: judged pending" + scoreNote(r) + "; review it or verify it again"
	}
	return "not verified; verify it first (VerifyFact, VerifyBranch) or merge with AllowUnverified"
}

func scoreNote(r store.Record) string {
	var v store.Verification
	switch r := r.(type) {
	case store.Fact:
		v = r.Verify
	case store.Conversation:
		v = r.Verify
	}
	if v.Status == store.Unverified {
		return ""
	}
	return fmt.Sprintf(" (score %.2f by %s)", v.Score, v.By)
}

// Counts counts records by verification state (see StatusOf).
type Counts struct {
	Verified    int `json:"verified"`
	Pending     int `json:"pending"`     // judged, between the thresholds
	Unverified  int `json:"unverified"`  // never judged
	Invalidated int `json:"invalidated"` // judged wrong
}

// Total is the number of records counted.
func (c Counts) Total() int { return c.Verified + c.Pending + c.Unverified + c.Invalidated }

func (c *Counts) add(s store.VerificationStatus) {
	switch s {
	case store.Verified:
		c.Verified++
	case store.Pending:
		c.Pending++
	case store.Invalidated:
		c.Invalidated++
	default:
		c.Unverified++
	}
}

// Summary counts the verification states of a branch's facts and conversations: what
// a merge of the whole branch would take to the gate.
type Summary struct {
	Branch        string `json:"branch"`
	Facts         Counts `json:"facts"` // live and invalidated facts; superseded ones are history
	Conversations Counts `json:"conversations"`
}

// Ready reports whether the zero Gate would let every fact of the branch through:
// no fact invalidated, pending or unverified.
func (s Summary) Ready() bool { return s.Facts.Total() == s.Facts.Verified }

// Summarize counts the verification states of a branch (empty means
// store.DefaultBranch). Errors: a *store.ValidationError for a bad name,
// store.ErrBranchNotFound, ctx's error.
func (e *Engine) Summarize(ctx context.Context, branch string) (Summary, error) {
	if err := e.check(); err != nil {
		return Summary{}, err
	}
	branch, err := validBranch("branch", branch)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Branch: branch}
	v := store.View{Branch: branch}
	facts, err := e.Store.List(ctx, v, store.ListQuery{Kind: store.KindFact, Filter: store.Filter{
		Statuses: append([]store.FactStatus{store.FactInvalidated}, live...),
	}})
	if err != nil {
		return Summary{}, err
	}
	for _, f := range facts {
		s.Facts.add(StatusOf(f))
	}
	convs, err := e.Store.List(ctx, v, store.ListQuery{Kind: store.KindConversation})
	if err != nil {
		return Summary{}, err
	}
	for _, c := range convs {
		s.Conversations.add(StatusOf(c))
	}
	return s, nil
}
