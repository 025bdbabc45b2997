package curation

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// ResolverName is the name of the judge resolver: merge history records its
// decisions as "resolver:judge".
const ResolverName = "judge"

// Resolver is a merge.Resolver that asks a language model to decide conflicts between
// two facts: keep the source's, keep the target's, keep both, or write a merged fact
// whose text the model gives.
//
// The model decides conflicts where both sides still have a fact. Everything else (a
// side that deleted the record, conflicts of other kinds) goes to Fallback.
//
// A malformed reply (not the JSON asked for, an unknown action, a merge without a
// text) falls back too, and the resolution's reason says so: a merge should not fail
// because a model got the format wrong. An error of the model itself (network, quota,
// ctx) is returned and aborts the merge, which changes nothing and can be retried.
//
// A merged fact is new: a fresh id (assigned by the merge engine), ParentID the
// conflicting fact, the target's category, session, task and agent, the higher
// confidence of the two, metadata "merged_from" naming both, and an embedding from
// Embedder when set. When both sides were verified the merged fact is too, by the
// model, with the lower of their scores; otherwise it is active and unverified.
type Resolver struct {
	// Model decides. Required.
	Model llm.Model
	// Fallback decides what the model does not. Default merge.DefaultResolver().
	Fallback merge.Resolver
	// Embedder embeds merged facts. Default nil: no embedding; the fact stays
	// keyword-searchable.
	Embedder llm.Embedder
}

var _ merge.Resolver = (*Resolver)(nil)

// Name returns ResolverName.
func (r *Resolver) Name() string { return ResolverName }

// Resolve decides one conflict.
func (r *Resolver) Resolve(ctx context.Context, c store.Conflict) (merge.Decision, error) {
	if err := ctx.Err(); err != nil {
		return merge.Decision{}, err
	}
	if r == nil || r.Model == nil {
		return merge.Decision{}, store.Invalid("Resolver.Model", "must be set to the model that judges conflicts", nil)
	}
	sf, sok := c.Source.After.(store.Fact)
	tf, tok := c.Target.After.(store.Fact)
	if !sok || !tok {
		return r.fallback(ctx, c, "")
	}
	var base *store.Fact
	if c.Reason == store.BothChanged {
		if b, ok := c.Source.Before.(store.Fact); ok {
			base = &b
		}
	}
	var reply struct {
		Action     string `json:"action"`
		MergedText string `json:"merged_text"`
		Reason     string `json:"reason"`
	}
	var action store.MergeAction
	req := llm.Request{System: resolverSystem, Messages: []llm.Message{{Role: llm.RoleUser, Content: conflictPrompt(c, sf, tf, base)}}}
	err := askJSON(ctx, r.Model, req, &reply, func() error {
		var ok bool
		if action, ok = replyActions[strings.ToLower(strings.TrimSpace(reply.Action))]; !ok {
			return fmt.Errorf("action %q is not keep_source, keep_target, keep_both or merge", reply.Action)
		}
		if action == store.ActionMerged && strings.TrimSpace(reply.MergedText) == "" {
			return errors.New("action merge needs a merged_text")
		}
		return nil
	})
	var bad *llm.MalformedOutputError
	if errors.As(err, &bad) {
		return r.fallback(ctx, c, fmt.Sprintf("the judge's reply was malformed (%v); ", bad.Err))
	}
	if err != nil {
		return merge.Decision{}, fmt.Errorf("day1: judge %s on %s: %w", r.Model.Name(), c.Ref, err)
	}
	reason := strings.TrimSpace(reply.Reason)
	if reason == "" {
		reason = "decided by " + r.Model.Name()
	}
	d := merge.Decision{Action: action, Reason: "judge " + r.Model.Name() + ": " + reason}
	if action == store.ActionMerged {
		d.Merged = r.mergedFact(ctx, sf, tf, strings.TrimSpace(reply.MergedText))
	}
	return d, nil
}

// replyActions maps the actions a model may name to merge actions.
var replyActions = map[string]store.MergeAction{
	"keep_source": store.ActionAdopt, "source": store.ActionAdopt, "adopt": store.ActionAdopt,
	"keep_target": store.ActionKeepTarget, "target": store.ActionKeepTarget,
	"keep_both": store.ActionKeepBoth, "both": store.ActionKeepBoth,
	"merge": store.ActionMerged, "merged": store.ActionMerged,
}

