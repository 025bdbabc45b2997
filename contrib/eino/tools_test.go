package eino_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/agenttool"
	"github.com/day1ai/day1/contrib/eino"
)

// TestMemoryToolsInAToolsNode gives day1's memory tools to an Eino ToolsNode and feeds
// it the tool calls a model would make: write a fact, then search for it. The node
// answers each call with the tool's output, on every store.
func TestMemoryToolsInAToolsNode(t *testing.T) {
	forEachStore(t, func(t *testing.T, c *day1.Client) {
		ctx := context.Background()
		tools, err := eino.MemoryTools(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != len(agenttool.Tools()) {
			t.Fatalf("%d tools; want %d", len(tools), len(agenttool.Tools()))
		}
		for _, tl := range tools {
			info, err := tl.Info(ctx)
			if err != nil || info.Name == "" || info.Desc == "" || info.ParamsOneOf == nil {
				t.Fatalf("Info: %+v, %v", info, err)
			}
			if _, err := info.ParamsOneOf.ToJSONSchema(); err != nil {
				t.Errorf("%s: the schema does not convert: %v", info.Name, err)
			}
		}
		node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		call := func(name, args string) string {
			t.Helper()
			msgs, err := node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{{ID: "call-1", Type: "function",
				Function: schema.FunctionCall{Name: name, Arguments: args}}}))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(msgs) != 1 || msgs[0].Role != schema.Tool || msgs[0].ToolCallID != "call-1" {
				t.Fatalf("%s answered %+v", name, msgs)
			}
			return msgs[0].Content
		}
		var w agenttool.WriteFactOut
		if err := json.Unmarshal([]byte(call("memory_write_fact", `{"fact_text":"The gateway terminates TLS for every service"}`)), &w); err != nil || w.Outcome != "created" {
			t.Fatalf("memory_write_fact: %+v, %v", w, err)
		}
		var found agenttool.SearchOut
		if err := json.Unmarshal([]byte(call("memory_search", `{"query":"who terminates TLS"}`)), &found); err != nil {
			t.Fatal(err)
		}
		if len(found.Hits) != 1 || found.Hits[0].ID != w.FactID {
			t.Errorf("memory_search: %+v; want the fact just written", found.Hits)
		}
		// The tools share a session: a switch of branch holds for the calls after it.
		call("memory_branch_create", `{"branch_name":"agent/eino"}`)
		call("memory_branch_switch", `{"branch_name":"agent/eino"}`)
		var w2 agenttool.WriteFactOut
		if err := json.Unmarshal([]byte(call("memory_write_fact", `{"fact_text":"The eino agent works on its own branch"}`)), &w2); err != nil || w2.Fact.Branch != "agent/eino" {
			t.Errorf("a write after memory_branch_switch: %+v, %v; want it on agent/eino", w2, err)
		}
		// Bad arguments are an error of the tool, typed.
		_, err = tools[0].(tool.InvokableTool).InvokableRun(ctx, `{"query":"x","bogus":1}`)
		if !errors.Is(err, day1.ErrInvalidArgument) {
			t.Errorf("bad arguments: %v; want ErrInvalidArgument", err)
		}
	})
}
