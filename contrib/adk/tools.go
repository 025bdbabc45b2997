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

// BranchStateKey is the key of the ADK session state that holds the branch the
// session's memory tools work on when a call names none (memory_branch_switch sets
// it).
const BranchStateKey = "day1:branch"

// MemoryTools returns day1's memory tools over c as ADK function tools, for an LLM
// agent's Tools: every tool of package agenttool (memory_search, memory_write_fact,
// memory_branch_create, memory_branch_merge, memory_snapshot, memory_time_travel,
// memory_handoff_create, ...), with the names, descriptions and schemas that the MCP
// server and every framework adapter share. Each call runs for the agent that makes
// it (its name is recorded as who corrects or merges) in its ADK session: the branch
// memory_branch_switch chooses is kept in the session's state (BranchStateKey), so
// that the session's later calls that name no branch work on it, and other sessions
// do not (main until they switch). The MemoryService's per-user branches are theirs
// to name.
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
				sess := agenttool.NewSession(c, ctx.AgentName())
				if v, err := ctx.State().Get(BranchStateKey); err == nil {
					if b, ok := v.(string); ok {
						sess.SetBranch(b)
					}
				}
				before := sess.Branch()
				res, err := t.Run(ctx, sess, in)
				if err != nil {
					return nil, err
				}
				if after := sess.Branch(); after != before {
					if err := ctx.State().Set(BranchStateKey, after); err != nil {
						return nil, fmt.Errorf("day1/adk: keeping the current branch in the session's state: %w", err)
					}
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
