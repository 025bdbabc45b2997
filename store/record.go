package store

import (
	"slices"
	"time"
)

// Kind names a kind of branched record.
type Kind string

// The branched record kinds. Every branch sees its own copy of each, copy-on-write
// from its parent at fork time.
const (
	KindFact         Kind = "fact"
	KindObservation  Kind = "observation"
	KindRelation     Kind = "relation"
	KindConversation Kind = "conversation"
	KindMessage      Kind = "message"
)

// Kinds lists every branched record kind in a stable order.
var Kinds = []Kind{KindFact, KindObservation, KindRelation, KindConversation, KindMessage}

// Valid reports whether k is one of the branched record kinds, KindAlias included.
func (k Kind) Valid() bool {
	switch k {
	case KindFact, KindObservation, KindRelation, KindConversation, KindMessage, KindAlias:
		return true
	}
	return false
}

// FactStatus is the life-cycle state of a fact.
type FactStatus string

// Fact statuses.
const (
	FactActive      FactStatus = "active"      // current knowledge
	FactSuperseded  FactStatus = "superseded"  // replaced by a newer fact naming it as parent
	FactInvalidated FactStatus = "invalidated" // judged wrong
	FactVerified    FactStatus = "verified"    // judged right
	FactPromoted    FactStatus = "promoted"    // verified and promoted to a shared branch
)

// Valid reports whether s is a known fact status.
func (s FactStatus) Valid() bool {
	switch s {
	case FactActive, FactSuperseded, FactInvalidated, FactVerified, FactPromoted:
		return true
	}
	return false
}

// Live reports whether a fact with this status is current knowledge: active, verified
// or promoted. Superseded and invalidated facts are history.
func (s FactStatus) Live() bool {
	return s == FactActive || s == FactVerified || s == FactPromoted
}

// VerificationStatus is the outcome of judging a fact or a conversation.
type VerificationStatus string

// Verification statuses. The zero value means unverified.
const (
	Unverified  VerificationStatus = ""
	Verified    VerificationStatus = "verified"
	Invalidated VerificationStatus = "invalidated"
	Pending     VerificationStatus = "pending"
)

// Verification records who judged a record, when, and how well it scored.
type Verification struct {
	Status VerificationStatus `json:"status,omitempty"`
	Score  float64            `json:"score,omitempty"` // the overall score, 0 to 1
	By     string             `json:"by,omitempty"`
	At     time.Time          `json:"at,omitzero"`
	Notes  string             `json:"notes,omitempty"`
	// Scores are the per-dimension scores the overall Score was computed from. The zero
	// value means none were recorded.
	Scores Scores `json:"scores,omitzero"`
}

// Scores are a judge's per-dimension scores, each 0 to 1. A fact is judged on
// Accuracy, Relevance and Specificity; a conversation on Tools, Reasoning, Outcome and
// Errors. Dimensions that do not apply are 0. Scores is a comparable value, so a
// Verification can be compared with ==.
type Scores struct {
	Accuracy    float64 `json:"accuracy,omitempty"`    // a fact: is it correct
	Relevance   float64 `json:"relevance,omitempty"`   // a fact: does it matter to the work
	Specificity float64 `json:"specificity,omitempty"` // a fact: is it concrete enough to act on
	Tools       float64 `json:"tools,omitempty"`       // a conversation: were the right tools used
	Reasoning   float64 `json:"reasoning,omitempty"`   // a conversation: were the decisions sound
	Outcome     float64 `json:"outcome,omitempty"`     // a conversation: did the outcome meet the goal
	Errors      float64 `json:"errors,omitempty"`      // a conversation: 1 is free of errors and detours
}

// ObservationType classifies an observation.
type ObservationType string

// Observation types.
const (
	ObsToolUse   ObservationType = "tool_use"
	ObsDiscovery ObservationType = "discovery"
	ObsDecision  ObservationType = "decision"
	ObsError     ObservationType = "error"
	ObsInsight   ObservationType = "insight"
)

