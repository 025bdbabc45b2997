package memview

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1"
)

// TestJSONView checks what --json makes of a type without json tags: snake_case keys
// in field order, durations as Go writes them, and tagged fields, embedded structs,
// maps and values that marshal themselves as encoding/json writes them.
func TestJSONView(t *testing.T) {
	type inner struct {
		SourceRev uint64
	}
	type tagged struct {
		Name  string `json:"name"`
		Empty string `json:"empty,omitempty"`
		Zero  time.Time
		Skip  string `json:"-"`
	}
	v := struct {
		inner
		CheckpointBytes int64
		Pause           time.Duration
		HTTPAddr        string
		Tagged          tagged
		Ref             day1.Ref
		Counts          map[string]int
		List            []time.Duration
		unexported      int
	}{inner{7}, 1024, 1500 * time.Millisecond, "127.0.0.1:1", tagged{Name: "n"}, day1.Ref{Kind: day1.KindFact, ID: "f1"},
		map[string]int{"b": 2, "a": 1}, []time.Duration{time.Second}, 1}
	got, err := json.Marshal(JSON(v))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"source_rev":7,"checkpoint_bytes":1024,"pause":"1.5s","http_addr":"127.0.0.1:1",` +
		`"tagged":{"name":"n","zero":"0001-01-01T00:00:00Z"},"ref":{"kind":"fact","id":"f1"},"counts":{"a":1,"b":2},"list":["1s"]}`
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf("JSON (-want +got):\n%s", d)
	}
	for in, out := range map[string]string{"ID": "id", "SourceRev": "source_rev", "HTTPAddr": "http_addr", "CPUTime2": "cpu_time2", "A": "a"} {
		if got := snakeCase(in); got != out {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, out)
		}
	}
}
