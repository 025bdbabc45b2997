package agenttool

import "testing"

// The bundle import's line of text counts what its structured answer counts.
func TestBundleImportText(t *testing.T) {
	for _, c := range []struct {
		out  BundleImportOut
		want string
	}{
		{BundleImportOut{BundleID: "b1", Branch: "main", Created: 2, Deduplicated: 1},
			"bundle b1 imported into main: 2 created, 1 already there"},
		{BundleImportOut{BundleID: "b1", Branch: "main", Updated: 3},
			"bundle b1 imported into main: 0 created, 0 already there, 3 updated"},
		{BundleImportOut{BundleID: "b1", Branch: "x", Superseded: 1, Skipped: 2, Conflicts: 2},
			"bundle b1 imported into x: 0 created, 0 already there, 1 superseded, 2 skipped (the branch's version kept), 2 in conflict"},
	} {
		if got := c.out.text(); got != c.want {
			t.Errorf("text = %q; want %q", got, c.want)
		}
	}
}
