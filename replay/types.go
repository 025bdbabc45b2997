package replay

import (
	"time"

	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/store"
)

// EventKind names what a timeline event records.
type EventKind string

// Timeline event kinds, in the order events of one instant are listed.
const (
	// EventTaskCreated: the task was created.
	EventTaskCreated EventKind = "task.created"
	// EventAgentJoined: an agent joined the task, directly or by accepting a handoff.
	EventAgentJoined EventKind = "agent.joined"
	// EventObjectiveUpdated: an objective changed status.
	EventObjectiveUpdated EventKind = "objective.updated"
	// EventConversation: a conversation was started.
	EventConversation EventKind = "conversation"
	// EventMessage: a message was added to a conversation.
	EventMessage EventKind = "message"
	// EventFact: a fact was written.
	EventFact EventKind = "fact"
	// EventObservation: an observation was written.
	EventObservation EventKind = "observation"
	// EventRelation: a relation was written.
	EventRelation EventKind = "relation"
	// EventVerification: a fact or conversation was judged; Record is the judged
	// version.
	EventVerification EventKind = "verification"
	// EventCheckpoint: an agent saved a checkpoint.
	EventCheckpoint EventKind = "checkpoint.created"
	// EventCheckpointResumed: an agent resumed from a checkpoint.
	EventCheckpointResumed EventKind = "checkpoint.resumed"
	// EventHandoffCreated: a handoff was offered.
	EventHandoffCreated EventKind = "handoff.created"
	// EventHandoffStatus: a handoff changed status (accepted, rejected...).
	EventHandoffStatus EventKind = "handoff.status"
	// EventAgentLeft: an agent left the task.
	EventAgentLeft EventKind = "agent.left"
	// EventMerge: a merge into or out of the task's branch or a member's branch.
	EventMerge EventKind = "merge"
	// EventTaskCompleted: the task was completed.
	EventTaskCompleted EventKind = "task.completed"
)

// EventKinds lists every EventKind in the order events of one instant are listed.
var EventKinds = []EventKind{
	EventTaskCreated, EventAgentJoined, EventObjectiveUpdated, EventConversation,
	EventMessage, EventFact, EventObservation, EventRelation, EventVerification,
	EventCheckpoint, EventCheckpointResumed, EventHandoffCreated, EventHandoffStatus,
	EventAgentLeft, EventMerge, EventTaskCompleted,
}

// Event is one step of a task's run. Exactly the payload fields that apply to its
// Kind are set: Record for facts, observations, relations, conversations, messages
// and verifications; Audit for the steps the task's audit trail records (with
// Member, Handoff or Checkpoint when the step concerns one); Merge for merges.
type Event struct {
	// Kind says what happened.
	Kind EventKind
	// At is the commit instant of the step: a time-travel read of Branch at At
	// shows the step's write, and nothing committed after it. Steps kept as task
	// documents (joins, handoffs, checkpoints, completion) have the instant their
	// document was stored; reading memory at it shows what the agents saw then.
	At time.Time
	// Time is the time the step's record carries: a record's CreatedAt, a
	// verification's Verify.At, a merge's or an audit event's time. It is taken
	// before the step commits, so it may be a little before At.
	Time time.Time
	// Branch is where the step was written: a record's branch, a merge's target,
	// the task's branch for the other steps.
	Branch string
	// Agent is who took the step: a record's AgentID or the agent whose branch holds
	// it, an audit event's actor, a merge's MergedBy. Empty when unknown.
	Agent string
	// ID is the id of the step's subject: the record, the handoff, the checkpoint,
	// the merge, or the audit event.
	ID string
	// Seq is a message's sequence number; 0 for other kinds.
	Seq int
	// Summary is one line describing the step.
	Summary string

	// Record is the record as the replay read it (at its point): a store.Fact,
	// Observation, Relation, Conversation or Message. For EventVerification, the
	// judged version.
	Record store.Record
	// Audit is the audit event the step comes from; nil for records, merges and
	// joins that left no audit event (an accepted handoff makes its receiver a
	// member without one).
	Audit *handoff.Event
	// Member is the membership of the agent that joined or left.
	Member *handoff.Member
	// Handoff is the handoff record (as it stands now) of handoff steps.
	Handoff *handoff.Handoff
	// Checkpoint is the checkpoint of checkpoint steps.
	Checkpoint *handoff.Checkpoint
	// Merge is the merge record of EventMerge.
	Merge *store.MergeRecord
}

