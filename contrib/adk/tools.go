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
// agent's Tools: search_memory, search_memory_at, write_fact, correct_fact,
// create_branch, diff_branches, merge_branch, create_snapshot, hand_off and
// accept_handoff, with the names, descriptions and input schemas that package
// agenttool gives every framework. They
// act on c directly, on the branches the model names (main by default); the
// MemoryService's per-user branches are theirs to name.
func MemoryTools(c *day1.Client) ([]tool.Tool, error) {
	if c == nil {
		return nil, fmt.Errorf("day1/adk: MemoryTools needs a Client: %w", day1.ErrInvalidArgument)
	}
	var out []tool.Tool
	for _, t := range agenttool.Tools() {
		ft, err := functiontool.New(functiontool.Config{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema},
			func(ctx agent.Context, args map[string]any) (map[string]any, error) {
				in, err := json.Marshal(args)
				if err != nil {
					return nil, err
				}
				res, err := t.Run(ctx, c, in)
				if err != nil {
					return nil, err
				}
				b, err := json.Marshal(res)
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
