package main

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/cmd/day1/internal/api"
	"github.com/day1ai/day1/mcpserver"
)

// TestServeRefuses checks what day1 serve refuses before it opens the memory: a
// reachable address without a token, a token under 32 characters, a malformed address.
func TestServeRefuses(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("k", 32)
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"serve", "--addr", "0.0.0.0:0"}, "--token"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--token", "s3cret"}, "at least 32"},
		{[]string{"serve", "--addr", "0.0.0.0:0", "--token", strings.Repeat("k", 31)}, "at least 32"},
		{[]string{"serve", "--addr", "nonsense"}, "host:port"},
	} {
		stdout, stderr, code := day1Run(t, dir, "", c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.says) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a usage error saying %q", c.args, code, stdout, stderr, c.says)
		}
	}
	if err := checkAddr("0.0.0.0:7077", long); err != nil {
		t.Errorf("a 32-character token on every interface: %v", err)
	}
	if err := checkAddr("localhost:7077", ""); err != nil {
		t.Errorf("loopback without a token: %v", err)
	}
}

// TestServeStopsAtOnce checks that Ctrl-C stops day1 serve promptly while the
// inspector's event stream is open: the stream ends with the server instead of
// holding its shutdown until the timeout.
func TestServeStopsAtOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sends SIGINT")
	}
	dir := t.TempDir()
	if _, stderr, code := day1Run(t, dir, "", "init"); code != 0 {
		t.Fatal(stderr)
	}
	cmd := processCommand(t, "--path", dir, "serve", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	url := regexp.MustCompile(`http://[^ /]+/`).FindString(line)
	if err != nil || url == "" {
		t.Fatalf("serve said %q, %v", line, err)
	}
	res, err := http.Get(url + "events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := bufio.NewReader(res.Body).ReadString('\n'); err != nil {
		t.Fatalf("the event stream: %v", err)
	}
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if took := time.Since(start); err != nil || took > 2*time.Second {
			t.Errorf("serve stopped in %v with %v; want a clean stop within 2 s", took, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10 s of Ctrl-C")
	}
}

// TestServeMCP checks that day1 serve --mcp serves MCP at /mcp beside the API, both
// behind the token, and that without --mcp /mcp is not served.
func TestServeMCP(t *testing.T) {
	c, err := day1.Open(context.Background(), day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const token = "0123456789abcdef0123456789abcdef"
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	do := func(url, method, path, auth, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	with := httptest.NewServer(serveHandler(c, api.Options{Token: token}, true))
	defer with.Close()
	for _, tt := range []struct {
		method, path, auth, body string
		want                     int
	}{
		{"POST", mcpserver.Path, token, initialize, http.StatusOK},
		{"POST", mcpserver.Path, "", initialize, http.StatusUnauthorized},
		{"GET", "/api/v1/branches", token, "", http.StatusOK},
		{"GET", "/api/v1/branches", "", "", http.StatusUnauthorized},
	} {
		if got := do(with.URL, tt.method, tt.path, tt.auth, tt.body); got != tt.want {
			t.Errorf("--mcp: %s %s (token %t): %d; want %d", tt.method, tt.path, tt.auth != "", got, tt.want)
		}
	}
	without := httptest.NewServer(serveHandler(c, api.Options{Token: token}, false))
	defer without.Close()
	if got := do(without.URL, "POST", mcpserver.Path, token, initialize); got == http.StatusOK {
		t.Errorf("without --mcp: POST %s answered 200", mcpserver.Path)
	}
}
