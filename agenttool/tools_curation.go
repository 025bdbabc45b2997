package agenttool

import (
	"context"
	"fmt"

	"github.com/day1ai/day1"
)

// defaultFactThreshold is the score that verifies a fact when memory_verify_branch
// names no fact_threshold: the stricter threshold of the design.
var defaultFactThreshold = day1.StrictPolicy().VerifyAt

// VerifyBranchIn is the input of memory_verify_branch.
type VerifyBranchIn struct {
	BranchName    string   `json:"branch_name" jsonschema:"the branch whose facts and conversations to judge"`
	FactThreshold *float64 `json:"fact_threshold,omitempty" jsonschema:"the score, 0 to 1, at or above which a fact is verified (default 0.7); conversations are verified at 0.6"`
}

// VerifyBranchOut is the output of memory_verify_branch.
type VerifyBranchOut struct {
	Branch      string        `json:"branch"`
	Threshold   float64       `json:"fact_threshold"`
	Total       int           `json:"total" jsonschema:"records judged"`
	Verified    int           `json:"verified"`
	Invalidated int           `json:"invalidated"`
	Pending     int           `json:"pending" jsonschema:"judged, between the thresholds: left for review"`
	Verdicts    []VerdictView `json:"verdicts"`
}

// VerifyFactIn is the input of memory_verify_fact.
type VerifyFactIn struct {
	FactID string `json:"fact_id" jsonschema:"the fact to judge"`
	Branch string `json:"branch,omitempty" jsonschema:"the fact's branch (default: this session's current branch, else main)"`
}

// VerifyFactOut is the output of memory_verify_fact.
type VerifyFactOut struct {
	Verdict VerdictView `json:"verdict"`
	Fact    FactView    `json:"fact" jsonschema:"the fact as stored with its verdict"`
}

func curationTools() []Tool {
	return []Tool{
		tool("memory_verify_branch",
			"Judge every fact and conversation of a branch not judged yet (accuracy, relevance, specificity) before merging it, marking each verified, invalidated or pending.",
			(*caller).verifyBranch),
		tool("memory_verify_fact",
			"Judge one fact and store the verdict with it.",
			(*caller).verifyFact)}
}

func (m *caller) verifyBranch(ctx context.Context, in VerifyBranchIn) (VerifyBranchOut, string, error) {
	threshold := orDefault(in.FactThreshold, defaultFactThreshold)
	// The design's thresholds: facts at fact_threshold (invalidated under 0.4, or under
	// the threshold when lower), conversations at 0.6.
	res, err := m.c.VerifyBranch(ctx, day1.VerifyBranchRequest{
		Branch: in.BranchName, Policy: day1.StrictPolicy(), FactThreshold: threshold,
	})
	if err != nil {
		return VerifyBranchOut{}, "", err
	}
	out := VerifyBranchOut{
		Branch: branchName(res.Branch), Threshold: threshold, Total: res.Total,
		Verified: res.Verified, Invalidated: res.Invalidated, Pending: res.Pending,
		Verdicts: make([]VerdictView, len(res.Verdicts)),
	}
	for i, v := range res.Verdicts {
		out.Verdicts[i] = viewVerdict(v)
	}
	return out, fmt.Sprintf("%d judged on %s: %d verified, %d invalidated, %d pending",
		out.Total, out.Branch, out.Verified, out.Invalidated, out.Pending), nil
}

func (m *caller) verifyFact(ctx context.Context, in VerifyFactIn) (VerifyFactOut, string, error) {
	v, err := m.c.VerifyFact(ctx, m.branch(in.Branch), in.FactID)
	if err != nil {
		return VerifyFactOut{}, "", err
	}
	out := VerifyFactOut{Verdict: viewVerdict(v.Verdict), Fact: viewFact(v.Fact)}
	return out, fmt.Sprintf("fact %s is %s (score %.2f)", v.Fact.ID, v.Status, v.Score), nil
}
