package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The server's output field names are not fixed: each parser must read the likely
// shapes.
func TestParseHits(t *testing.T) {
	for name, raw := range map[string]string{
		"hits":         `{"hits":[{"id":"f1","kind":"fact","text":"A","category":"c"},{"id":"o1","kind":"observation","text":"obs"}]}`,
		"bare list":    `[{"id":"f1","fact_text":"A","category":"c"}]`,
		"nested":       `{"results":[{"score":0.5,"record":{"id":"f1","text":"A","category":"c","kind":"fact"}},{"record":{"id":"o1","type":"tool_use","summary":"obs"}}]}`,
		"other key":    `{"count":1,"matches":[{"ID":"f1","content":"A","category":"c"}]}`,
		"wrapped list": `{"data":{"items":[{"id":"f1","text":"A","category":"c"}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			want := []hit{{ID: "f1", Text: "A", Category: "c"}}
			if diff := cmp.Diff(want, parseHits(json.RawMessage(raw))); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	for _, raw := range []string{`null`, `"text"`, `{}`, `{"hits":[]}`, `not json`} {
		if got := parseHits(json.RawMessage(raw)); len(got) != 0 {
			t.Errorf("parseHits(%s) = %v, want none", raw, got)
		}
	}
}

func TestParseSessionsAndBranches(t *testing.T) {
	sessions := parseSessions(json.RawMessage(`{"sessions":[{"session_id":"s2","summary":"did x","status":"completed","started_at":"2025-09-02T10:11:00Z"},{"id":"s1"}]}`))
	want := []sessionInfo{{ID: "s2", Summary: "did x", Status: "completed", StartedAt: "2025-09-02 10:11"}, {ID: "s1"}}
	if diff := cmp.Diff(want, sessions); diff != "" {
		t.Errorf("sessions (-want +got)\n%s", diff)
	}
	branches := parseBranches(json.RawMessage(`[{"branch_name":"main"},{"name":"exp","description":"d"},{"status":"active"}]`))
	if diff := cmp.Diff([]branchInfo{{Name: "main"}, {Name: "exp", Description: "d"}}, branches); diff != "" {
		t.Errorf("branches (-want +got)\n%s", diff)
	}
}

func TestParseWritten(t *testing.T) {
	for raw, want := range map[string]written{
		`{"id":"f1","outcome":"created"}`:               {ID: "f1"},
		`{"fact":{"id":"f1"},"outcome":"deduplicated"}`: {ID: "f1", Deduplicated: true},
		`{"fact_id":"f1","deduplicated":true}`:          {ID: "f1", Deduplicated: true},
		`null`:                                          {},
	} {
		if got := parseWritten(json.RawMessage(raw)); got != want {
			t.Errorf("parseWritten(%s) = %+v, want %+v", raw, got, want)
		}
	}
	if n := consolidatedCount(json.RawMessage(`{"session":{"id":"s"},"consolidated":3}`)); n != 3 {
		t.Errorf("consolidatedCount = %d, want 3", n)
	}
	if n := consolidatedCount(json.RawMessage(`{"facts":[{},{}]}`)); n != 2 {
		t.Errorf("consolidatedCount = %d, want 2", n)
	}
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct{ tool, in, out, want string }{
		{"Bash", `{"command":"ls -la"}`, `{"stdout":"\n total 8\nfoo","stderr":""}`, "Bash: ls -la → total 8"},
		{"Bash", `{"command":"false"}`, `{"stdout":"","stderr":"boom\nmore"}`, "Bash: false → boom"},
		{"Read", `{"file_path":"/a/b.go"}`, `{"type":"text","file":{"filePath":"/a/b.go","content":"l1\nl2\nl3"}}`, "Read: /a/b.go → 3 lines"},
		{"Grep", `{"pattern":"TODO","path":"src"}`, `"a.go:1: TODO"`, "Grep: TODO in src → a.go:1: TODO"},
		{"Edit", `{"file_path":"/a.go","old_string":"x","new_string":"y"}`, `{"filePath":"/a.go","oldString":"x"}`, "Edit: /a.go → 36 bytes"},
		{"WebFetch", `{"url":"https://go.dev"}`, `{"error":"timeout\nretry"}`, "WebFetch: https://go.dev → error: timeout"},
		{"TodoWrite", `{}`, `null`, "TodoWrite"},
		{"mcp__x__y", `{"a":1}`, `"ok"`, `mcp__x__y: {"a":1} → ok`},
	} {
		if got := summarize(tc.tool, json.RawMessage(tc.in), parseResponse(json.RawMessage(tc.out))); got != tc.want {
			t.Errorf("summarize(%s, %s, %s) = %q, want %q", tc.tool, tc.in, tc.out, got, tc.want)
		}
	}
}

func TestToolObservationType(t *testing.T) {
	for _, tc := range []struct {
		tool, out string
		want      string
	}{
		{"WebFetch", `{"error":"x"}`, obsError},
		{"Bash", `{"stdout":"--- FAIL: TestX (0.00s)\n    x_test.go:9: got 1\nFAIL\nFAIL\tpkg\t0.01s\n","stderr":"","interrupted":false}`, obsError},
		{"Bash", `{"stdout":"","stderr":"Traceback (most recent call last):\n  File \"a.py\"\nKeyError: 'x'","interrupted":false}`, obsError},
		{"Bash", `{"stdout":"","stderr":"","exit_code":2}`, obsError},
		{"Bash", `{"stdout":"partial","stderr":"","interrupted":true}`, obsError},
		{"Bash", `{"stdout":"","stderr":"bash: gti: command not found"}`, obsError},
		{"Bash", `{"stdout":"ok  \tpkg\t0.01s\n","stderr":"","interrupted":false}`, obsToolUse},
		{"Bash", `{"stdout":"the word FAIL inside a line is fine","stderr":"","exit_code":0}`, obsToolUse},
		{"Read", `{"type":"text","file":{"content":"--- FAIL: quoted in a file"}}`, obsToolUse},
		{"Grep", `"a.go:1: panic: not at the start of the output"`, obsToolUse},
	} {
		o := toolObservation(hookInput{SessionID: "s", ToolName: tc.tool, ToolInput: json.RawMessage(`{}`), ToolResponse: json.RawMessage(tc.out)})
		if o.Type != tc.want {
			t.Errorf("%s %s: recorded as %q, want %q", tc.tool, tc.out, o.Type, tc.want)
		}
	}
	o := toolObservation(hookInput{SessionID: "s", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"go test ./..."}`),
		ToolResponse: json.RawMessage(`{"stdout":"=== RUN TestX\n--- FAIL: TestX (0.00s)\n","stderr":""}`)})
	if want := "Bash: go test ./... → error: --- FAIL: TestX (0.00s)"; o.Summary != want {
		t.Errorf("summary %q, want %q", o.Summary, want)
	}
}

