package replay

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// Match methods of a RunComparison.
const (
	// MatchEmbedding: texts matched by the cosine similarity of their embeddings, or
	// by equal normalised text.
	MatchEmbedding = "embedding"
	// MatchText: texts matched by equal normalised text (store.NormText) only.
	MatchText = "text"
)

// Decision is a decision point of a run: an assistant message that states an intent,
// recovers from a tool error or precedes a tool call that worked (see
// curation.FindDecisions).
type Decision struct {
	Conversation string   `json:"conversation_id"`
	MessageID    string   `json:"message_id"`
	Seq          int      `json:"seq"`
	Agent        string   `json:"agent,omitempty"`
	Content      string   `json:"content"`
	Reasons      []string `json:"reasons"`
}

// RunSummary is one run's side of a comparison.
type RunSummary struct {
	// Task is the task's name; Status its status.
	Task   string
	Status handoff.TaskStatus
	// Duration is the outcome's duration.
	Duration time.Duration
	// Facts counts the run's facts, FactsVerified those verified;
	// VerificationScore is the mean judged score.
	Facts             int
	FactsVerified     int
	VerificationScore float64
	// Handoffs are the run's handoffs, oldest first.
	Handoffs []handoff.Handoff
	// Errors are the run's observations of type error, oldest first.
	Errors []store.Observation
	// Decisions are the decision points of the run's conversations, by time.
	Decisions []Decision
}

// AgentPair sets two runs' contributions of one agent, or of one role, side by side.
// A or B is nil when only the other run has it.
type AgentPair struct {
	// Key is the agent id both runs share, else the role they share, else the one
	// run's agent id.
	Key  string
	A, B *Contribution
}

// FactMatch is a fact both runs produced, in each run's words.
type FactMatch struct {
	A, B store.Fact
	// Similarity is the cosine similarity of their embeddings; 1 for equal text.
	Similarity float64
}

// DecisionMatch is a decision both runs took.
type DecisionMatch struct {
	A, B       Decision
	Similarity float64
}

// RunComparison is a semantic diff of two runs of a task.
type RunComparison struct {
	// A and B summarise each run.
	A, B RunSummary
	// Agents pairs the runs' contributions: first by agent id, then by role; the
	// agents of A in their order, then those only B has.
	Agents []AgentPair
	// SharedFacts are the live facts both runs produced; OnlyA and OnlyB those only
	// one did, oldest first.
	SharedFacts []FactMatch
	OnlyA       []store.Fact
	OnlyB       []store.Fact
	// SharedDecisions, DecisionsOnlyA and DecisionsOnlyB split the decision points
	// the same way.
	SharedDecisions []DecisionMatch
	DecisionsOnlyA  []Decision
	DecisionsOnlyB  []Decision
	// Method is MatchEmbedding or MatchText; Threshold the cosine similarity a match
	// needed. EmbedErr is why an Engine with an Embedder fell back to MatchText.
	Method    string
	Threshold float64
	EmbedErr  error
	// ScoreDelta is B's mean verification score minus A's; DurationDelta B's
	// duration minus A's.
	ScoreDelta    float64
	DurationDelta time.Duration
}

