// Package mcpserver serves a day1 memory over the Model Context Protocol, with the
// official MCP Go SDK: New returns a server whose tools are package agenttool's (every
// capability of the library, with the same names, descriptions and schemas the
// framework adapters use) and whose resources are the memory's branches, branch
// timelines and task replays.
//
// Serve it over standard input and output with StdioTransport, which, unlike the
// SDK's stdio transport, answers a malformed line with a JSON-RPC error and reads on,
// and answers the requests already read when the input ends; or over streamable HTTP
// with HTTPHandler, which guards the endpoint with an optional bearer token and the
// Host and Origin checks the MCP specification asks of servers. A program embeds it
// in a few lines:
//
//	c, err := day1.Open(ctx, day1.Config{Path: dir})
//	...
//	err = mcpserver.New(c).Run(ctx, mcpserver.StdioTransport(os.Stdin, os.Stdout, 30*time.Second))
//
// The command examples/mcpserver is such a program, with flags for the memory's
// location and the HTTP address.
package mcpserver
