package handoff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/day1ai/day1/internal/ids"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

// Document collections the Engine keeps its records in, one per record type. Every
// record is one store document; the Keys listed are what the Engine queries by.
const (
	// TaskCollection holds tasks, one document per task, its id the task's name.
	// Keys: status, type, parent.
	TaskCollection = "handoff_task"
	// ObjectiveCollection holds the objectives of tasks, one document each, its id
	// "<task>:<objective number>". Keys: task, status.
	ObjectiveCollection = "handoff_objective"
	// MemberCollection holds the agents of tasks, one document per agent and task,
	// its id "<task>:<agent>". Keys: task, agent, status.
	MemberCollection = "handoff_member"
	// HandoffCollection holds handoff records with their frozen packets. Keys: task,
	// type, status, from, receiver ("*" for an open handoff).
	HandoffCollection = "handoff_record"
	// EventCollection holds the audit trail. Keys: task, kind, handoff (when the
	// event concerns one), and "agent:<id>" for every agent involved.
	EventCollection = "handoff_event"
	// CheckpointCollection holds checkpoints. Keys: task, agent.
	CheckpointCollection = "handoff_checkpoint"
	// AgentCollection holds registered agent profiles, its id the agent's ID.
	AgentCollection = "handoff_agent"
	// SessionCollection holds collaboration sessions. Keys: phase, task,
	// "participant:<id>" for every participant.
	SessionCollection = "handoff_collab"
	// MessageCollection holds collaboration messages, its id the message's ID.
	// Keys: session, type, sender, receiver ("*" for every participant).
	MessageCollection = "handoff_message"
)

// maxRetries bounds how many times a read-modify-write is retried when another writer
// changed one of its documents first (store.ErrStale).
const maxRetries = 16

// Store is what the engine needs of a store: documents for its records, branches
// for its tasks and agents, the records a packet carries, and the diffs and merges
// of completed tasks. Every store.Store is one.
type Store interface {
	store.Records
	store.Branches
	store.Merges
	store.Docs
}

// Engine keeps tasks, handoffs, checkpoints, agent profiles and collaborations in a
// store, as documents written with preconditions, and creates the branches they need.
// Its zero value is not usable: Store is required. An Engine holds no state between
// calls and is safe for concurrent use when its Store, Model, Merger, Decisions,
// Dispatcher, NewID and Now are.
type Engine struct {
	// Store holds the branches and the documents. Required.
	Store Store
	// Model writes the context summary of a packet. Default nil: a summary is built
	// from the packet's contents (Packet.SummaryBy is "heuristic"). A failing model
	// never fails a handoff; the heuristic summary is used and the error recorded.
	Model llm.Model
	// Merger merges a completed task into its parent. Default nil: a merge.Engine on
	// Store with this Engine's NewID and Now, without a gate.
	Merger *merge.Engine
	// Decisions flags the decision points of a conversation: given its messages in
	// Seq order, it returns the IDs of those that carry a decision. A packet keeps
	// decision messages first when it must shorten a conversation. Default nil: no
	// message is flagged.
	Decisions func(msgs []store.Message) []string
	// Consolidate turns an agent's observations on a branch into candidate facts
	// there (unverified), and returns how many facts it wrote. A handoff asking for
	// HandoffRequest.Consolidate calls it on the source agent's branch before the
	// packet is frozen. Default nil: such a handoff is a *store.ValidationError.
	Consolidate func(ctx context.Context, branch, task, agent string) (int, error)
	// Dispatcher receives every collaboration message after it is stored, for the
	// handlers registered on it. Default nil: messages are only stored.
	Dispatcher *Dispatcher
	// NewID makes the ids of handoffs, events, checkpoints and messages. Default:
	// time-ordered random ids (internal/ids).
	NewID func() string
	// Now is the clock of every time the Engine records, and of expiry and stall
	// detection. Default time.Now.
	Now func() time.Time
	// ClaimTimeout is how long an accept may hold its claim on a handoff (status
	// accepting) before ExpireHandoffs takes it for abandoned, its process having died
	// between the claim and the commit, and rolls the handoff back. Default
	// DefaultClaimTimeout.
	ClaimTimeout time.Duration
}

// DefaultClaimTimeout is the default Engine.ClaimTimeout: far longer than an accept,
// which writes one batch after creating one branch.
const DefaultClaimTimeout = 5 * time.Minute

func (e *Engine) claimTimeout() time.Duration {
	if e.ClaimTimeout > 0 {
		return e.ClaimTimeout
	}
	return DefaultClaimTimeout
}

