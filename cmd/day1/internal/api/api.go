// Package api is the REST API of day1 serve: JSON over HTTP on the standard
// library's router, described by the OpenAPI document at /openapi.json, with errors
// as RFC 9457 problem details, server-sent events of the memory's changes at /events,
// and the inspector (an embedded web page) at /.
package api

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/httpguard"
	"github.com/day1ai/day1/internal/memview"
)

// MinTokenLen is the shortest bearer token day1 serve takes.
const MinTokenLen = 32

// Defaults of Options.
const (
	DefaultMaxBody   = 1 << 20
	DefaultMaxImport = 64 << 20
	DefaultPoll      = 500 * time.Millisecond
)

// Options configure a Server.
type Options struct {
	// Token, when set, is the bearer token every API and events request must carry
	// (Authorization: Bearer, or access_token in the query for /events, which
	// browsers open without headers). The page and the OpenAPI document are public.
	// A token is at least MinTokenLen characters (day1 serve refuses a shorter one).
	// Default empty: no token.
	Token string
	// Hosts are the host names, besides localhost and loopback addresses, that API
	// and events requests may name in their Host header; "*" allows any (for a
	// server on every interface, behind Token). Requests from another origin are
	// refused whatever the Host. See internal/httpguard. Default none.
	Hosts []string
	// MaxBody bounds a JSON request body. Default DefaultMaxBody (1 MiB).
	MaxBody int64
	// MaxImport bounds an imported bundle file. Default DefaultMaxImport (64 MiB).
	MaxImport int64
	// Poll is how often /events looks at the memory for changes. Default DefaultPoll.
	Poll time.Duration
}

//go:embed openapi.json
var openAPI []byte

//go:embed web
var webFS embed.FS

// Route is one route the Server serves.
type Route struct {
	Method, Path string
}

// Server serves the REST API, the events and the inspector for one Client.
type Server struct {
	c      *day1.Client
	opts   Options
	mux    *http.ServeMux
	routes []Route
}

type handlerFunc func(w http.ResponseWriter, r *http.Request) (any, error)

// New returns a Server for c; c stays the caller's to close.
func New(c *day1.Client, o Options) *Server {
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxImport <= 0 {
		o.MaxImport = DefaultMaxImport
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	s := &Server{c: c, opts: o, mux: http.NewServeMux()}
	s.register()
	return s
}

// Routes lists the routes the Server serves, in registration order.
func (s *Server) Routes() []Route { return s.routes }

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// Handler returns the pattern of the route that serves r, "" when none does.
func (s *Server) Handler(r *http.Request) string {
	_, p := s.mux.Handler(r)
	return p
}

func (s *Server) register() {
	api := func(method, path string, h handlerFunc) {
		s.routes = append(s.routes, Route{method, path})
		s.mux.Handle(method+" "+path, s.guard(s.json(h)))
	}
	api("GET", "/api/v1/info", s.info)

	api("GET", "/api/v1/facts", s.listFacts)
	api("POST", "/api/v1/facts", s.writeFact)
	api("GET", "/api/v1/facts/{id}", s.getFact)
	api("POST", "/api/v1/facts/{id}/corrections", s.correctFact)
	api("GET", "/api/v1/observations", s.listObservations)
	api("POST", "/api/v1/observations", s.writeObservation)
	api("GET", "/api/v1/observations/{id}", s.getObservation)
	api("GET", "/api/v1/relations", s.listRelations)
	api("POST", "/api/v1/relations", s.writeRelation)
	api("GET", "/api/v1/relations/{id}", s.getRelation)
	api("GET", "/api/v1/graph", s.graph)
	api("GET", "/api/v1/search", s.search)
	api("GET", "/api/v1/timeline", s.timeline)
	api("GET", "/api/v1/records/{kind}/{id}/versions", s.versions)

	api("GET", "/api/v1/branches", s.listBranches)
	api("POST", "/api/v1/branches", s.createBranch)
	api("GET", "/api/v1/branches/{name}", s.getBranch)
	api("DELETE", "/api/v1/branches/{name}", s.deleteBranch)
	api("POST", "/api/v1/branches/{name}/archive", s.archiveBranch)
	api("POST", "/api/v1/branches/{name}/reactivate", s.reactivateBranch)
	api("GET", "/api/v1/diff", s.diff)
	api("GET", "/api/v1/merges", s.listMerges)
	api("POST", "/api/v1/merges", s.merge)

	api("GET", "/api/v1/snapshots", s.listSnapshots)
	api("POST", "/api/v1/snapshots", s.createSnapshot)
	api("GET", "/api/v1/snapshots/{name}", s.getSnapshot)
	api("DELETE", "/api/v1/snapshots/{name}", s.deleteSnapshot)

	api("GET", "/api/v1/tasks", s.listTasks)
	api("POST", "/api/v1/tasks", s.createTask)
	api("GET", "/api/v1/tasks/{name}", s.getTask)
	api("GET", "/api/v1/tasks/{name}/replay", s.replay)
	api("POST", "/api/v1/tasks/{name}/members", s.joinTask)
	api("PATCH", "/api/v1/tasks/{name}/objectives/{id}", s.updateObjective)
	api("POST", "/api/v1/tasks/{name}/complete", s.completeTask)
	api("GET", "/api/v1/handoffs", s.listHandoffs)
	api("POST", "/api/v1/handoffs", s.createHandoff)
	api("GET", "/api/v1/handoffs/{id}", s.getHandoff)
	api("POST", "/api/v1/handoffs/{id}/accept", s.acceptHandoff)
	api("POST", "/api/v1/handoffs/{id}/reject", s.rejectHandoff)
	api("POST", "/api/v1/conversations", s.createConversation)
	api("POST", "/api/v1/conversations/{id}/messages", s.appendMessage)
	api("GET", "/api/v1/sessions", s.listSessions)

	api("GET", "/api/v1/verification", s.verificationSummary)
	api("POST", "/api/v1/verification", s.verifyBranch)

	api("GET", "/api/v1/bundles", s.listBundles)
	api("POST", "/api/v1/bundles", s.createBundle)
	api("GET", "/api/v1/bundles/{id}", s.getBundle)
	api("GET", "/api/v1/bundles/{id}/export", s.exportBundle)
	api("POST", "/api/v1/bundles/import", s.importBundle)
	api("GET", "/api/v1/shared/{token}", s.sharedBundle)

	s.routes = append(s.routes, Route{"GET", "/events"})
	s.mux.Handle("GET /events", s.guard(http.HandlerFunc(s.events)))

	s.routes = append(s.routes, Route{"GET", "/openapi.json"})
	s.mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPI)
	})
	web, _ := fs.Sub(webFS, "web")
	s.routes = append(s.routes, Route{"GET", "/{$}"}, Route{"GET", "/assets/{file}"})
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		secureHeaders(w)
		http.ServeFileFS(w, r, web, "index.html")
	})
	s.mux.Handle("GET /assets/{file}", http.StripPrefix("/assets/", http.FileServerFS(web)))
	// Anything else under /api is a problem, not the mux's plain-text 404.
	s.mux.HandleFunc("/api/", s.noRoute)
}

