package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/day1ai/day1/mcpserver"
)

// mcpDrain bounds how long, once standard input has ended, the requests already read
// may take to be answered.
const mcpDrain = 30 * time.Second

func newMCPCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the memory to an AI agent over the Model Context Protocol on stdin and stdout",
		Long: `mcp serves the memory to an MCP client (Claude Code, Claude Desktop, Cursor, ...) over
standard input and output: every memory tool (memory_write_fact, memory_search,
memory_branch_merge, ...) and the branch, timeline and replay resources, the same
server as examples/mcpserver. It serves until the client closes its input.

Any number of agents' servers, hooks and day1 commands may have one memory open at
once.`,
		Example: "  claude mcp add day1 -- day1 mcp\n  claude mcp add day1 -- day1 --path ./.day1 mcp",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			err = mcpserver.New(c).Run(cmd.Context(), mcpserver.StdioTransport(a.stdin, a.stdout, mcpDrain))
			if cmd.Context().Err() != nil {
				return nil // a signal: a normal stop
			}
			return err
		},
	}
}
