package store

import "time"

// DefaultBranch is the branch every store starts with.
const DefaultBranch = "main"

// BranchStatus is the life-cycle state of a branch.
type BranchStatus string

// Branch statuses.
const (
	BranchActive   BranchStatus = "active"
	BranchMerged   BranchStatus = "merged"
	BranchArchived BranchStatus = "archived"
)

// Valid reports whether s is a known branch status.
func (s BranchStatus) Valid() bool {
	return s == BranchActive || s == BranchMerged || s == BranchArchived
}

// Branch is a named, isolated line of memory. A branch sees its parent's records as they
// were at ForkedAt and nothing written to the parent afterwards.
type Branch struct {
	Name        string            `json:"name"`
	Parent      string            `json:"parent,omitempty"` // empty for the root branch
	ForkedAt    time.Time         `json:"forked_at"`        // the parent's point in time the branch started from
	FromSnap    string            `json:"from_snapshot,omitempty"`
	Status      BranchStatus      `json:"status"`
	Description string            `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
	MergedAt    time.Time         `json:"merged_at,omitzero"`
	MergedInto  string            `json:"merged_into,omitempty"`
	// Head is an opaque revision that changes whenever a record on the branch changes.
	// Merge plans carry it so a merge never applies over changes it has not seen.
	Head uint64 `json:"head"`
}

// BranchSpec describes a branch to create.
type BranchSpec struct {
	Name string
	// From is the parent branch. Empty means DefaultBranch, or the snapshot's branch when
	// At names a snapshot.
	From string
	// At is the parent's point in time to fork from; zero means its head.
	At          Point
	Description string
	Metadata    map[string]string
}

// Snapshot names a point in time of a branch.
type Snapshot struct {
	Name        string    `json:"name"`
	Branch      string    `json:"branch"`
	At          time.Time `json:"at"` // the instant the snapshot captures
	Description string    `json:"description,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// SessionStatus is the state of an agent session.
type SessionStatus string

// Session statuses.
const (
	SessionActive    SessionStatus = "active"
	SessionCompleted SessionStatus = "completed"
	SessionAbandoned SessionStatus = "abandoned"
)

// Valid reports whether s is a known session status.
func (s SessionStatus) Valid() bool {
	return s == SessionActive || s == SessionCompleted || s == SessionAbandoned
}

// Session is one run of an agent. Sessions are global: not branched.
type Session struct {
	ID            string            `json:"id"`
	Branch        string            `json:"branch"`
	ParentSession string            `json:"parent_session,omitempty"`
	AgentID       string            `json:"agent_id,omitempty"`
	TaskID        string            `json:"task_id,omitempty"`
	Project       string            `json:"project,omitempty"`
	Status        SessionStatus     `json:"status"`
	Summary       string            `json:"summary,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	StartedAt     time.Time         `json:"started_at"`
	EndedAt       time.Time         `json:"ended_at,omitzero"`
}

// Strategy names a merge strategy.
type Strategy string

// Merge strategies.
const (
	// Native adopts every change of the source; conflicts follow the ConflictPolicy,
	// like MatrixOne's DATA BRANCH MERGE.
	Native Strategy = "native"
	// CherryPick copies chosen records only.
	CherryPick Strategy = "cherry_pick"
	// Squash adopts the net effect of the source: facts created and superseded on the
	// source never reach the target, only the last fact of each chain does.
	Squash Strategy = "squash"
	// Auto adopts non-conflicting changes and asks a resolver about each conflict.
	Auto Strategy = "auto"
)

// Valid reports whether s is a known strategy.
func (s Strategy) Valid() bool {
	return s == Native || s == CherryPick || s == Squash || s == Auto
}

// ConflictPolicy says what Native and Squash merges do with a conflict.
type ConflictPolicy string

// Conflict policies.
const (
	// ConflictFail refuses the whole merge with a *MergeConflictError. The default.
	ConflictFail ConflictPolicy = "fail"
	// ConflictSkip keeps the target's version.
	ConflictSkip ConflictPolicy = "skip"
	// ConflictAccept takes the source's version.
	ConflictAccept ConflictPolicy = "accept"
)

// Valid reports whether p is a known policy; the empty policy means ConflictFail.
func (p ConflictPolicy) Valid() bool {
	return p == "" || p == ConflictFail || p == ConflictSkip || p == ConflictAccept
}

// MergeAction says what a merge did with one record.
type MergeAction string

// Merge actions.
const (
	ActionAdopt      MergeAction = "adopt"       // the source's version was written to the target
	ActionDelete     MergeAction = "delete"      // the record was deleted on the target
	ActionKeepTarget MergeAction = "keep_target" // the target's version was kept
	ActionKeepBoth   MergeAction = "keep_both"   // the source's version was added beside the target's
	ActionMerged     MergeAction = "merged"      // a new record combining both was written
	ActionSupersede  MergeAction = "supersede"   // the target's record was marked superseded
	ActionSkip       MergeAction = "skip"        // left out (squashed away, gated, not picked)
	// ActionDeduplicate: a new fact of the source whose text the target already holds
	// in a live fact of another id was not written; the reason names the target's fact,
	// as a direct write of the text would have been Deduplicated.
	ActionDeduplicate MergeAction = "deduplicate"
)

// MergeItem is one record a merge took or left.
type MergeItem struct {
	Ref    Ref         `json:"ref"`
	Action MergeAction `json:"action"`
	Reason string      `json:"reason,omitempty"`
}

// Resolution records how one conflict was decided.
type Resolution struct {
	Ref       Ref         `json:"ref"`
	Action    MergeAction `json:"action"`
	By        string      `json:"by"` // "policy", "resolver:<name>", a user
	Reason    string      `json:"reason,omitempty"`
	ResultRef Ref         `json:"result_ref,omitzero"` // the record written, if any
}

// MergeRecord is the history entry of one merge.
type MergeRecord struct {
	ID          string            `json:"id"`
	Source      string            `json:"source"`
	Target      string            `json:"target"`
	Strategy    Strategy          `json:"strategy"`
	Merged      []MergeItem       `json:"merged,omitempty"`
	Rejected    []MergeItem       `json:"rejected,omitempty"`
	Resolutions []Resolution      `json:"resolutions,omitempty"`
	MergedBy    string            `json:"merged_by,omitempty"`
	Message     string            `json:"message,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
	Meta        map[string]string `json:"metadata,omitempty"`
}