// noRoute answers a request no API route takes: 405 with Allow when the path is
// served for other methods, 404 otherwise, both as problem details.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{"GET", "POST", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := s.mux.Handler(probe); p != "/api/" {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		writeProblem(w, r, &notFound{r.Method + " " + r.URL.Path})
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	p := Problem{
		Type: "urn:day1:problem:method_not_allowed", Title: http.StatusText(http.StatusMethodNotAllowed),
		Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Instance: r.URL.Path,
		Detail: "day1: " + r.URL.Path + " takes " + strings.Join(allow, ", ") + ", not " + r.Method,
	}
	writeProblemDetails(w, p)
}

type notFound struct{ what string }

func (e *notFound) Error() string {
	return "day1: no such route: " + e.what + "; the routes are listed at /openapi.json"
}
func (e *notFound) Is(target error) bool { return target == day1.ErrNotFound }

func secureHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
}

// guard refuses requests from other sites (see internal/httpguard) and checks the
// bearer token.
func (s *Server) guard(h http.Handler) http.Handler {
	deny := func(w http.ResponseWriter, r *http.Request, reason string) {
		writeProblemDetails(w, Problem{
			Type: "urn:day1:problem:forbidden", Title: http.StatusText(http.StatusForbidden),
			Status: http.StatusForbidden, Code: "forbidden", Instance: r.URL.Path, Detail: "day1: " + reason,
		})
	}
	return httpguard.Handler(s.bearer(h), httpguard.Options{Hosts: s.opts.Hosts, Deny: deny})
}

