package day1

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store"
)

// Written is what one write did to one record.
type Written[T store.Record] struct {
	// Record is the record as stored, as a read returns it: with its id, branch,
	// timestamps and defaults. For an exact-text Deduplicated fact it is the fact that
	// was already there.
	Record T
	// Outcome is Created, Deduplicated, Updated or Superseded.
	Outcome Outcome
	// Replaced is the id of the fact a Superseded write replaced, or of the fact an
	// exact-text Deduplicated write matched.
	Replaced string
	// Similarity is the cosine similarity to Replaced, when a near-duplicate was found.
	Similarity float64
	// AliasOf is set when a fact written under an ID the caller chose was Deduplicated
	// against another fact's text: the caller's ID is now an alias of that fact, whose
	// ID AliasOf is (equal to Replaced). GetFact, and every call that names a fact by
	// ID, resolve the alias to that fact, which keeps its own ID. Generated IDs never
	// become aliases. See store.Alias for the rules.
	AliasOf string
	// Contradicts lists the live facts of the branch that a written fact contradicts
	// (see Config.Contradictions): other values, or the opposite statement, about the
	// same subject. Nil for other kinds, and with ContradictionsOff.
	Contradicts []Contradicted
	// EmbedErr is why the record was written without an embedding: the embedder failed
	// or returned an unusable vector. The write itself succeeded and the record is found
	// by keyword search. Nil when the record was embedded, when the caller supplied the
	// embedding, and for kinds that are not embedded.
	EmbedErr error
}

// WriteFact writes one fact. See WriteFacts.
func (c *Client) WriteFact(ctx context.Context, f Fact) (Written[Fact], error) {
	ws, err := c.WriteFacts(ctx, []Fact{f})
	if err != nil {
		return Written[Fact]{}, err
	}
	return ws[0], nil
}

// WriteFacts writes facts to one branch as one atomic batch: all or none.
//
// Every fact must write to the same branch; an empty Branch means DefaultBranch, so a
// batch that names a branch must name it on every fact.
// A fact without an ID gets a generated one. A fact whose Embedding is empty is
// embedded with the Config's embedder, in one Embed call for the batch; when that
// fails the fact is written without an embedding and Written.EmbedErr says why. A
// repeated write of the same fact, or of a live fact's exact text, is Deduplicated (the
// ID of a deduplicated fact, when the caller chose it, stays readable as an alias of
// the fact it matched: Written.AliasOf); a fact whose embedding is a near-duplicate of a live fact on the branch (cosine at or
// above Config.DedupeThreshold) supersedes it.
//
// Errors: *ValidationError for bad input (the field is named "facts[i].Text" and so on
// in a batch of several), ErrBranchNotFound, ErrBranchArchived, ErrClosed, ctx's error.
func (c *Client) WriteFacts(ctx context.Context, facts []Fact) (ws []Written[Fact], err error) {
	ctx, end := c.start(ctx, writeOp("WriteFacts", facts))
	defer func() { end(OperationEnd{Err: err, Records: len(ws)}) }()
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	found, err := c.contradictions(ctx, facts)
	if err != nil {
		return nil, err
	}
	batch, err := c.superseding(ctx, facts, found)
	if err != nil {
		return nil, err
	}
	ws, err = write(ctx, c, batch, "facts")
	if err != nil {
		return nil, err
	}
	ws = ws[:len(facts)]
	for i := range found {
		ws[i].Contradicts = found[i]
	}
	return ws, nil
}

// WriteObservation writes one observation. See WriteObservations.
func (c *Client) WriteObservation(ctx context.Context, o Observation) (Written[Observation], error) {
	ws, err := c.WriteObservations(ctx, []Observation{o})
	if err != nil {
		return Written[Observation]{}, err
	}
	return ws[0], nil
}

// WriteObservations writes observations to one branch as one atomic batch, like
// WriteFacts: one branch or none, generated ids, Summary embedded when Embedding is
// empty, an embedding failure reported in Written.EmbedErr and never blocking the write.
// Type is required.
func (c *Client) WriteObservations(ctx context.Context, obs []Observation) (ws []Written[Observation], err error) {
	ctx, end := c.start(ctx, writeOp("WriteObservations", obs))
	defer func() { end(OperationEnd{Err: err, Records: len(ws)}) }()
	return write(ctx, c, obs, "observations")
}

