package merge

import (
	"context"
	"fmt"
	"time"

	"github.com/day1ai/day1/store"
)

// Decision is a Resolver's answer to one conflict.
type Decision struct {
	// Action is one of store.ActionAdopt (take the source's version),
	// store.ActionKeepTarget (keep the target's), store.ActionKeepBoth (add the source's
	// version beside the target's) or store.ActionMerged (write Merged).
	Action store.MergeAction
	// Merged is the record to write for store.ActionMerged. It must be of the kind of
	// the conflicting records. An empty id is assigned by the engine: a new id for a
	// fact, the conflicting record's id for other kinds (which have no supersede chain
	// and are overwritten). A fact's empty ParentID is set to the conflict's Ref.ID.
	Merged store.Record
	// Reason explains the decision; it is kept in the merge history.
	Reason string
}

// Resolver decides conflicts for the store.Auto strategy.
//
// Resolve is called once per conflict, in the diff's order, and must honour ctx. An
// error aborts the whole merge and nothing is changed. Implementations may call a
// model (an LLM judge) and must be safe for concurrent use when the Engine is.
type Resolver interface {
	// Name identifies the resolver in the merge history as "resolver:<name>".
	Name() string
	// Resolve decides one conflict.
	Resolve(ctx context.Context, c store.Conflict) (Decision, error)
}

// ResolverFunc returns a Resolver named name that calls resolve. A nil resolve keeps
// the target's version of every conflict.
func ResolverFunc(name string, resolve func(ctx context.Context, c store.Conflict) (Decision, error)) Resolver {
	return resolverFunc{name: name, fn: resolve}
}

type resolverFunc struct {
	name string
	fn   func(context.Context, store.Conflict) (Decision, error)
}

func (r resolverFunc) Name() string { return r.name }

func (r resolverFunc) Resolve(ctx context.Context, c store.Conflict) (Decision, error) {
	if r.fn == nil {
		return Decision{Action: store.ActionKeepTarget, Reason: "no resolver function"}, nil
	}
	return r.fn(ctx, c)
}

// DefaultResolver returns the deterministic resolver the Engine uses when none is set.
// Its Name is "default". It never keeps both and never merges:
//
//   - a side that changed a record wins over a side that deleted it;
//   - between two facts, the higher Confidence wins, then the later UpdatedAt;
//   - between two records of another kind, the later change wins: UpdatedAt for
//     conversations, CreatedAt for the rest;
//   - a tie goes to the source.
//
// For a store.BothSuperseded conflict it compares the two competing new facts.
func DefaultResolver() Resolver { return defaultResolver{} }

type defaultResolver struct{}

func (defaultResolver) Name() string { return "default" }

func (defaultResolver) Resolve(ctx context.Context, c store.Conflict) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	src, tgt := c.Source.After, c.Target.After
	adopt := func(reason string) (Decision, error) {
		return Decision{Action: store.ActionAdopt, Reason: reason}, nil
	}
	keep := func(reason string) (Decision, error) {
		return Decision{Action: store.ActionKeepTarget, Reason: reason}, nil
	}
	switch {
	case src == nil && tgt == nil:
		return keep("both sides deleted it")
	case src == nil:
		return keep("the source deleted it and the target changed it; a change wins over a deletion")
	case tgt == nil:
		return adopt("the target deleted it and the source changed it; a change wins over a deletion")
	}
	if sf, ok := src.(store.Fact); ok {
		if tf, ok := tgt.(store.Fact); ok {
			switch {
			case sf.Confidence > tf.Confidence:
				return adopt(fmt.Sprintf("the source's fact has the higher confidence (%g > %g)", sf.Confidence, tf.Confidence))
			case sf.Confidence < tf.Confidence:
				return keep(fmt.Sprintf("the target's fact has the higher confidence (%g > %g)", tf.Confidence, sf.Confidence))
			}
			return byTime(sf.UpdatedAt, tf.UpdatedAt, "equal confidence; ")
		}
	}
	return byTime(changedAt(src), changedAt(tgt), "")
}

// byTime decides for the later of two change times, the source on a tie.
func byTime(src, tgt time.Time, prefix string) (Decision, error) {
	switch {
	case src.After(tgt):
		return Decision{Action: store.ActionAdopt, Reason: prefix + "the source's version is newer"}, nil
	case tgt.After(src):
		return Decision{Action: store.ActionKeepTarget, Reason: prefix + "the target's version is newer"}, nil
	}
	return Decision{Action: store.ActionAdopt, Reason: prefix + "same time; the source wins a tie"}, nil
}

// changedAt is when a record last changed.
func changedAt(r store.Record) time.Time {
	switch r := r.(type) {
	case store.Fact:
		return later(r.CreatedAt, r.UpdatedAt)
	case store.Conversation:
		return later(r.CreatedAt, r.UpdatedAt)
	}
	return r.RecordTime()
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
