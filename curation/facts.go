package curation

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// Limits and defaults of fact extraction.
const (
	// MaxExtractedFacts is the most facts one extraction or consolidation writes; a
	// model's extra facts are left out.
	MaxExtractedFacts = 50
	// CandidateConfidence is the confidence of a fact found by heuristics: a
	// candidate, worth verifying.
	CandidateConfidence = 0.7
	// DefaultExtractedConfidence is the confidence of a model-extracted fact whose
	// reply gives none.
	DefaultExtractedConfidence = 0.8
)

// WrittenFact is one fact an extraction or a consolidation wrote, and what the write
// did: store.Created, store.Deduplicated (an equal text was there; Fact is that fact),
// store.Superseded (it replaced Replaced) or store.Updated.
type WrittenFact struct {
	Fact     store.Fact
	Outcome  store.Outcome
	Replaced string
}

// FactPick asks CherryPickFacts to turn a conversation into facts.
type FactPick struct {
	// Source is the branch the conversation is on. Empty means store.DefaultBranch.
	Source string
	// Target is the branch the facts are written to. Required; it may equal Source.
	Target string
	// ConversationID names the conversation. Required.
	ConversationID string
	// Verify judges every fact before it is written (VerifyFact's judge, with the
	// target's related facts) and writes it with the verdict's status. Default false:
	// model-extracted facts land verified by the extraction, heuristic candidates
	// land active and unverified.
	Verify bool
}

// FactPickResult is what CherryPickFacts wrote.
type FactPickResult struct {
	// Facts are the facts written, in the order they were found.
	Facts []WrittenFact
	// By is "model:<name>" when a model extracted the facts, "heuristic" otherwise.
	By string
}

// CherryPickFacts extracts facts from a conversation and writes them to the target
// branch in one atomic batch.
//
// With a Model, the model reads the transcript and states the facts worth keeping,
// each with a category and a confidence; they land verified (Status and Verify
// verified, by the model, scored with the confidence). Without a model, the heuristic
// takes the sentences of assistant messages that report a finding ("found", "the
// cause", "because", "fixed", ...) of four words or more, as candidates with
// confidence 0.7, active and unverified. With Verify, each fact is judged first and
// lands with its verdict's status instead.
//
// Facts name the conversation as their source (SourceType "conversation") and take
// its session, task and agent. The store's deduplication applies: a fact whose text is
// already live on the target is Deduplicated; with Engine.Embedder and
// DedupeThreshold a near-duplicate supersedes the old fact.
//
// Errors: a *store.ValidationError for bad input; an error matching store.ErrNotFound
// for an unknown conversation; store.ErrBranchNotFound; the model's error, or a
// *llm.MalformedOutputError for a reply that is not the JSON asked for, has an empty
// text or a confidence outside 0..1; ctx's error. Nothing is written on error.
func (e *Engine) CherryPickFacts(ctx context.Context, p FactPick) (FactPickResult, error) {
	if err := e.check(); err != nil {
		return FactPickResult{}, err
	}
	src, err := pickBranches("FactPick", &p.Source, p.Target, false)
	if err != nil {
		return FactPickResult{}, err
	}
	if err := store.ValidateID("FactPick.ConversationID", p.ConversationID); err != nil {
		return FactPickResult{}, err
	}
	if _, err := e.Store.GetBranch(ctx, p.Target); err != nil {
		return FactPickResult{}, err
	}
	conv, err := e.getConversation(ctx, src, p.ConversationID)
	if err != nil {
		return FactPickResult{}, err
	}
	msgs, err := e.messages(ctx, src, conv.ID)
	if err != nil {
		return FactPickResult{}, err
	}
	now := e.now()
	base := store.Fact{
		SourceType: string(store.KindConversation),
		SourceID:   conv.ID,
		SessionID:  conv.SessionID,
		TaskID:     conv.TaskID,
		AgentID:    conv.AgentID,
		Metadata:   map[string]string{MetaPickedFromBranch: src, MetaPickedFromConversation: conv.ID},
	}
	var facts []store.Fact
	res := FactPickResult{By: byHeuristic}
	if e.Model == nil {
		for _, c := range candidateSentences(msgs, false) {
			f := base
			f.Metadata = map[string]string{MetaPickedFromBranch: src, MetaPickedFromConversation: conv.ID, MetaPickedFromMessage: msgs[c.msg].ID}
			f.ID, f.Text, f.Confidence, f.Status = e.newID(), c.text, CandidateConfidence, store.FactActive
			facts = append(facts, f)
		}
	} else {
		res.By = modelName(e.Model)
		prompt := "Conversation " + quoteTitle(conv.Title) + "\n\n" + transcript(msgs, maxPromptBytes)
		extracted, err := e.extract(ctx, extractSystem, prompt, nil, nil, DefaultExtractedConfidence)
		if err != nil {
			return FactPickResult{}, fmt.Errorf("day1: extracting facts from conversation %s: %w", conv.ID, err)
		}
		for _, x := range extracted {
			f := base
			f.Metadata = map[string]string{MetaPickedFromBranch: src, MetaPickedFromConversation: conv.ID}
			f.ID, f.Text, f.Category, f.Confidence = e.newID(), x.Text, x.Category, x.Confidence
			f.Status = store.FactVerified
			f.Verify = store.Verification{Status: store.Verified, Score: x.Confidence, By: res.By, At: now,
				Notes: "extracted from conversation " + conv.ID + " on " + src}
			facts = append(facts, f)
		}
	}
	if p.Verify {
		for i, f := range facts {
			v, err := e.judgeFact(ctx, p.Target, f, e.Policy)
			if err != nil {
				return FactPickResult{}, err
			}
			f.Verify = v.verification(store.Verification{At: now})
			f.Status = statusAfter(store.FactActive, v.Status)
			facts[i] = f
		}
	}
	written, _, err := e.writeFacts(ctx, p.Target, nil, facts)
	if err != nil {
		return FactPickResult{}, err
	}
	res.Facts = written
	return res, nil
}

