package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWrites runs a task's life through the write routes: create, join, an
// objective done, a handoff rejected and another accepted, a conversation with a
// message, completion. Steps run in order.
func TestWrites(t *testing.T) {
	ts, _ := newServer(t, Options{})
	ids := map[string]string{}
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string // a substring of the body; for problems, the code
		save               string // remember the body's id under this name
	}{
		{"POST", "/api/v1/tasks", `{"name":"t2","objectives":["find it","fix it"],"description":"a second task"}`, 201, `"branch":"task/t2"`, ""},
		{"POST", "/api/v1/tasks", `{"name":"t2","objectives":["again"]}`, 409, "exists", ""},
		{"POST", "/api/v1/tasks", `{"name":""}`, 400, "invalid_argument", ""},
		{"POST", "/api/v1/tasks", `{"name":"t3"}`, 400, "invalid_argument", ""},
		{"POST", "/api/v1/tasks", `{"name":"t3","objectives":null}`, 400, "invalid_argument", ""},
		{"POST", "/api/v1/tasks", `{"nom":"x"}`, 400, "invalid_argument", ""},
		{"POST", "/api/v1/tasks/t2/members", `{"agent":"ann","role":"developer","objectives":[1]}`, 201, `"branch":"task/t2/ann"`, ""},
		{"POST", "/api/v1/tasks/nope/members", `{"agent":"ann"}`, 404, "not_found", ""},
		{"PATCH", "/api/v1/tasks/t2/objectives/1", `{"status":"done","by":"ann","note":"found"}`, 200, `"status":"done"`, ""},
		{"PATCH", "/api/v1/tasks/t2/objectives/x", `{"status":"done"}`, 400, "invalid_argument", ""},
		{"PATCH", "/api/v1/tasks/t2/objectives/1", `{"status":"sideways"}`, 400, "invalid_argument", ""},
		{"PATCH", "/api/v1/tasks/t2/objectives/9", `{"status":"done"}`, 404, "not_found", ""},
		{"POST", "/api/v1/handoffs", `{"task":"t2","from_agent":"ann","to_agent":"bob","instructions":"fix it"}`, 201, `"status":"pending"`, "h1"},
		{"POST", "/api/v1/handoffs/{h1}/reject", `{"agent":"bob","reason":"busy"}`, 200, `"status":"rejected"`, ""},
		{"POST", "/api/v1/handoffs/{h1}/accept", `{"agent":"bob"}`, 409, "", ""},
		{"POST", "/api/v1/handoffs", `{"task":"t2","from_agent":"ann","to_agent":"bob","instructions":"fix it, please"}`, 201, `"to_agent":"bob"`, "h2"},
		{"POST", "/api/v1/handoffs/{h2}/accept", `{"agent":"bob"}`, 200, `"branch":"task/t2/bob"`, ""},
		{"POST", "/api/v1/handoffs/nope/accept", `{"agent":"bob"}`, 404, "not_found", ""},
		{"POST", "/api/v1/handoffs", `{"task":"nope"}`, 404, "not_found", ""},
		{"POST", "/api/v1/conversations", `{"branch":"task/t2/bob","title":"how to fix it","agent_id":"bob"}`, 201, `"created"`, "c1"},
		{"POST", "/api/v1/conversations/{c1}/messages", `{"branch":"task/t2/bob","role":"user","content":"use the retry budget"}`, 201, `"created"`, ""},
		{"POST", "/api/v1/conversations/{c1}/messages", `{"branch":"task/t2/bob","role":"user","content":"x","conversation_id":"other"}`, 400, "invalid_argument", ""},
		{"POST", "/api/v1/conversations/nope/messages", `{"branch":"task/t2/bob","role":"user","content":"x"}`, 404, "not_found", ""},
		{"POST", "/api/v1/tasks/t2/complete", `{"result_summary":"fixed with a retry budget","by":"bob"}`, 200, `"status":"completed"`, ""},
		{"POST", "/api/v1/tasks/t2/complete", `{"result_summary":"again"}`, 409, "", ""},
		{"GET", "/api/v1/tasks/t2", "", 200, `"completed_by":"bob"`, ""},
	} {
		path := tc.path
		for k, v := range ids {
			path = strings.ReplaceAll(path, "{"+k+"}", v)
		}
		res, body := do(t, ts, tc.method, path, tc.body)
		if res.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d: %s", tc.method, path, res.StatusCode, tc.status, body)
			continue
		}
		if tc.status >= 400 {
			var p struct{ Code string }
			if json.Unmarshal(body, &p) != nil || (tc.want != "" && p.Code != tc.want) {
				t.Errorf("%s %s: problem %s, want %s", tc.method, path, body, tc.want)
			}
			continue
		}
		if !strings.Contains(string(body), tc.want) {
			t.Errorf("%s %s: body lacks %s:\n%s", tc.method, path, tc.want, body)
		}
		if tc.save != "" {
			var v struct {
				ID     string
				Record struct{ ID string }
			}
			json.Unmarshal(body, &v)
			ids[tc.save] = v.ID + v.Record.ID
		}
	}
}

// TestBadBodiesNameTheField checks that a body the route cannot decode is answered
// with the field as the client wrote it and what it must be, never a Go type's name.
func TestBadBodiesNameTheField(t *testing.T) {
	ts, _ := newServer(t, Options{})
	for _, tc := range []struct{ body, want string }{
		{`{"name":"t9","objectives":"find it"}`, "body.objectives: must be an array, not string"},
		{`{"name":7,"objectives":["x"]}`, "body.name: must be a string, not number"},
		{`{"name":"t9",`, "body: is cut short"},
		{`{"name":"t9" "x"}`, "body: is not valid JSON at byte"},
		{`{"nom":"x"}`, `has the field \"nom\", which this route does not take`},
	} {
		res, body := do(t, ts, "POST", "/api/v1/tasks", tc.body)
		if res.StatusCode != 400 || !strings.Contains(string(body), tc.want) || strings.Contains(string(body), "Go ") {
			t.Errorf("%s: %d %s; want 400 saying %q", tc.body, res.StatusCode, body, tc.want)
		}
	}
}

