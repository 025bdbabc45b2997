// Package httpguard keeps other web sites out of an HTTP server that a person runs on
// their own machine: the REST API of day1 serve and the MCP server's HTTP transport.
//
// A server on 127.0.0.1 is reachable from every page the person's browser opens. A
// page can send it simple requests (a form post, a text/plain fetch) without asking,
// and a host name the attacker controls can be made to resolve to 127.0.0.1 (DNS
// rebinding), after which the page reads the server's answers as its own. The guard
// answers 403 to:
//
//   - a request whose Host is neither a loopback name (localhost, 127.0.0.0/8, ::1) nor
//     one of the host names the server was told it answers to (DNS rebinding);
//   - a cross-origin browser request: one whose Sec-Fetch-Site says another site, or
//     whose Origin names another host than the Host it was sent to, for any method
//     (writes are refused by net/http's CrossOriginProtection; reads too, since a
//     memory's contents are private).
//
// Requests from programs (curl, SDKs) carry neither header and pass.
package httpguard

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Options configure Handler.
type Options struct {
	// Hosts are the host names, without a port, the server answers to besides the
	// loopback names: the host of the address it was told to listen on, say. "*"
	// answers to any host; use it only behind a bearer token, when the server
	// listens on every interface. Default none: loopback names only.
	Hosts []string
	// Deny writes the refusal; reason says what was wrong. Default: a plain-text 403.
	Deny func(w http.ResponseWriter, r *http.Request, reason string)
}

// Handler returns next behind the Host and Origin checks of the package.
func Handler(next http.Handler, o Options) http.Handler {
	deny := o.Deny
	if deny == nil {
		deny = func(w http.ResponseWriter, r *http.Request, reason string) {
			http.Error(w, reason, http.StatusForbidden)
		}
	}
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reason := Check(r, o.Hosts, cop); reason != "" {
			deny(w, r, reason)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Check returns why r must be refused, or "" when it may pass. cop may be nil.
func Check(r *http.Request, hosts []string, cop *http.CrossOriginProtection) string {
	if !allowedHost(hostOnly(r.Host), hosts) {
		return "this server answers to localhost and its own address only, not to Host " + quote(r.Host) +
			" (a page of another site may be trying to reach it)"
	}
	if cop == nil {
		cop = http.NewCrossOriginProtection()
	}
	if err := cop.Check(r); err != nil {
		return "cross-origin requests are refused: " + err.Error()
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return "cross-origin requests are refused (Sec-Fetch-Site: " + site + ")"
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || u.Host != r.Host {
			return "cross-origin requests are refused (Origin " + quote(origin) + " is not this server)"
		}
	}
	return ""
}

// allowedHost reports whether a request's host name may be served.
func allowedHost(host string, hosts []string) bool {
	if host == "" || strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, h := range hosts {
		if h == "*" || strings.EqualFold(strings.Trim(h, "[]"), host) {
			return true
		}
	}
	return false
}

// hostOnly strips the port and brackets from a Host header.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.Trim(h, "[]")
	}
	return strings.Trim(hostport, "[]")
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + s + `"`
}

// Hosts returns the host names a server listening on addr answers to besides
// loopback: none for a loopback address, "*" for every interface (0.0.0.0, ::, or no
// host), and the address's host otherwise.
func Hosts(addr string) []string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	host = strings.Trim(host, "[]")
	if host == "" {
		return []string{"*"}
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsUnspecified() {
			return []string{"*"}
		}
		if ip.IsLoopback() {
			return nil
		}
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	return []string{host}
}
