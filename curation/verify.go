package curation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// MaxConflicts is how many related facts of the same branch a fact's judge sees.
const MaxConflicts = 5

// Bounds on what a prompt quotes, so that a long conversation cannot blow up a request.
const (
	maxQuote       = 2000  // bytes of one message or record quoted
	maxPromptBytes = 48000 // bytes of messages quoted in one prompt
)

// Verdict is a judge's decision about one fact or conversation.
type Verdict struct {
	// Ref names the record judged.
	Ref store.Ref `json:"ref"`
	// Status is store.Verified, store.Invalidated or store.Pending (judged, with an
	// overall score between the policy's thresholds: left for review).
	Status store.VerificationStatus `json:"status"`
	// Score is the overall score, the mean of the dimension scores.
	Score float64 `json:"score"`
	// Scores are the per-dimension scores: Accuracy, Relevance and Specificity for a
	// fact; Tools, Reasoning, Outcome and Errors for a conversation.
	Scores store.Scores `json:"scores"`
	// Explanation says why, in the judge's words or the heuristic's.
	Explanation string `json:"explanation"`
	// By is "model:<name>" when a model judged and "heuristic" otherwise.
	By string `json:"by"`
	// Related lists the facts of the same branch the judge was shown as possible
	// conflicts (facts only).
	Related []string `json:"related,omitempty"`
	// KeyDecisions are the sequence numbers of the messages the judge named as the
	// conversation's key decisions (conversations only).
	KeyDecisions []int `json:"key_decisions,omitempty"`
}

// Heuristic reports whether the verdict came from the heuristic rather than a model.
func (v Verdict) Heuristic() bool { return v.By == byHeuristic }

// verification is the record field a verdict becomes.
func (v Verdict) verification(at store.Verification) store.Verification {
	at.Status, at.Score, at.Scores, at.By, at.Notes = v.Status, v.Score, v.Scores, v.By, shorten(v.Explanation, 1000)
	return at
}

// FactVerdict is a fact's verdict and the fact as stored with it.
type FactVerdict struct {
	Verdict
	// Fact is the new version of the fact: Verify filled in and Status following the
	// verdict (see Engine.VerifyFact).
	Fact store.Fact
}

// ConversationVerdict is a conversation's verdict and the conversation as stored
// with it.
type ConversationVerdict struct {
	Verdict
	// Conversation is the new version of the conversation, Verify filled in.
	Conversation store.Conversation
}

// VerifyFact judges one fact of a branch (empty means store.DefaultBranch) and writes a
// new version of it carrying the verdict.
//
// With a Model the judge scores accuracy, relevance and specificity from 0 to 1, shown
// the fact, its source (the observation, conversation, message or fact named by
// SourceType and SourceID, when the branch has it) and up to MaxConflicts related live
// facts of the branch found by search, as possible conflicts. Without a Model the
// heuristic scores:
//
//   - accuracy: the fact's Confidence;
//   - relevance: 0.7 for the categories bug_fix and architecture, 0.5 otherwise;
//   - specificity: the number of words divided by 20, at most 1.
//
// The overall score is the mean; the Policy gives the status. The new version's
// Verify holds status, score, per-dimension scores, judge and time, and its Status
// becomes store.FactVerified (store.FactPromoted stays promoted), store.FactInvalidated,
// or store.FactActive for a pending verdict. A superseded fact keeps its status.
//
// Errors: a *store.ValidationError for a bad branch or id; store.ErrNotFound (or
// store.ErrBranchNotFound); the model's error; a *llm.MalformedOutputError when the
// model's reply is not the JSON asked for or a score is missing or outside 0..1;
// store.ErrStale when the fact's text changed while it was judged; ctx's error.
// Nothing is written on error.
func (e *Engine) VerifyFact(ctx context.Context, branch, id string) (FactVerdict, error) {
	if err := e.check(); err != nil {
		return FactVerdict{}, err
	}
	branch, err := validBranch("branch", branch)
	if err != nil {
		return FactVerdict{}, err
	}
	if err := store.ValidateID("id", id); err != nil {
		return FactVerdict{}, err
	}
	f, err := e.getFact(ctx, branch, id)
	if err != nil {
		return FactVerdict{}, err
	}
	return e.verifyFact(ctx, branch, f, e.Policy)
}

