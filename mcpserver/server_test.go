package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
	"github.com/day1ai/day1/mcpserver"
)

// open returns an MCP server over a new in-memory Client.
func open(t *testing.T) *mcp.Server {
	t.Helper()
	c, err := day1.Open(context.Background(), day1.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return mcpserver.New(c)
}

// TestServeInProcess connects a client to New's server in the same process: it
// lists every tool of package agenttool, and a fact the client writes is found by a
// search.
func TestServeInProcess(t *testing.T) {
	ctx := context.Background()
	srv := open(t)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if init := cs.InitializeResult(); init.ServerInfo.Name != mcpserver.Name || init.Instructions != mcpserver.Instructions {
		t.Errorf("server info %+v, instructions %q", init.ServerInfo, init.Instructions)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != len(agenttool.Tools()) {
		t.Fatalf("ListTools: %d tools, %v; want %d", len(tools.Tools), err, len(agenttool.Tools()))
	}
	call := func(name string, args map[string]any, out any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v, %v", name, res, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
	var w agenttool.WriteFactOut
	call("memory_write_fact", map[string]any{"fact_text": "The billing service retries failed charges twice"}, &w)
	if w.Outcome != "created" || w.Fact.Text != "The billing service retries failed charges twice" {
		t.Errorf("write_fact: %+v", w)
	}
	var s agenttool.SearchOut
	call("memory_search", map[string]any{"query": "billing retries"}, &s)
	if len(s.Hits) == 0 || s.Hits[0].ID != w.FactID {
		t.Errorf("search hits %+v; want %s first", s.Hits, w.FactID)
	}
}

// TestStdioTransportReadsOn checks that StdioTransport answers a line that is not
// JSON with a parse error and goes on serving the next request, and that closing the
// input ends the session.
func TestStdioTransportReadsOn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := open(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, mcpserver.StdioTransport(inR, outW, time.Second)); outW.Close() }()
	replies := bufio.NewScanner(outR)
	send := func(line string) string {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if !replies.Scan() {
			t.Fatalf("no reply to %s: %v", line, replies.Err())
		}
		return replies.Text()
	}
	if got := send("this is not json"); !strings.Contains(got, "-32700") {
		t.Errorf("a malformed line: %s; want a parse error", got)
	}
	got := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if !strings.Contains(got, `"serverInfo"`) {
		t.Errorf("initialize after a malformed line: %s", got)
	}
	inW.Close()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the session did not end when its input closed")
	}
}

// TestHTTPHandlerToken checks that HTTPHandler refuses a request without the bearer
// token, and serves one with it.
func TestHTTPHandlerToken(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	hs := httptest.NewServer(mcpserver.HTTPHandler(open(t), token, nil))
	defer hs.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	post := func(auth string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, hs.URL+mcpserver.Path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := post(""); got != http.StatusUnauthorized {
		t.Errorf("no token: %d; want 401", got)
	}
	if got := post("Bearer wrong"); got != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d; want 401", got)
	}
	if got := post("Bearer " + token); got != http.StatusOK {
		t.Errorf("the token: %d; want 200", got)
	}
}
