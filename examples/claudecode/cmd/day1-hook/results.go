package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The parsing of the MCP server's tool results lives here, and only here. The
// server's output field names are read defensively: a list may come bare or under
// any key, a record may be flat or nested one level down (under "record", "fact",
// "session", ...), and each field is looked up under the names the server is likely
// to use.

// obj is a decoded JSON object.
type obj = map[string]any

// decode decodes a tool result; a result that does not decode is nil.
func decode(raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	return v
}

// list returns the list of objects in v: v itself when it is a list, else the value
// of the first of keys present in v, else v's only list of objects.
func list(v any, keys ...string) []obj {
	switch t := v.(type) {
	case []any:
		return objects(t)
	case obj:
		for _, k := range keys {
			if l, ok := t[k].([]any); ok {
				return objects(l)
			}
		}
		for _, val := range t {
			if l, ok := val.([]any); ok && len(objects(l)) > 0 {
				return objects(l)
			}
		}
		for _, val := range t {
			if inner, ok := val.(obj); ok {
				if l := list(inner, keys...); len(l) > 0 {
					return l
				}
			}
		}
	}
	return nil
}

// objects keeps the objects of a list, each flattened.
func objects(l []any) []obj {
	var out []obj
	for _, e := range l {
		if o, ok := e.(obj); ok {
			out = append(out, flatten(o))
		}
	}
	return out
}

// flatten lifts the fields of nested objects into o, without overwriting o's own.
func flatten(o obj) obj {
	out := obj{}
	for k, v := range o {
		if inner, ok := v.(obj); ok {
			for ik, iv := range inner {
				if _, taken := o[ik]; !taken {
					out[ik] = iv
				}
			}
			continue
		}
		out[k] = v
	}
	return out
}

// str returns the first of keys that o holds as a non-empty string (or number).
func str(o obj, keys ...string) string {
	for _, k := range keys {
		switch v := o[k].(type) {
		case string:
			if v != "" {
				return v
			}
		case float64:
			return fmt.Sprint(v)
		}
	}
	return ""
}

func parseHits(raw json.RawMessage) []hit {
	var out []hit
	for _, o := range list(decode(raw), "hits", "results", "facts", "items") {
		kind := strings.ToLower(str(o, "kind", "record_type", "record_kind", "type"))
		if kind != "" && kind != "fact" && kind != "facts" {
			continue // an observation, not a fact
		}
		h := hit{ID: str(o, "id", "ID", "fact_id"), Text: str(o, "fact_text", "text", "summary", "content"),
			Category: str(o, "category")}
		if h.Text != "" {
			out = append(out, h)
		}
	}
	return out
}

func parseSessions(raw json.RawMessage) []sessionInfo {
	var out []sessionInfo
	for _, o := range list(decode(raw), "sessions", "items", "results") {
		s := sessionInfo{ID: str(o, "session_id", "id", "ID"), Summary: str(o, "summary"),
			Status: str(o, "status"), StartedAt: str(o, "started_at", "startedAt", "created_at")}
		if len(s.StartedAt) >= 16 && s.StartedAt[10] == 'T' {
			s.StartedAt = s.StartedAt[:10] + " " + s.StartedAt[11:16]
		}
		out = append(out, s)
	}
	return out
}

func parseBranches(raw json.RawMessage) []branchInfo {
	var out []branchInfo
	for _, o := range list(decode(raw), "branches", "items", "results") {
		b := branchInfo{Name: str(o, "name", "branch_name", "branch"), Description: str(o, "description")}
		if b.Name != "" {
			out = append(out, b)
		}
	}
	return out
}

// parseWritten reads the id of a written record and whether the write was a
// deduplicated one.
func parseWritten(raw json.RawMessage) written {
	o, _ := decode(raw).(obj)
	if o == nil {
		return written{}
	}
	f := flatten(o)
	w := written{ID: str(f, "id", "ID", "fact_id", "observation_id", "relation_id")}
	outcome := strings.ToLower(str(f, "outcome", "status", "result"))
	dedup, _ := f["deduplicated"].(bool)
	w.Deduplicated = dedup || outcome == "deduplicated"
	return w
}

// consolidatedCount reads how many facts a session end consolidated.
func consolidatedCount(raw json.RawMessage) int {
	o, _ := decode(raw).(obj)
	if o == nil {
		return 0
	}
	f := flatten(o)
	for _, k := range []string{"consolidated", "facts_written", "consolidated_facts", "facts"} {
		switch v := f[k].(type) {
		case float64:
			return int(v)
		case []any:
			return len(v)
		}
	}
	return 0
}
