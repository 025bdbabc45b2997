package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/testkit"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(serveMCPEnv); dir != "" {
		serveMCP(dir)
	}
	testkit.RunAsMain(main)
	code := m.Run()
	testkit.RemovePrograms()
	os.Exit(code)
}

// hookBinary returns the program the hook tests run (testkit.Program: this test
// binary, or under the race detector day1-hook built without it).
func hookBinary(t testing.TB) string {
	t.Helper()
	path, _ := testkit.Program(t)
	return path
}

// result is what one hook run did.
type result struct {
	stdout, stderr string
	exit           int
	took           time.Duration
}

// runHook runs the built hook with stdin on the memory in dir.
func runHook(t testing.TB, dir string, stdin []byte, args ...string) result {
	t.Helper()
	cmd := exec.Command(hookBinary(t), args...)
	_, asMain := testkit.Program(t)
	cmd.Env = append(append(os.Environ(), asMain...), "DAY1_PATH="+dir, "DAY1_DSN=", "DAY1_MODEL=", "DAY1_EMBED_MODEL=", "DAY1_BRANCH=")
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// payload reads a recorded hook input, pointing its transcript_path at the
// recorded transcript.
func payload(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(filepath.Join("testdata", "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	m["transcript_path"] = abs
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// output decodes a hook's stdout, which must be exactly one JSON object.
func output(t testing.TB, r result) hookOutput {
	t.Helper()
	if r.exit != 0 {
		t.Fatalf("exit %d; stderr: %s", r.exit, r.stderr)
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	var out hookOutput
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("stdout is not the documented JSON output: %v\nstdout: %q\nstderr: %s", err, r.stdout, r.stderr)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value: %q", r.stdout)
	}
	return out
}

const testSession = "9b2f6c1e-4d7a-4f0b-8c3e-2a5d7e9f1b34"

// openStore opens the durable store in dir once the hooks have exited.
func openStore(t testing.TB, dir string) *day1.Client {
	t.Helper()
	c, err := day1.Open(context.Background(), day1.Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// runSession runs the five recorded events in the order of a session and checks
// what each printed.
func runSession(t *testing.T, dir string) {
	t.Helper()
	out := output(t, runHook(t, dir, payload(t, "session_start.json"), "SessionStart"))
	if out.HookSpecificOutput == nil || out.HookSpecificOutput.HookEventName != "SessionStart" {
		t.Errorf("SessionStart output = %+v, want hookSpecificOutput for SessionStart", out)
	}
	// The event comes from hook_event_name when no argument names it.
	if out := output(t, runHook(t, dir, payload(t, "post_tool_use.json"))); !out.SuppressOutput {
		t.Errorf("PostToolUse output = %+v, want suppressOutput", out)
	}
	out = output(t, runHook(t, dir, payload(t, "pre_compact.json"), "PreCompact"))
	if !strings.Contains(out.SystemMessage, "kept 3 new facts and 2 relations") {
		t.Errorf("PreCompact systemMessage = %q, want 3 facts and 2 relations kept", out.SystemMessage)
	}
	output(t, runHook(t, dir, payload(t, "stop.json"), "Stop"))
	out = output(t, runHook(t, dir, payload(t, "session_end.json"), "SessionEnd"))
	if !strings.Contains(out.SystemMessage, "consolidated") {
		t.Errorf("SessionEnd systemMessage = %q", out.SystemMessage)
	}
}

// checkSession checks what a recorded session left in memory.
func checkSession(t *testing.T, c *day1.Client) {
	t.Helper()
	ctx := context.Background()
	s, err := c.GetSession(ctx, testSession)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != day1.SessionCompleted || s.AgentID != agentID {
		t.Errorf("session = %+v, want completed by %s", s, agentID)
	}
	if !strings.HasPrefix(s.Summary, "Asked: Refunds leave a negative balance") || !strings.Contains(s.Summary, "Ended with: Fixed:") {
		t.Errorf("session summary = %q", s.Summary)
	}

	obs, err := c.ListObservations(ctx, day1.ListOptions{Filter: day1.Filter{SessionID: testSession}})
	if err != nil {
		t.Fatal(err)
	}
	var tool, stage *day1.Observation
	for i := range obs {
		switch obs[i].Type {
		case "error": // the fixture's go test failed
			tool = &obs[i]
		case "insight":
			stage = &obs[i]
		}
	}
	if tool == nil || stage == nil {
		t.Fatalf("observations = %+v, want an error and an insight", obs)
	}
	if want := "Bash: go test ./ledger/... → error: --- FAIL: TestPostRefund (0.00s)"; tool.Summary != want || tool.Tool != "Bash" {
		t.Errorf("tool observation = %q (%s), want %q", tool.Summary, tool.Tool, want)
	}
	if !strings.Contains(tool.RawInput, `"command":"go test ./ledger/..."`) || !strings.Contains(tool.RawOutput, "refund_test.go:42") {
		t.Errorf("raw input %q, raw output %q", tool.RawInput, tool.RawOutput)
	}
	if !strings.HasPrefix(stage.Summary, "Stage summary: Fixed: the refund fee is now computed once") {
		t.Errorf("stage summary = %q", stage.Summary)
	}

	facts, err := c.ListFacts(ctx, day1.ListOptions{Filter: day1.Filter{SessionID: testSession}})
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	for _, f := range facts {
		texts[f.Text] = f.Category
	}
	for _, want := range []string{
		"The cause is that PostRefund subtracts the fee twice when the original charge was captured in two parts.",
		"I decided to compute the fee once in refundFee and pass it down.",
	} {
		if _, ok := texts[want]; !ok {
			t.Errorf("no fact %q among %v", want, texts)
		}
	}

	rels, err := c.ListRelations(ctx, day1.ListOptions{Filter: day1.Filter{SessionID: testSession}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range rels {
		got[r.Source+" "+r.Type+" "+r.Target] = true
	}
	for _, want := range []string{"ledger package uses money package", "ledger service depends_on fxrates service"} {
		if !got[want] {
			t.Errorf("no relation %q among %v", want, got)
		}
	}
}

func TestSessionDirect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runSession(t, dir)
	checkSession(t, openStore(t, dir))
}

// The hooks and the MCP server as Claude Code runs them: separate processes on one
// durable memory, which the server has open while every hook opens it too.
func TestSessionBesideServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	startServer(t, dir)
	runSession(t, dir)

	// The next session starts with what the first one left.
	var next map[string]any
	if err := json.Unmarshal(payload(t, "session_start.json"), &next); err != nil {
		t.Fatal(err)
	}
	next["session_id"] = "next-session"
	data, _ := json.Marshal(next)
	r := runHook(t, dir, data)
	text := output(t, r).HookSpecificOutput.AdditionalContext
	for _, want := range []string{"## Key facts", "- The cause is that PostRefund subtracts the fee twice", "## Recent sessions", "Asked: Refunds leave a negative balance"} {
		if !strings.Contains(text, want) {
			t.Errorf("the next session's context lacks %q:\n%s", want, text)
		}
	}
	if r.stderr != "" {
		t.Errorf("a hook run beside the server wrote to stderr: %s", r.stderr)
	}
	// The memory holds the first session whole while the server still runs.
	checkSession(t, openStore(t, dir))
}

func TestSessionStartContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	// Near-duplicate detection off: the seeded facts look alike.
	c, err := day1.Open(ctx, day1.Config{Path: dir, DedupeThreshold: -1})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("very long fact text ", 30)
	for i := range 25 {
		text := "payments fact number " + string(rune('a'+i)) + " about the ledger"
		if i == 0 {
			text = "payments " + long
		}
		if _, err := c.WriteFact(ctx, day1.Fact{Text: text, Category: "architecture"}); err != nil {
			t.Fatal(err)
		}
	}
	for i, summary := range []string{"first", "second", "third", "fourth " + long} {
		id := "s" + string(rune('1'+i))
		if _, err := c.StartSession(ctx, day1.Session{ID: id, StartedAt: time.Date(2025, 9, 1+i, 9, 0, 0, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.EndSession(ctx, id, "", "summary of the "+summary+" session"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Branch(ctx, "experiment/retry-queue", day1.BranchOptions{Description: "trying a retry queue for webhooks"}); err != nil {
		t.Fatal(err)
	}
	c.Close()

	out := output(t, runHook(t, dir, payload(t, "session_start.json"), "SessionStart"))
	text := out.HookSpecificOutput.AdditionalContext
	facts, sessions := 0, 0
	section := ""
	for _, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > maxLine {
			t.Errorf("a line of %d characters: %q", n, line)
		}
		if strings.HasPrefix(line, "## ") {
			section = line
			continue
		}
		if strings.HasPrefix(line, "- ") {
			switch section {
			case "## Key facts":
				facts++
			case "## Recent sessions":
				sessions++
			}
		}
	}
	if facts != factsShown || sessions != sessionsShown {
		t.Errorf("%d facts and %d sessions shown, want %d and %d:\n%s", facts, sessions, factsShown, sessionsShown, text)
	}
	for _, want := range []string{"- 2025-09-04 09:00 summary of the fourth very long", "- experiment/retry-queue: trying a retry queue for webhooks", "[architecture]"} {
		if !strings.Contains(text, want) {
			t.Errorf("context lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "summary of the first session") || strings.Contains(text, "- main") {
		t.Errorf("context shows the oldest session or main:\n%s", text)
	}
	s, err := openStore(t, dir).GetSession(ctx, testSession)
	if err != nil || s.Status != day1.SessionActive {
		t.Errorf("session after SessionStart = %+v, %v; want active", s, err)
	}
}

func TestPostToolUseTruncates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := strings.Repeat("é", 1500) + strings.Repeat("x", 4000) // multi-byte characters at the cut's left
	in := map[string]any{
		"session_id": testSession, "transcript_path": "/tmp/t.jsonl", "cwd": "/home/dev/payments",
		"hook_event_name": "PostToolUse", "tool_name": "Write",
		"tool_input":    map[string]any{"file_path": "/home/dev/payments/big.txt", "content": content},
		"tool_response": strings.Repeat("ü", 2500) + "\nmore",
	}
	data, _ := json.Marshal(in)
	output(t, runHook(t, dir, data, "PostToolUse"))
	obs, err := openStore(t, dir).ListObservations(context.Background(), day1.ListOptions{})
	if err != nil || len(obs) != 1 {
		t.Fatalf("observations = %+v, %v", obs, err)
	}
	o := obs[0]
	if n := utf8.RuneCountInString(o.RawInput); n != maxRaw || !utf8.ValidString(o.RawInput) {
		t.Errorf("raw input is %d characters, want %d", n, maxRaw)
	}
	if o.RawOutput != strings.Repeat("ü", maxRaw) {
		t.Errorf("raw output is %d characters, want the first %d", utf8.RuneCountInString(o.RawOutput), maxRaw)
	}
	if want := "Write: /home/dev/payments/big.txt → " + strings.Repeat("ü", maxOutputLine-1) + "…"; o.Summary != want {
		t.Errorf("summary = %q, want %q", o.Summary, want)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	for name, stdin := range map[string]string{
		"empty":         "",
		"blank":         "  \n",
		"not json":      "SessionStart please",
		"a list":        `[1, 2]`,
		"no session id": `{"hook_event_name":"PostToolUse","tool_name":"Bash"}`,
		"unknown event": `{"session_id":"s1","hook_event_name":"Notification"}`,
		"cut short":     `{"session_id":"s1","hook_event_name":"Post`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r := runHook(t, dir, []byte(stdin))
			if r.exit != 0 || r.stdout != "" || !strings.HasPrefix(r.stderr, "day1-hook: ") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0, nothing, a message", r.exit, r.stdout, r.stderr)
			}
		})
	}
}

// TestParallelHooks fires three PostToolUse hooks at once, as Claude Code does for
// parallel tool calls, ten times, beside a running MCP server: every event is stored.
// It runs on a memory of each kind: the log store and the SQLite store.
func TestParallelHooks(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"log", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testkit.MakeMemory(t, kind, dir)
			parallelHooks(t, dir)
		})
	}
}

func parallelHooks(t *testing.T, dir string) {
	startServer(t, dir)
	var base map[string]any
	if err := json.Unmarshal(payload(t, "post_tool_use.json"), &base); err != nil {
		t.Fatal(err)
	}
	const rounds, width = 10, 3
	for round := range rounds {
		var wg sync.WaitGroup
		results := make([]result, width)
		for i := range width {
			ev := maps.Clone(base)
			ev["tool_use_id"] = fmt.Sprintf("toolu_%d_%d", round, i)
			ev["tool_input"] = map[string]any{"command": fmt.Sprintf("go test ./pkg%d/...", round*width+i)}
			data, _ := json.Marshal(ev)
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = runHook(t, dir, data, "PostToolUse")
			}()
		}
		wg.Wait()
		for i, r := range results {
			if r.exit != 0 || r.stderr != "" {
				t.Errorf("round %d, hook %d: exit %d, stderr %q", round, i, r.exit, r.stderr)
			}
		}
	}
	obs, err := openStore(t, dir).ListObservations(context.Background(), day1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != rounds*width {
		t.Errorf("%d observations stored; want %d, one for each hook", len(obs), rounds*width)
	}
}
