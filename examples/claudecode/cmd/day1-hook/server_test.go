package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

var (
	serverOnce sync.Once
	serverPath string
	serverErr  error
)

// serverBinary builds the MCP server of examples/mcpserver once per test binary, into
// the folder of the hook's binary.
func serverBinary(t testing.TB) string {
	t.Helper()
	hookBinary(t) // makes binDir
	serverOnce.Do(func() {
		name := "day1-mcpserver"
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		serverPath = filepath.Join(binDir, name)
		out, err := exec.Command("go", "build", "-o", serverPath, "../../../mcpserver").CombinedOutput()
		if err != nil {
			serverErr = errors.New(string(out))
		}
	})
	if serverErr != nil {
		t.Fatalf("building the MCP server: %v", serverErr)
	}
	return serverPath
}

// startServer runs the MCP server on the durable memory in dir, as Claude Code runs
// it (over stdio, its standard input kept open), and waits until it has the memory
// open. The returned function stops it as Claude Code does, by closing its standard
// input, and waits for it to exit; the test's end does the same.
func startServer(t testing.TB, dir string) (stop func()) {
	t.Helper()
	cmd := exec.Command(serverBinary(t), "-path", dir)
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