func TestTranscriptTurns(t *testing.T) {
	turns, err := readTranscript("testdata/transcript.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 5 || turns[0].Role != "user" || turns[len(turns)-1].Role != "assistant" {
		t.Fatalf("turns = %+v", turns)
	}
	if got := firstUserPrompt(turns); got != "Refunds leave a negative balance in the ledger. Find out why and fix it." {
		t.Errorf("first prompt = %q", got)
	}
	// The tail read drops the partial first line and keeps the last turn.
	data, err := os.ReadFile("testdata/transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	tail, err := readTranscript("testdata/transcript.jsonl", int64(len(lines[len(lines)-1])+20))
	if err != nil {
		t.Fatal(err)
	}
	if len(tail) != 1 {
		t.Errorf("the tail read %d turns, want 1", len(tail))
	}
	if got, want := lastAssistantTurn(tail), lastAssistantTurn(turns); got != want || want == "" {
		t.Errorf("last turn from the tail = %q, want %q", got, want)
	}
}

// The plugin wires each event to this program, under its own name.
func TestPluginHooks(t *testing.T) {
	data, err := os.ReadFile("../../plugin/hooks/hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Hooks) != len(handlers) {
		t.Errorf("hooks.json wires %d events, the program handles %d", len(cfg.Hooks), len(handlers))
	}
	for event, groups := range cfg.Hooks {
		if _, ok := handlers[event]; !ok {
			t.Errorf("hooks.json wires %s, which the program does not handle", event)
		}
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Type != "command" || h.Command != "day1-hook "+event || h.Timeout <= 0 {
					t.Errorf("%s runs %+v", event, h)
				}
			}
		}
	}
}