func (e *Engine) verifyFact(ctx context.Context, branch string, f store.Fact, p Policy) (FactVerdict, error) {
	v, err := e.judgeFact(ctx, branch, f, p)
	if err != nil {
		return FactVerdict{}, err
	}
	// Apply the verdict to the fact as it is now, not as it was read before the judge
	// took its time, so that concurrent changes to other fields survive.
	cur, err := e.getFact(ctx, branch, f.ID)
	if err != nil {
		return FactVerdict{}, err
	}
	if cur.Text != f.Text {
		return FactVerdict{}, fmt.Errorf("%w: fact %s on branch %s changed while it was judged; verify it again", store.ErrStale, f.ID, branch)
	}
	now := e.now()
	cur.Verify = v.verification(store.Verification{At: now})
	cur.Status = statusAfter(cur.Status, v.Status)
	cur.UpdatedAt = now
	res, err := e.put(ctx, branch, []store.Record{cur}, false)
	if err != nil {
		return FactVerdict{}, err
	}
	stored, _ := res[0].Record.(store.Fact)
	return FactVerdict{Verdict: v, Fact: stored}, nil
}

// statusAfter is a fact's status once a verdict is applied.
func statusAfter(s store.FactStatus, v store.VerificationStatus) store.FactStatus {
	switch {
	case s == store.FactSuperseded:
		return s
	case v == store.Verified:
		if s == store.FactPromoted {
			return s
		}
		return store.FactVerified
	case v == store.Invalidated:
		return store.FactInvalidated
	case s == store.FactPromoted:
		return s
	}
	return store.FactActive
}

// judgeFact scores a fact without writing anything.
func (e *Engine) judgeFact(ctx context.Context, branch string, f store.Fact, p Policy) (Verdict, error) {
	if err := ctx.Err(); err != nil {
		return Verdict{}, err
	}
	v := Verdict{Ref: store.RefOf(f)}
	if e.Model == nil {
		v.Scores = HeuristicFactScores(f)
		v.By = byHeuristic
		v.Explanation = fmt.Sprintf("heuristic: accuracy is the confidence %.2f, relevance %.2f for category %q, specificity %.2f for %d words",
			v.Scores.Accuracy, v.Scores.Relevance, f.Category, v.Scores.Specificity, len(strings.Fields(f.Text)))
	} else {
		related, err := e.related(ctx, branch, f)
		if err != nil {
			return Verdict{}, err
		}
		source := e.sourceContext(ctx, branch, f)
		var reply struct {
			Accuracy    *float64 `json:"accuracy"`
			Relevance   *float64 `json:"relevance"`
			Specificity *float64 `json:"specificity"`
			Explanation string   `json:"explanation"`
		}
		req := llm.Request{System: factJudgeSystem, Messages: []llm.Message{{Role: llm.RoleUser, Content: factPrompt(f, source, related)}}}
		err = askJSON(ctx, e.Model, req, &reply, func() error {
			return errors.Join(unit("accuracy", reply.Accuracy), unit("relevance", reply.Relevance), unit("specificity", reply.Specificity))
		})
		if err != nil {
			return Verdict{}, fmt.Errorf("day1: judging fact %s: %w", f.ID, err)
		}
		v.Scores = store.Scores{Accuracy: *reply.Accuracy, Relevance: *reply.Relevance, Specificity: *reply.Specificity}
		v.By = modelName(e.Model)
		v.Explanation = reply.Explanation
		for _, r := range related {
			v.Related = append(v.Related, r.ID)
		}
	}
	v.Score = mean(v.Scores.Accuracy, v.Scores.Relevance, v.Scores.Specificity)
	v.Status = p.OrDefault().Status(v.Score)
	return v, nil
}

// relevantCategories are the fact categories the heuristic scores 0.7 for relevance.
var relevantCategories = []string{"bug_fix", "architecture"}

// HeuristicFactScores are the scores a fact gets without a model: Accuracy is its
// Confidence (1 when zero, as the store defaults it); Relevance 0.7 for the
// categories bug_fix and architecture and 0.5 for any other; Specificity the number
// of words divided by 20, at most 1.
func HeuristicFactScores(f store.Fact) store.Scores {
	acc := f.Confidence
	if acc == 0 {
		acc = 1
	}
	rel := 0.5
	if slices.Contains(relevantCategories, strings.ToLower(f.Category)) {
		rel = 0.7
	}
	return store.Scores{
		Accuracy:    clamp(acc),
		Relevance:   rel,
		Specificity: min(1, float64(len(strings.Fields(f.Text)))/20),
	}
}

