package day1

import "github.com/day1ai/day1/store"

// The data model. These are aliases of the store package's types, so values move
// between the Client, the engine packages and any store.Store without conversion.
type (
	// Record is one branched record: a Fact, Observation, Relation, Conversation or
	// Message value.
	Record = store.Record
	// Fact is a unit of knowledge in natural language.
	Fact = store.Fact
	// Observation is something an agent saw or did: a tool call, a discovery, an error.
	Observation = store.Observation
	// Relation is a typed, directed edge between two entities, valid over a time range.
	Relation = store.Relation
	// Conversation groups the messages of one exchange.
	Conversation = store.Conversation
	// Message is one turn of a conversation, ordered by Seq.
	Message = store.Message
	// Alias is a caller's fact id that names another fact (Written.AliasOf). Diffs
	// list alias changes and merges carry them; GetFact resolves them.
	Alias = store.Alias
	// Session is one run of an agent. Sessions are global: not branched.
	Session = store.Session
	// SessionStatus is the state of a session.
	SessionStatus = store.SessionStatus
	// SessionFilter narrows Client.Sessions.
	SessionFilter = store.SessionFilter
	// Branch is a named, isolated line of memory.
	Branch = store.Branch
	// BranchStatus is the life-cycle state of a branch.
	BranchStatus = store.BranchStatus
	// BranchFilter narrows Client.Branches.
	BranchFilter = store.BranchFilter
	// Snapshot names a point in time of a branch.
	Snapshot = store.Snapshot
	// MergeRecord is the history entry of one merge.
	MergeRecord = store.MergeRecord
	// MergeItem is one record a merge took or left.
	MergeItem = store.MergeItem
	// MergeAction says what a merge did with one record.
	MergeAction = store.MergeAction
	// Resolution records how one merge conflict was decided.
	Resolution = store.Resolution
	// MergeFilter narrows Client.Merges.
	MergeFilter = store.MergeFilter
	// Diff lists what changed on each side of two branches since their merge base.
	Diff = store.Diff
	// Change is one record that changed on one side of a diff.
	Change = store.Change
	// Op is what one side of a diff did to a record: added, updated or deleted.
	Op = store.Op
	// Conflict pairs a source change with a target change that cannot both be kept.
	Conflict = store.Conflict
	// ConflictReason says why two changes conflict.
	ConflictReason = store.ConflictReason
	// Hit is one search result, with its scores and the retrievers that found it;
	// Hit.Fact and Hit.Observation return its record typed.
	Hit = store.Hit
	// Retriever names the retriever that found a hit.
	Retriever = store.Retriever
	// Filter narrows reads. Zero fields match everything.
	Filter = store.Filter
	// Order is the order of List results.
	Order = store.Order
	// Ref names one record of one kind.
	Ref = store.Ref
	// Kind names a kind of branched record.
	Kind = store.Kind
	// Outcome says what a write did.
	Outcome = store.Outcome
	// Strategy names a merge strategy.
	Strategy = store.Strategy
	// ConflictPolicy says what Native and Squash merges do with a conflict.
	ConflictPolicy = store.ConflictPolicy
	// SearchMode picks the retrievers of a search.
	SearchMode = store.SearchMode
	// Fusion says how a hybrid search combines its rankings.
	Fusion = store.Fusion
	// Role is the author of a message.
	Role = store.Role
	// ObservationType classifies an observation.
	ObservationType = store.ObservationType
	// FactStatus is the life-cycle state of a fact.
	FactStatus = store.FactStatus
	// Verification records who judged a record, when, and how well it scored.
	Verification = store.Verification
	// VerificationStatus is the outcome of judging a fact or a conversation.
	VerificationStatus = store.VerificationStatus
)

// DefaultBranch is the branch every store starts with, and the branch a write or read
// that names none goes to.
const DefaultBranch = store.DefaultBranch

// Record kinds.
const (
	KindFact         = store.KindFact
	KindObservation  = store.KindObservation
	KindRelation     = store.KindRelation
	KindConversation = store.KindConversation
	KindMessage      = store.KindMessage
	// KindAlias is the kind of an Alias, in diffs and merge items.
	KindAlias = store.KindAlias
)

// Search modes. The zero SearchMode of a SearchQuery means Hybrid.
const (
	// Hybrid runs keyword and vector search and fuses the two rankings.
	Hybrid = store.Hybrid
	// Keyword ranks by BM25 over the record's text.
	Keyword = store.Keyword
	// Vector ranks by cosine similarity to the query embedding.
	Vector = store.Vector
)

// Fusion methods of a hybrid search. The zero Fusion means the rule the embedder earns
// (see Client.Search): Fill for a lexical embedder, RRF otherwise.
const (
	// RRF is reciprocal-rank fusion: score = sum over retrievers of 1/(RRFK + rank).
	RRF = store.RRF
	// Weighted is Alpha*vector + (1-Alpha)*keyword over min-max normalised scores.
	Weighted = store.Weighted
	// Fill ranks keyword hits first, in keyword order, then the vector retriever's
	// other hits; the default for a lexical embedder (see Client.Search).
	Fill = store.Fill
)

// Retrievers named in Hit.FoundBy.
const (
	RetrieverKeyword = store.RetrieverKeyword
	RetrieverVector  = store.RetrieverVector
)

