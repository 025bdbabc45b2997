package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// rawServer is a server over stdio driven line by line.
type rawServer struct {
	t     *testing.T
	in    io.WriteCloser
	out   *bufio.Scanner
	lines chan string
}

// reply is a JSON-RPC response as the tests read it.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func startRaw(t *testing.T) *rawServer {
	t.Helper()
	cmd := serverCommand(t, "-memory")
	cmd.Stderr = testWriter{t}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	startProcess(t, cmd)
	s := &rawServer{t: t, in: in, out: bufio.NewScanner(out), lines: make(chan string)}
	s.out.Buffer(nil, 16<<20)
	go func() {
		defer close(s.lines)
		for s.out.Scan() {
			s.lines <- s.out.Text()
		}
	}()
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := s.read(); r.Error != nil || len(r.Result) == 0 {
		t.Fatalf("initialize: %+v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *rawServer) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("writing %q: %v", line, err)
	}
}

// read returns the next reply; it fails the test after 20 s or at the end of output.
func (s *rawServer) read() reply {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("the server closed its output")
		}
		var r reply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			s.t.Fatalf("reply %q: %v", l, err)
		}
		return r
	case <-time.After(20 * time.Second):
		s.t.Fatal("no reply in 20 s")
	}
	return reply{}
}

// TestStdioMalformedLines checks that a line that is not a JSON-RPC message gets a
// JSON-RPC error and that the server goes on serving.
func TestStdioMalformedLines(t *testing.T) {
	t.Parallel()
	s := startRaw(t)
	for _, c := range []struct {
		line string
		code int
		id   string
	}{
		{`not json`, -32700, "null"},
		{`"jsonrpc":"1.0"`, -32700, "null"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"`, -32700, "null"},
		{`[1,2,3]`, -32600, "null"},
		{`[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`, -32600, "null"},
		{`{}`, -32600, "null"},
		{`42`, -32600, "null"},
		{`{"jsonrpc":"1.0","id":3,"method":"tools/list"}`, -32600, "3"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":[4],"method":"tools/list"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":5}`, -32600, "5"},
		{`{"jsonrpc":"2.0","id":"six","method":7}`, -32600, `"six"`},
	} {
		s.send(c.line)
		r := s.read()
		if r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id {
			t.Errorf("%s: reply id %s, error %+v; want code %d, id %s", c.line, r.ID, r.Error, c.code, c.id)
		}
		// The server still answers.
		s.send(`{"jsonrpc":"2.0","id":"after","method":"tools/list"}`)
		if r := s.read(); r.Error != nil || string(r.ID) != `"after"` || !strings.Contains(string(r.Result), "memory_search") {
			t.Fatalf("after %s: %+v", c.line, r)
		}
	}
	// Blank lines are skipped without a reply.
	s.send("")
	s.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if r := s.read(); string(r.ID) != "9" || r.Error != nil {
		t.Errorf("ping after a blank line: %+v", r)
	}
}

// codeResourceNotFound is the MCP specification's error code for a read of a missing
// resource.
const codeResourceNotFound = -32002

// TestStdioMissingResource checks the error code of a read of a missing resource.
func TestStdioMissingResource(t *testing.T) {
	t.Parallel()
	s := startRaw(t)
	for i, uri := range []string{"day1://timeline/nope", "day1://replay/nope"} {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%q}}`, i+1, uri))
		if r := s.read(); r.Error == nil || r.Error.Code != codeResourceNotFound {
			t.Errorf("resources/read %s: %+v; want code %d", uri, r.Error, codeResourceNotFound)
		}
	}
}

// TestStdioRepliesAfterInputEnds checks that requests read before standard input
// closes are all answered: a write that was applied gets its reply.
func TestStdioRepliesAfterInputEnds(t *testing.T) {
	t.Parallel()
	s := startRaw(t)
	const n = 8
	for i := range n {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_write_fact","arguments":{"fact_text":"fact number %d written just before the input closed"}}}`, 100+i, i))
	}
	s.in.Close()
	got := map[string]bool{}
	for range n {
		r := s.read()
		if r.Error != nil || len(r.Result) == 0 || strings.Contains(string(r.Result), `"isError":true`) {
			t.Errorf("reply %s: %+v %s", r.ID, r.Error, r.Result)
		}
		got[string(r.ID)] = true
	}
	if len(got) != n {
		t.Errorf("replies to %d requests; want %d", len(got), n)
	}
}