// Valid reports whether t is a known observation type.
func (t ObservationType) Valid() bool {
	switch t {
	case ObsToolUse, ObsDiscovery, ObsDecision, ObsError, ObsInsight:
		return true
	}
	return false
}

// Role is the author of a message.
type Role string

// Message roles.
const (
	RoleUser       Role = "user"
	RoleAssistant  Role = "assistant"
	RoleToolCall   Role = "tool_call"
	RoleToolResult Role = "tool_result"
	RoleSystem     Role = "system"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleToolCall, RoleToolResult, RoleSystem:
		return true
	}
	return false
}

// Record is one branched record: a Fact, Observation, Relation, Conversation or Message
// (values, not pointers). The set is closed.
type Record interface {
	// RecordKind is the kind of the record.
	RecordKind() Kind
	// RecordID is the record's id, unique per kind within a branch.
	RecordID() string
	// RecordBranch is the branch the record was read from or is written to.
	RecordBranch() string
	// RecordTime is the record's creation time.
	RecordTime() time.Time
	isRecord()
}

// Fact is a unit of knowledge in natural language.
type Fact struct {
	ID         string            `json:"id"`
	Branch     string            `json:"branch,omitempty"`
	Text       string            `json:"text"`
	Embedding  []float32         `json:"embedding,omitempty"`
	Category   string            `json:"category,omitempty"`
	Confidence float64           `json:"confidence"`
	Status     FactStatus        `json:"status"`
	SourceType string            `json:"source_type,omitempty"`
	SourceID   string            `json:"source_id,omitempty"`
	ParentID   string            `json:"parent_id,omitempty"` // the fact this one supersedes
	SessionID  string            `json:"session_id,omitempty"`
	TaskID     string            `json:"task_id,omitempty"`
	AgentID    string            `json:"agent_id,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	Verify     Verification      `json:"verification,omitzero"`
	CreatedAt  time.Time         `json:"created_at"`
	UpdatedAt  time.Time         `json:"updated_at"`
	// ExpiresAt is when the fact stops being true ("the freeze lasts until Friday"):
	// from that instant searches and lists leave it out unless they ask for expired
	// facts, while gets, history, time travel to an earlier instant, diffs and merges
	// still show it. Zero, the default, never expires. It must be after CreatedAt.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// TTL, at write, sets ExpiresAt to CreatedAt (the write's time by default) plus
	// TTL; the stored fact keeps ExpiresAt, not TTL. Zero sets nothing; it must not be
	// negative, nor given with ExpiresAt.
	TTL time.Duration `json:"-"`
}

// Expired reports whether the fact has expired at t: it has an ExpiresAt, and t is
// not before it.
func (f Fact) Expired(t time.Time) bool {
	return !f.ExpiresAt.IsZero() && !t.Before(f.ExpiresAt)
}

// Observation is something an agent saw or did: a tool call, a discovery, an error.
type Observation struct {
	ID        string            `json:"id"`
	Branch    string            `json:"branch,omitempty"`
	SessionID string            `json:"session_id,omitempty"`
	TaskID    string            `json:"task_id,omitempty"`
	AgentID   string            `json:"agent_id,omitempty"`
	Type      ObservationType   `json:"type"`
	Tool      string            `json:"tool,omitempty"`
	Summary   string            `json:"summary"`
	Embedding []float32         `json:"embedding,omitempty"`
	RawInput  string            `json:"raw_input,omitempty"`
	RawOutput string            `json:"raw_output,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
}