func (r *Resolver) fallback(ctx context.Context, c store.Conflict, why string) (merge.Decision, error) {
	fb := r.Fallback
	if fb == nil {
		fb = merge.DefaultResolver()
	}
	d, err := fb.Resolve(ctx, c)
	if err != nil {
		return d, err
	}
	if why != "" || d.Reason != "" {
		d.Reason = why + "resolver " + fb.Name() + ": " + d.Reason
	}
	return d, nil
}

func (r *Resolver) mergedFact(ctx context.Context, sf, tf store.Fact, text string) store.Fact {
	m := store.Fact{
		Text:       text,
		Category:   tf.Category,
		Confidence: max(sf.Confidence, tf.Confidence),
		Status:     store.FactActive,
		SourceType: "merge",
		SessionID:  tf.SessionID,
		TaskID:     tf.TaskID,
		AgentID:    tf.AgentID,
		Metadata:   maps.Clone(tf.Metadata),
	}
	if m.Category == "" {
		m.Category = sf.Category
	}
	if m.Metadata == nil {
		m.Metadata = map[string]string{}
	}
	m.Metadata["merged_from"] = sf.ID + "," + tf.ID
	if StatusOf(sf) == store.Verified && StatusOf(tf) == store.Verified {
		m.Status = store.FactVerified
		m.Verify = store.Verification{
			Status: store.Verified,
			Score:  min(sf.Verify.Score, tf.Verify.Score),
			By:     modelName(r.Model),
			Notes:  "merged from two verified facts",
		}
		if m.Verify.Score == 0 {
			m.Verify.Score = max(sf.Verify.Score, tf.Verify.Score)
		}
	}
	if r.Embedder != nil {
		if vs, err := r.Embedder.Embed(ctx, []string{text}); err == nil && len(vs) == 1 &&
			len(vs[0]) > 0 && store.ValidateEmbedding("Fact.Embedding", vs[0], 0) == nil {
			m.Embedding = vs[0]
		}
	}
	return m
}

const resolverSystem = `You merge the memories of AI coding agents. Two branches changed the same knowledge differently.
Decide which version the target branch should keep:
- "keep_source": the source's fact is right and replaces the target's;
- "keep_target": the target's fact is right; the source's is dropped;
- "keep_both": both are right and say different things;
- "merge": one fact should combine both; give its text in "merged_text".
Reply with one JSON object and nothing else:
{"action": "keep_source", "merged_text": "", "reason": "one sentence"}`

func conflictPrompt(c store.Conflict, sf, tf store.Fact, base *store.Fact) string {
	var b strings.Builder
	switch c.Reason {
	case store.BothSuperseded:
		fmt.Fprintf(&b, "Both branches replaced the fact %s with a new fact of their own.\n", c.Ref.ID)
	case store.Contradictory:
		b.WriteString("Each branch added a fact, and the two contradict each other.\n")
	case store.Duplicate:
		b.WriteString("Each branch added a fact, and the two say the same thing in other words: keep the better one, or merge them.\n")
	default:
		fmt.Fprintf(&b, "Both branches changed the fact %s.\n", c.Ref.ID)
	}
	if base != nil {
		fmt.Fprintf(&b, "\nBefore either change: %s\n", shorten(base.Text, maxQuote))
	}
	for _, side := range []struct {
		name string
		f    store.Fact
	}{{"Source", sf}, {"Target", tf}} {
		fmt.Fprintf(&b, "\n%s branch fact [%s]: %s\n", side.name, side.f.ID, shorten(side.f.Text, maxQuote))
		fmt.Fprintf(&b, "  category %q, confidence %.2f, status %s, updated %s", side.f.Category, side.f.Confidence, side.f.Status, side.f.UpdatedAt.Format("2006-01-02T15:04:05Z"))
		if side.f.Verify.Status != store.Unverified {
			fmt.Fprintf(&b, ", verification %s (score %.2f)", side.f.Verify.Status, side.f.Verify.Score)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
