// Command day1-hook is the Claude Code hook of day1: it gives a Claude Code session
// git-like memory that lasts beyond the session.
//
// Claude Code runs it on five events, with the event's JSON on standard input:
//
//	day1-hook SessionStart   starts the session; injects key facts, recent session summaries and active branches
//	day1-hook PostToolUse    records the tool call as an observation
//	day1-hook PreCompact     keeps the transcript's facts and relations before compaction
//	day1-hook Stop           records a stage summary of the last answer
//	day1-hook SessionEnd     ends the session with a summary and consolidates its observations
//
// Without an argument the event is read from the input's hook_event_name.
//
// The memory is the durable embedded store in -path, $DAY1_PATH or the default
// folder (see localmem.DefaultPath), or MatrixOne when $DAY1_DSN is set. The hook
// opens it itself, beside the MCP servers and the other hooks that have it open:
// commits take turns, so hooks fired at once by parallel tool calls all land.
// $DAY1_BRANCH (or -branch) names the branch to use, main by default;
// $DAY1_MODEL names a model to extract facts with (see localmem).
//
// The hook never blocks or fails the agent: it always exits 0, prints nothing but
// the documented JSON output, and reports problems on standard error.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/localmem"
	"github.com/day1ai/day1/llm"
)

// Time limits of a hook run, by event. PostToolUse runs after every tool call and
// must stay short; extraction may ask a model.
var timeouts = map[string]time.Duration{
	eventSessionStart: 10 * time.Second,
	eventPostToolUse:  3 * time.Second,
	eventPreCompact:   60 * time.Second,
	eventStop:         5 * time.Second,
	eventSessionEnd:   60 * time.Second,
}

// maxInput bounds the hook input read from stdin.
const maxInput = 64 << 20

// EnvBranch names the branch the hooks read and write.
const EnvBranch = "DAY1_BRANCH"

func main() {
	run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	// Whatever happened, Claude Code goes on: exit 2 would block it.
	os.Exit(0)
}

// run runs one hook. It reports every problem on stderr and prints to stdout only
// a complete JSON output.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) {
	fs := flag.NewFlagSet("day1-hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("path", "", "folder of the durable embedded store (default $DAY1_PATH, then the user's data folder)")
	branch := fs.String("branch", os.Getenv(EnvBranch), "branch to read and write (default main)")
	timeout := fs.Duration("timeout", 0, "time limit of the run (default by event: 3s for PostToolUse)")
	if err := fs.Parse(args); err != nil {
		return
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "day1-hook: "+format+"\n", a...) }

	data, err := io.ReadAll(io.LimitReader(stdin, maxInput))
	if err != nil {
		logf("reading stdin: %v", err)
		return
	}
	in, err := parseInput(data)
	if err != nil {
		logf("%v; nothing recorded", err)
		return
	}
	event := fs.Arg(0)
	if event == "" {
		event = in.HookEventName
	}
	h, ok := handlers[event]
	if !ok {
		logf("unknown event %q; expected SessionStart, PostToolUse, PreCompact, Stop or SessionEnd", event)
		return
	}
	limit := *timeout
	if limit <= 0 {
		limit = timeouts[event]
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()

	mem, model, err := connect(ctx, *path, *branch)
	if err != nil {
		logf("%s: %v", event, err)
		return
	}
	out, err := h(ctx, mem, in, model)
	if cerr := mem.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		logf("%s: %v", event, err)
		return
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(out); err != nil {
		logf("%s: %v", event, err)
		return
	}
	stdout.Write(buf.Bytes())
}

// connect opens the memory.
func connect(ctx context.Context, path, branch string) (*memory, llm.Model, error) {
	cfg, _, err := localmem.Config(localmem.Options{Path: path})
	if err != nil {
		return nil, nil, err
	}
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return &memory{c: c, branch: branch}, cfg.Model, nil
}
