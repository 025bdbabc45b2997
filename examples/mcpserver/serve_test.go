package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1/agenttool"
	"github.com/day1ai/day1/internal/testkit"
)

// TestHTTPSessions checks that over HTTP each MCP session keeps its own current
// branch.
func TestHTTPSessions(t *testing.T) {
	t.Parallel()
	url, _ := startHTTP(t, "-memory", "-http", "127.0.0.1:0")
	a, b := connectHTTP(t, url), connectHTTP(t, url)
	for _, name := range []string{"agent-a", "agent-b"} {
		call[agenttool.BranchView](t, a, "memory_branch_create", map[string]any{"branch_name": name})
	}
	call[agenttool.BranchSwitchOut](t, a, "memory_branch_switch", map[string]any{"branch_name": "agent-a"})
	call[agenttool.BranchSwitchOut](t, b, "memory_branch_switch", map[string]any{"branch_name": "agent-b"})

	wa := call[agenttool.WriteFactOut](t, a, "memory_write_fact", map[string]any{"fact_text": "Agent A prefers table-driven tests"})
	wb := call[agenttool.WriteFactOut](t, b, "memory_write_fact", map[string]any{"fact_text": "Agent B found the flaky test in the cache layer"})
	if wa.Fact.Branch != "agent-a" || wb.Fact.Branch != "agent-b" {
		t.Fatalf("writes landed on %s and %s, want agent-a and agent-b", wa.Fact.Branch, wb.Fact.Branch)
	}
	if la := call[agenttool.BranchListOut](t, a, "memory_branch_list", nil); la.Current != "agent-a" {
		t.Errorf("session A's current branch is %s", la.Current)
	}
	// Each session's reads default to its own branch, and main saw neither write.
	sa := call[agenttool.SearchOut](t, a, "memory_search", map[string]any{"query": "flaky cache layer", "search_type": "keyword"})
	sb := call[agenttool.SearchOut](t, b, "memory_search", map[string]any{"query": "flaky cache layer", "search_type": "keyword"})
	if len(sa.Hits) != 0 || len(sb.Hits) != 1 || sb.Hits[0].ID != wb.FactID {
		t.Errorf("search for B's fact: from A %+v, from B %+v", sa.Hits, sb.Hits)
	}
	c := connectHTTP(t, url)
	if tl := call[agenttool.TimelineOut](t, c, "memory_timeline", nil); tl.Branch != "main" || len(tl.Events) != 0 {
		t.Errorf("a new session reads %s with %d events, want an empty main", tl.Branch, len(tl.Events))
	}
}

func TestHTTPRefusesRemote(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-memory", "-http", "0.0.0.0:0"},
		{"-memory", "-http", ":0"},
		{"-memory", "-http", "0.0.0.0:0", "-allow-remote"},
		{"-memory", "-http", "127.0.0.1:0", "-token", "s3cret"},
	} {
		cmd := serverCommand(t, args...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%v: err %v, output %q; want a refusal", args, err, out)
		}
		if !strings.Contains(string(out), "loopback") && !strings.Contains(string(out), "-token") {
			t.Errorf("%v: output %q does not say why", args, out)
		}
	}
}

func TestHTTPToken(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef0123456789abcdef"
	url, _ := startHTTP(t, "-memory", "-http", "127.0.0.1:0", "-token", token)
	if code := postStatus(t, url, ""); code != http.StatusUnauthorized {
		t.Errorf("without the token: status %d, want 401", code)
	}
	cs := connectWithToken(t, url, token)
	call[agenttool.WriteFactOut](t, cs, "memory_write_fact", map[string]any{"fact_text": "tokens work"})
}

// TestServersShareOnePath runs two servers on one durable store, as two agent
// sessions do: each finds at once what the other wrote, and decides on it (the same
// text written through the second is not added again).
//
// It runs on a memory of each kind: the log store and the SQLite store.
func TestServersShareOnePath(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"log", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testkit.MakeMemory(t, kind, dir)
			serversShareOnePath(t, dir)
		})
	}
}

func serversShareOnePath(t *testing.T, dir string) {
	a := connectStdio(t, "-path", dir)
	b := connectStdio(t, "-path", dir)
	wa := call[agenttool.WriteFactOut](t, a, "memory_write_fact", map[string]any{"fact_text": "The flaky test waits on the cache warmer"})
	o := call[agenttool.WriteObservationOut](t, b, "memory_write_observation", map[string]any{
		"observation_type": "tool_use", "summary": "ran go test ./...", "tool_name": "Bash", "session_id": "hook-1",
	})
	deadline := time.Now().Add(time.Second)
	for {
		tl := call[agenttool.TimelineOut](t, a, "memory_timeline", map[string]any{"session_id": "hook-1"})
		if len(tl.Events) == 1 && tl.Events[0].ID == o.ObservationID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a second after the other server wrote it, the first's timeline = %+v; want %s", tl.Events, o.ObservationID)
		}
		time.Sleep(10 * time.Millisecond)
	}
	wb := call[agenttool.WriteFactOut](t, b, "memory_write_fact", map[string]any{"fact_text": "The flaky test waits on the cache warmer"})
	if wb.FactID != wa.FactID {
		t.Errorf("the text the first server wrote, written through the second: fact %s; want the first's %s", wb.FactID, wa.FactID)
	}
}

// TestSignalStopsServer checks that SIGINT stops a server cleanly.
func TestSignalStopsServer(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT for another process on Windows")
	}
	t.Parallel()
	dir := t.TempDir()
	_, cmd := startHTTP(t, "-path", dir, "-http", "127.0.0.1:0")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the server exited with %v after SIGINT", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the server did not stop on SIGINT")
	}
}

// TestHTTPRefusesOtherSites checks that web pages of other sites cannot reach the
// server: through another origin, or through a host name rebound to loopback.
func TestHTTPRefusesOtherSites(t *testing.T) {
	t.Parallel()
	url, _ := startHTTP(t, "-memory", "-http", "127.0.0.1:0")
	for _, c := range []struct {
		header map[string]string
		want   int
	}{
		{map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{map[string]string{"Host": "attacker.example"}, http.StatusForbidden},
		{map[string]string{"Host": "localhost"}, http.StatusOK},
		{nil, http.StatusOK},
	} {
		if code := postStatusWith(t, url, "", c.header); code != c.want {
			t.Errorf("initialize with %v: status %d, want %d", c.header, code, c.want)
		}
	}
}

// postStatus posts an MCP initialize request with an optional bearer token and
// returns the status code.
func postStatus(t *testing.T, url, token string) int {
	t.Helper()
	return postStatusWith(t, url, token, nil)
}

// postStatusWith is postStatus with more headers ("Host" sets the request's host).
func postStatusWith(t *testing.T, url, token string, header map[string]string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// connectWithToken connects over streamable HTTP with a bearer token.
func connectWithToken(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
