package day1

import (
	"context"

	"github.com/day1ai/day1/replay"
)

// Replay types. They are the replay package's.
type (
	// TaskReplay is a task's run rebuilt from memory: the task, an ordered timeline,
	// each agent's contribution, the verified facts and conversations, the outcome.
	TaskReplay = replay.TaskReplay
	// ReplayOptions tune TaskReplay. The zero value includes conversations, leaves
	// out observations, keeps unverified records and reads at the head.
	ReplayOptions = replay.Options
	// ReplayEvent is one step of a task's run, with the commit instant at which
	// TimeTravel shows memory as that step left it.
	ReplayEvent = replay.Event
	// ReplayEventKind names what a ReplayEvent records.
	ReplayEventKind = replay.EventKind
	// Contribution is what one agent did for a task.
	Contribution = replay.Contribution
	// TaskOutcome is how a task ended: status, result, what was merged, scores.
	TaskOutcome = replay.Outcome
	// RunComparison is a semantic diff of two runs of a task.
	RunComparison = replay.RunComparison
	// RunSummary is one run's side of a RunComparison.
	RunSummary = replay.RunSummary
	// AgentPair sets two runs' contributions of one agent or role side by side.
	AgentPair = replay.AgentPair
	// FactMatch is a fact both runs of a comparison produced.
	FactMatch = replay.FactMatch
	// RunDecision is a decision point of a run's conversations.
	RunDecision = replay.Decision
	// DecisionMatch is a decision both runs of a comparison took.
	DecisionMatch = replay.DecisionMatch
	// ForkRequest asks ForkConversation to branch memory at one message of a
	// conversation.
	ForkRequest = replay.ForkRequest
	// ConversationFork is what ForkConversation made: the branch, the conversation
	// and the messages kept and removed.
	ConversationFork = replay.Fork
	// ConversationOn names a conversation on a branch, for DiffConversations.
	ConversationOn = replay.ConversationRef
	// ConversationDiff aligns two conversations and says where they diverge.
	ConversationDiff = replay.ConversationDiff
	// MessagePair is one aligned position of a ConversationDiff.
	MessagePair = replay.MessagePair
)

// Timeline event kinds of a TaskReplay, in the order events of one instant are
// listed. They are the replay package's.
const (
	ReplayTaskCreated       = replay.EventTaskCreated
	ReplayAgentJoined       = replay.EventAgentJoined
	ReplayObjectiveUpdated  = replay.EventObjectiveUpdated
	ReplayConversation      = replay.EventConversation
	ReplayMessage           = replay.EventMessage
	ReplayFact              = replay.EventFact
	ReplayObservation       = replay.EventObservation
	ReplayRelation          = replay.EventRelation
	ReplayVerification      = replay.EventVerification
	ReplayCheckpoint        = replay.EventCheckpoint
	ReplayCheckpointResumed = replay.EventCheckpointResumed
	ReplayHandoffCreated    = replay.EventHandoffCreated
	ReplayHandoffStatus     = replay.EventHandoffStatus
	ReplayAgentLeft         = replay.EventAgentLeft
	ReplayMerge             = replay.EventMerge
	ReplayTaskCompleted     = replay.EventTaskCompleted
)

// DefaultReplaySimilarity is the cosine similarity at or above which CompareTaskRuns
// matches two texts of different runs: 0.85.
const DefaultReplaySimilarity = replay.DefaultSimilarity

// How a RunComparison matched texts (RunComparison.Method).
const (
	// MatchByEmbedding: by embedding similarity, or by equal normalised text.
	MatchByEmbedding = replay.MatchEmbedding
	// MatchByText: by equal normalised text only.
	MatchByText = replay.MatchText
)

// replayer returns the replay engine on the Client's store and embedder.
func (c *Client) replayer() *replay.Engine {
	return &replay.Engine{
		Store:    c.st,
		Embedder: c.emb,
		NewID:    c.cfg.Test.NewID,
		Now:      c.cfg.Test.Now,
	}
}

// TaskReplay rebuilds the run of a task from memory: the task; a timeline of every
// step (agents joining and leaving, objective changes, facts, observations,
// conversations and messages, verifications, handoffs and their status changes,
// checkpoints, merges, completion), ordered by commit instant, then kind, then id;
// each agent's contribution; the verified facts and conversations; and the outcome.
// Each ReplayEvent's At opens the memory the step left: c.TimeTravel(AtTime(ev.At))
// read on ev.Branch shows the step's write and nothing committed after it.
//
// opts leave out conversations, add observations, keep verified knowledge only, or
// replay the task as it stood at a snapshot or an instant (opts.AsOf).
//
// Errors: *ValidationError for an empty task name or a bad opts.AsOf; ErrNotFound for
// an unknown task or snapshot; ErrTooOld when opts.AsOf is before the task; ErrClosed;
// ctx's error.
func (c *Client) TaskReplay(ctx context.Context, task string, opts ReplayOptions) (_ TaskReplay, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpReplay, Method: "TaskReplay", RecordID: task})
	defer func() { end(OperationEnd{Err: err}) }()
	if err := c.use(ctx); err != nil {
		return TaskReplay{}, err
	}
	if _, err := checkAt("ReplayOptions.AsOf", opts.AsOf); err != nil {
		return TaskReplay{}, err
	}
	return c.replayer().TaskReplay(ctx, task, opts)
}

// CompareTaskRuns compares two runs of a task, a and b (tasks' names): agent
// contributions side by side, decision points, the live facts only one run produced
// and those both did, verification scores, durations, handoffs and errors. Facts and
// decisions match when their texts are equal after normalisation or, with the
// Config's embedder, when their embeddings' cosine similarity is at least
// DefaultReplaySimilarity (0.85).
//
// Errors: *ValidationError naming "a" or "b" for an empty name; ErrNotFound for an
// unknown task; ErrClosed; ctx's error.
func (c *Client) CompareTaskRuns(ctx context.Context, a, b string) (RunComparison, error) {
	if err := c.use(ctx); err != nil {
		return RunComparison{}, err
	}
	return c.replayer().CompareTaskRuns(ctx, a, b)
}

// ForkConversation creates r.NewBranch from r.Branch (empty means DefaultBranch) and
// keeps on it the conversation's messages up to and including r.AtSeq, deleting the
// later ones there only, so that the conversation can be run again from that point
// while the original stays as it was.
//
// Errors: *ValidationError naming the field for bad input (AtSeq negative or past the
// last message, no NewBranch); ErrNotFound for an unknown conversation;
// ErrBranchNotFound; ErrBranchExists when NewBranch is taken; ErrClosed; ctx's error.
func (c *Client) ForkConversation(ctx context.Context, r ForkRequest) (ConversationFork, error) {
	if err := c.use(ctx); err != nil {
		return ConversationFork{}, err
	}
	return c.replayer().ForkConversation(ctx, r)
}

// DiffConversations aligns the messages of two conversations position by position in
// Seq order (an original and its fork, say), and reports the index where they
// diverge and the tool calls and results that differ.
//
// Errors: *ValidationError for an empty id; ErrNotFound for an unknown conversation
// or branch; ErrClosed; ctx's error.
func (c *Client) DiffConversations(ctx context.Context, a, b ConversationOn) (ConversationDiff, error) {
	if err := c.use(ctx); err != nil {
		return ConversationDiff{}, err
	}
	return c.replayer().DiffConversations(ctx, a, b)
}
