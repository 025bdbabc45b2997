package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport returns a transport that serves MCP over r and w (standard input
// and output) as newline-delimited JSON-RPC messages, as the SDK's stdio transport
// does, but reads on past a malformed line, answering it with a JSON-RPC error, and
// once r ends answers the requests already read, for up to drain, before the session
// closes. A drain of 0 answers none of them.
func StdioTransport(r io.Reader, w io.Writer, drain time.Duration) mcp.Transport {
	return &lineTransport{r: r, w: w, drain: drain}
}

// lineTransport serves MCP over newline-delimited JSON-RPC messages, as the SDK's
// stdio transport does, with two differences that keep an agent's memory tools alive:
//
//   - A line that is not a JSON-RPC message (not JSON, a batch, no jsonrpc "2.0", an
//     id that is neither a string nor a number, a request without a method) is
//     answered with a JSON-RPC error (-32700 parse error, -32600 invalid request)
//     and the server reads on. The SDK's transport ends the session on such a line.
//   - When the input ends, the requests already read are answered before the
//     session closes (for up to drain), so that a write that was applied is never
//     left without its reply.
type lineTransport struct {
	r     io.Reader
	w     io.Writer
	drain time.Duration // how long replies may take once the input has ended
	max   int           // the longest line read; a longer one is refused
}

// Connect starts reading r.
func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	max := t.max
	if max <= 0 {
		max = mcp.DefaultMaxLineLength
	}
	c := &lineConn{
		w: t.w, drain: t.drain,
		lines:    make(chan line),
		closed:   make(chan struct{}),
		answered: make(chan struct{}, 1),
		pending:  map[jsonrpc.ID]bool{},
	}
	go c.readLoop(bufio.NewReaderSize(t.r, 64<<10), max)
	return c, nil
}

// line is one line of input, or the error that ended it.
type line struct {
	data    []byte
	tooLong bool
	err     error
}

type lineConn struct {
	w       io.Writer
	writeMu sync.Mutex // one message a Write
	drain   time.Duration

	lines     chan line
	closed    chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	pending  map[jsonrpc.ID]bool // requests read and not yet answered
	answered chan struct{}       // signalled when a reply is written
}

// readLoop sends the lines of r to c.lines until r ends or c is closed. A Read of
// standard input cannot be interrupted, so the loop may outlive c until the next line.
func (c *lineConn) readLoop(br *bufio.Reader, max int) {
	for {
		var l line
		for {
			frag, err := br.ReadSlice('\n')
			if len(l.data)+len(frag) > max {
				l.tooLong, l.data = true, nil
			} else if !l.tooLong {
				l.data = append(l.data, frag...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && len(bytes.TrimSpace(l.data)) == 0 && !l.tooLong {
				l.err = err
			}
			break
		}
		select {
		case c.lines <- l:
		case <-c.closed:
			return
		}
		if l.err != nil {
			return
		}
	}
}

// Read returns the next message, answering malformed lines itself.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case l := <-c.lines:
			if l.err != nil {
				c.awaitReplies(ctx)
				return nil, l.err
			}
			msg, reply := parseLine(l)
			if reply != nil {
				if err := c.writeLine(reply); err != nil {
					return nil, err
				}
				continue
			}
			if msg == nil {
				continue // a blank line
			}
			if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
				c.mu.Lock()
				c.pending[req.ID] = true
				c.mu.Unlock()
			}
			return msg, nil
		}
	}
}

// awaitReplies waits until every request read has been answered, the drain time
// has passed, or the connection or ctx ends.
func (c *lineConn) awaitReplies(ctx context.Context) {
	timer := time.NewTimer(c.drain)
	defer timer.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
		case <-timer.C:
			return
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Write sends one message on its own line.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if err := c.writeLine(data); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return nil
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// Close ends the connection; a Read waiting for input returns.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: one process serves one session.
func (c *lineConn) SessionID() string { return "" }

// parseLine reads one line of input as a JSON-RPC message. It returns the message,
// or the error reply the line gets, or neither for a blank line.
func parseLine(l line) (jsonrpc.Message, []byte) {
	if l.tooLong {
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "the message is longer than the longest line this server reads")
	}
	data := bytes.TrimSpace(l.data)
	if len(data) == 0 {
		return nil, nil
	}
	if !json.Valid(data) {
		return nil, errorReply(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
	}
	if data[0] != '{' {
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is one JSON-RPC object; batches are not supported")
	}
	var head struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	id := head.ID
	if len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') {
		if string(id) != "null" {
			return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: an id is a string or a number")
		}
		id = nil
	}
	switch {
	case string(head.JSONRPC) != `"2.0"`:
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	case len(head.Method) == 0 && (len(id) == 0 || len(head.Result) == 0 && len(head.Error) == 0):
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, "invalid request: a request needs a method")
	case len(head.Method) > 0 && head.Method[0] != '"':
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, "invalid request: the method is a string")
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	return msg, nil
}

// errorReply is a JSON-RPC error response to the request with id (null when the id
// could not be read).
func errorReply(id json.RawMessage, code int64, message string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, message}})
	return data
}
