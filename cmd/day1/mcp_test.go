package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/day1ai/day1/agenttool"
)

// TestMCP checks that "day1 mcp" serves the memory over MCP on standard input and
// output: it answers initialize, lists every tool of package agenttool, runs a tool
// call against the memory at --path, answers a malformed line with a parse error, and
// exits 0 when its input ends.
func TestMCP(t *testing.T) {
	dir := t.TempDir()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`not json`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_write_fact","arguments":{"fact_text":"The gateway terminates TLS"}}}`,
	}, "\n") + "\n"
	stdout, stderr, code := day1Run(t, dir, in, "mcp")
	if code != 0 {
		t.Fatalf("day1 mcp exited %d; stderr: %s", code, stderr)
	}
	byID := map[string]json.RawMessage{}
	parseErrors := 0
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r struct {
			ID     json.RawMessage     `json:"id"`
			Result json.RawMessage     `json:"result"`
			Error  *struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("a reply that is not JSON: %s", line)
		}
		if r.Error != nil && r.Error.Code == -32700 {
			parseErrors++
			continue
		}
		byID[string(r.ID)] = r.Result
	}
	if parseErrors != 1 {
		t.Errorf("%d parse errors; want 1, for the malformed line", parseErrors)
	}
	var init struct{ ServerInfo struct{ Name string } }
	var tools struct{ Tools []struct{ Name string } }
	var call struct{ IsError bool }
	json.Unmarshal(byID["1"], &init)
	json.Unmarshal(byID["2"], &tools)
	json.Unmarshal(byID["3"], &call)
	if init.ServerInfo.Name != "day1" || len(tools.Tools) != len(agenttool.Tools()) || byID["3"] == nil || call.IsError {
		t.Errorf("server %q, %d tools (want %d), write_fact %s", init.ServerInfo.Name, len(tools.Tools), len(agenttool.Tools()), byID["3"])
	}
	out, _, code := day1Run(t, dir, "", "search", "gateway TLS")
	if code != 0 || !strings.Contains(out, "The gateway terminates TLS") {
		t.Errorf("day1 search after the MCP write: exit %d\n%s", code, out)
	}
}
