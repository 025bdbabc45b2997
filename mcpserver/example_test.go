package mcpserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/mcpserver"
)

// A program serves its memory over MCP; here a client in the same process connects
// through the SDK's in-memory transports and lists the tools. A real program runs the
// server with StdioTransport or behind HTTPHandler.
func Example() {
	ctx := context.Background()
	c, err := day1.Open(ctx, day1.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	clientSide, serverSide := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(c).Connect(ctx, serverSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "my-agent"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_write_fact",
		Arguments: map[string]any{"fact_text": "The gateway terminates TLS"}})
	if err != nil || res.IsError {
		log.Fatal(err, res)
	}
	fmt.Println(cs.InitializeResult().ServerInfo.Name, "stored:", res.Content[0].(*mcp.TextContent).Text != "")
	// Output:
	// day1 stored: true
}
