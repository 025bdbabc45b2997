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
		vs[1].Record.Record.Text != "Token refresh retries three times with exponential backoff" || vs[1].Record.Branch != "agent-a" || vs[1].At != "2025-03-01T09:00:12Z" {
		t.Errorf("versions = %+v", vs)
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
