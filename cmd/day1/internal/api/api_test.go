package api

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/cmd/day1/internal/demo"
)

// newServer serves the demo memory.
func newServer(t *testing.T, o Options) (*httptest.Server, *day1.Client) {
	t.Helper()
	ctx := context.Background()
	c, err := day1.Open(ctx, demo.Config(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := demo.Seed(ctx, c); err != nil {
		t.Fatal(err)
	}
	if o.Poll == 0 {
		o.Poll = 20 * time.Millisecond
	}
	ts := httptest.NewServer(New(c, o))
	t.Cleanup(ts.Close)
	return ts, c
}

func do(t *testing.T, ts *httptest.Server, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		if strings.HasPrefix(path, "/api/v1/bundles/import") {
			req.Header.Set("Content-Type", "application/octet-stream")
		}
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, data
}

// TestRoutes calls every route with good and bad input. Cases run in order: later
// ones see what earlier ones wrote.
func TestRoutes(t *testing.T) {
	ts, _ := newServer(t, Options{})
	cases := []struct {
		method, path, body string
		status             int
		want               string // a substring of the body; for problems, the code
	}{
		{"GET", "/api/v1/info", "", 200, `"default_branch":"main"`},

		{"GET", "/api/v1/facts?branch=agent-a", "", 200, `"f-a1"`},
		{"GET", "/api/v1/facts?limit=x", "", 400, "invalid_argument"},
		{"GET", "/api/v1/facts?branch=nope", "", 404, "not_found"},
		{"GET", "/api/v1/facts?at=before-agents", "", 200, `Token refresh retries twice`},
		{"POST", "/api/v1/facts", `{"text":"Sessions expire after an hour","branch":"agent-a"}`, 201, `"created"`},
		{"POST", "/api/v1/facts", `{"text":"Sessions expire after an hour","branch":"agent-a"}`, 200, `"deduplicated"`},
		{"POST", "/api/v1/facts", `{"text":""}`, 400, "invalid_argument"},
		{"POST", "/api/v1/facts", `{"txt":"typo"}`, 400, "invalid_argument"},
		{"POST", "/api/v1/facts", `not json`, 400, "invalid_argument"},
		{"POST", "/api/v1/facts", ``, 400, "invalid_argument"},
		{"GET", "/api/v1/facts/f-jwt", "", 200, `RS256`},
		{"GET", "/api/v1/facts/f-a1", "", 404, "not_found"},
		{"GET", "/api/v1/facts/f-a1?branch=agent-a", "", 200, `line 142`},
		{"POST", "/api/v1/facts/f-a1/corrections", `{"branch":"agent-a","action":"update","text":"The 401 is swallowed at line 143","by":"lead","why":"off by one"}`, 200, `"correction_reason":"off by one"`},
		{"GET", "/api/v1/facts/f-a1?branch=agent-a", "", 200, `line 143`},
		{"POST", "/api/v1/facts/f-a1/corrections", `{"branch":"agent-a","action":"invalidate","by":"lead"}`, 400, "invalid_argument"},
		{"POST", "/api/v1/facts/f-a1/corrections", `{"branch":"agent-a","action":"rewrite","by":"lead","why":"x"}`, 400, "invalid_argument"},
		{"POST", "/api/v1/facts/nope/corrections", `{"action":"delete","by":"lead","why":"x"}`, 404, "not_found"},
		{"POST", "/api/v1/facts", `{"text":"The launch banner shows until the end of time","expires_at":"2999-01-01T00:00:00Z"}`, 201, `"expires_at":"2999-01-01T00:00:00Z"`},
		{"POST", "/api/v1/facts", `{"text":"The old banner showed in 2000","expires_at":"2001-01-01T00:00:00Z"}`, 400, "invalid_argument"},
		{"POST", "/api/v1/facts", `{"text":"The quokka exhibit closed in January","category":"bygone","created_at":"2025-01-01T00:00:00Z","expires_at":"2025-02-01T00:00:00Z"}`, 201, `"created"`},
		{"GET", "/api/v1/facts?category=bygone", "", 200, `[]`},
		{"GET", "/api/v1/facts?category=bygone&include_expired=true", "", 200, `quokka`},
		{"GET", "/api/v1/search?q=quokka+exhibit&mode=keyword", "", 200, `[]`},
		{"GET", "/api/v1/search?q=quokka+exhibit&mode=keyword&include_expired=true", "", 200, `quokka`},
		{"GET", "/api/v1/search?q=banner&include_expired=maybe", "", 400, "invalid_argument"},
		{"GET", "/api/v1/timeline?kind=fact&order=newest", "", 200, `banner`},
		{"GET", "/api/v1/timeline?kind=fact&order=newest&include_expired=true", "", 200, `quokka`},

		{"GET", "/api/v1/observations", "", 200, `"o-grep"`},
		{"POST", "/api/v1/observations", `{"type":"discovery","summary":"The 401 is swallowed"}`, 201, `"created"`},
		{"POST", "/api/v1/observations", `{"type":"nonsense","summary":"x"}`, 400, "invalid_argument"},
		{"GET", "/api/v1/observations/o-grep", "", 200, `grep`},
		{"GET", "/api/v1/observations/none", "", 404, "not_found"},

		{"GET", "/api/v1/relations", "", 200, `"r-uses"`},
		{"POST", "/api/v1/relations", `{"source":"auth-service","target":"idp","type":"calls"}`, 201, `"created"`},
		{"POST", "/api/v1/relations", `{"source":"auth-service"}`, 400, "invalid_argument"},
		{"GET", "/api/v1/relations/r-uses", "", 200, `postgres`},
		{"GET", "/api/v1/relations/none", "", 404, "not_found"},
		{"GET", "/api/v1/graph?entity=auth-service", "", 200, `"postgres"`},
		{"GET", "/api/v1/graph?entity=auth-service", "", 200, `"root":"auth-service","nodes":[{"entity":"auth-service","depth":0},`},
		{"GET", "/api/v1/graph?entity=nobody", "", 200, `"edges":[]`},
		{"GET", "/api/v1/graph", "", 400, "invalid_argument"},

		{"GET", "/api/v1/search?q=token+refresh", "", 200, `"found_by"`},
		{"GET", "/api/v1/search?q=token&mode=keyword&kind=fact", "", 200, `"keyword_rank":1`},
		{"GET", "/api/v1/search?q=token&kind=widget", "", 400, "invalid_argument"},
		{"GET", "/api/v1/search?q=token&kind=message&window=1", "", 200, `[]`},
		{"GET", "/api/v1/search?q=token&window=99", "", 400, "invalid_argument"},
		{"GET", "/api/v1/search?q=token&role=boss", "", 400, "invalid_argument"},
		{"GET", "/api/v1/search?q=token&at=nope", "", 404, "not_found"},
		{"GET", "/api/v1/search?q=token+refresh", "", 200, `"relevance":`},
		{"GET", "/api/v1/search?q=quantum+banana+service&min_relevance=0.3", "", 200, `[]`},
		{"GET", "/api/v1/search?q=token&min_relevance=lots", "", 400, "invalid_argument"},
		{"GET", "/api/v1/search?q=token&min_relevance=2", "", 400, "invalid_argument"},
		{"GET", "/api/v1/timeline?branch=agent-a&agent=agent-a", "", 200, `"f-a1"`},
		{"GET", "/api/v1/timeline?until=yesterday", "", 400, "invalid_argument"},
		{"GET", "/api/v1/timeline?branch=agent-a&order=newest&limit=1", "", 200, `Sessions expire after an hour`},
		{"GET", "/api/v1/timeline?branch=agent-a&limit=1", "", 200, `"f-jwt"`},
		{"GET", "/api/v1/timeline?order=sideways", "", 400, "invalid_argument"},
		{"GET", "/api/v1/timeline?branch=agent-a&kind=fact&order=newest&by_update=true&limit=1", "", 200, `"f-a1"`},
		{"GET", "/api/v1/timeline?branch=agent-a&kind=fact&order=newest&limit=1", "", 200, `"id-006"`},
		{"GET", "/api/v1/timeline?by_update=maybe", "", 400, "invalid_argument"},

		{"GET", "/api/v1/branches", "", 200, `"agent-b"`},
		{"POST", "/api/v1/branches", `{"name":"exp/one","from":"main","at":"before-agents"}`, 201, `"exp/one"`},
		{"POST", "/api/v1/branches", `{"name":"exp/one"}`, 409, "exists"},
		{"POST", "/api/v1/branches", `{"name":""}`, 400, "invalid_argument"},
		{"GET", "/api/v1/branches/exp%2Fone", "", 200, `"from_snapshot":"before-agents"`},
		{"GET", "/api/v1/branches/nope", "", 404, "not_found"},
		{"POST", "/api/v1/branches/exp%2Fone/archive", "", 200, `"archived"`},
		{"POST", "/api/v1/facts", `{"text":"on an archived branch","branch":"exp/one"}`, 409, "archived"},
		{"POST", "/api/v1/branches/exp%2Fone/reactivate", "", 200, `"active"`},
		{"POST", "/api/v1/branches/nope/archive", "", 404, "not_found"},
		{"DELETE", "/api/v1/branches/exp%2Fone", "", 200, `"deleted"`},
		{"DELETE", "/api/v1/branches/exp%2Fone", "", 404, "not_found"},

		{"GET", "/api/v1/diff?source=agent-a", "", 200, `"ref":"fact/f-retry"`},
		{"GET", "/api/v1/diff?source=agent-a&target=agent-b", "", 200, `"conflicts":[{`},
		{"GET", "/api/v1/diff?source=nope", "", 404, "not_found"},
		{"POST", "/api/v1/merges", `{"source":"agent-b","target":"agent-a"}`, 409, "conflict"},
		{"POST", "/api/v1/merges", `{"source":"agent-a","strategy":"sideways"}`, 400, "invalid_argument"},
		{"POST", "/api/v1/merges", `{"source":"agent-a","dry_run":true}`, 200, `"applied":false`},
		{"POST", "/api/v1/merges", `{"source":"agent-a","message":"fix"}`, 201, `"applied":true`},
		{"GET", "/api/v1/merges?target=main", "", 200, `"source":"agent-a"`},
		{"GET", "/api/v1/merges?limit=-", "", 400, "invalid_argument"},

		{"GET", "/api/v1/snapshots", "", 200, `"before-agents"`},
		{"POST", "/api/v1/snapshots", `{"name":"after-merge","description":"x"}`, 201, `"after-merge"`},
		{"POST", "/api/v1/snapshots", `{"name":"after-merge"}`, 409, "exists"},
		{"POST", "/api/v1/snapshots", `{"name":"s","branch":"nope"}`, 404, "not_found"},
		{"GET", "/api/v1/snapshots/after-merge", "", 200, `"branch":"main"`},
		{"GET", "/api/v1/snapshots/nope", "", 404, "not_found"},
		{"DELETE", "/api/v1/snapshots/after-merge", "", 200, `"deleted"`},
		{"DELETE", "/api/v1/snapshots/after-merge", "", 404, "not_found"},

		{"GET", "/api/v1/tasks", "", 200, `"fix-auth"`},
		{"GET", "/api/v1/tasks/fix-auth", "", 200, `"investigator"`},
		{"GET", "/api/v1/tasks/nope", "", 404, "not_found"},
		{"GET", "/api/v1/tasks/fix-auth/replay", "", 200, `"timeline"`},
		{"GET", "/api/v1/tasks/fix-auth/replay", "", 200, `"decisions":[`},
		{"GET", "/api/v1/tasks/nope/replay", "", 404, "not_found"},
		{"GET", "/api/v1/handoffs?task=fix-auth", "", 200, `"to_agent":"expert"`},
		{"GET", "/api/v1/handoffs/nope", "", 404, "not_found"},
		{"GET", "/api/v1/sessions?agent=nobody", "", 200, "[]\n"},

		{"GET", "/api/v1/verification?branch=agent-b", "", 200, `"unverified":4`},
		{"POST", "/api/v1/verification", `{"branch":"agent-b"}`, 200, `"total":4`},
		{"POST", "/api/v1/verification", `{"branch":"nope"}`, 404, "not_found"},

		{"GET", "/api/v1/bundles", "", 200, `[]`},
		{"POST", "/api/v1/bundles", `{"name":"auth notes","branch":"agent-b","visibility":"team"}`, 201, `"share_token"`},
		{"POST", "/api/v1/bundles", `{"name":""}`, 400, "invalid_argument"},
		{"GET", "/api/v1/bundles/nope", "", 404, "not_found"},
		{"GET", "/api/v1/bundles/nope/export", "", 404, "not_found"},
		{"GET", "/api/v1/shared/nope", "", 400, "invalid_argument"},
		{"POST", "/api/v1/bundles/import?branch=main", `garbage`, 400, "invalid_argument"},

		{"GET", "/api/v1/nothing", "", 404, "not_found"},
		{"PUT", "/api/v1/facts", "", 405, "method_not_allowed"},
	}
	for _, tc := range cases {
		res, body := do(t, ts, tc.method, tc.path, tc.body)
		if res.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d: %s", tc.method, tc.path, res.StatusCode, tc.status, body)
			continue
		}
		if tc.status >= 400 {
			if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("%s %s: Content-Type %q, want problem details", tc.method, tc.path, ct)
			}
			var p struct {
				Type, Title, Detail, Code string
				Status                    int
			}
			if err := json.Unmarshal(body, &p); err != nil || p.Code != tc.want || p.Status != tc.status || p.Detail == "" || p.Type == "" {
				t.Errorf("%s %s: problem %s, want code %s (%v)", tc.method, tc.path, body, tc.want, err)
			}
			continue
		}
		if !strings.Contains(string(body), tc.want) {
			t.Errorf("%s %s: body lacks %s:\n%s", tc.method, tc.path, tc.want, body)
		}
	}
	// An expired fact stays out of lists, searches and the timeline by default.
	for _, path := range []string{"/api/v1/facts", "/api/v1/search?q=quokka+exhibit&mode=keyword", "/api/v1/timeline?kind=fact&order=newest"} {
		if _, body := do(t, ts, "GET", path, ""); strings.Contains(string(body), "quokka") {
			t.Errorf("GET %s shows the expired fact:\n%s", path, body)
		}
	}
}