// TestListPages checks that a list answers a page at a time: the Link header names
// the next page while more records follow, and the pages together hold every record
// once.
func TestListPages(t *testing.T) {
	ts, _ := newServer(t, Options{})
	for _, base := range []string{"/api/v1/facts", "/api/v1/timeline?order=newest", "/api/v1/timeline?by_update=true&kind=fact&kind=observation", "/api/v1/branches"} {
		res, body := do(t, ts, "GET", base, "")
		var all []struct{ Kind, ID, Name string }
		if err := json.Unmarshal(body, &all); err != nil || res.StatusCode != 200 || len(all) < 3 || res.Header.Get("Link") != "" {
			t.Fatalf("%s: %d, %v, %d items, Link %q", base, res.StatusCode, err, len(all), res.Header.Get("Link"))
		}
		var paged []string
		path := base + "&limit=2"
		if !strings.Contains(base, "?") {
			path = base + "?limit=2"
		}
		for pages := 0; path != ""; pages++ {
			if pages > len(all) {
				t.Fatalf("%s: the pages do not end", base)
			}
			res, body := do(t, ts, "GET", path, "")
			var page []struct{ Kind, ID, Name string }
			if err := json.Unmarshal(body, &page); err != nil || res.StatusCode != 200 || len(page) > 2 {
				t.Fatalf("%s: %d, %v, %s", path, res.StatusCode, err, body)
			}
			for _, f := range page {
				paged = append(paged, f.Kind+"/"+f.ID+f.Name)
			}
			path = ""
			if l := res.Header.Get("Link"); l != "" {
				next, ok := strings.CutSuffix(strings.TrimPrefix(l, "<"), `>; rel="next"`)
				if !ok || !strings.Contains(next, "offset=") {
					t.Fatalf("Link %q", l)
				}
				path = next
			}
		}
		var ids []string
		for _, f := range all {
			ids = append(ids, f.Kind+"/"+f.ID+f.Name)
		}
		if strings.Join(paged, ",") != strings.Join(ids, ",") {
			t.Errorf("%s: pages of 2 hold %v; one list holds %v", base, paged, ids)
		}
	}
	for _, path := range []string{"/api/v1/facts?limit=20000", "/api/v1/timeline?limit=20000", "/api/v1/timeline?offset=-1", "/api/v1/tasks?offset=-1", "/api/v1/branches?limit=20000"} {
		if res, _ := do(t, ts, "GET", path, ""); res.StatusCode != 400 {
			t.Errorf("%s: %d, want 400", path, res.StatusCode)
		}
	}
}

// TestProblemFieldsAreJSONNames checks that a validation error names the field of
// the body as a client wrote it, in the problem's field and its detail, never the Go
// name of the library's type.
func TestProblemFieldsAreJSONNames(t *testing.T) {
	ts, _ := newServer(t, Options{})
	for _, tc := range []struct{ path, body, field string }{
		{"/api/v1/facts", `{"text":"The cache TTL is 12 hours","expires_at":"2001-01-01T00:00:00Z"}`, "expires_at"},
		{"/api/v1/facts", `{"text":"The cache TTL is 12 hours","confidence":7}`, "confidence"},
		{"/api/v1/facts", `{"text":""}`, "text"},
	} {
		res, body := do(t, ts, "POST", tc.path, tc.body)
		var p Problem
		if err := json.Unmarshal(body, &p); err != nil || res.StatusCode != 400 {
			t.Errorf("%s: %d %s; want a 400 problem", tc.body, res.StatusCode, body)
			continue
		}
		if p.Field != tc.field || !strings.Contains(p.Detail, tc.field) || strings.Contains(p.Detail, "Fact.") {
			t.Errorf("%s: field %q, detail %q; want the field %q in both and no Go name", tc.body, p.Field, p.Detail, tc.field)
		}
	}
	for field, want := range map[string]string{
		"Fact.ExpiresAt": "expires_at", "Fact.Verify.At": "verification.at", "Message.CorrelationID": "correlation_id",
		"Options.DSN": "dsn", "SearchQuery.Kinds[2]": "kinds[2]", "name": "name", "Fact.Metadata": "metadata", ".Text": ".text",
	} {
		if got := jsonField(field); got != want {
			t.Errorf("jsonField(%q) = %q; want %q", field, got, want)
		}
	}
}

// TestProblemSaysDay1Once checks that a problem's detail begins with "day1: " once,
// although the error it describes was wrapped by several layers that each say it.
func TestProblemSaysDay1Once(t *testing.T) {
	ts, _ := newServer(t, Options{})
	for _, path := range []string{"/api/v1/tasks/nope/replay", "/api/v1/tasks/nope", "/api/v1/facts/nope"} {
		res, body := do(t, ts, "GET", path, "")
		var p Problem
		if err := json.Unmarshal(body, &p); err != nil || res.StatusCode != 404 {
			t.Errorf("%s: %d %s; want a 404 problem", path, res.StatusCode, body)
			continue
		}
		if !strings.HasPrefix(p.Detail, "day1: ") || strings.Count(p.Detail, "day1:") != 1 {
			t.Errorf("%s: detail %q; want day1: once, at the front", path, p.Detail)
		}
	}
}
