package mcpserver

import (
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1/internal/httpguard"
)

// Path is where HTTPHandler answers MCP requests.
const Path = "/mcp"

// sessionTimeout closes HTTP sessions idle this long.
const sessionTimeout = time.Hour

// HTTPHandler returns the streamable-HTTP handler of srv at Path, which requires
// "Authorization: Bearer <token>" when token is not empty. It answers only requests
// addressed to loopback names or to hosts (host names without a port, such as the
// host of the address the server listens on; "*" answers to any host, which only a
// token should guard), and refuses requests from web pages of other origins, as the
// MCP specification asks of servers. Sessions idle for an hour are closed.
func HTTPHandler(srv *mcp.Server, token string, hosts []string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: sessionTimeout})
	mux := http.NewServeMux()
	mux.Handle(Path, httpguard.Handler(requireToken(token, h), httpguard.Options{Hosts: hosts}))
	return mux
}

// requireToken answers 401 to a request without "Authorization: Bearer <token>".
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="day1"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
