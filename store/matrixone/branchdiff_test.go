package matrixone

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

func TestBranchDiffSQL(t *testing.T) {
	t.Parallel()
	got := branchDiffSQL(table(store.KindFact, "b2"), table(store.KindFact, "b0"))
	if want := "DATA BRANCH DIFF `facts_b2` AGAINST `facts_b0`"; got != want {
		t.Errorf("branchDiffSQL = %q, want %q", got, want)
	}
}

// TestBranchDiffLayout decodes rows shaped like DATA BRANCH DIFF's output: the table
// name, the flag, then the table's columns.
func TestBranchDiffLayout(t *testing.T) {
	t.Parallel()
	cols := []string{"diff facts_b2 against facts_b0", "flag", "vid", "id", "rev", "next_rev", "deleted", "txt"}
	l, err := newBranchDiffLayout(cols)
	if err != nil {
		t.Fatal(err)
	}
	raw := func(v ...string) []sql.RawBytes {
		out := make([]sql.RawBytes, len(v))
		for i, s := range v {
			out[i] = sql.RawBytes(s)
		}
		return out
	}
	tests := []struct {
		name string
		raw  []sql.RawBytes
		want branchDiffRow
		err  string
	}{
		{"insert", raw("facts_b2", "INSERT", "16777216", "f1", "1", "9223372036854775807", "0", "a fact"),
			branchDiffRow{table: "facts_b2", flag: "INSERT", id: "f1", rev: 1, nextRev: 9223372036854775807}, ""},
		{"lower-case flag", raw("facts_b0", "update", "5", "f2", "3", "7", "0", "x"),
			branchDiffRow{table: "facts_b0", flag: "UPDATE", id: "f2", rev: 3, nextRev: 7}, ""},
		{"short row", raw("facts_b0", "INSERT", "5"), branchDiffRow{}, "has 3 values, want 8"},
		{"bad revision", raw("facts_b0", "INSERT", "5", "f2", "three", "7", "0", "x"), branchDiffRow{}, "column 4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.row(tc.raw)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("row() error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(branchDiffRow{})); d != "" {
				t.Errorf("row() (-want +got):\n%s", d)
			}
		})
	}
	// The table's columns are found by name after the first two, whatever the first
	// is called.
	if _, err := newBranchDiffLayout([]string{"id", "flag", "txt"}); err == nil {
		t.Errorf("a layout without an id column after the table name and flag was accepted")
	}
	l2, err := newBranchDiffLayout([]string{"diff", "flag", "ID", "txt"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := l2.row(raw("t", "DELETE", "4", "x")); err != nil || r.id != "4" || r.rev != 0 || r.nextRev != 0 {
		t.Errorf("row without revision columns = %+v, %v", r, err)
	}
}

// TestNativePair takes DATA BRANCH DIFF only between a branch and the parent it was
// forked from natively, with the fork as the merge base.
func TestNativePair(t *testing.T) {
	t.Parallel()
	br := func(name, parent, suffix, path string, forkRev int64) branchRow {
		return branchRow{info: store.Branch{Name: name, Parent: parent}, suffix: suffix, forkPath: path, forkRev: forkRev}
	}
	main := br("main", "", "b0", "", 0)
	child := br("task/a", "main", "b1", BranchPathNative, 10)
	copied := br("task/b", "main", "b2", BranchPathPortable, 12)
	grandchild := br("task/a/x", "task/a", "b3", BranchPathNative, 20)
	tests := []struct {
		name                  string
		src, tgt              branchRow
		base                  branchRow
		since                 int64
		wantChild, wantParent string
		wantOK                bool
	}{
		{"child into parent", child, main, main, 10, "b1", "b0", true},
		{"parent into child", main, child, main, 10, "b1", "b0", true},
		{"copied branch", copied, main, main, 12, "", "", false},
		{"grandchild into grandparent", grandchild, main, main, 10, "", "", false},
		{"grandchild into parent", grandchild, child, child, 20, "b3", "b1", true},
		{"siblings", child, copied, main, 10, "", "", false},
		{"base elsewhere", child, main, main, 9, "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, p, ok := nativePair(tc.src, tc.tgt, link{b: tc.base}, tc.since)
			if c != tc.wantChild || p != tc.wantParent || ok != tc.wantOK {
				t.Errorf("nativePair = %q, %q, %v; want %q, %q, %v", c, p, ok, tc.wantChild, tc.wantParent, tc.wantOK)
			}
		})
	}
}