// Merge strategies. The zero Strategy of a MergeRequest means Native.
const (
	// Native adopts every change of the source; conflicts follow the ConflictPolicy.
	Native = store.Native
	// CherryPick copies the records named in MergeRequest.Pick.
	CherryPick = store.CherryPick
	// Squash adopts the net effect of the source, superseded chains collapsed.
	Squash = store.Squash
	// Auto adopts non-conflicting changes and asks the resolver about each conflict.
	Auto = store.Auto
)

// Conflict policies of Native and Squash merges. The zero policy means ConflictFail.
const (
	// ConflictFail refuses the whole merge with a *MergeConflictError.
	ConflictFail = store.ConflictFail
	// ConflictSkip keeps the target's version.
	ConflictSkip = store.ConflictSkip
	// ConflictAccept takes the source's version.
	ConflictAccept = store.ConflictAccept
)

// Conflict reasons.
const (
	// BothChanged: both sides changed the same record differently.
	BothChanged = store.BothChanged
	// BothSuperseded: each side added a different fact superseding the same parent.
	BothSuperseded = store.BothSuperseded
	// Contradictory: each side added a fact, under different ids, and the two
	// contradict each other (a different value, or a negation), by the contradiction
	// heuristics; not reported when Config.Contradictions is off.
	Contradictory = store.Contradictory
	// Duplicate: each side added a fact, under different ids and with other texts,
	// that say the same thing: their embeddings' cosine reaches
	// Config.DedupeThreshold, as a write on one branch would have found them.
	Duplicate = store.Duplicate
)

// Merge actions recorded in a MergeRecord.
const (
	ActionAdopt      = store.ActionAdopt
	ActionDelete     = store.ActionDelete
	ActionKeepTarget = store.ActionKeepTarget
	ActionKeepBoth   = store.ActionKeepBoth
	ActionMerged     = store.ActionMerged
	ActionSupersede  = store.ActionSupersede
	ActionSkip       = store.ActionSkip
)

// Write outcomes reported in Written.Outcome.
const (
	// Created: a new record was written.
	Created = store.Created
	// Deduplicated: nothing was written; the same record, or the same fact text, was
	// there already.
	Deduplicated = store.Deduplicated
	// Updated: a record with this id existed and was replaced by a new version.
	Updated = store.Updated
	// Superseded: a new fact replaced a near-duplicate, which is now superseded.
	Superseded = store.Superseded
)

// Diff operations.
const (
	OpAdded   = store.OpAdded
	OpUpdated = store.OpUpdated
	OpDeleted = store.OpDeleted
)

// Message roles.
const (
	RoleUser       = store.RoleUser
	RoleAssistant  = store.RoleAssistant
	RoleToolCall   = store.RoleToolCall
	RoleToolResult = store.RoleToolResult
	RoleSystem     = store.RoleSystem
)

// Observation types.
const (
	ObsToolUse   = store.ObsToolUse
	ObsDiscovery = store.ObsDiscovery
	ObsDecision  = store.ObsDecision
	ObsError     = store.ObsError
	ObsInsight   = store.ObsInsight
)

// Fact statuses. A zero Fact.Status is written as FactActive.
const (
	FactActive      = store.FactActive
	FactSuperseded  = store.FactSuperseded
	FactInvalidated = store.FactInvalidated
	FactVerified    = store.FactVerified
	FactPromoted    = store.FactPromoted
)

// Verification statuses. The zero value means unverified.
const (
	Unverified  = store.Unverified
	Verified    = store.Verified
	Invalidated = store.Invalidated
	Pending     = store.Pending
)

// Branch statuses.
const (
	BranchActive   = store.BranchActive
	BranchMerged   = store.BranchMerged
	BranchArchived = store.BranchArchived
)

// Session statuses.
const (
	SessionActive    = store.SessionActive
	SessionCompleted = store.SessionCompleted
	SessionAbandoned = store.SessionAbandoned
)

// List orders. The zero Order means OrderCreated.
const (
	// OrderCreated sorts by creation time, then (for messages) Seq, then id.
	OrderCreated = store.OrderCreated
	// OrderID sorts by id.
	OrderID = store.OrderID
	// OrderSeq sorts messages by conversation, then Seq.
	OrderSeq = store.OrderSeq
	// OrderUpdated sorts by the time each record's current version was written (a
	// fact's or conversation's UpdatedAt, another kind's CreatedAt), then Seq, then id.
	OrderUpdated = store.OrderUpdated
)

// RefOf returns the Ref of a record, for Delete and cherry-pick merges.
func RefOf(r Record) Ref { return store.RefOf(r) }

// FactRef returns the Ref of the fact with the given id, for Delete, cherry-pick
// merges and verification.
func FactRef(id string) Ref { return store.FactRef(id) }

// ObservationRef returns the Ref of the observation with the given id.
func ObservationRef(id string) Ref { return store.ObservationRef(id) }

// RelationRef returns the Ref of the relation with the given id.
func RelationRef(id string) Ref { return store.RelationRef(id) }

// ConversationRef returns the Ref of the conversation with the given id.
func ConversationRef(id string) Ref { return store.ConversationRef(id) }

// MessageRef returns the Ref of the message with the given id.
func MessageRef(id string) Ref { return store.MessageRef(id) }