// Relation is a typed, directed edge between two entities, valid over a time range.
type Relation struct {
	ID         string            `json:"id"`
	Branch     string            `json:"branch,omitempty"`
	Source     string            `json:"source"`
	Target     string            `json:"target"`
	Type       string            `json:"type"`
	Properties map[string]string `json:"properties,omitempty"`
	Confidence float64           `json:"confidence"`
	ValidFrom  time.Time         `json:"valid_from"`
	ValidTo    time.Time         `json:"valid_to,omitzero"` // zero: still valid
	SessionID  string            `json:"session_id,omitempty"`
	TaskID     string            `json:"task_id,omitempty"`
	AgentID    string            `json:"agent_id,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
}

// ValidAt reports whether the relation holds at t: ValidFrom <= t and (ValidTo is zero
// or t < ValidTo).
func (r Relation) ValidAt(t time.Time) bool {
	if t.Before(r.ValidFrom) {
		return false
	}
	return r.ValidTo.IsZero() || t.Before(r.ValidTo)
}

// Conversation groups the messages of one exchange.
type Conversation struct {
	ID        string            `json:"id"`
	Branch    string            `json:"branch,omitempty"`
	SessionID string            `json:"session_id,omitempty"`
	AgentID   string            `json:"agent_id,omitempty"`
	TaskID    string            `json:"task_id,omitempty"`
	Title     string            `json:"title,omitempty"`
	Verify    Verification      `json:"verification,omitzero"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
}

