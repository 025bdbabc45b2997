package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/day1ai/day1"
)

var update = flag.Bool("update", false, "rewrite the schemas of openapi.json that are generated from the Go types")

// goSchemas are the component schemas of the OpenAPI document that are generated from
// the Go types the handlers answer with, so that the document, the handlers and the
// command line's --json (which prints the same types) have one source.
var goSchemas = []struct {
	name string
	typ  reflect.Type
}{
	{"Task", reflect.TypeFor[day1.Task]()},
	{"TaskMember", reflect.TypeFor[day1.TaskMember]()},
	{"Objective", reflect.TypeFor[day1.Objective]()},
	{"Handoff", reflect.TypeFor[day1.HandoffRecord]()},
	{"Session", reflect.TypeFor[day1.Session]()},
	{"VerificationSummary", reflect.TypeFor[day1.VerificationSummary]()},
	{"VerifyBranchResult", reflect.TypeFor[day1.VerifyBranchResult]()},
	{"Bundle", reflect.TypeFor[day1.Bundle]()},
	{"ImportResult", reflect.TypeFor[day1.ImportBundleResult]()},
	{"MergeRecord", reflect.TypeFor[day1.MergeRecord]()},
	{"Info", reflect.TypeFor[Info]()},
}

// goAnswers are the answers whose body is one of goSchemas: the route, the status,
// the schema and whether the body is a list of it.
var goAnswers = []struct {
	method, path, status, schema string
	list                         bool
}{
	{"get", "/api/v1/info", "200", "Info", false},
	{"get", "/api/v1/tasks", "200", "Task", true},
	{"post", "/api/v1/tasks", "201", "Task", false},
	{"get", "/api/v1/tasks/{name}", "200", "Task", false},
	{"post", "/api/v1/tasks/{name}/members", "201", "TaskMember", false},
	{"patch", "/api/v1/tasks/{name}/objectives/{id}", "200", "Objective", false},
	{"get", "/api/v1/handoffs", "200", "Handoff", true},
	{"post", "/api/v1/handoffs", "201", "Handoff", false},
	{"get", "/api/v1/handoffs/{id}", "200", "Handoff", false},
	{"post", "/api/v1/handoffs/{id}/reject", "200", "Handoff", false},
	{"get", "/api/v1/sessions", "200", "Session", true},
	{"get", "/api/v1/verification", "200", "VerificationSummary", false},
	{"post", "/api/v1/verification", "200", "VerifyBranchResult", false},
	{"get", "/api/v1/bundles", "200", "Bundle", true},
	{"post", "/api/v1/bundles", "201", "Bundle", false},
	{"get", "/api/v1/bundles/{id}", "200", "Bundle", false},
	{"get", "/api/v1/shared/{token}", "200", "Bundle", false},
	{"post", "/api/v1/bundles/import", "200", "ImportResult", false},
	{"get", "/api/v1/merges", "200", "MergeRecord", true},
}

// schemaOf returns the JSON Schema of a Go type as the API encodes it: instants as
// RFC 3339 strings, durations as nanoseconds, records as any object.
func schemaOf(t reflect.Type) (any, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[time.Time]():     {Type: "string", Format: "date-time"},
		reflect.TypeFor[time.Duration](): {Type: "integer", Description: "nanoseconds"},
		reflect.TypeFor[day1.Record]():   {Type: "object"},
	}})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(b, &v)
}

// TestDocumentSchemasFollowTheGoTypes checks that the generated schemas of
// openapi.json are those of the Go types today, and that the answers listed use them.
// go test -run TestDocumentSchemasFollowTheGoTypes -update rewrites them.
func TestDocumentSchemasFollowTheGoTypes(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	paths := doc["paths"].(map[string]any)
	stale := false
	for _, g := range goSchemas {
		want, err := schemaOf(g.typ)
		if err != nil {
			t.Fatalf("the schema of %s: %v", g.name, err)
		}
		if d := cmp.Diff(want, schemas[g.name]); d != "" {
			stale = true
			if !*update {
				t.Errorf("openapi.json's schema %s is not that of %v (-want +got):\n%s", g.name, g.typ, d)
			}
			schemas[g.name] = want
		}
	}
	for _, a := range goAnswers {
		op, ok := paths[a.path].(map[string]any)[a.method].(map[string]any)
		if !ok {
			t.Fatalf("%s %s is not documented", strings.ToUpper(a.method), a.path)
		}
		res, ok := op["responses"].(map[string]any)[a.status].(map[string]any)
		if !ok {
			t.Fatalf("%s %s documents no %s answer", strings.ToUpper(a.method), a.path, a.status)
		}
		var want any = map[string]any{"$ref": "#/components/schemas/" + a.schema}
		if a.list {
			want = map[string]any{"type": "array", "items": want}
		}
		content := res["content"].(map[string]any)["application/json"].(map[string]any)
		if d := cmp.Diff(want, content["schema"]); d != "" {
			stale = true
			if !*update {
				t.Errorf("%s %s %s: the body's schema (-want +got):\n%s", strings.ToUpper(a.method), a.path, a.status, d)
			}
			content["schema"] = want
		}
	}
	if *update && stale {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", " ")
		if err := enc.Encode(doc); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("openapi.json", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrote openapi.json")
	}
}
