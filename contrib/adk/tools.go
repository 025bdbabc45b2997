package adk

import (
	"encoding/json"
	"fmt"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
)

// MemoryTools returns day1's memory tools over c as ADK function tools, for an LLM
// agent's Tools: every tool of package agenttool (memory_search, memory_write_fact,
// memory_branch_create, memory_branch_merge, memory_snapshot, memory_time_travel,
// memory_handoff_create, ...), with the names, descriptions and schemas that the MCP
// server and every framework adapter share. The tools of one call share one
// agenttool.Session, whose caller is "adk": memory_branch_switch sets the branch
// their later calls work on when they name none (main at first). The
// MemoryService's per-user branches are theirs to name.
func MemoryTools(c *day1.Client) ([]tool.Tool, error) {
	if c == nil {
		return nil, fmt.Errorf("day1/adk: MemoryTools needs a Client: %w", day1.ErrInvalidArgument)
	}
	sess := agenttool.NewSession(c, "adk")
	var out []tool.Tool
	for _, t := range agenttool.Tools() {
		ft, err := functiontool.New(functiontool.Config{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema},
			func(ctx agent.Context, args map[string]any) (map[string]any, error) {
				in, err := json.Marshal(args)
				if err != nil {
					return nil, err
				}
				res, err := t.Run(ctx, sess, in)
				if err != nil {
					return nil, err
				}
				b, err := json.Marshal(res.Output)
				if err != nil {
					return nil, err
				}
				var m map[string]any
				return m, json.Unmarshal(b, &m)
			})
		if err != nil {
			return nil, fmt.Errorf("day1/adk: tool %s: %w", t.Name, err)
		}
		out = append(out, ft)
	}
	return out, nil
}