// related finds the live facts of the branch most like f, f itself and its parent
// left out: the possible conflicts a judge should see.
func (e *Engine) related(ctx context.Context, branch string, f store.Fact) ([]store.Fact, error) {
	if branch == "" {
		return nil, nil // a detached fact (JudgeFact): no branch to look in
	}
	q := store.SearchQuery{
		Kinds:  []store.Kind{store.KindFact},
		Text:   shorten(f.Text, 1000),
		Mode:   store.Keyword,
		Filter: store.Filter{Statuses: live},
		Limit:  MaxConflicts + 2,
	}
	if len(f.Embedding) > 0 {
		q.Mode, q.Vector = store.Hybrid, f.Embedding
	}
	hits, err := e.Store.Search(ctx, store.View{Branch: branch}, q)
	if err != nil {
		if errors.Is(err, store.ErrInvalidArgument) || errors.Is(err, store.ErrNotSupported) {
			// A text with no searchable words, or a store without vectors: no context.
			return nil, nil
		}
		return nil, fmt.Errorf("day1: searching facts related to %s: %w", f.ID, err)
	}
	var out []store.Fact
	for _, h := range hits {
		o, ok := h.Record.(store.Fact)
		if !ok || o.ID == f.ID || o.ID == f.ParentID {
			continue
		}
		out = append(out, o)
		if len(out) == MaxConflicts {
			break
		}
	}
	return out, nil
}

// sourceContext describes the record a fact came from, when the branch has it.
func (e *Engine) sourceContext(ctx context.Context, branch string, f store.Fact) string {
	kind := store.Kind(f.SourceType)
	if branch == "" || f.SourceID == "" || !kind.Valid() || kind == store.KindRelation {
		return ""
	}
	rec, err := e.Store.Get(ctx, store.View{Branch: branch}, store.Ref{Kind: kind, ID: f.SourceID})
	if err != nil {
		return ""
	}
	switch r := rec.(type) {
	case store.Observation:
		s := fmt.Sprintf("observation (%s", r.Type)
		if r.Tool != "" {
			s += ", tool " + r.Tool
		}
		s += "): " + r.Summary
		if r.RawOutput != "" {
			s += "\noutput: " + shorten(r.RawOutput, 500)
		}
		return shorten(s, maxQuote)
	case store.Conversation:
		msgs, err := e.messages(ctx, branch, r.ID)
		if err != nil {
			return ""
		}
		return "conversation " + quoteTitle(r.Title) + "\n" + transcript(msgs, maxQuote*4)
	case store.Message:
		return shorten(fmt.Sprintf("message (%s): %s", r.Role, r.Content), maxQuote)
	case store.Fact:
		return shorten("fact: "+r.Text, maxQuote)
	}
	return ""
}

const factJudgeSystem = `You review the memory of AI coding agents before it is shared.
Judge ONE fact on three dimensions, each a number from 0 to 1:
- accuracy: is it correct, given its source and the related facts? A fact that contradicts better-supported related facts scores low.
- relevance: does it matter for future work on this project?
- specificity: is it concrete enough to act on (names, values, places)?
Reply with one JSON object and nothing else:
{"accuracy": 0.0, "relevance": 0.0, "specificity": 0.0, "explanation": "one or two sentences"}`

func factPrompt(f store.Fact, source string, related []store.Fact) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Fact to verify: %s\n", shorten(f.Text, maxQuote))
	if f.Category != "" {
		fmt.Fprintf(&b, "Category: %s\n", f.Category)
	}
	fmt.Fprintf(&b, "Confidence claimed: %.2f\n", f.Confidence)
	if source != "" {
		fmt.Fprintf(&b, "\nSource:\n%s\n", source)
	} else {
		b.WriteString("\nSource: not recorded\n")
	}
	if len(related) == 0 {
		b.WriteString("\nRelated facts on the same branch: none\n")
	} else {
		b.WriteString("\nRelated facts on the same branch (possible conflicts):\n")
		for _, r := range related {
			fmt.Fprintf(&b, "- [%s] (%s) %s\n", r.ID, r.Status, shorten(r.Text, 500))
		}
	}
	return b.String()
}

