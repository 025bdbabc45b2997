package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/localmem"
)

var (
	serverOnce sync.Once
	serverPath string
	serverOut  []byte
	serverErr  error
)

// startMCPServer builds the MCP server of examples/mcpserver once, runs it on the
// durable memory in dir as an MCP client does (over stdio, its input kept open) and
// waits for its endpoint file. The test's end stops it by closing its input.
func startMCPServer(t *testing.T, dir string) {
	t.Helper()
	serverOnce.Do(func() {
		name := "day1-mcpserver"
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		serverPath = filepath.Join(buildDir, name)
		serverOut, serverErr = exec.Command("go", "build", "-o", serverPath, "../../examples/mcpserver").CombinedOutput()
	})
	if serverErr != nil {
		t.Fatalf("building the MCP server: %v\n%s", serverErr, serverOut)
	}
	cmd := exec.Command(serverPath, "-path", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("the MCP server did not stop; stderr:\n%s", stderr.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := localmem.ReadEndpoint(dir); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the MCP server wrote no endpoint file; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestThroughServer: while the MCP server holds the memory, the reading commands go
// through its tools, and the writing ones say what to do.
func TestThroughServer(t *testing.T) {
	dir := seeded(t)
	startMCPServer(t, dir)
	for _, tc := range []struct {
		args string
		want []string
	}{
		{"branch", []string{"agent-a", "agent-b", "task/fix-auth"}},
		{"branch --prefix agent- --json", []string{`"name": "agent-c"`}},
		{"log agent-a --kind fact", []string{"fact/f-retry", "agent-a"}},
		{"show fact/f-retry --branch agent-a", []string{"fact/f-retry", "on agent-a", "text:"}},
		{"show --json fact/f-jwt", []string{`"kind": "fact"`, `"id": "f-jwt"`}},
		{"search token --mode keyword --limit 3", []string{"fact/"}},
		{"diff agent-a agent-b", []string{"diff agent-a into agent-b", "conflicts (1)"}},
		{"tasks", []string{"fix-auth", "task/fix-auth"}},
		{"tasks fix-auth", []string{"task fix-auth", "objectives", "members"}},
		{"handoffs --task fix-auth", []string{"fix-auth", "escalation", "expert"}},
	} {
		stdout, stderr, code := day1Run(t, dir, "", strings.Fields(tc.args)...)
		if code != 0 {
			t.Errorf("day1 %s: exit %d\n%s%s", tc.args, code, stdout, stderr)
			continue
		}
		if !strings.Contains(stderr, "reading through the day1 MCP server") {
			t.Errorf("day1 %s: stderr %q does not say the server answered", tc.args, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("day1 %s: no %q in\n%s", tc.args, w, stdout)
			}
		}
	}
	if _, stderr, code := day1Run(t, dir, "", "show", "fact/nope"); code != exitNotFound {
		t.Errorf("show of a missing record: exit %d %s", code, stderr)
	}
	if _, stderr, code := day1Run(t, dir, "", "at", "before-agents", "log", "main"); code != exitNotSupported {
		t.Errorf("log in the past: exit %d %s", code, stderr)
	}
	stdout, stderr, code := day1Run(t, dir, "", "--json", "at", "before-agents", "search", "postgres")
	var hits []map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &hits) != nil {
		t.Errorf("search in the past: exit %d %s %s", code, stdout, stderr)
	}
	_, stderr, code = day1Run(t, dir, "", "branch", "create", "x")
	if code != exitLocked || !strings.Contains(stderr, "make them with the server's tools, or stop the server") {
		t.Errorf("a write: exit %d %s", code, stderr)
	}
}
