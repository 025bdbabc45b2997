package curation

import (
	"strings"

	"github.com/day1ai/day1/store"
)

// DecisionPoint is a message that carries a decision of a conversation.
type DecisionPoint struct {
	// Seq is the message's sequence number in its conversation.
	Seq int
	// MessageID is the message's id.
	MessageID string
	// Reasons say why it is a decision point: "intent", "recovery after a tool
	// error", "before a successful tool call", or the model's words.
	Reasons []string
}

// Reasons FindDecisions gives.
const (
	ReasonIntent   = "intent"
	ReasonRecovery = "recovery after a tool error"
	ReasonStrategy = "before a successful tool call"
)

// intentPhrases mark an assistant message that states what it will do or has decided.
// Matched case-insensitively; typographic apostrophes are folded first.
var intentPhrases = []string{
	"i'll ", "i will ", "let me ", "let's ", "the approach", "my approach", "approach is",
	"decision", "decided", "i decide", "the plan is", "the fix is", "instead, i",
}

// errorMarkers start the content of a failed tool result.
var errorMarkers = []string{
	"error", "err:", "fatal", "failed", "failure", "exception", "traceback", "panic:",
	"command not found", "no such file", "permission denied", "exit status", "exit code",
}

// IsToolError reports whether a tool result message reports a failure: its Metadata
// has a non-empty "error", or an "is_error" other than "false", or its content starts
// (after white space, case folded) with an error marker such as "error", "failed",
// "exception", "traceback", "panic:" or "exit status". Other roles are never errors.
func IsToolError(m store.Message) bool {
	if m.Role != store.RoleToolResult {
		return false
	}
	if m.Metadata["error"] != "" {
		return true
	}
	if v, ok := m.Metadata["is_error"]; ok && v != "false" && v != "" {
		return true
	}
	head := strings.ToLower(strings.TrimSpace(m.Content))
	for _, mk := range errorMarkers {
		if strings.HasPrefix(head, mk) {
			return true
		}
	}
	return false
}

// FindDecisions returns the decision points of a conversation's messages (in Seq
// order) by the heuristics of conversation cherry-picking. An assistant message is a
// decision point when
//
//   - it states an intent or a decision: it contains a phrase such as "I'll",
//     "I will", "let me", "the approach", "decision" or "decided" (ReasonIntent);
//   - it follows a failed tool result (IsToolError): a recovery decision
//     (ReasonRecovery);
//   - it comes right before a tool call whose result succeeded: a strategy that
//     worked (ReasonStrategy).
//
// A message may have several reasons. The result is in Seq order.
func FindDecisions(msgs []store.Message) []DecisionPoint {
	var out []DecisionPoint
	for i, m := range msgs {
		if m.Role != store.RoleAssistant {
			continue
		}
		var reasons []string
		if hasIntent(m.Content) {
			reasons = append(reasons, ReasonIntent)
		}
		if i > 0 && IsToolError(msgs[i-1]) {
			reasons = append(reasons, ReasonRecovery)
		}
		if i+1 < len(msgs) && msgs[i+1].Role == store.RoleToolCall && succeeded(msgs, i+1) {
			reasons = append(reasons, ReasonStrategy)
		}
		if len(reasons) > 0 {
			out = append(out, DecisionPoint{Seq: m.Seq, MessageID: m.ID, Reasons: reasons})
		}
	}
	return out
}

func hasIntent(s string) bool {
	s = strings.ToLower(strings.ReplaceAll(s, "\u2019", "'")) + " "
	for _, p := range intentPhrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// succeeded reports whether the tool call at msgs[i] got a result that is not an
// error: the first tool result after it, before the next tool call.
func succeeded(msgs []store.Message, i int) bool {
	for _, m := range msgs[i+1:] {
		switch m.Role {
		case store.RoleToolResult:
			return !IsToolError(m)
		case store.RoleToolCall:
			return false
		}
	}
	return false
}
