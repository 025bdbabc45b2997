package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
)

// Resource addresses.
const (
	branchesURI       = "day1://branches"
	timelinePrefix    = "day1://timeline/"
	timelineTemplate  = timelinePrefix + "{+branch}"
	replayPrefix      = "day1://replay/"
	replayURITemplate = replayPrefix + "{task}"
)

func (m *memServer) addResources(s *mcp.Server) {
	s.AddResource(&mcp.Resource{
		URI: branchesURI, Name: "branches", MIMEType: "application/json",
		Description: "Every branch of memory, with its parent and status.",
	}, m.readBranches)
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: timelineTemplate, Name: "branch timeline", MIMEType: "application/json",
		Description: "What was recorded on a branch, in time order (the first 1000 events at most).",
	}, m.readTimeline)
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: replayURITemplate, Name: "task replay", MIMEType: "application/json",
		Description: "A task's run rebuilt from memory: its steps, agents, verified facts and outcome.",
	}, m.readReplay)
}

// codeResourceNotFound is the error code of a read of a missing resource in the
// protocol versions this server offers (up to 2025-11-25). The SDK's
// ResourceNotFoundError follows a later revision, which moved it to -32602.
const codeResourceNotFound = -32002

// resourceNotFound is the error of a read of a resource that does not exist.
func resourceNotFound(uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: codeResourceNotFound, Message: "Resource not found: " + uri, Data: data}
}

// readError is the protocol error of a failed resource read: not found for a
// missing branch or task, the library's error otherwise.
func readError(uri string, err error) error {
	if errors.Is(err, day1.ErrNotFound) || errors.Is(err, day1.ErrInvalidArgument) {
		return resourceNotFound(uri)
	}
	return err
}

// jsonResource returns v as the JSON content of the resource uri.
func jsonResource(uri string, v any) (*mcp.ReadResourceResult, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(data)}}}, nil
}

// read runs the tool name with args for a resource read and returns its output.
func (m *memServer) read(ctx context.Context, name string, args map[string]string) (any, error) {
	t, ok := agenttool.Find(name)
	if !ok {
		return nil, errors.New("no tool " + name) // a bug: the tools are this module's
	}
	in, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	res, err := t.Run(ctx, agenttool.NewSession(m.c, "mcp"), in)
	return res.Output, err
}

func (m *memServer) readBranches(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	out, err := m.read(ctx, "memory_branch_list", nil)
	if err != nil {
		return nil, err
	}
	return jsonResource(req.Params.URI, out.(agenttool.BranchListOut).Branches)
}

func (m *memServer) readTimeline(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	branch, ok := strings.CutPrefix(uri, timelinePrefix)
	if !ok || branch == "" {
		return nil, resourceNotFound(uri)
	}
	out, err := m.read(ctx, "memory_timeline", map[string]string{"branch": branch})
	if err != nil {
		return nil, readError(uri, err)
	}
	return jsonResource(uri, out)
}

func (m *memServer) readReplay(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	task, ok := strings.CutPrefix(uri, replayPrefix)
	if !ok || task == "" {
		return nil, resourceNotFound(uri)
	}
	out, err := m.read(ctx, "memory_task_replay", map[string]string{"task_id": task})
	if err != nil {
		return nil, readError(uri, err)
	}
	return jsonResource(uri, out)
}
