package main

import (
	"context"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1"
)

// serverName and serverVersion identify the server to MCP clients.
const (
	serverName    = "day1"
	serverVersion = "0.1.0"
)

// instructions tell a model what the server is for.
const instructions = `day1 is git-like memory for agents. Write what you learn with memory_write_fact,
memory_write_observation and memory_write_relation; find it again with memory_search,
memory_timeline and memory_graph_query. Work on a branch of your own (memory_branch_create,
memory_branch_switch), compare and merge it back (memory_branch_diff, memory_branch_merge),
snapshot memory and read the past (memory_snapshot, memory_time_travel). Tasks, handoffs,
verification, bundles and replays coordinate several agents. A call that names no branch
uses the branch memory_branch_switch chose for this session, or main.`

// memServer holds the memory and the state each MCP session keeps: its current branch.
type memServer struct {
	c *day1.Client

	mu      sync.Mutex
	current map[*mcp.ServerSession]string
}

// newServer returns an MCP server with every tool and resource of the memory c.
func newServer(c *day1.Client) *mcp.Server {
	m := &memServer{c: c, current: make(map[*mcp.ServerSession]string)}
	s := mcp.NewServer(&mcp.Implementation{Name: serverName, Title: "day1 memory", Version: serverVersion}, &mcp.ServerOptions{
		Instructions: instructions,
		// Sessions of the newest protocol carry no state from one request to the next,
		// and memory_branch_switch needs that state: offer the versions with sessions.
		SupportedProtocolVersions: sessionProtocolVersions(),
		InitializedHandler:        m.initialized,
		Capabilities:              &mcp.ServerCapabilities{},
	})
	m.addWriteTools(s)
	m.addReadTools(s)
	m.addBranchTools(s)
	m.addSnapshotTools(s)
	m.addTaskTools(s)
	m.addHandoffTools(s)
	m.addConversationTools(s)
	m.addCurationTools(s)
	m.addBundleTools(s)
	m.addReplayTools(s)
	m.addSessionTools(s)
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
		delete(m.current, ss)
		m.mu.Unlock()
	}()
}

// branch returns the branch a call works on: the one it names, else the session's
// current branch, else "" (the library's default branch).
func (m *memServer) branch(ss *mcp.ServerSession, named string) string {
	if named != "" || ss == nil {
		return named
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.current[ss]
}

// setBranch makes name the session's current branch and returns the previous one.
func (m *memServer) setBranch(ss *mcp.ServerSession, name string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := m.current[ss]
	m.current[ss] = name
	return prev
}

// currentBranch returns the session's current branch, day1.DefaultBranch when it has
// not switched.
func (m *memServer) currentBranch(ss *mcp.ServerSession) string {
	if b := m.branch(ss, ""); b != "" {
		return b
	}
	return day1.DefaultBranch
}

// handler is a tool's work: it returns the structured result and one short line of text.
type handler[In, Out any] func(ctx context.Context, ss *mcp.ServerSession, in In) (Out, string, error)

// addTool adds a tool whose errors become tool errors carrying the library's message,
// so that the model reads why and the server goes on serving.
func addTool[In, Out any](s *mcp.Server, name, description string, h handler[In, Out]) {
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: description},
		func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
			out, text, err := h(ctx, req.Session, in)
			if err != nil {
				var zero Out
				return nil, zero, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
		})
}