// Options tune TaskReplay. The zero value is the default of the design: every
// conversation with its messages, no observations, verified and unverified records
// alike, at the head.
type Options struct {
	// ExcludeConversations leaves conversations and their messages out of the
	// timeline. Default false: they are in it.
	ExcludeConversations bool
	// IncludeObservations puts observations in the timeline. Default false: they are
	// left out (contributions count them all the same).
	IncludeObservations bool
	// VerifiedOnly keeps only verified facts and verified conversations (with their
	// messages) among the record steps of the timeline; other record kinds and the
	// task's own steps are unaffected. Default false.
	VerifiedOnly bool
	// AsOf replays the task as it stood at a snapshot or an instant: only steps
	// committed at or before it, records as they were then, and the task, its
	// members and objectives rewound to it. A snapshot's own branch is read at the
	// snapshot, the others at its instant. The zero Point is the head.
	AsOf store.Point
}

// Contribution is what one agent did for a task.
type Contribution struct {
	// Agent is the agent's id; Role its role on the task ("" for an agent that
	// wrote records for the task without joining it).
	Agent string `json:"agent"`
	Role  string `json:"role"`
	// Branch is the agent's branch on the task; empty for an agent that never
	// joined.
	Branch string `json:"branch"`
	// Status is the agent's membership status at the replay's point.
	Status handoff.MemberStatus `json:"status"`
	// Summary says in one line what the agent did: its counts and first facts, and
	// the summary it left with.
	Summary string `json:"summary"`
	// Facts are the ids of the facts the agent wrote, oldest first; FactsVerified
	// counts those verified.
	Facts         []string `json:"facts"`
	FactsVerified int      `json:"facts_verified"`
	// Observations counts the agent's observations; Errors those of type error.
	Observations int `json:"observations"`
	Errors       int `json:"errors"`
	// Conversations are the ids of the agent's conversations, oldest first;
	// Messages counts the messages the agent added.
	Conversations []string `json:"conversations"`
	Messages      int      `json:"messages"`
	// HandoffsGiven and HandoffsReceived are the ids of the handoffs the agent
	// offered and accepted, oldest first.
	HandoffsGiven    []string `json:"handoffs_given"`
	HandoffsReceived []string `json:"handoffs_received"`
	// JoinedAt and LeftAt bound the agent's membership; LeftAt is zero while active.
	JoinedAt time.Time `json:"joined_at,omitzero"`
	LeftAt   time.Time `json:"left_at,omitzero"`
}

// Outcome is how a task ended, or stands at the replay's point.
type Outcome struct {
	// Status is the task's status: active or completed.
	Status handoff.TaskStatus `json:"status"`
	// ResultSummary, CompletedBy and CompletedAt are set once the task is completed.
	ResultSummary string    `json:"result_summary"`
	CompletedBy   string    `json:"completed_by"`
	CompletedAt   time.Time `json:"completed_at,omitzero"`
	// MergeID names the merge that promoted the task's knowledge; MergedInto is its
	// target. Empty when nothing was merged.
	MergeID    string `json:"merge_id"`
	MergedInto string `json:"merged_into"`
	// FactsMerged counts the facts that merge wrote to MergedInto; RecordsMerged
	// counts every record it wrote.
	FactsMerged   int `json:"facts_merged"`
	RecordsMerged int `json:"records_merged"`
	// Facts counts the task's facts; FactsVerified those verified.
	Facts         int `json:"facts"`
	FactsVerified int `json:"facts_verified"`
	// VerificationScore is the mean judged score of the facts that were judged, 0
	// when none was.
	VerificationScore float64 `json:"verification_score"`
	// Duration runs from the task's creation to its completion, or to its last step
	// while it is active.
	Duration time.Duration `json:"duration"`
}

// TaskReplay is a task's run rebuilt from memory: what happened in which order, who
// did what, what was kept and how it ended.
type TaskReplay struct {
	// Task is the task, rewound to the replay's point.
	Task handoff.Task
	// AsOf is the instant the replay was built at; zero for the head.
	AsOf time.Time
	// Timeline lists every step, ordered by At, then by the order of EventKinds,
	// then by Seq and ID.
	Timeline []Event
	// Agents are the agents' contributions: the members in the order they joined,
	// then agents that wrote records without joining, by id.
	Agents []Contribution
	// KeyFacts are the verified facts, oldest first.
	KeyFacts []store.Fact
	// KeyConversations are the verified conversations, oldest first.
	KeyConversations []store.Conversation
	// Decisions are the decision points of the run's conversations (assistant
	// messages that state an intent, recover from a tool error or precede a tool call
	// that worked; see curation.FindDecisions), conversation by conversation in the
	// order they began, each by Seq. With VerifiedOnly, those of verified
	// conversations only; none with ExcludeConversations.
	Decisions []Decision
	// Outcome is how the task ended.
	Outcome Outcome
}