// CompareTaskRuns compares two runs of a task, a and b (the tasks' names): their
// agents' contributions side by side, their decision points, the live facts only one
// produced and those both did, verification scores, durations, handoffs and errors.
// Facts and decisions match when their texts are equal after store.NormText or, with
// an Embedder, when the cosine similarity of their embeddings is at least
// Engine.Similarity (default DefaultSimilarity); each matches at most one of the other
// run, the most similar pairs first. An embedding failure falls back to equal text and
// is reported in RunComparison.EmbedErr.
//
// Errors: a *store.ValidationError naming "a" or "b" for an empty name; an error
// matching store.ErrNotFound for an unknown task; the store's and ctx's errors.
func (e *Engine) CompareTaskRuns(ctx context.Context, a, b string) (RunComparison, error) {
	if a == "" {
		return RunComparison{}, store.Invalid("a", "must name a task", nil)
	}
	if b == "" {
		return RunComparison{}, store.Invalid("b", "must name a task", nil)
	}
	var runs [2]TaskReplay
	var sums [2]RunSummary
	var facts [2][]store.Fact
	for i, name := range []string{a, b} {
		r, err := e.collect(ctx, name, store.Point{})
		if err != nil {
			return RunComparison{}, err
		}
		tl, err := e.timeline(ctx, r, Options{IncludeObservations: true})
		if err != nil {
			return RunComparison{}, err
		}
		runs[i] = TaskReplay{Task: r.task, Timeline: tl, Agents: contributions(r), Outcome: outcome(r, tl)}
		sums[i], facts[i] = summarize(r, runs[i].Outcome), liveFacts(r)
	}
	out := RunComparison{A: sums[0], B: sums[1], Method: MatchText, Threshold: e.similarity()}
	out.Agents = pairAgents(runs[0].Agents, runs[1].Agents)
	out.ScoreDelta = sums[1].VerificationScore - sums[0].VerificationScore
	out.DurationDelta = sums[1].Duration - sums[0].Duration

	texts := func(fs []store.Fact) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = f.Text
		}
		return out
	}
	dtexts := func(ds []Decision) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = d.Content
		}
		return out
	}
	m := e.matcher(ctx, &out, texts(facts[0]), texts(facts[1]), dtexts(sums[0].Decisions), dtexts(sums[1].Decisions))
	pairs, onlyA, onlyB := m.match(0, 1, out.Threshold)
	for _, p := range pairs {
		out.SharedFacts = append(out.SharedFacts, FactMatch{A: facts[0][p.i], B: facts[1][p.j], Similarity: p.sim})
	}
	for _, i := range onlyA {
		out.OnlyA = append(out.OnlyA, facts[0][i])
	}
	for _, j := range onlyB {
		out.OnlyB = append(out.OnlyB, facts[1][j])
	}
	pairs, onlyA, onlyB = m.match(2, 3, out.Threshold)
	for _, p := range pairs {
		out.SharedDecisions = append(out.SharedDecisions, DecisionMatch{A: sums[0].Decisions[p.i], B: sums[1].Decisions[p.j], Similarity: p.sim})
	}
	for _, i := range onlyA {
		out.DecisionsOnlyA = append(out.DecisionsOnlyA, sums[0].Decisions[i])
	}
	for _, j := range onlyB {
		out.DecisionsOnlyB = append(out.DecisionsOnlyB, sums[1].Decisions[j])
	}
	return out, nil
}