// TestBundleRoundTrip exports a bundle, imports it into a new branch, and resolves
// its share token.
func TestBundleRoundTrip(t *testing.T) {
	ts, _ := newServer(t, Options{})
	_, body := do(t, ts, "POST", "/api/v1/bundles", `{"name":"auth","branch":"agent-a","include_unverified":true,"visibility":"public"}`)
	var b day1.Bundle
	if err := json.Unmarshal(body, &b); err != nil || b.ID == "" {
		t.Fatalf("create: %s %v", body, err)
	}
	res, file := do(t, ts, "GET", "/api/v1/bundles/"+b.ID+"/export", "")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/gzip" {
		t.Fatalf("export: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	res, body = do(t, ts, "POST", "/api/v1/bundles/import?branch=imported&create_branch=true", string(file))
	if res.StatusCode != 200 || !strings.Contains(string(body), `"branch_created":true`) {
		t.Fatalf("import: %d %s", res.StatusCode, body)
	}
	res, body = do(t, ts, "GET", "/api/v1/facts/f-a1?branch=imported", "")
	if res.StatusCode != 200 {
		t.Fatalf("imported fact: %d %s", res.StatusCode, body)
	}
	res, _ = do(t, ts, "GET", "/api/v1/shared/"+b.ShareToken, "")
	if res.StatusCode != 200 {
		t.Fatalf("shared: %d", res.StatusCode)
	}
	res, _ = do(t, ts, "GET", "/api/v1/bundles/"+b.ID, "")
	if res.StatusCode != 200 {
		t.Fatalf("get: %d", res.StatusCode)
	}
}

// TestOpenAPI checks that the document lists exactly the routes the server serves,
// and that the server's mux routes each documented path to the documented pattern.
func TestOpenAPI(t *testing.T) {
	ts, c := newServer(t, Options{})
	res, body := do(t, ts, "GET", "/openapi.json", "")
	if res.StatusCode != 200 {
		t.Fatal(res.Status)
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("not an OpenAPI 3 document: %v", err)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	s := New(c, Options{})
	var served []string
	for _, r := range s.Routes() {
		path := r.Path
		if path == "/{$}" {
			path = "/"
		}
		served = append(served, r.Method+" "+path)
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		for _, d := range documented {
			if !slices.Contains(served, d) {
				t.Errorf("documented but not served: %s", d)
			}
		}
		for _, r := range served {
			if !slices.Contains(documented, r) {
				t.Errorf("served but not documented: %s", r)
			}
		}
	}
	param := regexp.MustCompile(`\{[a-z]+\}`)
	for _, d := range documented {
		method, path, _ := strings.Cut(d, " ")
		req := httptest.NewRequest(method, param.ReplaceAllString(path, "x"), nil)
		want := d
		if path == "/" {
			want = "GET /{$}"
		}
		if got := s.Handler(req); got != want {
			t.Errorf("%s is served by %q", d, got)
		}
	}
}

func TestToken(t *testing.T) {
	ts, _ := newServer(t, Options{Token: "s3cret"})
	res, body := do(t, ts, "GET", "/api/v1/branches", "")
	if res.StatusCode != 401 || !strings.Contains(string(body), "unauthorized") || res.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("without a token: %d %s", res.StatusCode, body)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/api/v1/branches", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	if res, _ := ts.Client().Do(req); res.StatusCode != 401 {
		t.Fatalf("with a wrong token: %d", res.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer s3cret")
	if res, _ := ts.Client().Do(req); res.StatusCode != 200 {
		t.Fatalf("with the token: %d", res.StatusCode)
	}
	if res, _ := do(t, ts, "GET", "/", ""); res.StatusCode != 200 {
		t.Fatalf("the page: %d", res.StatusCode)
	}
}

func TestBodyLimit(t *testing.T) {
	ts, _ := newServer(t, Options{MaxBody: 100})
	res, body := do(t, ts, "POST", "/api/v1/facts", `{"text":"`+strings.Repeat("x", 200)+`"}`)
	if res.StatusCode != 413 || !strings.Contains(string(body), "too_large") {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
}

// TestEvents watches the stream while another client writes, branches, merges and
// snapshots.
func TestEvents(t *testing.T) {
	ts, c := newServer(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/events", nil)
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(res.Body)
	next := func() string {
		for sc.Scan() {
			if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				sc.Scan()
				return ev + " " + strings.TrimPrefix(sc.Text(), "data: ")
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return ""
	}
	if got := next(); !strings.HasPrefix(got, "ready ") {
		t.Fatalf("first event %q", got)
	}
	if _, err := c.WriteFact(ctx, day1.Fact{Branch: "agent-b", Text: "A write from another client"}); err != nil {
		t.Fatal(err)
	}
	if got := next(); !strings.HasPrefix(got, `branch {"type":"branch","branch":{"name":"agent-b"`) {
		t.Fatalf("after a write: %q", got)
	}
	if _, err := c.Snapshot(ctx, "agent-b", "snap", day1.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := next(); !strings.HasPrefix(got, `snapshot `) {
		t.Fatalf("after a snapshot: %q", got)
	}
	if _, err := c.Merge(ctx, day1.MergeRequest{Source: "agent-b", Target: "main"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 2 {
		got = append(got, strings.Fields(next())[0])
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"branch", "merge"}) {
		t.Fatalf("after a merge: %v", got)
	}
}

// TestSearchScores checks that a retriever's score is sent with its rank, a score of
// exactly 0 included.
func TestSearchScores(t *testing.T) {
	ts, _ := newServer(t, Options{})
	for _, text := range []string{"The auth service signs JWTs with RS256", "ct test"} {
		if res, body := do(t, ts, "POST", "/api/v1/facts", `{"text":"`+text+`"}`); res.StatusCode >= 300 {
			t.Fatalf("write %q: %d %s", text, res.StatusCode, body)
		}
	}
	res, body := do(t, ts, "GET", "/api/v1/search?q=token+refresh&limit=50", "")
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	var hits []map[string]any
	if err := json.Unmarshal(body, &hits); err != nil || len(hits) == 0 {
		t.Fatalf("hits %s: %v", body, err)
	}
	for _, h := range hits {
		for _, r := range []string{"keyword", "vector"} {
			_, ranked := h[r+"_rank"]
			_, scored := h[r+"_score"]
			if ranked != scored {
				t.Errorf("hit %v: %s_rank present %v, %s_score present %v; want both or neither", h["record"], r, ranked, r, scored)
			}
		}
	}
}

// TestOtherSites checks that pages of other sites can neither write into the memory
// nor read it: cross-origin requests, Hosts that are not this server (DNS
// rebinding) and bodies a form can send are refused.
func TestOtherSites(t *testing.T) {
	ts, c := newServer(t, Options{Hosts: []string{"day1.internal"}})
	before, err := c.ListFacts(context.Background(), day1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	self := ts.URL
	host := strings.TrimPrefix(self, "http://")
	for _, tc := range []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		code                     string
	}{
		{"write from another origin", "POST", "/api/v1/facts", `{"text":"x"}`,
			map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}, 403, "forbidden"},
		{"write as text/plain", "POST", "/api/v1/facts", `{"text":"x"}`,
			map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type"},
		{"write as a form", "POST", "/api/v1/facts", `text=x`,
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"},
		{"write with no content type", "POST", "/api/v1/facts", `{"text":"x"}`, nil, 415, "unsupported_media_type"},
		{"merge from another site", "POST", "/api/v1/merges", `{"source":"agent-b","target":"main"}`,
			map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, 403, "forbidden"},
		{"archive from another site, no body", "POST", "/api/v1/branches/agent-b/archive", "",
			map[string]string{"Origin": "http://evil.example"}, 403, "forbidden"},
		{"import as multipart", "POST", "/api/v1/bundles/import?branch=main", "garbage",
			map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, 415, "unsupported_media_type"},
		{"read through a rebound name", "GET", "/api/v1/branches", "",
			map[string]string{"Host": "attacker.example"}, 403, "forbidden"},
		{"events through a rebound name", "GET", "/events", "",
			map[string]string{"Host": "attacker.example:80"}, 403, "forbidden"},
		{"read from another origin", "GET", "/api/v1/facts", "",
			map[string]string{"Origin": "http://evil.example"}, 403, "forbidden"},
		{"read from another port of localhost", "GET", "/api/v1/facts", "",
			map[string]string{"Sec-Fetch-Site": "same-site"}, 403, "forbidden"},
		{"read from the inspector", "GET", "/api/v1/branches", "",
			map[string]string{"Origin": self, "Sec-Fetch-Site": "same-origin"}, 200, ""},
		{"read as localhost", "GET", "/api/v1/branches", "",
			map[string]string{"Host": "localhost:" + host[strings.LastIndex(host, ":")+1:]}, 200, ""},
		{"read as a configured host", "GET", "/api/v1/branches", "",
			map[string]string{"Host": "day1.internal:7077"}, 200, ""},
		{"write as JSON with a charset", "POST", "/api/v1/facts", `{"text":"the deploy key rotates monthly"}`,
			map[string]string{"Content-Type": "application/json; charset=utf-8", "Origin": self}, 201, ""},
		{"the page stays public", "GET", "/", "", map[string]string{"Host": "localhost"}, 200, ""},
	} {
		var rd io.Reader
		if tc.body != "" {
			rd = strings.NewReader(tc.body)
		}
		// An events stream let through would never end: bound every request.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, tc.method, self+tc.path, rd)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		res, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.name, res.StatusCode, tc.status, body)
			continue
		}
		if tc.code != "" {
			var p Problem
			if err := json.Unmarshal(body, &p); err != nil || p.Code != tc.code || p.Detail == "" {
				t.Errorf("%s: problem %s, want code %s", tc.name, body, tc.code)
			}
		}
	}
	after, err := c.ListFacts(context.Background(), day1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+1 {
		t.Errorf("facts: %d before, %d after; want exactly the one same-origin write", len(before), len(after))
	}
	b, err := c.GetBranch(context.Background(), "agent-b")
	if err != nil || b.Status != day1.BranchActive {
		t.Errorf("agent-b after the refused archive: %+v, %v; want it active", b, err)
	}
}
