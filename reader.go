package day1

import (
	"context"
	"fmt"

	"github.com/day1ai/day1/store"
)

// Reader is every read of day1's memory. The Client implements it at the head of each
// branch; a View returned by Client.TimeTravel implements it at a point in the past,
// so code written against Reader reads the present and the past alike.
//
// An empty branch means DefaultBranch, or the snapshot's branch in a View at a
// snapshot. Errors: ErrNotFound (a Get of a record the branch does not have),
// ErrBranchNotFound, ErrSnapshotNotFound, *ValidationError for bad input, ErrClosed,
// ctx's error.
type Reader interface {
	// GetFact returns one fact of a branch. An id that is an alias on the branch (a
	// caller's id of a Deduplicated fact, Written.AliasOf) returns the fact it names,
	// with that fact's own ID.
	GetFact(ctx context.Context, branch, id string) (Fact, error)
	// GetObservation returns one observation of a branch.
	GetObservation(ctx context.Context, branch, id string) (Observation, error)
	// GetRelation returns one relation of a branch.
	GetRelation(ctx context.Context, branch, id string) (Relation, error)
	// GetConversation returns one conversation of a branch.
	GetConversation(ctx context.Context, branch, id string) (Conversation, error)
	// GetMessage returns one message of a branch.
	GetMessage(ctx context.Context, branch, id string) (Message, error)

	// ListFacts returns the facts of a branch that the filter matches.
	ListFacts(ctx context.Context, o ListOptions) ([]Fact, error)
	// ListObservations returns the observations of a branch that the filter matches.
	ListObservations(ctx context.Context, o ListOptions) ([]Observation, error)
	// ListRelations returns the relations of a branch that the filter matches.
	ListRelations(ctx context.Context, o ListOptions) ([]Relation, error)
	// ListConversations returns the conversations of a branch that the filter matches.
	ListConversations(ctx context.Context, o ListOptions) ([]Conversation, error)
	// ListMessages returns the messages of a branch that the filter matches.
	ListMessages(ctx context.Context, o ListOptions) ([]Message, error)
	// Messages returns the messages of one conversation in Seq order, or an error
	// matching ErrNotFound when the branch has no such conversation.
	Messages(ctx context.Context, branch, conversationID string) ([]Message, error)

	// Search ranks facts and observations by keyword, vector or both.
	Search(ctx context.Context, q SearchQuery) ([]Hit, error)
	// Timeline returns what happened on a branch, in time order.
	Timeline(ctx context.Context, q TimelineQuery) ([]Event, error)
	// Graph walks the relations around an entity.
	Graph(ctx context.Context, q GraphQuery) (*Graph, error)
}

// ListOptions selects the records a List method returns.
type ListOptions struct {
	// Branch to read. Empty means DefaultBranch (the snapshot's branch in a View at a
	// snapshot).
	Branch string
	// Filter narrows the records; the zero Filter matches all. A field that does not
	// apply to the kind listed (Category for relations, say) matches nothing when set.
	Filter Filter
	// Order of the results. Default OrderCreated: creation time, then Seq for messages,
	// then id.
	Order Order
	// Desc reverses the order.
	Desc bool
	// Limit is the most records returned, 1 to store.MaxLimit. Default 0: no limit.
	Limit int
	// Offset skips that many records first. Default 0.
	Offset int
	// IncludeExpired also lists facts whose ExpiresAt has passed, which a list leaves
	// out by default, as a search does (see SearchQuery.IncludeExpired).
	IncludeExpired bool
}

// reader implements Reader for the Client (at the zero At: head) and for Views.
type reader struct {
	c  *Client
	at At
}

// GetFact returns one fact of a branch, or an error matching ErrNotFound. An id that
// is an alias returns the fact it names, with that fact's own ID.
func (r reader) GetFact(ctx context.Context, branch, id string) (Fact, error) {
	return get[Fact](ctx, r, KindFact, branch, id)
}

// GetObservation returns one observation of a branch, or an error matching ErrNotFound.
func (r reader) GetObservation(ctx context.Context, branch, id string) (Observation, error) {
	return get[Observation](ctx, r, KindObservation, branch, id)
}

// GetRelation returns one relation of a branch, or an error matching ErrNotFound.
func (r reader) GetRelation(ctx context.Context, branch, id string) (Relation, error) {
	return get[Relation](ctx, r, KindRelation, branch, id)
}

// GetConversation returns one conversation of a branch, or an error matching
// ErrNotFound.
func (r reader) GetConversation(ctx context.Context, branch, id string) (Conversation, error) {
	return get[Conversation](ctx, r, KindConversation, branch, id)
}

// GetMessage returns one message of a branch, or an error matching ErrNotFound.
func (r reader) GetMessage(ctx context.Context, branch, id string) (Message, error) {
	return get[Message](ctx, r, KindMessage, branch, id)
}

// ListFacts returns the facts of o.Branch that o.Filter matches, in o.Order.
func (r reader) ListFacts(ctx context.Context, o ListOptions) ([]Fact, error) {
	return list[Fact](ctx, r, KindFact, o)
}

// ListObservations returns the observations of o.Branch that o.Filter matches.
func (r reader) ListObservations(ctx context.Context, o ListOptions) ([]Observation, error) {
	return list[Observation](ctx, r, KindObservation, o)
}

