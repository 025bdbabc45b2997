package day1

import (
	"context"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/store"
)

// Conversation cherry-pick types. They are the curation package's.
type (
	// ConversationPick asks CherryPickConversation to copy a whole conversation,
	// with or without its messages, to another branch.
	ConversationPick = curation.ConversationPick
	// MessagePick asks CherryPickMessages to copy the messages of a sequence range
	// into a new or an existing conversation.
	MessagePick = curation.MessagePick
	// DecisionPick asks CherryPickDecisions to copy a conversation's decision points.
	DecisionPick = curation.DecisionPick
	// PickResult is what a conversation cherry-pick wrote: the target conversation,
	// its new messages, the source messages picked, and the verdict when asked for.
	PickResult = curation.PickResult
	// DecisionPoint is a message that carries a decision, and why.
	DecisionPoint = curation.DecisionPoint
	// ToolSequencePick asks CherryPickToolSequences to copy a conversation's tool
	// sequences, each as one unit.
	ToolSequencePick = curation.ToolSequencePick
	// ToolSequence is one run of tool work: the assistant message that introduces it,
	// the tool calls and their results.
	ToolSequence = curation.ToolSequence
	// Pick is one cherry-pick of a message: branch, receiving conversation, time.
	Pick = store.Pick
	// FactPick asks CherryPickFacts to turn a conversation into facts.
	FactPick = curation.FactPick
	// FactPickResult is what CherryPickFacts wrote.
	FactPickResult = curation.FactPickResult
	// WrittenFact is one fact an extraction or consolidation wrote and its Outcome.
	WrittenFact = curation.WrittenFact
)

// CherryPickConversation copies a whole conversation (and unless WithoutMessages its
// messages) from p.Source (empty means DefaultBranch) to p.Target, under the same ids.
// The source messages' PickedTo gains the target branch (and Picks the branch, the
// conversation and the time), and the target receives
// exactly these versions, so a later merge of the two branches has nothing to
// reconcile. With p.Verify the conversation is judged first and carries the verdict
// on both branches. The target is written in one atomic batch. Picking the same
// conversation again changes nothing.
//
// Errors: *ValidationError for bad input (no Target, Target equal to Source);
// ErrNotFound for an unknown conversation; ErrBranchNotFound; ErrBranchArchived; the
// judge's errors with Verify; ErrClosed; ctx's error.
func (c *Client) CherryPickConversation(ctx context.Context, p ConversationPick) (res PickResult, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpCherryPick, Method: "CherryPickConversation", Branch: p.Target})
	defer func() { end(OperationEnd{Err: err, Records: len(res.Messages)}) }()
	if err := c.use(ctx); err != nil {
		return PickResult{}, err
	}
	return c.curator().CherryPickConversation(ctx, p)
}

// CherryPickMessages copies the messages whose sequence numbers lie in
// [p.FromSeq, p.ToSeq] into a conversation on p.Target: a new one, or
// p.TargetConversationID after its last message. The copies get new ids, consecutive
// sequence numbers and metadata naming where they came from; the source messages'
// PickedTo gains the target branch. With p.Verify the picked messages are judged and
// the verdict kept on the target conversation.
//
// Errors: *ValidationError for an inverted range (ToSeq before FromSeq), an empty
// range (no message in it), a negative FromSeq, or no Target; otherwise as
// CherryPickConversation.
func (c *Client) CherryPickMessages(ctx context.Context, p MessagePick) (res PickResult, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpCherryPick, Method: "CherryPickMessages", Branch: p.Target})
	defer func() { end(OperationEnd{Err: err, Records: len(res.Messages)}) }()
	if err := c.use(ctx); err != nil {
		return PickResult{}, err
	}
	return c.curator().CherryPickMessages(ctx, p)
}

// CherryPickDecisions copies the decision points of a conversation into a conversation
// on p.Target, as CherryPickMessages copies a range. Config.Model names the decision
// points when set; otherwise heuristics do: assistant messages that state an intent
// ("I'll", "let me", "the approach", "decision"), that follow a failed tool result,
// or that come right before a tool call that succeeded. With no decision point nothing
// is written. Errors: as CherryPickMessages, and the model's.
func (c *Client) CherryPickDecisions(ctx context.Context, p DecisionPick) (res PickResult, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpCherryPick, Method: "CherryPickDecisions", Branch: p.Target})
	defer func() { end(OperationEnd{Err: err, Records: len(res.Messages)}) }()
	if err := c.use(ctx); err != nil {
		return PickResult{}, err
	}
	return c.curator().CherryPickDecisions(ctx, p)
}

// CherryPickToolSequences copies the tool sequences of a conversation (each run of
// tool_call and tool_result messages with the assistant message that introduces it;
// see curation.FindToolSequences) into a conversation on p.Target, each sequence
// whole, as CherryPickMessages copies a range. p.Tool keeps the sequences that call
// one tool; p.FromSeq and p.ToSeq keep those within a range. The result's Sequences
// lists what was picked; with none, nothing is written. Errors: as
// CherryPickMessages.
func (c *Client) CherryPickToolSequences(ctx context.Context, p ToolSequencePick) (res PickResult, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpCherryPick, Method: "CherryPickToolSequences", Branch: p.Target})
	defer func() { end(OperationEnd{Err: err, Records: len(res.Messages)}) }()
	if err := c.use(ctx); err != nil {
		return PickResult{}, err
	}
	return c.curator().CherryPickToolSequences(ctx, p)
}

// CherryPickFacts turns a conversation on p.Source into facts on p.Target, in one
// atomic batch. With Config.Model the model extracts them and they land verified;
// without one, sentences of assistant messages that report a finding become
// unverified candidates (confidence 0.7). With p.Verify every fact is judged first and
// lands with its verdict. The usual deduplication applies. Errors: *ValidationError,
// ErrNotFound, ErrBranchNotFound, the model's errors, ErrClosed, ctx's error.
func (c *Client) CherryPickFacts(ctx context.Context, p FactPick) (res FactPickResult, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpCherryPick, Method: "CherryPickFacts", Branch: p.Target})
	defer func() { end(OperationEnd{Err: err, Records: len(res.Facts)}) }()
	if err := c.use(ctx); err != nil {
		return FactPickResult{}, err
	}
	return c.curator().CherryPickFacts(ctx, p)
}