// VerifyConversation judges one conversation of a branch (empty means
// store.DefaultBranch) and writes a new version of it carrying the verdict.
//
// With a Model the judge reads the transcript and scores, from 0 to 1, whether the
// right tools were used (Tools), whether the decisions were sound (Reasoning), whether
// the outcome met the goal (Outcome) and how free it was of errors and detours
// (Errors), and names the key decisions. Without a Model the heuristic scores (see
// HeuristicConversationScores). The overall score is the mean; the Policy gives the
// status, kept in the conversation's Verify.
//
// Errors: like VerifyFact; a conversation the branch does not have matches
// store.ErrNotFound.
func (e *Engine) VerifyConversation(ctx context.Context, branch, id string) (ConversationVerdict, error) {
	if err := e.check(); err != nil {
		return ConversationVerdict{}, err
	}
	branch, err := validBranch("branch", branch)
	if err != nil {
		return ConversationVerdict{}, err
	}
	if err := store.ValidateID("id", id); err != nil {
		return ConversationVerdict{}, err
	}
	conv, err := e.getConversation(ctx, branch, id)
	if err != nil {
		return ConversationVerdict{}, err
	}
	return e.verifyConversation(ctx, branch, conv, e.Policy)
}

func (e *Engine) verifyConversation(ctx context.Context, branch string, conv store.Conversation, p Policy) (ConversationVerdict, error) {
	msgs, err := e.messages(ctx, branch, conv.ID)
	if err != nil {
		return ConversationVerdict{}, err
	}
	v, err := e.judgeConversation(ctx, conv, msgs, p)
	if err != nil {
		return ConversationVerdict{}, err
	}
	cur, err := e.getConversation(ctx, branch, conv.ID)
	if err != nil {
		return ConversationVerdict{}, err
	}
	now := e.now()
	cur.Verify = v.verification(store.Verification{At: now})
	cur.UpdatedAt = now
	res, err := e.put(ctx, branch, []store.Record{cur}, false)
	if err != nil {
		return ConversationVerdict{}, err
	}
	stored, _ := res[0].Record.(store.Conversation)
	return ConversationVerdict{Verdict: v, Conversation: stored}, nil
}

// JudgeFact scores a fact that belongs to no branch (in a bundle, say) with the
// Engine's model, or the heuristic without one, and writes nothing. The judge sees the
// fact alone: no related facts and no source record. The verdict's Status follows
// Engine.Policy.
func (e *Engine) JudgeFact(ctx context.Context, f store.Fact) (Verdict, error) {
	if err := store.ValidateRecord(f, 0); err != nil {
		return Verdict{}, err
	}
	return e.judgeFact(ctx, "", f, e.Policy)
}

// JudgeConversation scores a conversation and its messages that belong to no branch
// (in a bundle, say), as JudgeFact does a fact, and writes nothing.
func (e *Engine) JudgeConversation(ctx context.Context, conv store.Conversation, msgs []store.Message) (Verdict, error) {
	if err := store.ValidateRecord(conv, 0); err != nil {
		return Verdict{}, err
	}
	return e.judgeConversation(ctx, conv, msgs, e.Policy)
}

// judgeConversation scores a conversation's messages without writing anything.
func (e *Engine) judgeConversation(ctx context.Context, conv store.Conversation, msgs []store.Message, p Policy) (Verdict, error) {
	if err := ctx.Err(); err != nil {
		return Verdict{}, err
	}
	v := Verdict{Ref: store.RefOf(conv)}
	if e.Model == nil {
		decisions := FindDecisions(msgs)
		v.Scores, v.Explanation = heuristicConversation(msgs, decisions)
		v.By = byHeuristic
		for _, d := range decisions {
			v.KeyDecisions = append(v.KeyDecisions, d.Seq)
		}
	} else {
		var reply struct {
			Tools        *float64 `json:"tools"`
			Reasoning    *float64 `json:"reasoning"`
			Outcome      *float64 `json:"outcome"`
			Errors       *float64 `json:"errors"`
			Explanation  string   `json:"explanation"`
			KeyDecisions []int    `json:"key_decisions"`
		}
		prompt := "Conversation " + quoteTitle(conv.Title) + "\n\n" + transcript(msgs, maxPromptBytes)
		req := llm.Request{System: conversationJudgeSystem, Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt}}}
		err := askJSON(ctx, e.Model, req, &reply, func() error {
			return errors.Join(unit("tools", reply.Tools), unit("reasoning", reply.Reasoning), unit("outcome", reply.Outcome), unit("errors", reply.Errors))
		})
		if err != nil {
			return Verdict{}, fmt.Errorf("day1: judging conversation %s: %w", conv.ID, err)
		}
		v.Scores = store.Scores{Tools: *reply.Tools, Reasoning: *reply.Reasoning, Outcome: *reply.Outcome, Errors: *reply.Errors}
		v.By = modelName(e.Model)
		v.Explanation = reply.Explanation
		v.KeyDecisions = knownSeqs(reply.KeyDecisions, msgs)
	}
	v.Score = mean(v.Scores.Tools, v.Scores.Reasoning, v.Scores.Outcome, v.Scores.Errors)
	v.Status = p.StatusFor(store.KindConversation, v.Score)
	return v, nil
}

