package handoff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestListLimitsKeepTheNewest checks that a Limit on events keeps the newest ones, in
// oldest-first order, and on checkpoints the newest first.
func TestListLimitsKeepTheNewest(t *testing.T) {
	t.Parallel()
	v := scenario(t)
	var ids []string
	for _, note := range []string{"one", "two", "three"} {
		c, err := v.e.Checkpoint(bg, CheckpointRequest{Task: "t1", Agent: "inv", Note: note})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
		v.clk.Advance(1)
	}
	all, err := v.e.Events(bg, EventFilter{Task: "t1"})
	if err != nil || len(all) < 4 {
		t.Fatalf("Events = %d events, %v; want at least 4", len(all), err)
	}
	last, err := v.e.Events(bg, EventFilter{Task: "t1", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all[len(all)-2:], last); diff != "" {
		t.Errorf("Events with Limit 2 (-the last two of all +got):\n%s", diff)
	}
	cs, err := v.e.ListCheckpoints(bg, CheckpointFilter{Task: "t1", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.ID)
	}
	if diff := cmp.Diff([]string{ids[2], ids[1]}, got); diff != "" {
		t.Errorf("ListCheckpoints with Limit 2 (-want +got):\n%s", diff)
	}
}
