package curation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/day1ai/day1/internal/ids"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// DefaultConcurrency is how many records VerifyBranch judges at once when
// Engine.Concurrency is zero.
const DefaultConcurrency = 4

// Store is what the engine needs of a store: the records it judges and writes, the
// branches and snapshots it works on, diffs, and documents for its templates. Every
// store.Store is one.
type Store interface {
	store.Records
	store.Branches
	store.Merges
	store.Snapshots
	store.Docs
}

// Engine verifies, cherry-picks, consolidates and templates the memory of one store.
// Its zero value is not usable: Store is required. An Engine holds no state between
// calls and is safe for concurrent use when its Store, Model, Embedder, NewID and Now
// are.
type Engine struct {
	// Store holds the branches the engine works on. Required.
	Store Store
	// Model judges, extracts and finds decision points. Default nil: every method
	// uses its documented heuristic instead and says so (Verdict.By is "heuristic").
	Model llm.Model
	// Embedder embeds the facts the engine writes (extracted, consolidated). Default
	// nil: they are written without an embedding and stay keyword-searchable. An
	// embedding failure never fails a write.
	Embedder llm.Embedder
	// DedupeThreshold is passed to Store.Put for the facts the engine writes: a new
	// fact this similar to a live one supersedes it. Default 0: only exact repeats of
	// a text are deduplicated.
	DedupeThreshold float64
	// Policy turns judges' scores into statuses. The zero Policy means DefaultPolicy.
	Policy Policy
	// Concurrency bounds how many records VerifyBranch judges at once. 0 means
	// DefaultConcurrency.
	Concurrency int
	// NewID makes the ids of the records the engine creates. Default: time-ordered
	// random ids.
	NewID func() string
	// Now is the clock of verification times and of the records the engine writes.
	// Default time.Now.
	Now func() time.Time
}

func (e *Engine) check() error {
	if e == nil || e.Store == nil {
		return store.Invalid("Engine.Store", "must be set to the store that holds the branches", nil)
	}
	return e.Policy.Validate("Engine.Policy")
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}

func (e *Engine) newID() string {
	if e.NewID != nil {
		return e.NewID()
	}
	return ids.New()
}

func (e *Engine) concurrency() int {
	if e.Concurrency > 0 {
		return e.Concurrency
	}
	return DefaultConcurrency
}

// modelName is what Verification.By records for a model judgement.
func modelName(m llm.Model) string { return "model:" + m.Name() }

// byHeuristic is what Verification.By records for a heuristic judgement.
const byHeuristic = "heuristic"

// live lists the fact statuses of current knowledge.
var live = []store.FactStatus{store.FactActive, store.FactVerified, store.FactPromoted}

// getFact reads one fact of a branch.
func (e *Engine) getFact(ctx context.Context, branch, id string) (store.Fact, error) {
	rec, err := e.Store.Get(ctx, store.View{Branch: branch}, store.Ref{Kind: store.KindFact, ID: id})
	if err != nil {
		return store.Fact{}, err
	}
	f, ok := rec.(store.Fact)
	if !ok {
		return store.Fact{}, fmt.Errorf("day1: the store returned a %T for fact %s", rec, id)
	}
	return f, nil
}

// getConversation reads one conversation of a branch.
func (e *Engine) getConversation(ctx context.Context, branch, id string) (store.Conversation, error) {
	rec, err := e.Store.Get(ctx, store.View{Branch: branch}, store.Ref{Kind: store.KindConversation, ID: id})
	if err != nil {
		if isNotFound(err) {
			return store.Conversation{}, fmt.Errorf("day1: conversation %q is not on branch %q: %w", id, branch, err)
		}
		return store.Conversation{}, err
	}
	c, ok := rec.(store.Conversation)
	if !ok {
		return store.Conversation{}, fmt.Errorf("day1: the store returned a %T for conversation %s", rec, id)
	}
	return c, nil
}

// messages reads the messages of one conversation in Seq order.
func (e *Engine) messages(ctx context.Context, branch, convID string) ([]store.Message, error) {
	return e.listMessages(ctx, branch, convID, false, 0)
}

