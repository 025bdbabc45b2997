package main

import "context"

// memory is what the hooks need of day1's memory; direct implements it over a
// Client, and the hook logic is written against it.
//
// Every method writes to or reads from the branch the implementation was opened on
// (main unless DAY1_BRANCH says otherwise).
type memory interface {
	// StartSession records the start of a session; starting it again is harmless.
	StartSession(ctx context.Context, s sessionStart) error
	// EndSession ends a session with a summary and consolidates its observations
	// into candidate facts; it returns how many facts consolidation wrote. A session
	// that was never started is started first.
	EndSession(ctx context.Context, s sessionEnd) (int, error)
	// RecentSessions returns up to limit sessions, newest first.
	RecentSessions(ctx context.Context, limit int) ([]sessionInfo, error)
	// Facts returns up to limit facts about query, best first, topped up with the
	// most recent facts when the search finds fewer.
	Facts(ctx context.Context, query string, limit int) ([]hit, error)
	// Branches returns the active branches.
	Branches(ctx context.Context) ([]branchInfo, error)
	// WriteObservation writes an observation and returns its id.
	WriteObservation(ctx context.Context, o observation) (string, error)
	// WriteFact writes a fact; the store's deduplication applies.
	WriteFact(ctx context.Context, f fact) (written, error)
	// WriteRelation writes a relation and returns its id.
	WriteRelation(ctx context.Context, r relation) (string, error)
	// Close releases the memory.
	Close() error
}

// agentID names Claude Code in the sessions the hooks start.
const agentID = "claude-code"

type sessionStart struct {
	ID      string
	AgentID string
}

type sessionEnd struct {
	ID      string
	Summary string
	Status  string // completed or abandoned
}

type sessionInfo struct {
	ID        string
	Summary   string
	Status    string
	StartedAt string
}

// hit is one fact found by Facts.
type hit struct {
	ID       string
	Text     string
	Category string
}

type branchInfo struct {
	Name        string
	Description string
}

// Observation types, as day1 names them.
const (
	obsToolUse = "tool_use"
	obsError   = "error"
	obsInsight = "insight"
)

type observation struct {
	SessionID string
	Type      string
	Tool      string
	Summary   string
	RawInput  string
	RawOutput string
}

type fact struct {
	SessionID  string
	Text       string
	Category   string
	Confidence float64
}

// written is what a fact write did.
type written struct {
	ID string
	// Deduplicated is true when the fact, or a near-duplicate, was there already.
	Deduplicated bool
}

type relation struct {
	SessionID string
	Source    string
	Target    string
	Type      string
}