const conversationJudgeSystem = `You review the work of AI coding agents before it is shared.
Judge ONE conversation on four dimensions, each a number from 0 to 1:
- tools: were the right tools used, with the right inputs?
- reasoning: were the decisions logically sound?
- outcome: did the outcome meet the goal?
- errors: 1 if free of errors and detours, lower for each error or wasted step left unrecovered.
Name the sequence numbers of the key decisions.
Reply with one JSON object and nothing else:
{"tools": 0.0, "reasoning": 0.0, "outcome": 0.0, "errors": 0.0, "explanation": "one or two sentences", "key_decisions": [1, 2]}`

// HeuristicConversationScores are the scores a conversation gets without a model:
//
//   - Tools: the share of tool results that are not errors; 0.5 without tool results.
//   - Reasoning: 0.8 when an assistant message is a decision point (FindDecisions),
//     0.5 otherwise.
//   - Outcome: 0.2 when the last tool result is an error; 0.8 when it succeeded and an
//     assistant message follows it; 0.5 otherwise.
//   - Errors: 1 without failed tool results; otherwise 0.8 times the share of failures
//     an assistant message answered (a recovery).
//
// A tool result is a failure when its metadata has a non-empty "error" or "is_error"
// other than "false", or when its content starts with an error marker (see
// IsToolError).
func HeuristicConversationScores(msgs []store.Message) store.Scores {
	s, _ := heuristicConversation(msgs, FindDecisions(msgs))
	return s
}

// heuristicConversation scores msgs given their decision points (FindDecisions), and
// explains the scores.
func heuristicConversation(msgs []store.Message, decisions []DecisionPoint) (store.Scores, string) {
	var results, failures, recovered int
	lastResult := -1
	for i, m := range msgs {
		if m.Role != store.RoleToolResult {
			continue
		}
		results++
		lastResult = i
		if IsToolError(m) {
			failures++
			if nextAssistant(msgs, i) {
				recovered++
			}
		}
	}
	s := store.Scores{Tools: 0.5, Reasoning: 0.5, Outcome: 0.5, Errors: 1}
	if results > 0 {
		s.Tools = float64(results-failures) / float64(results)
	}
	if len(decisions) > 0 {
		s.Reasoning = 0.8
	}
	if lastResult >= 0 {
		switch {
		case IsToolError(msgs[lastResult]):
			s.Outcome = 0.2
		case nextAssistant(msgs, lastResult):
			s.Outcome = 0.8
		}
	}
	if failures > 0 {
		s.Errors = 0.8 * float64(recovered) / float64(failures)
	}
	return s, fmt.Sprintf("heuristic: %d of %d tool results failed, %d recovered; %d decision points", failures, results, recovered, len(decisions))
}

// nextAssistant reports whether an assistant message comes after msgs[i] before the
// next tool call.
func nextAssistant(msgs []store.Message, i int) bool {
	for _, m := range msgs[i+1:] {
		switch m.Role {
		case store.RoleAssistant:
			return true
		case store.RoleToolCall:
			return false
		}
	}
	return false
}

// transcript renders messages for a prompt, each cut to maxQuote bytes, stopping at
// budget bytes with a note of what was left out.
func transcript(msgs []store.Message, budget int) string {
	var b strings.Builder
	for i, m := range msgs {
		line := fmt.Sprintf("[%d] %s", m.Seq, m.Role)
		if m.Tool != "" {
			line += " (" + m.Tool + ")"
		}
		line += ": " + shorten(m.Content, maxQuote) + "\n"
		if b.Len()+len(line) > budget {
			fmt.Fprintf(&b, "[... %d more messages left out]\n", len(msgs)-i)
			break
		}
		b.WriteString(line)
	}
	if len(msgs) == 0 {
		b.WriteString("(no messages)\n")
	}
	return b.String()
}

func quoteTitle(t string) string {
	if t == "" {
		return "(untitled)"
	}
	return fmt.Sprintf("%q", shorten(t, 300))
}

// knownSeqs keeps the sequence numbers msgs has, sorted, each once.
func knownSeqs(seqs []int, msgs []store.Message) []int {
	have := make(map[int]bool, len(msgs))
	for _, m := range msgs {
		have[m.Seq] = true
	}
	var out []int
	for _, s := range seqs {
		if have[s] && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func mean(xs ...float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func clamp(x float64) float64 { return max(0, min(1, x)) }