// summarize builds one run's side of a comparison.
func summarize(r *run, o Outcome) RunSummary {
	s := RunSummary{Task: r.task.Name, Status: o.Status, Duration: o.Duration, Facts: o.Facts,
		FactsVerified: o.FactsVerified, VerificationScore: o.VerificationScore}
	for _, h := range r.handoffs {
		s.Handoffs = append(s.Handoffs, h)
	}
	slices.SortFunc(s.Handoffs, func(a, b handoff.Handoff) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	for _, en := range r.sortedEntries(store.KindObservation) {
		if o := en.latest().(store.Observation); o.Type == store.ObsError {
			s.Errors = append(s.Errors, o)
		}
	}
	s.Decisions = decisions(r)
	return s
}

// decisions finds the decision points of a run's conversations, by time.
func decisions(r *run) []Decision {
	byConv := map[string][]store.Message{}
	var order []string
	for _, en := range r.sortedEntries(store.KindMessage) {
		m := en.latest().(store.Message)
		if _, ok := byConv[m.ConversationID]; !ok {
			order = append(order, m.ConversationID)
		}
		byConv[m.ConversationID] = append(byConv[m.ConversationID], m)
	}
	var out []Decision
	for _, id := range order {
		msgs := byConv[id]
		slices.SortFunc(msgs, func(a, b store.Message) int { return cmp.Or(a.Seq-b.Seq, cmp.Compare(a.ID, b.ID)) })
		byID := map[string]store.Message{}
		for _, m := range msgs {
			byID[m.ID] = m
		}
		for _, dp := range curation.FindDecisions(msgs) {
			m := byID[dp.MessageID]
			agent := m.AgentID
			if en := r.entries[store.MessageRef(m.ID)]; en != nil {
				agent = r.agent(en)
			}
			out = append(out, Decision{Conversation: id, MessageID: m.ID, Seq: m.Seq, Agent: agent, Content: m.Content, Reasons: dp.Reasons})
		}
	}
	return out
}

// liveFacts returns a run's live facts (not superseded nor invalidated), oldest first.
func liveFacts(r *run) []store.Fact {
	var out []store.Fact
	for _, en := range r.sortedEntries(store.KindFact) {
		if f := en.latest().(store.Fact); f.Status.Live() && f.Verify.Status != store.Invalidated {
			out = append(out, f)
		}
	}
	return out
}

// pairAgents sets two runs' contributions side by side: by agent id, then by role.
func pairAgents(a, b []Contribution) []AgentPair {
	usedB := make([]bool, len(b))
	pairs := make([]AgentPair, len(a))
	for i := range a {
		pairs[i] = AgentPair{Key: a[i].Agent, A: &a[i]}
		for j := range b {
			if !usedB[j] && b[j].Agent == a[i].Agent {
				pairs[i].B, usedB[j] = &b[j], true
				break
			}
		}
	}
	for i := range pairs {
		if pairs[i].B != nil || a[i].Role == "" {
			continue
		}
		for j := range b {
			if !usedB[j] && b[j].Role == a[i].Role {
				pairs[i].Key, pairs[i].B, usedB[j] = a[i].Role, &b[j], true
				break
			}
		}
	}
	for j := range b {
		if !usedB[j] {
			pairs = append(pairs, AgentPair{Key: b[j].Agent, B: &b[j]})
		}
	}
	return pairs
}

// matcher holds several lists of texts and, with an embedder, their vectors.
type matcher struct {
	texts [][]string
	vecs  [][][]float32 // nil without embeddings
}

// matcher embeds every list in one call when the Engine has an Embedder, and records
// the method used in out.
func (e *Engine) matcher(ctx context.Context, out *RunComparison, lists ...[]string) *matcher {
	m := &matcher{texts: lists}
	if e.Embedder == nil {
		return m
	}
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	if len(all) == 0 {
		out.Method = MatchEmbedding
		return m
	}
	vecs, err := e.Embedder.Embed(ctx, all)
	if err == nil && len(vecs) != len(all) {
		err = fmt.Errorf("day1: the embedder returned %d vectors for %d texts", len(vecs), len(all))
	}
	if err != nil {
		out.EmbedErr = err
		return m
	}
	out.Method = MatchEmbedding
	m.vecs = make([][][]float32, len(lists))
	k := 0
	for i, l := range lists {
		m.vecs[i] = vecs[k : k+len(l)]
		k += len(l)
	}
	return m
}

type pair struct {
	i, j int
	sim  float64
}

// match pairs the texts of lists x and y one to one, most similar first: equal
// normalised texts have similarity 1, others their cosine when embedded. It returns
// the pairs in x's order and the unmatched indexes of each list.
func (m *matcher) match(x, y int, threshold float64) (pairs []pair, onlyX, onlyY []int) {
	var cands []pair
	for i, a := range m.texts[x] {
		for j, b := range m.texts[y] {
			sim := 0.0
			if store.NormText(a) == store.NormText(b) {
				sim = 1
			} else if m.vecs != nil && len(m.vecs[x][i]) > 0 && len(m.vecs[x][i]) == len(m.vecs[y][j]) {
				sim = float64(vecmath.Cosine(m.vecs[x][i], m.vecs[y][j]))
			}
			if sim >= threshold {
				cands = append(cands, pair{i, j, sim})
			}
		}
	}
	slices.SortStableFunc(cands, func(a, b pair) int {
		return cmp.Or(cmp.Compare(b.sim, a.sim), cmp.Compare(a.i, b.i), cmp.Compare(a.j, b.j))
	})
	usedX := make([]bool, len(m.texts[x]))
	usedY := make([]bool, len(m.texts[y]))
	for _, c := range cands {
		if usedX[c.i] || usedY[c.j] {
			continue
		}
		usedX[c.i], usedY[c.j] = true, true
		pairs = append(pairs, c)
	}
	slices.SortFunc(pairs, func(a, b pair) int { return cmp.Compare(a.i, b.i) })
	for i, u := range usedX {
		if !u {
			onlyX = append(onlyX, i)
		}
	}
	for j, u := range usedY {
		if !u {
			onlyY = append(onlyY, j)
		}
	}
	return pairs, onlyX, onlyY
}