// extracted is one fact a model stated.
type extracted struct {
	Text       string
	Category   string
	Confidence float64
	Supersedes string
	Sources    []string
}

const extractSystem = `You extract durable knowledge from the work of AI coding agents.
State each fact worth remembering as one self-contained sentence: concrete, specific, true beyond this conversation.
Give each a short category (bug_fix, architecture, decision, pattern, config, ...) and a confidence from 0 to 1.
Reply with one JSON object and nothing else:
{"facts": [{"text": "...", "category": "...", "confidence": 0.9}]}`

// extract asks the model for facts. facts is the set of existing fact ids a fact may
// name in "supersedes" and sources the set of record ids it may name in "sources";
// other ids are dropped.
func (e *Engine) extract(ctx context.Context, system, prompt string, facts, sources map[string]bool, defConfidence float64) ([]extracted, error) {
	var reply struct {
		Facts []struct {
			Text       string   `json:"text"`
			Category   string   `json:"category"`
			Confidence *float64 `json:"confidence"`
			Supersedes string   `json:"supersedes"`
			Sources    []string `json:"sources"`
		} `json:"facts"`
	}
	req := llm.Request{System: system, Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt}}}
	err := askJSON(ctx, e.Model, req, &reply, func() error {
		for i, f := range reply.Facts {
			if strings.TrimSpace(f.Text) == "" {
				return fmt.Errorf("fact %d has no text", i)
			}
			if len(f.Text) > store.MaxTextLen {
				return fmt.Errorf("fact %d is %d bytes long", i, len(f.Text))
			}
			if c := f.Confidence; c != nil && (math.IsNaN(*c) || *c < 0 || *c > 1) {
				return fmt.Errorf("fact %d has confidence %g; it must be between 0 and 1", i, *c)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []extracted
	for _, f := range reply.Facts {
		if len(out) == MaxExtractedFacts {
			break
		}
		x := extracted{Text: strings.TrimSpace(f.Text), Category: shorten(strings.TrimSpace(f.Category), 90), Confidence: defConfidence}
		if f.Confidence != nil && *f.Confidence > 0 {
			x.Confidence = *f.Confidence
		}
		if facts[f.Supersedes] {
			x.Supersedes = f.Supersedes
		}
		for _, s := range f.Sources {
			if sources[s] && !slices.Contains(x.Sources, s) {
				x.Sources = append(x.Sources, s)
			}
		}
		out = append(out, x)
	}
	return out, nil
}

// writeFacts embeds facts and the new versions of old facts (changed: superseded,
// updated or invalidated) that lack an embedding, in one Embed call, and writes them
// to branch in one batch, changed first, with the engine's dedupe threshold. It
// returns what the write did to facts, and changed as written.
func (e *Engine) writeFacts(ctx context.Context, branch string, changed, facts []store.Fact) ([]WrittenFact, []store.Fact, error) {
	if len(facts)+len(changed) == 0 {
		return nil, nil, nil
	}
	for i, f := range facts {
		if err := store.ValidateRecord(f, 0); err != nil {
			return nil, nil, fmt.Errorf("day1: extracted fact %d: %w", i, err)
		}
	}
	all := append(slices.Clone(changed), facts...)
	e.embedFacts(ctx, all)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	recs := make([]store.Record, len(all))
	for i, f := range all {
		recs[i] = f
	}
	res, err := e.put(ctx, branch, recs, true)
	if err != nil {
		return nil, nil, err
	}
	written := make([]store.Fact, len(changed))
	for i, r := range res[:len(changed)] {
		written[i], _ = r.Record.(store.Fact)
	}
	out := make([]WrittenFact, 0, len(facts))
	for _, r := range res[len(changed):] {
		f, _ := r.Record.(store.Fact)
		out = append(out, WrittenFact{Fact: f, Outcome: r.Outcome, Replaced: r.Replaced})
	}
	return out, written, nil
}

// findingMarkers mark a sentence that reports a finding.
var findingMarkers = []string{
	"found", "the cause", "root cause", "caused by", "because", "the issue", "the problem",
	"the bug", "fixed", "turns out", "is due to", "requires", "must ", "works by",
}

// candidate is a sentence the heuristics take for a fact: msg is the position of its
// message, decision whether it states a decision rather than a finding.
type candidate struct {
	text     string
	msg      int
	decision bool
}

// candidateSentences returns, each once, the sentences of prose (code blocks left out)
// of 4 to 60 words in assistant messages that report a finding, or with decisions
// that state a decision: at most MaxExtractedFacts.
func candidateSentences(msgs []store.Message, decisions bool) []candidate {
	var out []candidate
	seen := map[string]bool{}
	for i, m := range msgs {
		if m.Role != store.RoleAssistant {
			continue
		}
		for _, sent := range proseSentences(m.Content) {
			low := strings.ToLower(sent)
			words := len(strings.Fields(sent))
			if words < 4 || words > 60 || seen[low] {
				continue
			}
			decision := decisions && containsAny(low, decisionMarkers)
			if !decision && !containsAny(low, findingMarkers) {
				continue
			}
			seen[low] = true
			out = append(out, candidate{text: sent, msg: i, decision: decision})
			if len(out) == MaxExtractedFacts {
				return out
			}
		}
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