func (e *Engine) check() error {
	if e == nil || e.Store == nil {
		return store.Invalid("Engine.Store", "must be set to the store that holds the branches and documents", nil)
	}
	return nil
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

func (e *Engine) merger() *merge.Engine {
	if e.Merger != nil {
		return e.Merger
	}
	return &merge.Engine{Store: e.Store, NewID: e.NewID, Now: e.Now}
}

// retry runs fn until it succeeds, fails with an error other than store.ErrStale, or
// maxRetries attempts were made. fn re-reads what it changes on every attempt.
func (e *Engine) retry(ctx context.Context, fn func() error) error {
	var err error
	for range maxRetries {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err = fn(); err == nil || !errors.Is(err, store.ErrStale) {
			return err
		}
	}
	return fmt.Errorf("day1: gave up after %d attempts, as other writers kept changing the same records; retry later: %w", maxRetries, err)
}

// batch is one atomic batch of document writes: what one attempt of Engine.update
// puts, or what a step of a larger operation commits with Engine.batch.
type batch struct {
	e   *Engine
	ws  []store.DocWrite
	err error // the first write that could not be built
	// created names a branch this attempt made, deleted again when the batch fails.
	created string
}

// batch returns an empty batch.
func (e *Engine) batch() *batch { return &batch{e: e} }

// put adds a write as the *Write helpers build it; the first error of a build is the
// batch's, and nothing is then written.
func (b *batch) put(w store.DocWrite, err error) {
	if err != nil {
		if b.err == nil {
			b.err = err
		}
		return
	}
	b.ws = append(b.ws, w)
}

// build adds the writes of builders, in order.
func (b *batch) build(fns ...func() (store.DocWrite, error)) {
	for _, fn := range fns {
		b.put(fn())
	}
}

// undoing makes a failed commit delete branch, which the caller has just created.
func (b *batch) undoing(branch string, created bool) {
	if created {
		b.created = branch
	}
}

// commit writes the batch, all or nothing, and returns the documents in the order
// they were put. On failure, a branch the batch was told it made is deleted again.
func (b *batch) commit(ctx context.Context) ([]store.Doc, error) {
	err := b.err
	var docs []store.Doc
	if err == nil {
		docs, err = b.e.writeDocs(ctx, b.ws)
	}
	if err != nil && b.created != "" {
		return nil, b.e.undoBranch(ctx, b.created, err)
	}
	return docs, err
}

// update runs fn and commits the batch it filled, in the way bbolt's DB.Update runs
// a function in a transaction. fn reads what it changes: when another writer changed
// it first (store.ErrStale), update runs fn again on a new batch, up to maxRetries
// times. An error from fn commits nothing (and deletes a branch fn made, see
// batch.undoing). It returns the documents written, in the order fn put them; none
// when fn put nothing.
func (e *Engine) update(ctx context.Context, fn func(b *batch) error) ([]store.Doc, error) {
	var docs []store.Doc
	err := e.retry(ctx, func() error {
		docs = nil
		b := e.batch()
		if err := fn(b); err != nil {
			if b.created != "" {
				return e.undoBranch(ctx, b.created, err)
			}
			return err
		}
		if len(b.ws) == 0 && b.err == nil {
			return nil
		}
		var err error
		docs, err = b.commit(ctx)
		return err
	})
	return docs, err
}

// docWrite encodes v as the body of a document write.
func docWrite(coll, id string, v any, keys map[string]string, cond store.DocCond, version uint64) (store.DocWrite, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return store.DocWrite{}, fmt.Errorf("day1: encoding %s document %s: %w", coll, id, err)
	}
	if len(data) > store.MaxDocLen {
		return store.DocWrite{}, store.Invalid(coll, fmt.Sprintf("the %s document %s is %d bytes; at most %d are allowed", coll, id, len(data), store.MaxDocLen), nil)
	}
	return store.DocWrite{
		Doc:     store.Doc{Collection: coll, ID: id, Data: data, Keys: keys},
		Cond:    cond,
		Version: version,
	}, nil
}

// readDoc reads one document into v and returns its version. A missing document is an
// error matching store.ErrNotFound that names what was looked for.
func readDoc(ctx context.Context, st store.Docs, coll, id, what string, v any) (uint64, error) {
	d, err := st.GetDoc(ctx, coll, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return 0, fmt.Errorf("day1: %s: %w", what, store.ErrNotFound)
		}
		return 0, err
	}
	return decodeDoc(d, v)
}

// listDocs reads every document of a query, decoding each with decode.
func listDocs[T any](ctx context.Context, st store.Docs, q store.DocQuery, decode func(store.Doc, *T)) ([]T, error) {
	docs, err := st.ListDocs(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(docs))
	for _, d := range docs {
		var v T
		if _, err := decodeDoc(d, &v); err != nil {
			return nil, err
		}
		if decode != nil {
			decode(d, &v)
		}
		out = append(out, v)
	}
	return out, nil
}

// writeDocs applies a batch and checks the store returned one document per write.
func (e *Engine) writeDocs(ctx context.Context, ws []store.DocWrite) ([]store.Doc, error) {
	docs, err := e.Store.WriteDocs(ctx, ws)
	if err != nil {
		return nil, err
	}
	if len(docs) != len(ws) {
		return nil, fmt.Errorf("day1: the store returned %d documents for %d writes", len(docs), len(ws))
	}
	return docs, nil
}

// decodeDoc decodes a document's body into v and returns its version.
func decodeDoc(d store.Doc, v any) (uint64, error) {
	if err := json.Unmarshal(d.Data, v); err != nil {
		return 0, fmt.Errorf("day1: the %s document %s is malformed: %w", d.Collection, d.ID, err)
	}
	return d.Version, nil
}