// WriteRelation writes one relation between two entities. An empty Branch means
// DefaultBranch and an empty ID gets a generated one. Source, Target and Type are
// required; a zero ValidFrom means the creation time and a zero ValidTo means the
// relation still holds.
func (c *Client) WriteRelation(ctx context.Context, r Relation) (w Written[Relation], err error) {
	ctx, end := c.start(ctx, writeOp("WriteRelation", []Relation{r}))
	defer func() { end(OperationEnd{Err: err, Records: succeeded(err, 1)}) }()
	ws, err := write(ctx, c, []Relation{r}, "relations")
	if err != nil {
		return Written[Relation]{}, err
	}
	return ws[0], nil
}

// WriteConversation writes a conversation, the container of messages added with
// AppendMessage. An empty Branch means DefaultBranch and an empty ID gets a generated
// one.
func (c *Client) WriteConversation(ctx context.Context, conv Conversation) (w Written[Conversation], err error) {
	ctx, end := c.start(ctx, writeOp("WriteConversation", []Conversation{conv}))
	defer func() { end(OperationEnd{Err: err, Records: succeeded(err, 1)}) }()
	ws, err := write(ctx, c, []Conversation{conv}, "conversations")
	if err != nil {
		return Written[Conversation]{}, err
	}
	return ws[0], nil
}

// AppendMessage adds a message to a conversation that exists on the message's branch
// (empty Branch means DefaultBranch); otherwise it returns an error matching
// ErrNotFound. A zero Seq means the next in the conversation: the largest Seq there
// plus one, 1 for the first message. Appends through one Client are serialised, so
// concurrent appends to one conversation never get the same Seq. A non-zero Seq is
// written as given. An empty ID gets a generated one; Role is required. A message
// whose Embedding is empty gets its Content embedded, as a fact's Text is (see
// WriteFacts), so that vector and hybrid search find it.
func (c *Client) AppendMessage(ctx context.Context, m Message) (Written[Message], error) {
	ws, err := c.AppendMessages(ctx, []Message{m})
	if err != nil {
		return Written[Message]{}, err
	}
	return ws[0], nil
}

// AppendMessages adds messages as one atomic batch, on one branch (empty Branch means
// DefaultBranch), each to a conversation that exists there; otherwise it returns an
// error matching ErrNotFound and writes nothing. Each zero Seq is the next in its
// conversation, counting the messages before it in the batch, as AppendMessage
// numbers one. Contents without an embedding are embedded in one Embed call; a
// failure leaves those messages keyword-searchable and says why in Written.EmbedErr.
// At most store.MaxBatch messages.
func (c *Client) AppendMessages(ctx context.Context, msgs []Message) (ws []Written[Message], err error) {
	ctx, end := c.start(ctx, writeOp("AppendMessages", msgs))
	defer func() { end(OperationEnd{Err: err, Records: len(ws)}) }()
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return []Written[Message]{}, nil
	}
	if len(msgs) > store.MaxBatch {
		return nil, store.Invalid("messages", fmt.Sprintf("holds %d records; a batch holds at most %d", len(msgs), store.MaxBatch), nil)
	}
	msgs = slices.Clone(msgs)
	for i := range msgs {
		if err := store.ValidateID("Message.ConversationID", msgs[i].ConversationID); err != nil {
			return nil, inBatch(err, "messages", i, len(msgs))
		}
		msgs[i].Branch = branchOrMain(msgs[i].Branch)
	}
	c.appendMu.Lock()
	defer c.appendMu.Unlock()
	next := map[string]int{} // the next Seq of each conversation of the batch
	for i := range msgs {
		m := &msgs[i]
		if m.Branch != msgs[0].Branch {
			break // write reports the batch spanning branches
		}
		if _, ok := next[m.ConversationID]; !ok {
			seq, err := c.nextSeq(ctx, store.View{Branch: m.Branch}, m.ConversationID)
			if err != nil {
				return nil, err
			}
			next[m.ConversationID] = seq
		}
		if m.Seq == 0 {
			m.Seq = next[m.ConversationID]
		}
		next[m.ConversationID] = max(next[m.ConversationID], m.Seq+1)
	}
	return write(ctx, c, msgs, "messages")
}

