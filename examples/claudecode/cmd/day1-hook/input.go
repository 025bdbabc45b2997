package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The hook events this program handles, as Claude Code names them.
const (
	eventSessionStart = "SessionStart"
	eventPostToolUse  = "PostToolUse"
	eventPreCompact   = "PreCompact"
	eventStop         = "Stop"
	eventSessionEnd   = "SessionEnd"
)

// hookInput is the JSON object Claude Code writes to a hook's standard input: the
// fields every event carries, and those of the five events handled here. Fields of
// other events are ignored.
type hookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode,omitempty"`

	// SessionStart: startup, resume, clear or compact.
	Source string `json:"source,omitempty"`

	// PostToolUse.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse any             `json:"tool_response,omitempty"` // decoded once; see parseResponse
	ToolUseID    string          `json:"tool_use_id,omitempty"`

	// PreCompact: manual or auto, and what the user typed after /compact.
	Trigger            string `json:"trigger,omitempty"`
	CustomInstructions string `json:"custom_instructions,omitempty"`

	// Stop: true when Claude Code is already continuing because of a Stop hook.
	StopHookActive bool `json:"stop_hook_active,omitempty"`

	// SessionEnd: clear, logout, prompt_input_exit or other.
	Reason string `json:"reason,omitempty"`
}

// parseInput decodes the hook input. It fails on empty input, on anything but one
// JSON object, and on an input without a session id.
func parseInput(data []byte) (hookInput, error) {
	var in hookInput
	if len(bytes.TrimSpace(data)) == 0 {
		return in, errors.New("no hook input on stdin; Claude Code sends a JSON object")
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return in, fmt.Errorf("the hook input is not a JSON object: %w", err)
	}
	if in.SessionID == "" {
		return in, errors.New("the hook input has no session_id")
	}
	return in, nil
}

// hookOutput is the JSON object a hook may print on standard output. Only the
// fields this program uses are declared; it never sets "continue", "decision" or
// anything else that would stop or block the agent.
type hookOutput struct {
	// SystemMessage is shown to the user.
	SystemMessage string `json:"systemMessage,omitempty"`
	// SuppressOutput hides the hook's output from the transcript view.
	SuppressOutput bool `json:"suppressOutput,omitempty"`
	// HookSpecificOutput carries SessionStart's additional context.
	HookSpecificOutput *specificOutput `json:"hookSpecificOutput,omitempty"`
}

// specificOutput is the event-specific part of the output.
type specificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}
