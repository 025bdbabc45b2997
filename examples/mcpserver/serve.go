package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1/internal/httpguard"
	"github.com/day1ai/day1/internal/localmem"
	"github.com/day1ai/day1/mcpserver"
)

// options are the command line's choices.
type options struct {
	path, dsn   string
	memory      bool
	http        string
	allowRemote bool
	token       string
}

// minTokenLen is the shortest bearer token -token takes.
const minTokenLen = 32

// drainTimeout bounds how long, once standard input has ended, the requests already
// read may take to be answered before the server stops.
const drainTimeout = 30 * time.Second

// check refuses an HTTP address other than loopback unless remote access is allowed,
// and remote access without a token.
func (o options) check() error {
	if o.allowRemote && o.token == "" {
		return errors.New("-allow-remote requires -token")
	}
	if o.token != "" && len(o.token) < minTokenLen {
		return fmt.Errorf("-token is %d characters long; use at least %d, such as the output of: openssl rand -hex 16", len(o.token), minTokenLen)
	}
	if o.http == "" || o.allowRemote {
		return nil
	}
	host, _, err := net.SplitHostPort(o.http)
	if err != nil {
		return fmt.Errorf("-http %q: %v", o.http, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-http %q is not a loopback address; use 127.0.0.1, or -allow-remote with -token", o.http)
	}
	return nil
}

// run opens the memory and serves it until ctx ends or, over stdio, the client closes
// its input.
func run(ctx context.Context, o options) error {
	if err := o.check(); err != nil {
		return err
	}
	c, _, err := localmem.Open(ctx, localmem.Options{Path: o.path, DSN: o.dsn, InMemory: o.memory})
	if err != nil {
		return err
	}
	defer c.Close()
	srv := mcpserver.New(c)
	if o.http != "" {
		return serveHTTP(ctx, srv, o)
	}
	err = srv.Run(ctx, mcpserver.StdioTransport(os.Stdin, os.Stdout, drainTimeout))
	if ctx.Err() != nil {
		return nil // a signal: a normal stop
	}
	return err
}

// serveHTTP serves srv at o.http until ctx ends.
func serveHTTP(ctx context.Context, srv *mcp.Server, o options) error {
	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mcpserver.HTTPHandler(srv, o.token, httpguard.Hosts(o.http)), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "mcpserver: serving MCP over streamable HTTP at http://%s%s\n", hostPort(ln.Addr()), mcpserver.Path)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown(hs)
		return nil
	}
}

// hostPort returns a listener's address as a client dials it.
func hostPort(a net.Addr) string {
	s := a.String()
	if strings.HasPrefix(s, "[::]:") || strings.HasPrefix(s, "0.0.0.0:") {
		_, port, _ := net.SplitHostPort(s)
		return net.JoinHostPort("127.0.0.1", port)
	}
	return s
}

// shutdown stops an HTTP server, giving requests under way a moment to finish; open
// event streams are cut after it.
func shutdown(hs *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		hs.Close()
	}
}