// nextSeq checks that a conversation is on the view's branch and returns the Seq after
// its last message's, 1 when it has none.
func (c *Client) nextSeq(ctx context.Context, v store.View, conv string) (int, error) {
	if _, err := c.st.Get(ctx, v, Ref{Kind: KindConversation, ID: conv}); err != nil {
		if errors.Is(err, ErrNotFound) && !errors.Is(err, ErrBranchNotFound) {
			return 0, fmt.Errorf("day1: conversation %q is not on branch %q; write it with WriteConversation first: %w", conv, v.Branch, err)
		}
		return 0, err
	}
	last, err := c.st.List(ctx, v, store.ListQuery{
		Kind:   KindMessage,
		Filter: Filter{ConversationID: conv},
		Order:  OrderSeq,
		Desc:   true,
		Limit:  1,
	})
	if err != nil || len(last) == 0 {
		return 1, err
	}
	return last[0].(Message).Seq + 1, nil
}

// Delete removes records from a branch (empty means DefaultBranch) as one atomic
// batch. The past still shows them: time-travel views and snapshots are unaffected.
// Deleting a record the branch does not have is an error matching ErrNotFound, and then
// nothing is deleted.
func (c *Client) Delete(ctx context.Context, branch string, refs ...Ref) (err error) {
	op := Operation{Name: OpDeleteMemory, Method: "Delete", Branch: branchOrMain(branch)}
	if len(refs) == 1 {
		op.RecordID = refs[0].ID
	}
	ctx, end := c.start(ctx, op)
	defer func() { end(OperationEnd{Err: err, Records: succeeded(err, len(refs))}) }()
	if err := c.use(ctx); err != nil {
		return err
	}
	if len(refs) == 0 {
		return store.Invalid("refs", "must name at least one record to delete", nil)
	}
	return c.st.Delete(ctx, branchOrMain(branch), refs)
}

// write is the one write path of every kind: ids, validation, embeddings, one Put.
// plural names the batch in error fields, like "facts".
func write[T store.Record](ctx context.Context, c *Client, in []T, plural string) ([]Written[T], error) {
	if err := c.use(ctx); err != nil {
		return nil, err
	}
	if len(in) == 0 {
		return []Written[T]{}, nil
	}
	if len(in) > store.MaxBatch {
		return nil, store.Invalid(plural, fmt.Sprintf("holds %d records; a batch holds at most %d", len(in), store.MaxBatch), nil)
	}
	// An empty Branch is the default branch, in a batch as in a single write.
	branch := branchOrMain(in[0].RecordBranch())
	recs := make([]store.Record, len(in))
	var generated map[string]bool
	for i, r := range in {
		if b := branchOrMain(r.RecordBranch()); b != branch {
			return nil, store.Invalid(fmt.Sprintf("%s[%d].Branch", plural, i),
				fmt.Sprintf("is %q where %s[0] writes to %q (an empty Branch is %q); one batch writes to one branch", b, plural, branch, DefaultBranch), r.RecordBranch())
		}
		rec := store.Clone(r)
		if rec.RecordID() == "" {
			rec = withID(rec, c.newID())
			if rec.RecordKind() == KindFact {
				if generated == nil {
					generated = map[string]bool{}
				}
				generated[rec.RecordID()] = true
			}
		}
		if err := store.ValidateRecord(rec, 0); err != nil {
			return nil, inBatch(err, plural, i, len(in))
		}
		if err := c.checkExpiry(rec); err != nil {
			return nil, inBatch(err, plural, i, len(in))
		}
		recs[i] = rec
	}
	embedErrs := c.embed(ctx, recs)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.logEmbedErrs(branch, recs, embedErrs)
	results, err := c.st.Put(ctx, branch, recs, store.PutOptions{DedupeThreshold: c.dedupe, GeneratedIDs: generated})
	if err != nil {
		return nil, err
	}
	if len(results) != len(recs) {
		return nil, fmt.Errorf("day1: the store returned %d results for %d records", len(results), len(recs))
	}
	out := make([]Written[T], len(results))
	for i, res := range results {
		rec, ok := res.Record.(T)
		if !ok {
			return nil, fmt.Errorf("day1: the store returned a %T for record %d, want %T", res.Record, i, rec)
		}
		out[i] = Written[T]{Record: rec, Outcome: res.Outcome, Replaced: res.Replaced, Similarity: res.Similarity, AliasOf: res.AliasOf, EmbedErr: embedErrs[i]}
	}
	return out, nil
}

