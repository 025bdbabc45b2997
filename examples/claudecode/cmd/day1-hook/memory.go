package main

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
