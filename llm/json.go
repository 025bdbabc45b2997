package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// CompleteJSON asks m for a JSON answer and decodes it into out, which must be a
// non-nil pointer.
//
// It sets req.JSON, calls m.Complete, trims whitespace and a surrounding Markdown code
// fence (```json ... ``` or ``` ... ```) from the reply, and decodes exactly one JSON
// value into out; fields out does not have are ignored. An error from Complete is
// returned as is. A reply that is empty, not valid JSON, of the wrong shape for out, or
// followed by anything but whitespace gives a *MalformedOutputError.
func CompleteJSON(ctx context.Context, m Model, req Request, out any) error {
	if rv := reflect.ValueOf(out); rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("day1: CompleteJSON needs a non-nil pointer to decode into, got %T", out)
	}
	req.JSON = true
	resp, err := m.Complete(ctx, req)
	if err != nil {
		return err
	}
	body := stripFence(resp.Content)
	malformed := func(err error) error {
		return &MalformedOutputError{Model: m.Name(), Content: shorten(resp.Content, maxErrorContent), Err: err}
	}
	if body == "" {
		return malformed(errors.New("empty reply"))
	}
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(out); err != nil {
		return malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return malformed(errors.New("unexpected content after the JSON value"))
	}
	return nil
}

// stripFence trims whitespace and, when s is wrapped in a Markdown code fence, the
// fence lines, with or without a language tag.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	body := s[3:]
	// Drop the info string ("json", "JSON", ...) up to the end of the opening line. A
	// one-line fence ("```{...}```") has no newline and no info string.
	if nl := strings.IndexByte(body, '\n'); nl >= 0 {
		if info := strings.TrimSpace(body[:nl]); info == "" || isInfoString(info) {
			body = body[nl+1:]
		}
	}
	body = strings.TrimSpace(body)
	body = strings.TrimSuffix(body, "```")
	return strings.TrimSpace(body)
}

// isInfoString reports whether s looks like a fence's language tag rather than JSON
// that starts on the fence line.
func isInfoString(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
