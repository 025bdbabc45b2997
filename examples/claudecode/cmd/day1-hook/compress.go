package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of what a tool call leaves in memory.
const (
	maxRaw        = 2000 // characters of raw input and of raw output
	maxSalient    = 120  // characters of the salient input in a summary
	maxOutputLine = 120  // characters of the output's first line in a summary
)

// cut returns s cut to n characters (runes), never splitting one.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// clip returns s on one line, cut to n characters with an ellipsis when longer.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return cut(s, n-1) + "…"
}

// salientKeys are the tool input fields that say what a call did, most telling
// first: Bash's command, the file of Read/Edit/Write, a search's pattern, a URL.
var salientKeys = []string{"command", "file_path", "notebook_path", "pattern", "path", "url", "query", "description", "prompt"}

// rawText is a raw tool input or response as text: a JSON string's value, any
// other JSON as it came.
func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// summarize compresses a tool call to one deterministic line: the tool, the
// salient part of its input, and the first line (or the size) of its output.
func summarize(tool string, input, response json.RawMessage) string {
	var b strings.Builder
	b.WriteString(tool)
	if s := salient(input); s != "" {
		b.WriteString(": ")
		b.WriteString(clip(s, maxSalient))
	}
	if o := outputLine(response); o != "" {
		b.WriteString(" → ")
		b.WriteString(o)
	}
	return b.String()
}

func salient(input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return rawText(input)
	}
	for _, k := range salientKeys {
		if s, ok := in[k].(string); ok && strings.TrimSpace(s) != "" {
			if k == "pattern" {
				if p, ok := in["path"].(string); ok && p != "" {
					return s + " in " + p
				}
			}
			return s
		}
	}
	if len(in) == 0 {
		return ""
	}
	return string(bytes.TrimSpace(input))
}

// outputLine is the first non-empty line of a tool's output, or its size.
func outputLine(response json.RawMessage) string {
	if len(bytes.TrimSpace(response)) == 0 || string(bytes.TrimSpace(response)) == "null" {
		return ""
	}
	text := rawText(response)
	var out map[string]any
	if json.Unmarshal(response, &out) == nil {
		text = ""
		if e := errorText(out); e != "" {
			return "error: " + clip(firstLine(e), maxOutputLine)
		}
		// Bash's stdout, Read's file content, a generic output or result field.
		for _, k := range []string{"stdout", "output", "result", "content", "stderr"} {
			if s, ok := out[k].(string); ok && strings.TrimSpace(s) != "" {
				text = s
				break
			}
		}
		if file, ok := out["file"].(map[string]any); ok && text == "" {
			if s, ok := file["content"].(string); ok {
				return fmt.Sprintf("%d lines", strings.Count(s, "\n")+1)
			}
		}
		if text == "" {
			return fmt.Sprintf("%d bytes", len(response))
		}
	}
	if l := firstLine(text); l != "" {
		return clip(l, maxOutputLine)
	}
	return fmt.Sprintf("%d bytes", len(text))
}

// errorText is the error a tool response reports, if any.
func errorText(out map[string]any) string {
	if e, ok := out["error"].(string); ok && strings.TrimSpace(e) != "" {
		return e
	}
	if isErr, _ := out["is_error"].(bool); isErr {
		if s, ok := out["content"].(string); ok && s != "" {
			return s
		}
		return "the tool reported an error"
	}
	return ""
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// toolObservation turns a PostToolUse input into the observation to write.
func toolObservation(in hookInput) observation {
	typ := obsToolUse
	var out map[string]any
	if json.Unmarshal(in.ToolResponse, &out) == nil && errorText(out) != "" {
		typ = obsError
	}
	return observation{
		SessionID: in.SessionID,
		Type:      typ,
		Tool:      in.ToolName,
		Summary:   summarize(in.ToolName, in.ToolInput, in.ToolResponse),
		RawInput:  cut(rawText(in.ToolInput), maxRaw),
		RawOutput: cut(rawText(in.ToolResponse), maxRaw),
	}
}
