package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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

// rawText is a raw tool input as text: a JSON string's value, any other JSON as it
// came.
func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// response is a tool's response as the observation needs it. A PostToolUse
// response can hold a whole file or a long command log: it is decoded once, with the
// rest of the hook input, and every part of the observation (type, summary, raw
// text) is taken from that one decoding.
type response struct {
	text  string         // a string response's value; else a JSON preview, cut to maxRaw
	obj   map[string]any // the fields of an object response; nil for anything else
	value any            // the decoded response; nil for none
	err   string         // the failure the response reports (see errorText), or ""
}

// parseResponse reads a decoded tool response; a json.RawMessage is decoded first.
func parseResponse(v any) response {
	if raw, ok := v.(json.RawMessage); ok {
		v = nil
		json.Unmarshal(raw, &v)
	}
	r := response{value: v}
	switch t := v.(type) {
	case nil:
		return r
	case string:
		r.text = t
		return r
	case map[string]any:
		r.obj = t
		r.err = errorText(t)
	}
	// A preview of the response: long strings and lists cut, so that a large one is
	// not encoded whole again for the few characters the observation keeps.
	data, _ := json.Marshal(preview(v, 0))
	r.text = string(data)
	return r
}

// preview returns v with strings cut to maxRaw characters and lists to their first
// 50 elements, nested at most 8 deep.
func preview(v any, depth int) any {
	switch t := v.(type) {
	case string:
		return cut(t, maxRaw)
	case []any:
		if depth >= 8 {
			return "…"
		}
		out := make([]any, 0, min(len(t), 50))
		for _, e := range t[:min(len(t), 50)] {
			out = append(out, preview(e, depth+1))
		}
		return out
	case map[string]any:
		if depth >= 8 {
			return "…"
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = preview(e, depth+1)
		}
		return out
	}
	return v
}

// approxSize is the length of v encoded compactly as JSON, strings counted without
// their escapes.
func approxSize(v any) int {
	switch t := v.(type) {
	case string:
		return len(t) + 2
	case []any:
		n := 2 + max(len(t)-1, 0)
		for _, e := range t {
			n += approxSize(e)
		}
		return n
	case map[string]any:
		n := 2 + max(len(t)-1, 0)
		for k, e := range t {
			n += len(k) + 3 + approxSize(e)
		}
		return n
	case bool:
		if t {
			return 4
		}
		return 5
	case nil:
		return 4
	}
	data, _ := json.Marshal(v)
	return len(data)
}

// summarize compresses a tool call to one deterministic line: the tool, the
// salient part of its input, and the first line (or the size) of its output.
func summarize(tool string, input json.RawMessage, resp response) string {
	var b strings.Builder
	b.WriteString(tool)
	if s := salient(input); s != "" {
		b.WriteString(": ")
		b.WriteString(clip(s, maxSalient))
	}
	if o := outputLine(resp); o != "" {
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
func outputLine(r response) string {
	if r.value == nil {
		return ""
	}
	text := r.text
	if r.obj != nil {
		text = ""
		if r.err != "" {
			return "error: " + clip(firstLine(r.err), maxOutputLine)
		}
		// Bash's stdout, Read's file content, a generic output or result field.
		for _, k := range []string{"stdout", "output", "result", "content", "stderr"} {
			if s, ok := r.obj[k].(string); ok && strings.TrimSpace(s) != "" {
				text = s
				break
			}
		}
		if file, ok := r.obj["file"].(map[string]any); ok && text == "" {
			if s, ok := file["content"].(string); ok {
				return fmt.Sprintf("%d lines", strings.Count(s, "\n")+1)
			}
		}
		if text == "" {
			return fmt.Sprintf("%d bytes", approxSize(r.value))
		}
	}
	if l := firstLine(text); l != "" {
		return clip(l, maxOutputLine)
	}
	return fmt.Sprintf("%d bytes", len(text))
}

// errorText is the error a tool's object response reports, if any: an error field,
// is_error, an interrupted or non-zero exit of a command, or a command output that
// shows a failure (see failureLine).
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
	stdout, _ := out["stdout"].(string)
	stderr, _ := out["stderr"].(string)
	failed := func() string {
		for _, out := range []string{stdout, stderr} {
			// A long log is read at both ends, where tools print their failures and
			// summaries: the cost of a hook stays bounded whatever a command printed.
			if len(out) > 2*failureWindow {
				head, tail := out[:failureWindow], out[len(out)-failureWindow:]
				if i := strings.IndexByte(tail, '\n'); i >= 0 {
					tail = tail[i+1:]
				}
				out = head + "\n" + tail
			}
			if l := failureLine(out); l != "" {
				return l
			}
		}
		return ""
	}
	for _, k := range []string{"exit_code", "exitCode", "return_code", "returnCode", "status_code"} {
		if code, ok := out[k].(float64); ok && code != 0 {
			if l := failed(); l != "" {
				return l
			}
			return fmt.Sprintf("exit code %v", code)
		}
	}
	if interrupted, _ := out["interrupted"].(bool); interrupted {
		return "the command was interrupted"
	}
	return failed()
}

// failurePrefixes begin the lines by which common tools report a failure: test
// runners (go test, pytest, jest, cargo), interpreters' uncaught errors, compilers,
// make, npm and the shell.
var failurePrefixes = []string{
	"--- FAIL", "FAIL\t", "FAIL ", "panic: ", "fatal error: ", "Traceback (most recent call last)",
	"FAILED ", "npm ERR!", "make: *** ", "error[E", "error: could not compile", "fatal: ",
	"Segmentation fault", "test result: FAILED",
}

// failureWindow is how much of each end of a long command output is searched for a
// failure.
const failureWindow = 64 << 10

// failureMarkers are failurePrefixes and the one line ending that reports a failure.
var failureMarkers = append(slices.Clip(failurePrefixes), ": command not found")

// failureLine is the first line of a command's output that reports a failure: one
// that starts, after any indentation, with one of failurePrefixes, or that ends with
// ": command not found". It returns "" when there is none. Each marker is looked up
// with strings.Index, so a long log is scanned quickly.
func failureLine(out string) string {
	first := -1
	for _, p := range failureMarkers {
		for from := 0; from < len(out); {
			i := strings.Index(out[from:], p)
			if i < 0 {
				break
			}
			i += from
			start := strings.LastIndexByte(out[:i], '\n') + 1
			suffix := p[0] == ':'
			if suffix || strings.TrimLeft(out[start:i], " \t") == "" {
				if suffix {
					end := i + len(p)
					if end < len(out) && out[end] != '\n' && out[end] != '\r' {
						from = end
						continue
					}
				}
				if first < 0 || start < first {
					first = start
				}
				break
			}
			from = i + len(p)
		}
	}
	if first < 0 {
		return ""
	}
	l, _, _ := strings.Cut(out[first:], "\n")
	return strings.TrimSpace(l)
}

func firstLine(s string) string {
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// toolObservation turns a PostToolUse input into the observation to write.
func toolObservation(in hookInput) observation {
	resp := parseResponse(in.ToolResponse)
	typ := obsToolUse
	if resp.err != "" {
		typ = obsError
	}
	return observation{
		SessionID: in.SessionID,
		Type:      typ,
		Tool:      in.ToolName,
		Summary:   summarize(in.ToolName, in.ToolInput, resp),
		RawInput:  cut(rawText(in.ToolInput), maxRaw),
		RawOutput: cut(resp.text, maxRaw),
	}
}
