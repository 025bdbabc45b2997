package curation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// Verdicts a model gives on two facts that may contradict each other.
const (
	// VerdictSupersede: the new fact replaces the old one, which no longer holds.
	VerdictSupersede = "supersede"
	// VerdictKeepBoth: both hold, each in its own scope (an environment, a service,
	// a period), which the verdict names.
	VerdictKeepBoth = "keep_both"
	// VerdictFlag: they contradict and the model cannot tell which holds: both stay,
	// reported for a person or an agent to settle.
	VerdictFlag = "flag"
	// VerdictNone: they do not contradict after all.
	VerdictNone = "none"
)

// MetaScope is the metadata key of the scope in which a fact holds, written on both
// facts of a VerdictKeepBoth.
const MetaScope = "scope"

// maxScopeLen bounds the bytes of a scope a model names.
const maxScopeLen = 200

// ContradictionVerdict is a model's judgement of two facts that may contradict each
// other.
type ContradictionVerdict struct {
	// Verdict is VerdictSupersede, VerdictKeepBoth, VerdictFlag or VerdictNone.
	Verdict string
	// OldScope and NewScope are where each fact holds, for VerdictKeepBoth.
	OldScope, NewScope string
	// Reason is the model's one sentence.
	Reason string
}

const judgeContradictionSystem = `You keep the long-term memory of AI agents consistent.
Memory holds an old fact; a new fact is being written, and the two may contradict each other.
Decide what memory should do:
- "supersede": the new fact replaces the old one, which no longer holds;
- "keep_both": both hold, each in its own scope (an environment, a service, a period, a user); name each scope in a few words;
- "flag": they contradict and you cannot tell which holds; both stay for a person to settle;
- "none": they do not contradict.
Reply with one JSON object and nothing else:
{"verdict": "supersede", "old_scope": "", "new_scope": "", "reason": "one sentence"}`

// JudgeContradiction asks m what memory should do about a new fact that may
// contradict an old one.
//
// Errors: the model's error, or a *llm.MalformedOutputError for a reply that is not
// the JSON asked for, has an unknown verdict, or keeps both without naming both
// scopes; ctx's error.
func JudgeContradiction(ctx context.Context, m llm.Model, old, new store.Fact) (ContradictionVerdict, error) {
	if m == nil {
		return ContradictionVerdict{}, errors.New("day1: JudgeContradiction needs a model")
	}
	var reply struct {
		Verdict  string `json:"verdict"`
		OldScope string `json:"old_scope"`
		NewScope string `json:"new_scope"`
		Reason   string `json:"reason"`
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Old fact [%s], written %s: %s\n", old.ID, old.CreatedAt.UTC().Format("2006-01-02"), shorten(old.Text, maxQuote))
	if s := old.Metadata[MetaScope]; s != "" {
		fmt.Fprintf(&b, "  it holds in: %s\n", shorten(s, maxScopeLen))
	}
	fmt.Fprintf(&b, "New fact: %s\n", shorten(new.Text, maxQuote))
	req := llm.Request{System: judgeContradictionSystem, Messages: []llm.Message{{Role: llm.RoleUser, Content: b.String()}}}
	err := askJSON(ctx, m, req, &reply, func() error {
		switch reply.Verdict {
		case VerdictSupersede, VerdictFlag, VerdictNone:
		case VerdictKeepBoth:
			if strings.TrimSpace(reply.OldScope) == "" || strings.TrimSpace(reply.NewScope) == "" {
				return errors.New("keep_both must name old_scope and new_scope")
			}
		default:
			return fmt.Errorf("verdict %q: want supersede, keep_both, flag or none", reply.Verdict)
		}
		return nil
	})
	if err != nil {
		return ContradictionVerdict{}, err
	}
	return ContradictionVerdict{Verdict: reply.Verdict, OldScope: shorten(strings.TrimSpace(reply.OldScope), maxScopeLen),
		NewScope: shorten(strings.TrimSpace(reply.NewScope), maxScopeLen), Reason: shorten(strings.TrimSpace(reply.Reason), 1000)}, nil
}