// lastSeq returns the highest sequence number of a conversation's messages, 0 when it
// has none, reading one message.
func (e *Engine) lastSeq(ctx context.Context, branch, convID string) (int, error) {
	last, err := e.listMessages(ctx, branch, convID, true, 1)
	if err != nil || len(last) == 0 {
		return 0, err
	}
	return last[0].Seq, nil
}

// listMessages reads a conversation's messages by Seq, descending when desc, at most
// limit of them (0: all).
func (e *Engine) listMessages(ctx context.Context, branch, convID string, desc bool, limit int) ([]store.Message, error) {
	recs, err := e.Store.List(ctx, store.View{Branch: branch}, store.ListQuery{
		Kind:   store.KindMessage,
		Filter: store.Filter{ConversationID: convID},
		Order:  store.OrderSeq,
		Desc:   desc,
		Limit:  limit,
	})
	if err != nil {
		return nil, err
	}
	out := make([]store.Message, 0, len(recs))
	for _, r := range recs {
		m, ok := r.(store.Message)
		if !ok {
			return nil, fmt.Errorf("day1: the store returned a %T for a message of conversation %s", r, convID)
		}
		out = append(out, m)
	}
	return out, nil
}

// put writes records to a branch and checks the store's answer.
func (e *Engine) put(ctx context.Context, branch string, recs []store.Record, dedupe bool) ([]store.PutResult, error) {
	opts := store.PutOptions{Now: e.now()}
	if dedupe && e.DedupeThreshold > 0 {
		opts.DedupeThreshold = e.DedupeThreshold
	}
	res, err := e.Store.Put(ctx, branch, recs, opts)
	if err != nil {
		return nil, err
	}
	if len(res) != len(recs) {
		return nil, fmt.Errorf("day1: the store returned %d results for %d records", len(res), len(recs))
	}
	return res, nil
}

// embedFacts fills the embeddings of facts that have none, with one Embed call. A
// failure leaves them without; it never fails the write.
func (e *Engine) embedFacts(ctx context.Context, facts []store.Fact) {
	if e.Embedder == nil {
		return
	}
	var idx []int
	var texts []string
	for i, f := range facts {
		if len(f.Embedding) == 0 && strings.TrimSpace(f.Text) != "" {
			idx = append(idx, i)
			texts = append(texts, f.Text)
		}
	}
	if len(texts) == 0 {
		return
	}
	vecs, err := e.Embedder.Embed(ctx, texts)
	if err != nil || len(vecs) != len(texts) {
		return
	}
	for j, i := range idx {
		if store.ValidateEmbedding("Fact.Embedding", vecs[j], 0) == nil && len(vecs[j]) > 0 {
			facts[i].Embedding = vecs[j]
		}
	}
}

// validBranch checks a branch name; an empty one means store.DefaultBranch.
func validBranch(field, name string) (string, error) {
	if name == "" {
		return store.DefaultBranch, nil
	}
	return name, store.ValidateBranchName(field, name)
}

// shorten cuts s to at most n bytes at a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && (s[i]&0xC0) == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// askJSON asks m for one JSON object and decodes it into out. check, when not nil,
// validates the decoded value; its error, like a reply that is not JSON of out's
// shape, becomes a *llm.MalformedOutputError quoting the reply. The model's own
// errors are returned as they are.
func askJSON(ctx context.Context, m llm.Model, req llm.Request, out any, check func() error) error {
	var raw json.RawMessage
	if err := llm.CompleteJSON(ctx, m, req, &raw); err != nil {
		return err
	}
	bad := func(err error) error {
		return &llm.MalformedOutputError{Model: m.Name(), Content: shorten(string(raw), 500), Err: err}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return bad(err)
	}
	if check != nil {
		if err := check(); err != nil {
			return bad(err)
		}
	}
	return nil
}

// unit checks that a model's score is present and between 0 and 1.
func unit(name string, v *float64) error {
	if v == nil {
		return fmt.Errorf("the reply has no %q score", name)
	}
	if math.IsNaN(*v) || *v < 0 || *v > 1 {
		return fmt.Errorf("score %q is %g; scores must be between 0 and 1", name, *v)
	}
	return nil
}

// isInvalid reports whether err is the store refusing a query as invalid, such as a
// keyword search of a text without searchable words.
func isInvalid(err error) bool { return errors.Is(err, store.ErrInvalidArgument) }
