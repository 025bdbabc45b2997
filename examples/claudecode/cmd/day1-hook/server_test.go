package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/localmem"
	"github.com/day1ai/day1/mcpserver"
)

// serveMCPEnv, set to a memory's folder in the environment of this test binary,
// makes it serve that memory over MCP on standard input and output, as
// examples/mcpserver -path does: the server is package mcpserver, which the test
// binary holds, so nothing is built.
const serveMCPEnv = "DAY1_TEST_SERVE_MCP"

// serveMCP serves the memory in dir until standard input ends, then exits.
func serveMCP(dir string) {
	ctx := context.Background()
	c, _, err := localmem.Open(ctx, localmem.Options{Path: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "serving MCP:", err)
		os.Exit(1)
	}
	err = mcpserver.New(c).Run(ctx, mcpserver.StdioTransport(os.Stdin, os.Stdout, 30*time.Second))
	c.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "serving MCP:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// startServer runs the MCP server on the durable memory in dir, as Claude Code runs
// it (over stdio, its standard input kept open), and waits until it has the memory
// open. The returned function stops it as Claude Code does, by closing its standard
// input, and waits for it to exit; the test's end does the same.
func startServer(t testing.TB, dir string) (stop func()) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serveMCPEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			stdin.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Errorf("the MCP server did not stop when its input closed; stderr:\n%s", stderr.String())
			}
		})
	}
	t.Cleanup(stop)
	// The memory is open once its log is there (a SQLite memory is there before).
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "day1.log")); err == nil {
			return stop
		}
		if _, err := os.Stat(filepath.Join(dir, "memory.db")); err == nil {
			return stop
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("the MCP server did not open the memory in %s; stderr:\n%s", dir, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
