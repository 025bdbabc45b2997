package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
)

// Name and Version identify the server to MCP clients.
const (
	Name    = "day1"
	Version = "0.1.0"
)

// Instructions tell a model what the server is for: the server's instructions to
// its clients.
const Instructions = `day1 is git-like memory for agents. Write what you learn with memory_write_fact,
memory_write_observation and memory_write_relation; find it again with memory_search,
memory_timeline and memory_graph_query. Work on a branch of your own (memory_branch_create,
memory_branch_switch), compare and merge it back (memory_branch_diff, memory_branch_merge),
snapshot memory and read the past (memory_snapshot, memory_time_travel). Tasks, handoffs,
verification, bundles and replays coordinate several agents. A call that names no branch
uses the branch memory_branch_switch chose for this session, or main.`

// memServer holds the memory and the state each MCP session keeps: its
// agenttool.Session (the current branch, and the client's name as the caller).
type memServer struct {
	c *day1.Client

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*agenttool.Session
}

// New returns an MCP server with every tool of package agenttool and the resources of
// the memory c. Each MCP session gets an agenttool.Session of its own, named after
// the client as it introduced itself, whose current branch memory_branch_switch
// sets. Serve it with Run and a transport: StdioTransport, HTTPHandler, or one of
// the SDK's.
func New(c *day1.Client) *mcp.Server {
	m := &memServer{c: c, sessions: make(map[*mcp.ServerSession]*agenttool.Session)}
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "day1 memory", Version: Version}, &mcp.ServerOptions{
		Instructions: Instructions,
		// Sessions of the newest protocol carry no state from one request to the next,
		// and memory_branch_switch needs that state: offer the versions with sessions.
		SupportedProtocolVersions: sessionProtocolVersions(),
		InitializedHandler:        m.initialized,
		Capabilities:              &mcp.ServerCapabilities{},
	})
	for _, t := range agenttool.Tools() {
		m.addTool(s, t)
	}
	m.addResources(s)
	return s
}

// sessionProtocolVersions returns the protocol versions that keep a session.
func sessionProtocolVersions() []string {
	return slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= "2026-07-28" })
}

// initialized forgets a session's state once the session ends.
func (m *memServer) initialized(_ context.Context, req *mcp.InitializedRequest) {
	ss := req.Session
	if ss == nil {
		return
	}
	go func() {
		_ = ss.Wait()
		m.mu.Lock()
		delete(m.sessions, ss)
		m.mu.Unlock()
	}()
}

// session returns the tools' session of an MCP session, made at its first call; a
// request with no MCP session gets one of its own.
func (m *memServer) session(ss *mcp.ServerSession) *agenttool.Session {
	if ss == nil {
		return agenttool.NewSession(m.c, "mcp")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[ss]
	if s == nil {
		s = agenttool.NewSession(m.c, clientName(ss))
		m.sessions[ss] = s
	}
	return s
}

// clientName names the MCP client of a session, as it introduced itself, or "mcp".
func clientName(ss *mcp.ServerSession) string {
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
		return p.ClientInfo.Name
	}
	return "mcp"
}

// addTool serves a tool: its answer is the tool's output as structured content and
// its line of text; its errors become tool errors carrying the library's message, so
// that the model reads why and the server goes on serving. The SDK checks the
// arguments and the answer against the tool's schemas.
func (m *memServer) addTool(s *mcp.Server, t agenttool.Tool) {
	mcp.AddTool(s, &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema},
		func(ctx context.Context, req *mcp.CallToolRequest, in json.RawMessage) (*mcp.CallToolResult, any, error) {
			res, err := t.Run(ctx, m.session(req.Session), in)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}}, res.Output, nil
		})
}
