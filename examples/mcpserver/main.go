// Command mcpserver serves day1's memory to AI agents over the Model Context Protocol:
// over stdio by default, or over streamable HTTP with -http. See README.md for the
// tools and how to add the server to an MCP client.
//
//	go run ./examples/mcpserver                 # stdio, durable memory in the user data folder
//	go run ./examples/mcpserver -memory         # stdio, in-memory (demos, tests)
//	go run ./examples/mcpserver -http 127.0.0.1:7300
//
// Any number of servers, hooks and other programs may have one durable memory open
// at once: each opens it in its own process.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/day1ai/day1/internal/localmem"
)

func main() {
	var o options
	flag.StringVar(&o.path, "path", "", "folder of a durable embedded store (default $"+localmem.EnvPath+", else day1 in the user data folder)")
	flag.StringVar(&o.dsn, "dsn", "", "MatrixOne data source name (default $"+localmem.EnvDSN+")")
	flag.BoolVar(&o.memory, "memory", false, "keep memory in this process only (demos, tests)")
	flag.StringVar(&o.http, "http", "", "serve streamable HTTP at this address, such as 127.0.0.1:7300, instead of stdio")
	flag.BoolVar(&o.allowRemote, "allow-remote", false, "allow -http on an address other than loopback (requires -token)")
	flag.StringVar(&o.token, "token", "", "bearer token every -http request must carry")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "mcpserver:", err)
		os.Exit(1)
	}
}
