package api

import (
	"encoding/json"
	"testing"
)

// TestVersions: a fact that a branch changed has the version it inherited and its own.
func TestVersions(t *testing.T) {
	ts, _ := newServer(t, Options{})
	res, body := do(t, ts, "GET", "/api/v1/records/fact/f-retry/versions?branch=agent-a", "")
	if res.StatusCode != 200 {
		t.Fatalf("%s: %s", res.Status, body)
	}
	var vs []struct {
		At     string
		Source string
		Record struct {
			Branch string
			Record struct{ Text string }
		}
	}
	if err := json.Unmarshal(body, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].Record.Record.Text != "Token refresh retries twice before giving up" || vs[0].Source != "timeline on main" ||
		vs[1].Record.Record.Text != "Token refresh retries three times with exponential backoff" || vs[1].Record.Branch != "agent-a" || vs[1].At != "2025-03-01T09:00:12Z" || vs[1].Source != "updated" {
		t.Errorf("versions = %+v", vs)
	}
	// A merge changes main's f-retry without a timeline event of its own: the merge
	// dates the new version.
	if res, body := do(t, ts, "POST", "/api/v1/merges", `{"source":"agent-a"}`); res.StatusCode != 201 {
		t.Fatalf("merge: %s %s", res.Status, body)
	}
	_, body = do(t, ts, "GET", "/api/v1/records/fact/f-retry/versions", "")
	vs = nil
	if err := json.Unmarshal(body, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].Source != "timeline" || vs[1].Source != "merge agent-a" ||
		vs[1].Record.Record.Text != "Token refresh retries three times with exponential backoff" {
		t.Errorf("versions on main after the merge = %s", body)
	}
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/api/v1/records/fact/nope/versions", 404},
		{"/api/v1/records/widget/f-retry/versions", 400},
		{"/api/v1/records/fact/f-retry/versions?branch=nope", 404},
	} {
		if res, body := do(t, ts, "GET", tc.path, ""); res.StatusCode != tc.code {
			t.Errorf("%s: %s %s", tc.path, res.Status, body)
		}
	}
}
