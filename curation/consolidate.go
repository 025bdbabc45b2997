package curation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/day1ai/day1/store"
)

// ConsolidateRequest asks Consolidate to turn observations into candidate facts.
type ConsolidateRequest struct {
	// Branch holds the observations and receives the facts. Empty means
	// store.DefaultBranch.
	Branch string
	// SessionID, TaskID and AgentID select the observations: those matching every
	// one that is set. At least one is required.
	SessionID, TaskID, AgentID string
	// Since, when set, keeps observations created at or after it.
	Since time.Time
}

// ConsolidateResult is what Consolidate did.
type ConsolidateResult struct {
	Branch string
	// Observations is the number of observations read.
	Observations int
	// Facts are the candidate facts written, in the order found; facts consolidated by
	// an earlier run are left out.
	Facts []WrittenFact
	// Superseded lists the existing facts that a new fact contradicted and replaced.
	Superseded []string
	// By is "model:<name>" or "heuristic".
	By string
}

// consolidated are the observation types whose summaries the heuristic keeps as
// facts. Tool use is activity, not knowledge.
var consolidated = []store.ObservationType{store.ObsDiscovery, store.ObsDecision, store.ObsInsight, store.ObsError}

// Consolidate turns the observations of a session (or a task, or an agent) on a
// branch into candidate facts on the same branch, in one atomic batch. Candidates are
// active and unverified, for VerifyBranch to judge next.
//
// With a Model, the model reads the observations and the live facts of the branch
// that search finds related to them, and states the facts worth keeping; when a new
// fact contradicts or updates an existing one it names it, and the existing fact is
// superseded by the new one (its Status becomes superseded, the new fact's ParentID
// names it). Without a model, every discovery, decision, insight and error
// observation's summary becomes a candidate with confidence 0.7 and the observation
// type as category; tool use is left out.
//
// Duplicates are not written twice: a fact whose text is already live on the branch
// is Deduplicated by the store, and with Engine.Embedder and DedupeThreshold a
// near-duplicate supersedes the older fact. Candidate ids derive from the observation
// (or, from a model, the text), so running Consolidate again skips what an earlier run
// wrote, even if it has been verified since.
//
// Errors: a *store.ValidationError when no selector is set or one is malformed;
// store.ErrBranchNotFound; the model's error, or a *llm.MalformedOutputError for a
// reply that is not the JSON asked for; ctx's error. Nothing is written on error.
func (e *Engine) Consolidate(ctx context.Context, req ConsolidateRequest) (ConsolidateResult, error) {
	if err := e.check(); err != nil {
		return ConsolidateResult{}, err
	}
	branch, err := validBranch("ConsolidateRequest.Branch", req.Branch)
	if err != nil {
		return ConsolidateResult{}, err
	}
	if req.SessionID == "" && req.TaskID == "" && req.AgentID == "" {
		return ConsolidateResult{}, store.Invalid("ConsolidateRequest.SessionID", "set SessionID, TaskID or AgentID to choose the observations to consolidate", nil)
	}
	for _, f := range []struct{ name, v string }{{"SessionID", req.SessionID}, {"TaskID", req.TaskID}, {"AgentID", req.AgentID}} {
		if f.v != "" {
			if err := store.ValidateID("ConsolidateRequest."+f.name, f.v); err != nil {
				return ConsolidateResult{}, err
			}
		}
	}
	v := store.View{Branch: branch}
	recs, err := e.Store.List(ctx, v, store.ListQuery{Kind: store.KindObservation, Filter: store.Filter{
		SessionID: req.SessionID, TaskID: req.TaskID, AgentID: req.AgentID, Since: req.Since,
	}})
	if err != nil {
		return ConsolidateResult{}, err
	}
	obs := make([]store.Observation, 0, len(recs))
	for _, r := range recs {
		if o, ok := r.(store.Observation); ok {
			obs = append(obs, o)
		}
	}
	res := ConsolidateResult{Branch: branch, Observations: len(obs), By: byHeuristic}
	if len(obs) == 0 {
		return res, nil
	}
	var facts, superseded []store.Fact
	if e.Model == nil {
		for _, o := range obs {
			if !slices.Contains(consolidated, o.Type) {
				continue
			}
			facts = append(facts, store.Fact{
				ID:         derivedID("obs", o.ID),
				Text:       o.Summary,
				Category:   string(o.Type),
				Confidence: CandidateConfidence,
				Status:     store.FactActive,
				SourceType: string(store.KindObservation),
				SourceID:   o.ID,
				SessionID:  o.SessionID,
				TaskID:     o.TaskID,
				AgentID:    o.AgentID,
			})
		}
	} else {
		res.By = modelName(e.Model)
		if facts, superseded, err = e.consolidateWithModel(ctx, branch, obs); err != nil {
			return ConsolidateResult{}, err
		}
	}
	// Skip what an earlier run wrote: the ids are derived, so it is there by id.
	fresh := facts[:0]
	for _, f := range facts {
		if _, err := e.getFact(ctx, branch, f.ID); err == nil {
			continue
		} else if !isNotFound(err) {
			return ConsolidateResult{}, err
		}
		fresh = append(fresh, f)
	}
	if len(fresh) == 0 {
		return res, nil
	}
	var keep []store.Fact
	for _, old := range superseded {
		for _, f := range fresh {
			if f.ParentID == old.ID {
				keep = append(keep, old)
				res.Superseded = append(res.Superseded, old.ID)
				break
			}
		}
	}
	if res.Facts, _, err = e.writeFacts(ctx, branch, keep, fresh); err != nil {
		return ConsolidateResult{}, err
	}
	return res, nil
}