// bearer checks the bearer token.
func (s *Server) bearer(h http.Handler) http.Handler {
	if s.opts.Token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok && r.URL.Path == "/events" {
			tok, ok = r.URL.Query().Get("access_token"), true
		}
		if !ok || !equalConstantTime(tok, s.opts.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="day1"`)
			p := Problem{
				Type: "urn:day1:problem:unauthorized", Title: http.StatusText(http.StatusUnauthorized),
				Status: http.StatusUnauthorized, Code: "unauthorized", Instance: r.URL.Path,
				Detail: "day1: this server needs a bearer token: send Authorization: Bearer <token> (the token day1 serve was given)",
			}
			writeProblemDetails(w, p)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func equalConstantTime(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var v byte
	for i := range len(a) {
		v |= a[i] ^ b[i]
	}
	return v == 0
}

// created marks a result that made something new: 201.
type created struct{ v any }

// json runs h and writes its result as JSON, or its error as problem details.
func (s *Server) json(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkContentType(r); err != nil {
			writeProblem(w, r, err)
			return
		}
		if r.Body != nil && r.URL.Path != "/api/v1/bundles/import" {
			r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
		}
		v, err := h(w, r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if v == nil {
			return // h wrote the response
		}
		status := http.StatusOK
		if c, ok := v.(created); ok {
			status, v = http.StatusCreated, c.v
		}
		// A list with nothing in it is [], as the OpenAPI document says, never null.
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.IsNil() {
			v = []struct{}{}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(status)
		// The same JSON as the command line's --json: durations as Go writes them.
		json.NewEncoder(w).Encode(memview.JSON(v))
	})
}

// checkContentType refuses a request body that is not JSON (or, for a bundle import,
// a bundle file): a page of another site can send a form or text/plain to any
// address without asking, but not application/json.
func checkContentType(r *http.Request) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.ContentLength == 0 {
		return nil
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		mt = ""
	}
	allowed := []string{"application/json"}
	if r.URL.Path == "/api/v1/bundles/import" {
		allowed = append(allowed, "application/octet-stream", "application/gzip", "application/x-gzip")
	}
	if slices.Contains(allowed, mt) {
		return nil
	}
	got := r.Header.Get("Content-Type")
	if got == "" {
		got = "none"
	}
	return &unsupportedMedia{got: got, allowed: allowed}
}

// unsupportedMedia is a request body of a content type the route does not take: 415.
type unsupportedMedia struct {
	got     string
	allowed []string
}

func (e *unsupportedMedia) Error() string {
	return "day1: Content-Type " + e.got + " is not taken here; send " + strings.Join(e.allowed, " or ")
}

// decode reads a JSON body into v, refusing unknown fields and trailing data.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		if errors.Is(err, io.EOF) {
			return &badRequest{"body", "a JSON object is required"}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			// Name the field as the client wrote it, not as the Go type holds it.
			return &badRequest{"body." + te.Field, fmt.Sprintf("must be %s, not %s", jsonKind(te.Type), te.Value)}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return &badRequest{"body", "is cut short: not a whole JSON object"}
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return &badRequest{"body", fmt.Sprintf("is not valid JSON at byte %d", se.Offset)}
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return &badRequest{"body", "has the field " + f + ", which this route does not take"}
		}
		return &badRequest{"body", "not the JSON this route takes"}
	}
	if dec.More() {
		return &badRequest{"body", "one JSON object only"}
	}
	return nil
}

// jsonKind names the JSON a Go type takes.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another JSON value"
}

// query reads the URL's query parameters.
type query struct {
	r   *http.Request
	err error
}

func q(r *http.Request) *query { return &query{r: r} }

func (q *query) str(name string) string { return q.r.URL.Query().Get(name) }

func (q *query) int(name string) int {
	s := q.str(name)
	if s == "" || q.err != nil {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		q.err = &badRequest{name, "must be an integer, not " + strconv.Quote(s)}
	}
	return n
}

func (q *query) float(name string) float64 {
	s := q.str(name)
	if s == "" || q.err != nil {
		return 0
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		q.err = &badRequest{name, "must be a number, not " + strconv.Quote(s)}
	}
	return x
}

func (q *query) bool(name string) bool {
	s := q.str(name)
	if s == "" || q.err != nil {
		return false
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		q.err = &badRequest{name, "must be true or false, not " + strconv.Quote(s)}
	}
	return b
}

func (q *query) time(name string) time.Time {
	s := q.str(name)
	if s == "" || q.err != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		q.err = &badRequest{name, "must be an RFC 3339 time such as 2025-01-31T09:30:00Z, not " + strconv.Quote(s)}
	}
	return t
}

func (q *query) kinds(name string) []day1.Kind {
	var out []day1.Kind
	for _, s := range q.r.URL.Query()[name] {
		for part := range strings.SplitSeq(s, ",") {
			if part == "" {
				continue
			}
			k, err := memview.ParseKind(name, part)
			if err != nil && q.err == nil {
				q.err = err
			}
			out = append(out, k)
		}
	}
	return out
}

// filter reads the record filter common to lists, search and timeline.
func (q *query) filter() day1.Filter {
	return day1.Filter{
		Category:       q.str("category"),
		Status:         day1.FactStatus(q.str("status")),
		SessionID:      q.str("session"),
		TaskID:         q.str("task"),
		AgentID:        q.str("agent"),
		ConversationID: q.str("conversation"),
		Role:           day1.Role(q.str("role")),
		Entity:         q.str("entity"),
		Since:          q.time("since"),
		Until:          q.time("until"),
	}
}

// reader returns the head, or the memory as it was at the query's "at" (a snapshot
// name or an RFC 3339 instant).
func (s *Server) reader(q *query) day1.Reader {
	if at := q.str("at"); at != "" {
		return s.c.TimeTravel(memview.ParseAt(at))
	}
	return s.c
}
