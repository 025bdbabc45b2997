package eino

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
)

// Tool is one of day1's memory tools (see package agenttool) as an Eino invokable
// tool, for a ChatModel to call through a ToolsNode.
type Tool struct {
	s    *agenttool.Session
	t    agenttool.Tool
	info *schema.ToolInfo
}

var _ tool.InvokableTool = (*Tool)(nil)

// MemoryTools returns day1's memory tools over c as Eino tools: every tool of
// package agenttool (memory_search, memory_write_fact, memory_branch_create,
// memory_branch_merge, memory_snapshot, memory_time_travel, memory_handoff_create,
// ...), with the names, descriptions and input schemas that the MCP server and every
// framework adapter share. The tools of one call share one agenttool.Session, whose
// caller is "eino": memory_branch_switch sets the branch their later calls work on
// when they name none (main at first).
func MemoryTools(c *day1.Client) ([]tool.BaseTool, error) {
	if c == nil {
		return nil, fmt.Errorf("day1/eino: MemoryTools needs a Client: %w", day1.ErrInvalidArgument)
	}
	sess := agenttool.NewSession(c, "eino")
	var out []tool.BaseTool
	for _, t := range agenttool.Tools() {
		// The two schema packages describe the same JSON Schema: one is read as the other.
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("day1/eino: the schema of %s: %w", t.Name, err)
		}
		var js jsonschema.Schema
		if err := json.Unmarshal(b, &js); err != nil {
			return nil, fmt.Errorf("day1/eino: the schema of %s: %w", t.Name, err)
		}
		out = append(out, &Tool{s: sess, t: t, info: &schema.ToolInfo{Name: t.Name, Desc: t.Description, ParamsOneOf: schema.NewParamsOneOfByJSONSchema(&js)}})
	}
	return out, nil
}

// Info describes the tool to the model.
func (t *Tool) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

// InvokableRun runs the tool with the model's arguments and returns its output as a
// JSON object. Bad arguments are an error that wraps day1.ErrInvalidArgument.
func (t *Tool) InvokableRun(ctx context.Context, argumentsInJSON string, _ ...tool.Option) (string, error) {
	res, err := t.t.Run(ctx, t.s, json.RawMessage(argumentsInJSON))
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(res.Output)
	if err != nil {
		return "", fmt.Errorf("day1/eino: the output of %s: %w", t.t.Name, err)
	}
	return string(b), nil
}
