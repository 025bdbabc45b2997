package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/cmd/day1/internal/api"
	"github.com/day1ai/day1/internal/httpguard"
	"github.com/day1ai/day1/mcpserver"
)

func newServeCmd(a *app) *cobra.Command {
	var addr string
	var o api.Options
	var withMCP bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the REST API and the live inspector (on loopback unless told otherwise)",
		Long: `serve serves the memory as JSON over HTTP (described at /openapi.json), its changes as
server-sent events at /events, and the inspector, a web page, at /.

It listens on loopback. A non-loopback --addr needs --token (at least 32 characters):
every API request must then carry Authorization: Bearer <token>, and the inspector is
opened as http://host:port/#token=<token>.

The API answers only requests addressed to localhost, a loopback address, the --addr
host or an --allow-host name, and refuses requests from pages of other sites (their
Origin or Sec-Fetch-Site header says so) and request bodies that are not
application/json (a bundle file for import: application/octet-stream or
application/gzip), so that a web page cannot write into the memory.

With --mcp it also serves the memory to AI agents over MCP (streamable HTTP) at /mcp,
the server day1 mcp serves over stdio, behind the same checks.`,
		Example: "  day1 serve\n  day1 serve --mcp          # and MCP at http://127.0.0.1:7077/mcp\n  day1 serve --addr 0.0.0.0:7077 --token $(openssl rand -hex 16)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkAddr(addr, o.Token); err != nil {
				return err
			}
			o.Hosts = append(httpguard.Hosts(addr), o.Hosts...)
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			// Requests run in a context that ends when the server stops, so that the
			// inspector's event streams end with it instead of holding Shutdown.
			base, stopStreams := context.WithCancel(context.Background())
			defer stopStreams()
			srv := &http.Server{
				BaseContext:       func(net.Listener) context.Context { return base },
				Handler:           serveHandler(c, o, withMCP),
				ReadHeaderTimeout: 10 * time.Second,
				ReadTimeout:       5 * time.Minute,
				WriteTimeout:      5 * time.Minute,
				IdleTimeout:       2 * time.Minute,
				MaxHeaderBytes:    64 << 10,
			}
			url := "http://" + ln.Addr().String() + "/"
			if o.Token != "" {
				url += "#token=" + o.Token
			}
			fmt.Fprintf(a.stderr, "day1: serving the inspector at %s (API at /api/v1, OpenAPI at /openapi.json); Ctrl-C stops\n", url)
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				return err
			case <-cmd.Context().Done():
			}
			stopStreams()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:7077", "address to listen on; a non-loopback one needs --token")
	cmd.Flags().StringVar(&o.Token, "token", "", "bearer token the API requires (at least 32 characters)")
	cmd.Flags().StringSliceVar(&o.Hosts, "allow-host", nil, "a host name the API answers to besides localhost and the --addr host (repeatable)")
	cmd.Flags().Int64Var(&o.MaxBody, "max-body", api.DefaultMaxBody, "largest JSON request body, in bytes")
	cmd.Flags().Int64Var(&o.MaxImport, "max-import", api.DefaultMaxImport, "largest imported bundle, in bytes")
	cmd.Flags().BoolVar(&withMCP, "mcp", false, "also serve MCP over streamable HTTP at /mcp, behind the same token and host checks")
	return cmd
}

// serveHandler returns what day1 serve serves: the REST API and the inspector, and
// with withMCP the MCP server at mcpserver.Path, behind the same token and hosts.
func serveHandler(c *day1.Client, o api.Options, withMCP bool) http.Handler {
	h := api.New(c, o)
	if !withMCP {
		return h
	}
	mux := http.NewServeMux()
	mux.Handle(mcpserver.Path, mcpserver.HTTPHandler(mcpserver.New(c), o.Token, o.Hosts))
	mux.Handle("/", h)
	return mux
}

// checkAddr refuses to serve beyond loopback without a token.
func checkAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--addr %q: %v; use host:port such as 127.0.0.1:7077", addr, err)
	}
	if token != "" {
		if len(token) < api.MinTokenLen {
			return usagef("--token is %d characters long; use at least %d, such as the output of: openssl rand -hex 16", len(token), api.MinTokenLen)
		}
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usagef("--addr %s is reachable beyond this machine: pass --token <secret> too, or listen on 127.0.0.1", addr)
}
