package day1

import (
	"context"
	"errors"
	"maps"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// ContradictionPolicy says what a fact write does about the live facts the new fact
// contradicts (curation.Contradicts: other values, or the opposite statement, about
// the same subject).
type ContradictionPolicy string

// Contradiction policies.
const (
	// ContradictionsReport writes the fact and reports each live fact it
	// contradicts on Written.Contradicts; both stay live. It is the default (an
	// empty Config.Contradictions), there for batches of at most
	// DefaultContradictionBatch facts.
	ContradictionsReport ContradictionPolicy = "report"
	// ContradictionsSupersede writes the fact as the successor of the first live
	// fact it contradicts (ParentID), which becomes superseded in the same atomic
	// write, and reports it on Written.Contradicts: the newest statement stands.
	ContradictionsSupersede ContradictionPolicy = "supersede"
	// ContradictionsOff checks nothing: for bulk loads, whose facts are not
	// statements of the present (a conversation's turns, an archive).
	ContradictionsOff ContradictionPolicy = "off"
	// ContradictionsJudge asks Config.Model about each contradiction the heuristics
	// find (curation.JudgeContradiction): the new fact supersedes the old one, both
	// are kept with the scope each holds in (metadata curation.MetaScope, on a new
	// version of the old fact and on the new one), the pair is flagged and both
	// stay, or it is no contradiction and is not reported. A model that fails flags
	// the pair and the write goes on. Requires Config.Model; one model call per
	// contradiction found.
	ContradictionsJudge ContradictionPolicy = "judge"
)

// DefaultContradictionBatch is the largest batch of facts whose contradictions a
// Client checks when Config.Contradictions is left empty: what an agent writes as it
// learns. A larger WriteFacts batch is taken for a bulk load (an import, a
// conversation's turns) and not checked. A check is a keyword search per fact: on a
// branch of a 10k-fact memory, a batch of 100 spent about 40 ms in them.
const DefaultContradictionBatch = 16

// contradictionCandidates is how many live facts a keyword search returns to check a
// written fact against.
const contradictionCandidates = 5

// Contradicted is a live fact that a written fact contradicts.
type Contradicted struct {
	// FactID names the live fact.
	FactID string
	// Kind says how they differ: curation.ContradictValue or ContradictNegation.
	Kind curation.ContradictionKind
	// Theirs and Mine are what differs, as the live fact and the written one say it:
	// values ("24 hours", "12h"), or the negation or opposite word ("" where a text
	// has none).
	Theirs, Mine string
	// Superseded reports that the write superseded the live fact
	// (ContradictionsSupersede, or the model's verdict).
	Superseded bool
	// Verdict is the model's, under ContradictionsJudge: curation.VerdictSupersede,
	// VerdictKeepBoth or VerdictFlag. Empty under the other policies.
	Verdict string
	// Reason is the model's reason for its verdict, or why there is none.
	Reason string
	// TheirScope and MyScope are where the live fact and the written one hold, for
	// VerdictKeepBoth; both facts carry theirs in metadata curation.MetaScope.
	TheirScope, MyScope string
}

// contradictions finds, for each fact of a batch, the live facts of its branch that it
// contradicts. It returns nil when the policy is off or the batch cannot be checked
// (write reports why: a bad branch, a bad fact).
func (c *Client) contradictions(ctx context.Context, facts []Fact) ([][]Contradicted, error) {
	switch {
	case c.cfg.Contradictions == ContradictionsOff || len(facts) == 0:
		return nil, nil
	case c.cfg.Contradictions == "" && len(facts) > DefaultContradictionBatch:
		return nil, nil
	}
	branch := branchOrMain(facts[0].Branch)
	for _, f := range facts {
		probe := f
		if probe.ID == "" {
			probe.ID = "probe"
		}
		if store.ValidateRecord(probe, 0) != nil || branchOrMain(f.Branch) != branch {
			return nil, nil // the write says what is wrong
		}
	}
	out := make([][]Contradicted, len(facts))
	for i, f := range facts {
		if f.Status != "" && !f.Status.Live() {
			continue
		}
		hits, err := c.Search(ctx, SearchQuery{Branch: branch, Text: f.Text, Mode: Keyword, Kinds: []Kind{KindFact},
			Limit: contradictionCandidates, WindowWeight: -1, NoRerank: true})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, store.ErrInvalidArgument) || errors.Is(err, ErrBranchNotFound) {
				return nil, nil // the write says what is wrong
			}
			return nil, err
		}
		for _, h := range hits {
			old, ok := h.Fact()
			if !ok || old.ID == f.ID || old.Text == f.Text {
				continue
			}
			k, ok := curation.Contradicts(old.Text, f.Text)
			if !ok {
				continue
			}
			found := Contradicted{FactID: old.ID, Kind: k.Kind, Theirs: k.A, Mine: k.B}
			if c.cfg.Contradictions == ContradictionsJudge {
				v, err := curation.JudgeContradiction(ctx, c.cfg.Model, old, f)
				switch {
				case ctx.Err() != nil:
					return nil, ctx.Err()
				case err != nil:
					v = curation.ContradictionVerdict{Verdict: curation.VerdictFlag, Reason: "the model could not judge it: " + err.Error()}
				case v.Verdict == curation.VerdictNone:
					continue
				}
				found.Verdict, found.Reason = v.Verdict, v.Reason
				if v.Verdict == curation.VerdictKeepBoth {
					found.TheirScope, found.MyScope = v.OldScope, v.NewScope
				}
			}
			out[i] = append(out[i], found)
		}
	}
	return out, nil
}

