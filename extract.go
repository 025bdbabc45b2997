package day1

import (
	"context"

	"github.com/day1ai/day1/curation"
)

// Extraction types. They are the curation package's.
type (
	// Extraction asks ExtractFacts for the facts of a conversation: a stored one
	// (ConversationID) or turns that are not stored (Messages).
	Extraction = curation.Extraction
	// ExtractionResult is what ExtractFacts wrote: the facts added, and the facts
	// memory held that it updated or invalidated.
	ExtractionResult = curation.ExtractionResult
)

// Extraction limits, defaults and metadata.
const (
	// DefaultRelatedFacts is how many related live facts an extraction shows the
	// model by default: the facts it may update or invalidate.
	DefaultRelatedFacts = curation.DefaultRelatedFacts
	// MaxExtractionMessages bounds Extraction.Messages.
	MaxExtractionMessages = curation.MaxExtractionMessages
	// MetaExtractedFromTurns names, on a fact extracted from Messages, the turns
	// (1-based) it came from.
	MetaExtractedFromTurns = curation.MetaExtractedFromTurns
)

// ExtractFacts reads a conversation and keeps the facts it holds on x.Branch (empty
// means DefaultBranch), in one atomic batch: the memory layer's "add" of an agent's
// conversation.
//
// With Config.Model the model reads the turns beside the branch's live facts that
// keyword search relates to them, and for each fact chooses to add it, to update a
// fact memory holds (a new version; the old one stays in history and time travel),
// or to invalidate one the conversation proves wrong, with the reason. Added facts
// land verified by the model; every fact names the turns it came from; updates and
// invalidations carry the audit keys a CorrectFact writes. Without a model, the
// findings and decisions of the assistant's turns are added as unverified candidates
// (the heuristics the Claude Code hooks use). Deduplication applies to added facts.
//
// Errors: *ValidationError naming the field for bad input (neither or both of
// ConversationID and Messages, an unknown role, too many messages); ErrNotFound for an
// unknown conversation; ErrBranchNotFound; ErrBranchArchived; the model's error, or a
// *llm.MalformedOutputError for a reply that is not the JSON asked for or proposes a
// change to a fact it was not shown; ErrClosed; ctx's error. Nothing is written on
// error.
func (c *Client) ExtractFacts(ctx context.Context, x Extraction) (res ExtractionResult, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpExtract, Method: "ExtractFacts", Branch: branchOrMain(x.Branch), RecordID: x.ConversationID})
	defer func() { end(OperationEnd{Err: err, Records: len(res.Added) + len(res.Updated) + len(res.Invalidated)}) }()
	if err := c.use(ctx); err != nil {
		return ExtractionResult{}, err
	}
	return c.curator().ExtractFacts(ctx, x)
}
