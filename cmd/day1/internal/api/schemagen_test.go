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
	"github.com/day1ai/day1/internal/memview"
)

var update = flag.Bool("update", false, "rewrite the schemas of openapi.json that are generated from the Go types")

// goSchemas are the component schemas of the OpenAPI document that are generated from
// the Go types the handlers answer with, so that the document, the handlers and the
// command line's --json (which prints the same types) have one source.
var goSchemas = []struct {
	name, description string
	typ               reflect.Type
}{
	{"Task", "", reflect.TypeFor[day1.Task]()},
	{"TaskMember", "", reflect.TypeFor[day1.TaskMember]()},
	{"Objective", "", reflect.TypeFor[day1.Objective]()},
	{"Handoff", "", reflect.TypeFor[day1.HandoffRecord]()},
	{"Session", "", reflect.TypeFor[day1.Session]()},
	{"VerificationSummary", "", reflect.TypeFor[day1.VerificationSummary]()},
	{"VerifyBranchResult", "", reflect.TypeFor[day1.VerifyBranchResult]()},
	{"Bundle", "", reflect.TypeFor[day1.Bundle]()},
	{"ImportResult", "", reflect.TypeFor[day1.ImportBundleResult]()},
	{"MergeRecord", "", reflect.TypeFor[day1.MergeRecord]()},
	{"Info", "", reflect.TypeFor[Info]()},
	{"Branch", "", reflect.TypeFor[day1.Branch]()},
	{"Snapshot", "", reflect.TypeFor[day1.Snapshot]()},
	{"Record", "A record as the API shows it: its kind, id and a one-line summary, with the record itself.", reflect.TypeFor[memview.Record]()},
	{"Hit", "", reflect.TypeFor[memview.Hit]()},
	{"Event", "", reflect.TypeFor[memview.Event]()},
	{"Change", "", reflect.TypeFor[memview.Change]()},
	{"Conflict", "", reflect.TypeFor[memview.Conflict]()},
	{"Diff", "", reflect.TypeFor[memview.Diff]()},
	{"Merge", "", reflect.TypeFor[memview.Merge]()},
	{"Written", "", reflect.TypeFor[Written]()},
	{"Version", "One version of a record on a branch: the record as it was from at on, or deleted.", reflect.TypeFor[Version]()},
	{"Completion", "", reflect.TypeFor[Completion]()},
	{"Acceptance", "", reflect.TypeFor[Acceptance]()},
	{"Replay", "", reflect.TypeFor[Replay]()},
	{"Deleted", "", reflect.TypeFor[Deleted]()},
	{"Graph", "The neighbourhood of an entity: the entities reached from the root and the relations walked.", reflect.TypeFor[day1.Graph]()},
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
	{"get", "/api/v1/branches", "200", "Branch", true},
	{"post", "/api/v1/branches", "201", "Branch", false},
	{"get", "/api/v1/branches/{name}", "200", "Branch", false},
	{"delete", "/api/v1/branches/{name}", "200", "Deleted", false},
	{"post", "/api/v1/branches/{name}/archive", "200", "Branch", false},
	{"post", "/api/v1/branches/{name}/reactivate", "200", "Branch", false},
	{"get", "/api/v1/snapshots", "200", "Snapshot", true},
	{"post", "/api/v1/snapshots", "201", "Snapshot", false},
	{"get", "/api/v1/snapshots/{name}", "200", "Snapshot", false},
	{"delete", "/api/v1/snapshots/{name}", "200", "Deleted", false},
	{"get", "/api/v1/facts", "200", "Record", true},
	{"get", "/api/v1/facts/{id}", "200", "Record", false},
	{"post", "/api/v1/facts", "201", "Written", false},
	{"get", "/api/v1/search", "200", "Hit", true},
	{"get", "/api/v1/timeline", "200", "Event", true},
	{"get", "/api/v1/diff", "200", "Diff", false},
	{"post", "/api/v1/merges", "200", "Merge", false},
	{"get", "/api/v1/records/{kind}/{id}/versions", "200", "Version", true},
	{"post", "/api/v1/tasks/{name}/complete", "200", "Completion", false},
	{"post", "/api/v1/handoffs/{id}/accept", "200", "Acceptance", false},
	{"get", "/api/v1/tasks/{name}/replay", "200", "Replay", false},
	{"get", "/api/v1/graph", "200", "Graph", false},
}

// schemaOf returns the JSON Schema of a Go type as the API encodes it: instants as
// RFC 3339 strings, durations as Go writes them (memview.JSON), records as any object, and the other
// types of goSchemas as references to their component schemas.
func schemaOf(t reflect.Type) (any, error) {
	types := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[time.Time]():           {Type: "string", Format: "date-time"},
		reflect.TypeFor[time.Duration]():       {Type: "string", Description: "a duration as Go writes it, such as 1h30m0s or 1.5s"},
		reflect.TypeFor[day1.Record]():         {Type: "object", Description: "The record itself, as the library's type encodes it: a fact, observation, relation, conversation or message."},
		reflect.TypeFor[day1.Kind]():           enum(day1.KindFact, day1.KindObservation, day1.KindRelation, day1.KindConversation, day1.KindMessage),
		reflect.TypeFor[day1.Op]():             enum(day1.OpAdded, day1.OpUpdated, day1.OpDeleted),
		reflect.TypeFor[day1.Outcome]():        enum(day1.Created, day1.Deduplicated, day1.Updated, day1.Superseded),
		reflect.TypeFor[day1.Retriever]():      enum(day1.RetrieverKeyword, day1.RetrieverVector),
		reflect.TypeFor[day1.ConflictReason](): enum(day1.BothChanged, day1.BothSuperseded, day1.Contradictory, day1.Duplicate),
	}
	for _, g := range goSchemas {
		if g.typ != t {
			types[g.typ] = &jsonschema.Schema{Ref: "#/components/schemas/" + g.name}
		}
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: types})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	dropNullRefs(v)
	return v, nil
}

// dropNullRefs removes the "null" type that the generator puts beside the reference
// of a pointer: the handlers leave such a field out rather than send null.
func dropNullRefs(v any) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["$ref"]; ok && cmp.Equal(v["type"], []any{"null"}) {
			delete(v, "type")
		}
		for _, e := range v {
			dropNullRefs(e)
		}
	case []any:
		for _, e := range v {
			dropNullRefs(e)
		}
	}
}

// enum is the schema of a string type with the values given.
func enum[T ~string](values ...T) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string"}
	for _, v := range values {
		s.Enum = append(s.Enum, string(v))
	}
	return s
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
		if g.description != "" {
			want.(map[string]any)["description"] = g.description
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

// TestGoSchemasAreTagged checks that every field the generated schemas describe names
// its JSON key with a tag: the generator would name an untagged field as Go does
// (Total), while the API writes it in snake_case (total; memview.JSON).
func TestGoSchemasAreTagged(t *testing.T) {
	seen := map[reflect.Type]bool{}
	marshaler := reflect.TypeFor[json.Marshaler]()
	var walk func(t reflect.Type, path string) []string
	walk = func(typ reflect.Type, path string) []string {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ.Implements(marshaler) || reflect.PointerTo(typ).Implements(marshaler) {
			return nil
		}
		seen[typ] = true
		var bad []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			if tag := f.Tag.Get("json"); tag == "" && !f.Anonymous {
				bad = append(bad, path+"."+f.Name)
			}
			bad = append(bad, walk(f.Type, path+"."+f.Name)...)
		}
		return bad
	}
	for _, g := range goSchemas {
		for _, b := range walk(g.typ, g.name) {
			t.Errorf("%s has no json tag", b)
		}
	}
}