// superseding returns, under ContradictionsSupersede, the facts with each one's
// first contradicted fact as its parent, and the superseded versions of those facts
// to write in the same batch. Under ContradictionsJudge it does so for the first
// fact the model said to supersede, and gives the two facts of a pair it said to keep
// both of their scopes, the old one as a new version.
func (c *Client) superseding(ctx context.Context, facts []Fact, found [][]Contradicted) ([]Fact, error) {
	policy := c.cfg.Contradictions
	if found == nil || policy != ContradictionsSupersede && policy != ContradictionsJudge {
		return facts, nil
	}
	out := make([]Fact, len(facts), len(facts)+len(found))
	copy(out, facts)
	taken := map[string]bool{}
	for _, f := range facts {
		taken[f.ID] = true
	}
	now := c.cfg.Test.Now().UTC()
	for i := range facts {
		superseded := out[i].ParentID != ""
		for j := range found[i] {
			cd := &found[i][j]
			supersede := policy == ContradictionsSupersede && j == 0 || cd.Verdict == curation.VerdictSupersede
			keep := cd.Verdict == curation.VerdictKeepBoth
			if !supersede && !keep || supersede && superseded || taken[cd.FactID] {
				continue // superseded by another fact of the batch, or written by it
			}
			old, err := c.GetFact(ctx, facts[0].Branch, cd.FactID)
			if err != nil {
				return nil, err
			}
			taken[cd.FactID] = true
			old.UpdatedAt = now
			if keep {
				old.Metadata = withMeta(old.Metadata, curation.MetaScope, cd.TheirScope)
				out[i].Metadata = withMeta(out[i].Metadata, curation.MetaScope, cd.MyScope)
			} else {
				old.Status = FactSuperseded
				out[i].ParentID, cd.Superseded, superseded = cd.FactID, true, true
			}
			out = append(out, old)
		}
	}
	return out, nil
}

// withMeta returns a copy of m with key set to v.
func withMeta(m map[string]string, key, v string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[key] = v
	return out
}

// duplicates is the test of near-duplicates a merge uses (merge.Engine.Duplicates):
// the cosine of the two texts' embeddings reaches the near-duplicate threshold of
// writes (Config.DedupeThreshold), the texts embedded in one call per
// duplicateBatch. Nil without embeddings or with the threshold off. An embedder that
// fails makes no pair duplicates: a merge does not fail for it.
func (c *Client) duplicates() func(ctx context.Context, pairs [][2]string) ([]bool, error) {
	if c.emb == nil || c.dedupe <= 0 {
		return nil
	}
	return func(ctx context.Context, pairs [][2]string) ([]bool, error) {
		at := map[string]int{}
		var texts []string
		for _, p := range pairs {
			for _, t := range p {
				if _, ok := at[t]; !ok {
					at[t] = len(texts)
					texts = append(texts, t)
				}
			}
		}
		vecs := make([][]float32, 0, len(texts))
		for lo := 0; lo < len(texts); lo += duplicateBatch {
			vs, err := c.emb.Embed(ctx, texts[lo:min(lo+duplicateBatch, len(texts))])
			if err != nil || len(vs) != min(duplicateBatch, len(texts)-lo) {
				return make([]bool, len(pairs)), ctx.Err()
			}
			vecs = append(vecs, vs...)
		}
		out := make([]bool, len(pairs))
		for i, p := range pairs {
			a, b := vecs[at[p[0]]], vecs[at[p[1]]]
			out[i] = len(a) > 0 && len(a) == len(b) && float64(vecmath.Cosine(a, b)) >= c.dedupe
		}
		return out, nil
	}
}

// duplicateBatch is the most texts a merge's near-duplicate test embeds in one call.
const duplicateBatch = 256

// contradicts is the test of contradiction a merge uses (merge.Engine.Contradicts):
// the contradiction heuristics, unless Config.Contradictions is off.
func (c *Client) contradicts() func(source, target string) bool {
	if c.cfg.Contradictions == ContradictionsOff {
		return nil
	}
	return func(source, target string) bool {
		_, ok := curation.Contradicts(source, target)
		return ok
	}
}