// logEmbedErrs logs, at Warn, the records of a batch written without an embedding
// because the embedder failed: their kind, ids and branch, and the first error.
func (c *Client) logEmbedErrs(branch string, recs []store.Record, errs []error) {
	var failed []string
	var first error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, recs[i].RecordID())
			first = cmp.Or(first, err)
		}
	}
	if len(failed) > 0 {
		c.log.Warn("day1: written without embeddings: the embedder failed", "branch", branch,
			"kind", recs[0].RecordKind(), "ids", failed, "err", first)
	}
}

// inBatch renames a validation error's field after its position in a batch of several
// records: "Fact.Text" of record 3 becomes "facts[3].Text".
func inBatch(err error, plural string, i, n int) error {
	var ve *ValidationError
	if n == 1 || !errors.As(err, &ve) {
		return err
	}
	cp := *ve
	if _, rest, ok := strings.Cut(ve.Field, "."); ok {
		cp.Field = fmt.Sprintf("%s[%d].%s", plural, i, rest)
	} else {
		cp.Field = fmt.Sprintf("%s[%d]", plural, i)
	}
	return &cp
}

// embed fills the embeddings of the facts, observations and messages that have none,
// with one
// Embed call, and returns per record why it could not (nil entries otherwise). A
// failure leaves the records without embeddings; it never fails the write.
func (c *Client) embed(ctx context.Context, recs []store.Record) []error {
	errs := make([]error, len(recs))
	if c.emb == nil {
		return errs
	}
	var idx []int
	var texts []string
	for i, r := range recs {
		var text string
		switch r := r.(type) {
		case Fact:
			if len(r.Embedding) == 0 {
				text = r.Text
			}
		case Observation:
			if len(r.Embedding) == 0 {
				text = r.Summary
			}
		case Message:
			if len(r.Embedding) == 0 {
				text = r.Content
			}
		}
		if strings.TrimSpace(text) != "" {
			idx = append(idx, i)
			texts = append(texts, text)
		}
	}
	if len(texts) == 0 {
		return errs
	}
	fail := func(i int, err error) {
		errs[i] = fmt.Errorf("day1: embedding with %s failed; the record was written without an embedding and stays keyword-searchable: %w", c.emb.Name(), err)
	}
	vecs, err := c.emb.Embed(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("the embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	if errors.Is(err, llm.ErrEmptyText) && len(texts) > 1 && ctx.Err() == nil {
		// One text had nothing to embed, and an embedder fails a batch as a whole: embed
		// the texts one by one so that only that text goes without a vector.
		vecs, err = make([][]float32, len(texts)), nil
		for j, t := range texts {
			v, e := c.emb.Embed(ctx, []string{t})
			if e == nil && len(v) != 1 {
				e = fmt.Errorf("the embedder returned %d vectors for 1 text", len(v))
			}
			if e != nil {
				fail(idx[j], e)
				continue
			}
			vecs[j] = v[0]
		}
	}
	if err != nil {
		for _, i := range idx {
			fail(i, err)
		}
		return errs
	}
	dims := c.emb.Dimensions()
	for j, i := range idx {
		if errs[i] != nil {
			continue
		}
		field := string(recs[i].RecordKind()) + " embedding"
		if err := store.ValidateEmbedding(field, vecs[j], dims); err != nil || len(vecs[j]) == 0 {
			if err == nil {
				err = errors.New("the embedder returned an empty vector")
			}
			fail(i, err)
			continue
		}
		recs[i] = store.WithEmbedding(recs[i], vecs[j])
	}
	return errs
}

func withID(r store.Record, id string) store.Record {
	switch r := r.(type) {
	case Fact:
		r.ID = id
		return r
	case Observation:
		r.ID = id
		return r
	case Relation:
		r.ID = id
		return r
	case Conversation:
		r.ID = id
		return r
	case Message:
		r.ID = id
		return r
	}
	return r
}

// checkExpiry refuses a fact whose ExpiresAt is not after the time of its write: its
// CreatedAt, or now when it has none (the store stamps it then).
func (c *Client) checkExpiry(r store.Record) error {
	f, ok := r.(Fact)
	if !ok || f.ExpiresAt.IsZero() || !f.CreatedAt.IsZero() {
		return nil // without an expiry, or checked against CreatedAt by ValidateRecord
	}
	if now := c.now(); !f.ExpiresAt.After(now) {
		return store.Invalid("Fact.ExpiresAt", "must be after the time of the write ("+now.Format(time.RFC3339)+"): an expiry in the past",
			f.ExpiresAt.Format(time.RFC3339Nano))
	}
	return nil
}
