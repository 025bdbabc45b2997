package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// documented returns the schema the OpenAPI document gives the JSON body of a
// route's answer with a status, as a JSON Schema whose $defs are the document's
// component schemas; nil when it documents none.
func documented(t *testing.T, method, path, status string) *jsonschema.Resolved {
	t.Helper()
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var op struct {
		Responses map[string]struct {
			Content map[string]struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"content"`
		} `json:"responses"`
	}
	raw, ok := doc.Paths[path][strings.ToLower(method)]
	if !ok {
		t.Fatalf("%s %s is not documented", method, path)
	}
	if err := json.Unmarshal(raw, &op); err != nil {
		t.Fatal(err)
	}
	body := op.Responses[status].Content["application/json"].Schema
	if body == nil {
		return nil
	}
	root := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema"}
	var inner map[string]any
	if err := json.Unmarshal(body, &inner); err != nil {
		t.Fatal(err)
	}
	for k, v := range inner {
		root[k] = v
	}
	defs := map[string]any{}
	for name, s := range doc.Components.Schemas {
		var v any
		if err := json.Unmarshal(s, &v); err != nil {
			t.Fatal(err)
		}
		defs[name] = v
	}
	root["$defs"] = defs
	b, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.ReplaceAll(string(b), "#/components/schemas/", "#/$defs/"))
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("the schema of %s %s %s: %v", method, path, status, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolving the schema of %s %s %s: %v", method, path, status, err)
	}
	return rs
}

// TestResponsesMatchTheDocument checks the JSON answers of the API against the
// schemas the OpenAPI document gives them, so that the two cannot drift apart
// unnoticed: each route is called on the seeded memory and its body validated.
func TestResponsesMatchTheDocument(t *testing.T) {
	ts, _ := newServer(t, Options{})
	// ids holds the ids of what the calls made, for the paths of later calls:
	// "{handoff}" and "{bundle}".
	ids := map[string]string{}
	for _, tc := range []struct {
		method, route, path, body, status string
	}{
		{"GET", "/api/v1/facts", "/api/v1/facts", "", "200"},
		{"GET", "/api/v1/facts/{id}", "/api/v1/facts/f-jwt", "", "200"},
		{"POST", "/api/v1/facts", "/api/v1/facts", `{"text":"The schema test writes this fact","expires_at":"2999-01-01T00:00:00Z"}`, "201"},
		{"POST", "/api/v1/facts/{id}/corrections", "/api/v1/facts/f-retry/corrections", `{"action":"update","text":"Token refresh retries three times","by":"lead","why":"checked"}`, "200"},
		{"GET", "/api/v1/observations", "/api/v1/observations", "", "200"},
		{"GET", "/api/v1/observations/{id}", "/api/v1/observations/o-grep", "", "200"},
		{"GET", "/api/v1/relations", "/api/v1/relations", "", "200"},
		{"GET", "/api/v1/relations/{id}", "/api/v1/relations/r-uses", "", "200"},
		{"GET", "/api/v1/graph", "/api/v1/graph?entity=auth-service", "", "200"},
		{"GET", "/api/v1/search", "/api/v1/search?q=token+refresh", "", "200"},
		{"GET", "/api/v1/timeline", "/api/v1/timeline?order=newest", "", "200"},
		{"GET", "/api/v1/records/{kind}/{id}/versions", "/api/v1/records/fact/f-retry/versions", "", "200"},
		{"GET", "/api/v1/branches", "/api/v1/branches", "", "200"},
		{"GET", "/api/v1/branches/{name}", "/api/v1/branches/main", "", "200"},
		{"POST", "/api/v1/branches", "/api/v1/branches", `{"name":"schema-test"}`, "201"},
		{"GET", "/api/v1/diff", "/api/v1/diff?source=agent-a&target=main", "", "200"},
		{"POST", "/api/v1/merges", "/api/v1/merges", `{"source":"agent-a","target":"main","dry_run":true,"policy":"accept"}`, "200"},
		{"GET", "/api/v1/merges", "/api/v1/merges", "", "200"},
		{"GET", "/api/v1/snapshots", "/api/v1/snapshots", "", "200"},
		{"GET", "/api/v1/snapshots/{name}", "/api/v1/snapshots/before-agents", "", "200"},
		{"GET", "/api/v1/tasks", "/api/v1/tasks", "", "200"},
		{"GET", "/api/v1/tasks/{name}", "/api/v1/tasks/fix-auth", "", "200"},
		{"GET", "/api/v1/handoffs", "/api/v1/handoffs", "", "200"},
		{"GET", "/api/v1/sessions", "/api/v1/sessions", "", "200"},
		{"GET", "/api/v1/verification", "/api/v1/verification", "", "200"},
		{"GET", "/api/v1/bundles", "/api/v1/bundles", "", "200"},
		{"GET", "/api/v1/info", "/api/v1/info", "", "200"},
		{"POST", "/api/v1/tasks", "/api/v1/tasks", `{"name":"t-schema","objectives":["find it","fix it"]}`, "201"},
		{"POST", "/api/v1/tasks/{name}/members", "/api/v1/tasks/t-schema/members", `{"agent":"ann","objectives":[1]}`, "201"},
		{"PATCH", "/api/v1/tasks/{name}/objectives/{id}", "/api/v1/tasks/t-schema/objectives/1", `{"status":"done","by":"ann"}`, "200"},
		{"GET", "/api/v1/tasks/{name}", "/api/v1/tasks/t-schema", "", "200"},
		{"POST", "/api/v1/handoffs", "/api/v1/handoffs", `{"task":"t-schema","from_agent":"ann","to_agent":"bob","instructions":"fix it"}`, "201"},
		{"POST", "/api/v1/verification", "/api/v1/verification", `{"branch":"agent-b"}`, "200"},
		{"POST", "/api/v1/bundles", "/api/v1/bundles", `{"name":"schema","branch":"main","include_unverified":true}`, "201"},
		{"POST", "/api/v1/bundles/import", "/api/v1/bundles/import?bundle={bundle}&branch=schema-import&create_branch=true", "", "200"},
		{"GET", "/api/v1/tasks/{name}/replay", "/api/v1/tasks/fix-auth/replay", "", "200"},
		{"POST", "/api/v1/handoffs/{id}/accept", "/api/v1/handoffs/{handoff}/accept", `{"agent":"bob"}`, "200"},
		{"POST", "/api/v1/handoffs", "/api/v1/handoffs", `{"task":"t-schema","from_agent":"bob","to_agent":"carol","instructions":"review it"}`, "201"},
		{"POST", "/api/v1/handoffs/{id}/reject", "/api/v1/handoffs/{handoff}/reject", `{"agent":"carol","reason":"busy"}`, "200"},
		{"POST", "/api/v1/snapshots", "/api/v1/snapshots", `{"name":"schema-snap","branch":"main"}`, "201"},
		{"DELETE", "/api/v1/snapshots/{name}", "/api/v1/snapshots/schema-snap", "", "200"},
		{"DELETE", "/api/v1/branches/{name}", "/api/v1/branches/schema-test", "", "200"},
		{"POST", "/api/v1/tasks/{name}/complete", "/api/v1/tasks/t-schema/complete", `{"by":"bob","result_summary":"fixed"}`, "200"},
		{"POST", "/api/v1/observations", "/api/v1/observations", `{"type":"error","summary":"pytest failed in the schema test","tool":"Bash"}`, "201"},
		{"POST", "/api/v1/relations", "/api/v1/relations", `{"source":"schema-test","type":"uses","target":"postgres"}`, "201"},
		{"POST", "/api/v1/conversations", "/api/v1/conversations", `{"id":"c-schema","title":"The schema test's conversation"}`, "201"},
		{"POST", "/api/v1/conversations/{id}/messages", "/api/v1/conversations/c-schema/messages", `{"role":"user","content":"Does the answer match?"}`, "201"},
		{"POST", "/api/v1/branches/{name}/archive", "/api/v1/branches/agent-c/archive", "", "200"},
		{"POST", "/api/v1/branches/{name}/reactivate", "/api/v1/branches/agent-c/reactivate", "", "200"},
		{"GET", "/api/v1/bundles/{id}", "/api/v1/bundles/{bundle}", "", "200"},
		{"GET", "/api/v1/graph", "/api/v1/graph?entity=schema-test", "", "200"},
		{"GET", "/api/v1/facts/{id}", "/api/v1/facts/none", "", "404"},
	} {
		for k, v := range ids {
			tc.path = strings.ReplaceAll(tc.path, k, v)
		}
		res, body := do(t, ts, tc.method, tc.path, tc.body)
		if got := res.StatusCode; strconv.Itoa(got) != tc.status {
			t.Errorf("%s %s: status %d, want %s: %s", tc.method, tc.path, got, tc.status, body)
			continue
		}
		if made := map[string]string{"/api/v1/handoffs": "{handoff}", "/api/v1/bundles": "{bundle}"}[tc.route]; tc.method == "POST" && made != "" {
			var h struct{ ID string }
			if err := json.Unmarshal(body, &h); err != nil || h.ID == "" {
				t.Fatalf("%s made no id: %v, %s", tc.route, err, body)
			}
			ids[made] = h.ID
		}
		rs := documented(t, tc.method, tc.route, tc.status)
		if rs == nil {
			continue
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Errorf("%s %s: %v", tc.method, tc.path, err)
			continue
		}
		if err := rs.Validate(v); err != nil {
			t.Errorf("%s %s: the answer does not match the document: %v\n%s", tc.method, tc.path, err, clipBody(body))
		}
	}
}

func clipBody(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}