// Message is one turn of a conversation, ordered by Seq.
type Message struct {
	ID             string `json:"id"`
	Branch         string `json:"branch,omitempty"`
	ConversationID string `json:"conversation_id"`
	Seq            int    `json:"seq"`
	Role           Role   `json:"role"`
	Content        string `json:"content"`
	// Embedding is the vector of Content that vector search compares; the Client
	// fills it at write time, like a fact's.
	Embedding []float32 `json:"embedding,omitempty"`
	Tool      string    `json:"tool,omitempty"`
	// PickedTo lists the branches the message was cherry-picked to, each once. It is
	// kept in step with Picks: stores add a Pick for a branch written here alone, and
	// the branch of every Pick here.
	PickedTo []string `json:"picked_to,omitempty"`
	// Picks records each cherry-pick of the message: the branch, the conversation
	// that received it and when, oldest first.
	Picks     []Pick            `json:"picks,omitempty"`
	SessionID string            `json:"session_id,omitempty"`
	TaskID    string            `json:"task_id,omitempty"`
	AgentID   string            `json:"agent_id,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
}

// Pick is one cherry-pick of a message: where it went and when. A pick written
// before picks were recorded this way, or through PickedTo alone, has only a Branch.
type Pick struct {
	// Branch is the branch the message was picked to.
	Branch string `json:"branch_name"`
	// ConversationID is the conversation on Branch that received the message (its
	// copy); empty when unknown.
	ConversationID string `json:"conversation_id,omitempty"`
	// At is when it was picked; zero when unknown.
	At time.Time `json:"picked_at,omitzero"`
}

// SyncPicks returns m with PickedTo and Picks in step: Picks gains a Pick (with only
// its Branch) for every branch of PickedTo that no Pick names, and PickedTo becomes
// the branches of Picks, each once, in the order of Picks. Stores apply it to every
// message they write or read.
func SyncPicks(m Message) Message {
	if len(m.PickedTo) == 0 && len(m.Picks) == 0 {
		return m
	}
	picks := m.Picks
	for _, b := range m.PickedTo {
		if !slices.ContainsFunc(picks, func(p Pick) bool { return p.Branch == b }) {
			if len(picks) == len(m.Picks) {
				picks = slices.Clone(picks)
			}
			picks = append(picks, Pick{Branch: b})
		}
	}
	branches := make([]string, 0, len(picks))
	for _, p := range picks {
		if !slices.Contains(branches, p.Branch) {
			branches = append(branches, p.Branch)
		}
	}
	if !slices.Equal(branches, m.PickedTo) {
		m.PickedTo = branches
	}
	m.Picks = picks
	return m
}

// PickedAt reports whether the message was picked into conversation conv on branch.
func (m Message) PickedAt(branch, conv string) bool {
	return slices.ContainsFunc(m.Picks, func(p Pick) bool { return p.Branch == branch && p.ConversationID == conv })
}

func (Fact) isRecord()         {}
func (Observation) isRecord()  {}
func (Relation) isRecord()     {}
func (Conversation) isRecord() {}
func (Message) isRecord()      {}

// RecordKind implements Record.
func (Fact) RecordKind() Kind { return KindFact }

// RecordKind implements Record.
func (Observation) RecordKind() Kind { return KindObservation }

// RecordKind implements Record.
func (Relation) RecordKind() Kind { return KindRelation }

// RecordKind implements Record.
func (Conversation) RecordKind() Kind { return KindConversation }

// RecordKind implements Record.
func (Message) RecordKind() Kind { return KindMessage }

// RecordID implements Record.
func (f Fact) RecordID() string { return f.ID }

// RecordID implements Record.
func (o Observation) RecordID() string { return o.ID }

// RecordID implements Record.
func (r Relation) RecordID() string { return r.ID }

// RecordID implements Record.
func (c Conversation) RecordID() string { return c.ID }

// RecordID implements Record.
func (m Message) RecordID() string { return m.ID }

// RecordBranch implements Record.
func (f Fact) RecordBranch() string { return f.Branch }

// RecordBranch implements Record.
func (o Observation) RecordBranch() string { return o.Branch }

// RecordBranch implements Record.
func (r Relation) RecordBranch() string { return r.Branch }

// RecordBranch implements Record.
func (c Conversation) RecordBranch() string { return c.Branch }

// RecordBranch implements Record.
func (m Message) RecordBranch() string { return m.Branch }

// RecordTime implements Record.
func (f Fact) RecordTime() time.Time { return f.CreatedAt }

// RecordTime implements Record.
func (o Observation) RecordTime() time.Time { return o.CreatedAt }

// RecordTime implements Record.
func (r Relation) RecordTime() time.Time { return r.CreatedAt }

// RecordTime implements Record.
func (c Conversation) RecordTime() time.Time { return c.CreatedAt }

// RecordTime implements Record.
func (m Message) RecordTime() time.Time { return m.CreatedAt }

// Ref names one record of one kind.
type Ref struct {
	Kind Kind   `json:"kind"`
	ID   string `json:"id"`
}

// RefOf returns the Ref of r.
func RefOf(r Record) Ref { return Ref{Kind: r.RecordKind(), ID: r.RecordID()} }

// String returns "kind/id".
func (r Ref) String() string { return string(r.Kind) + "/" + r.ID }

// FactRef returns the Ref of the fact with the given id.
func FactRef(id string) Ref { return Ref{Kind: KindFact, ID: id} }

// ObservationRef returns the Ref of the observation with the given id.
func ObservationRef(id string) Ref { return Ref{Kind: KindObservation, ID: id} }

// RelationRef returns the Ref of the relation with the given id.
func RelationRef(id string) Ref { return Ref{Kind: KindRelation, ID: id} }

// ConversationRef returns the Ref of the conversation with the given id.
func ConversationRef(id string) Ref { return Ref{Kind: KindConversation, ID: id} }

// MessageRef returns the Ref of the message with the given id.
func MessageRef(id string) Ref { return Ref{Kind: KindMessage, ID: id} }

// MetaPickedFromMessage is the metadata key a cherry-picked copy of a message (or a
// fact drawn from one) carries: the id of the message it came from.
const MetaPickedFromMessage = "picked_from_message"

// IsVerified reports whether a fact is live and verified: its Status is verified or
// promoted, or its Verify.Status is verified, and it was not invalidated.
func (f Fact) IsVerified() bool {
	if !f.Status.Live() || f.Verify.Status == Invalidated {
		return false
	}
	return f.Status == FactVerified || f.Status == FactPromoted || f.Verify.Status == Verified
}

// Picked reports whether a message was cherry-picked, to somewhere (PickedTo) or
// from somewhere (MetaPickedFromMessage).
func (m Message) Picked() bool {
	return len(m.PickedTo) > 0 || m.Metadata[MetaPickedFromMessage] != ""
}