// ListRelations returns the relations of o.Branch that o.Filter matches. Filter.Entity
// selects relations whose Source or Target is that entity.
func (r reader) ListRelations(ctx context.Context, o ListOptions) ([]Relation, error) {
	return list[Relation](ctx, r, KindRelation, o)
}

// ListConversations returns the conversations of o.Branch that o.Filter matches.
func (r reader) ListConversations(ctx context.Context, o ListOptions) ([]Conversation, error) {
	return list[Conversation](ctx, r, KindConversation, o)
}

// ListMessages returns the messages of o.Branch that o.Filter matches.
// Filter.ConversationID selects one conversation's messages.
func (r reader) ListMessages(ctx context.Context, o ListOptions) ([]Message, error) {
	return list[Message](ctx, r, KindMessage, o)
}

// Messages returns the messages of one conversation in Seq order, or an error matching
// ErrNotFound when the branch has no such conversation.
func (r reader) Messages(ctx context.Context, branch, conversationID string) (out []Message, err error) {
	ctx, end := r.c.start(ctx, Operation{Name: OpGetMemory, Method: "Messages", Branch: branchOrMain(branch), RecordID: conversationID})
	defer func() { end(OperationEnd{Err: err, Records: len(out)}) }()
	if err := r.c.use(ctx); err != nil {
		return nil, err
	}
	if err := store.ValidateID("conversationID", conversationID); err != nil {
		return nil, err
	}
	v, err := r.view(ctx, branch)
	if err != nil {
		return nil, err
	}
	if _, err := r.c.st.Get(ctx, v, Ref{Kind: KindConversation, ID: conversationID}); err != nil {
		return nil, err
	}
	return listIn[Message](ctx, r, v, store.ListQuery{
		Kind:   KindMessage,
		Filter: Filter{ConversationID: conversationID},
		Order:  OrderSeq,
	})
}

// view resolves a branch name into the store view this reader reads. An empty branch
// of a snapshot view is the snapshot's branch.
func (r reader) view(ctx context.Context, branch string) (store.View, error) {
	at, err := checkAt("At", r.at)
	if err != nil {
		return store.View{}, err
	}
	if branch == "" && at.Snapshot != "" {
		sn, err := r.c.st.GetSnapshot(ctx, at.Snapshot)
		if err != nil {
			return store.View{}, err
		}
		branch = sn.Branch
	}
	return store.View{Branch: branchOrMain(branch), At: at}, nil
}

func get[T store.Record](ctx context.Context, r reader, kind Kind, branch, id string) (_ T, err error) {
	ctx, end := r.c.start(ctx, Operation{Name: OpGetMemory, Method: "Get" + kindName(kind), Branch: branchOrMain(branch), RecordID: id})
	defer func() { end(OperationEnd{Err: err, Records: succeeded(err, 1)}) }()
	var zero T
	if err := r.c.use(ctx); err != nil {
		return zero, err
	}
	if err := store.ValidateID("id", id); err != nil {
		return zero, err
	}
	v, err := r.view(ctx, branch)
	if err != nil {
		return zero, err
	}
	rec, err := r.c.st.Get(ctx, v, Ref{Kind: kind, ID: id})
	if err != nil {
		return zero, err
	}
	t, ok := rec.(T)
	if !ok {
		return zero, fmt.Errorf("day1: the store returned a %T for %s/%s, want %T", rec, kind, id, zero)
	}
	return t, nil
}

func list[T store.Record](ctx context.Context, r reader, kind Kind, o ListOptions) (out []T, err error) {
	ctx, end := r.c.start(ctx, Operation{Name: OpGetMemory, Method: "List" + kindName(kind) + "s", Branch: branchOrMain(o.Branch)})
	defer func() { end(OperationEnd{Err: err, Records: len(out)}) }()
	if err := r.c.use(ctx); err != nil {
		return nil, err
	}
	v, err := r.view(ctx, o.Branch)
	if err != nil {
		return nil, err
	}
	f := o.Filter
	if kind == KindFact {
		if f, err = r.unexpired(ctx, f, o.IncludeExpired); err != nil {
			return nil, err
		}
	}
	return listIn[T](ctx, r, v, store.ListQuery{
		Kind: kind, Filter: f, Order: o.Order, Desc: o.Desc, Limit: o.Limit, Offset: o.Offset,
	})
}

// unexpired returns f set to leave out the facts that have expired by the instant the
// read sees: the point of a View (Filter.LiveAt), or now at the head (NotExpired, which
// the store turns into its clock's now). A filter that names LiveAt, or a read that
// asks for expired facts, is left as it is.
func (r reader) unexpired(ctx context.Context, f Filter, includeExpired bool) (Filter, error) {
	switch {
	case includeExpired || !f.LiveAt.IsZero():
	case r.at.Snapshot != "":
		sn, err := r.c.st.GetSnapshot(ctx, r.at.Snapshot)
		if err != nil {
			return f, err
		}
		f.LiveAt = sn.CreatedAt
	case !r.at.Time.IsZero():
		f.LiveAt = r.at.Time
	default:
		f.NotExpired = true
	}
	return f, nil
}

func listIn[T store.Record](ctx context.Context, r reader, v store.View, q store.ListQuery) ([]T, error) {
	recs, err := r.c.st.List(ctx, v, q)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(recs))
	for _, rec := range recs {
		t, ok := rec.(T)
		if !ok {
			return nil, fmt.Errorf("day1: the store returned a %T listing %s records", rec, q.Kind)
		}
		out = append(out, t)
	}
	return out, nil
}