const consolidateSystem = `You consolidate what an AI coding agent observed during a session into durable knowledge.
State each fact worth remembering as one self-contained sentence: concrete, specific, true beyond this session.
Give each a short category, a confidence from 0 to 1, and the ids of the observations it comes from.
If a fact contradicts or updates one of the existing facts, give that fact's id in "supersedes".
Do not restate existing facts that still hold.
Reply with one JSON object and nothing else:
{"facts": [{"text": "...", "category": "...", "confidence": 0.8, "sources": ["obs-id"], "supersedes": ""}]}`

// consolidateWithModel asks the model for facts and returns them with the existing
// facts they supersede, marked superseded.
func (e *Engine) consolidateWithModel(ctx context.Context, branch string, obs []store.Observation) ([]store.Fact, []store.Fact, error) {
	existing, err := e.relatedToObservations(ctx, branch, obs)
	if err != nil {
		return nil, nil, err
	}
	known := make(map[string]bool, len(existing))
	byID := make(map[string]store.Fact, len(existing))
	sources := make(map[string]bool, len(obs))
	var b strings.Builder
	b.WriteString("Existing facts on the branch:\n")
	if len(existing) == 0 {
		b.WriteString("(none)\n")
	}
	for _, f := range existing {
		known[f.ID], byID[f.ID] = true, f
		fmt.Fprintf(&b, "- [%s] %s\n", f.ID, shorten(f.Text, 500))
	}
	b.WriteString("\nObservations:\n")
	for _, o := range obs {
		sources[o.ID] = true
		line := fmt.Sprintf("- [%s] %s", o.ID, o.Type)
		if o.Tool != "" {
			line += " (" + o.Tool + ")"
		}
		line += ": " + shorten(o.Summary, maxQuote) + "\n"
		if b.Len()+len(line) > maxPromptBytes {
			b.WriteString("- ... more observations left out\n")
			break
		}
		b.WriteString(line)
	}
	xs, err := e.extract(ctx, consolidateSystem, b.String(), known, sources, CandidateConfidence)
	if err != nil {
		return nil, nil, fmt.Errorf("day1: consolidating observations on %s: %w", branch, err)
	}
	first := obs[0]
	now := e.now()
	var facts, superseded []store.Fact
	seen := map[string]bool{}
	for _, x := range xs {
		f := store.Fact{
			ID:         derivedID("fact", x.Text),
			Text:       x.Text,
			Category:   x.Category,
			Confidence: x.Confidence,
			Status:     store.FactActive,
			SourceType: string(store.KindObservation),
			SourceID:   first.ID,
			SessionID:  first.SessionID,
			TaskID:     first.TaskID,
			AgentID:    first.AgentID,
		}
		if seen[f.ID] {
			continue
		}
		seen[f.ID] = true
		if len(x.Sources) > 0 {
			f.SourceID = x.Sources[0]
		}
		if x.Supersedes != "" {
			f.ParentID = x.Supersedes
			if !slices.ContainsFunc(superseded, func(o store.Fact) bool { return o.ID == x.Supersedes }) {
				old := byID[x.Supersedes]
				old.Status, old.UpdatedAt = store.FactSuperseded, now
				superseded = append(superseded, old)
			}
		}
		facts = append(facts, f)
	}
	return facts, superseded, nil
}

// relatedToObservations finds the live facts of the branch that keyword search
// relates to the observations: up to three per observation, thirty in all.
func (e *Engine) relatedToObservations(ctx context.Context, branch string, obs []store.Observation) ([]store.Fact, error) {
	const perObs, total = 3, 30
	var out []store.Fact
	seen := map[string]bool{}
	for _, o := range obs {
		if len(out) >= total {
			break
		}
		fs, err := e.liveFactsLike(ctx, branch, shorten(o.Summary, 1000), perObs)
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			if !seen[f.ID] && len(out) < total {
				seen[f.ID] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// liveFactsLike returns the live facts of the branch that keyword search finds for
// text, at most limit: none for a text without searchable words.
func (e *Engine) liveFactsLike(ctx context.Context, branch, text string, limit int) ([]store.Fact, error) {
	hits, err := e.Store.Search(ctx, store.View{Branch: branch}, store.SearchQuery{
		Kinds: []store.Kind{store.KindFact}, Text: text, Mode: store.Keyword,
		Filter: store.Filter{Statuses: live}, Limit: limit,
	})
	if err != nil {
		if isInvalid(err) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]store.Fact, 0, len(hits))
	for _, h := range hits {
		if f, ok := h.Record.(store.Fact); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// derivedID makes a stable fact id from a kind of origin and its key.
func derivedID(prefix, key string) string {
	sum := sha256.Sum256([]byte(key))
	return "cons-" + prefix + "-" + hex.EncodeToString(sum[:10])
}
