package matrixone

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

// columnScanner fills each destination from the column at its position: a string
// column gets the column's own name (or JSON for the columns that hold JSON), so that
// a value found in the wrong field names the column it came from.
type columnScanner struct {
	cols []string // id, rev, deleted, vid, then the selected columns
	at   time.Time
}

func (c columnScanner) Scan(dest ...any) error {
	if len(dest) != len(c.cols) {
		return fmt.Errorf("%d destinations for %d columns", len(dest), len(c.cols))
	}
	for i, d := range dest {
		col := c.cols[i]
		switch p := d.(type) {
		case *string:
			switch col {
			case "metadata", "properties":
				*p = `{"from":"` + col + `"}`
			case "verification":
				*p = `{"status":"verified","score":0.5}`
			case "picked_to":
				*p = `["picked_to"]`
			default:
				*p = col
			}
		case *int:
			*p = len(col) // seq, doc_len, deleted (0 only for "deleted": see below)
			if col == "deleted" {
				*p = 0
			}
		case *int64:
			*p = 42
		case *float64:
			*p = 0.25
		case *sql.NullTime:
			*p = sql.NullTime{Time: c.at.Add(time.Duration(len(col)) * time.Second), Valid: true}
		default:
			return fmt.Errorf("column %s: unexpected destination %T", col, d)
		}
	}
	return nil
}

// Each column lands in the field of its name, whatever its place in the table.
func TestScanBindsColumnsByName(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ts := func(col string) time.Time { return t0.Add(time.Duration(len(col)) * time.Second) }
	meta := func(col string) map[string]string { return map[string]string{"from": col} }
	ver := store.Verification{Status: store.Verified, Score: 0.5}
	want := map[store.Kind]store.Record{
		store.KindFact: store.Fact{ID: "id", Text: "txt", Category: "category", Confidence: 0.25,
			Status: "status", SourceType: "source_type", SourceID: "source_id", ParentID: "parent_id", SessionID: "session_id",
			TaskID: "task_id", AgentID: "agent_id", Metadata: meta("metadata"), Verify: ver, CreatedAt: ts("created_at"), UpdatedAt: ts("updated_at"),
			ExpiresAt: ts("expires_at")},
		store.KindObservation: store.Observation{ID: "id", SessionID: "session_id", TaskID: "task_id", AgentID: "agent_id", Type: "obs_type",
			Tool: "tool", Summary: "summary", RawInput: "raw_input", RawOutput: "raw_output",
			Metadata: meta("metadata"), CreatedAt: ts("created_at")},
		store.KindRelation: store.Relation{ID: "id", Source: "src", Target: "dst", Type: "rel_type", Properties: meta("properties"),
			Confidence: 0.25, ValidFrom: ts("valid_from"), ValidTo: ts("valid_to"), SessionID: "session_id", TaskID: "task_id",
			AgentID: "agent_id", CreatedAt: ts("created_at")},
		store.KindConversation: store.Conversation{ID: "id", SessionID: "session_id", AgentID: "agent_id", TaskID: "task_id", Title: "title",
			Verify: ver, Metadata: meta("metadata"), CreatedAt: ts("created_at"), UpdatedAt: ts("updated_at")},
		store.KindMessage: store.Message{ID: "id", ConversationID: "conversation_id", Seq: len("seq"), Role: "msg_role", Content: "content",
			Tool: "tool", PickedTo: []string{"picked_to"}, Picks: []store.Pick{{Branch: "picked_to"}}, SessionID: "session_id", TaskID: "task_id", AgentID: "agent_id",
			Metadata: meta("metadata"), CreatedAt: ts("created_at")},
	}
	for _, k := range store.Kinds {
		cols := append([]string{"id", "rev", "deleted", "vid"}, specs[k].selected()...)
		r, err := scanRow(k, columnScanner{cols: cols, at: t0})
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if d := cmp.Diff(want[k], r.rec); d != "" {
			t.Errorf("%s (-want +got):\n%s", k, d)
		}
		if r.vid != 42 {
			t.Errorf("%s: vid %d, want 42", k, r.vid)
		}
	}
}

// The picked_to column holds picks as objects; rows written before picks were
// recorded hold branch names, and read as picks with only a branch.
func TestDecodePicksReadsBothForms(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		col  string
		want []store.Pick
	}{
		{``, nil},
		{`["task/a","task/b"]`, []store.Pick{{Branch: "task/a"}, {Branch: "task/b"}}},
		{`[{"branch_name":"task/a","conversation_id":"c9","picked_at":"2026-03-01T10:30:00Z"}]`, []store.Pick{{Branch: "task/a", ConversationID: "c9", At: at}}},
	} {
		got, err := decodePicks(tc.col)
		if err != nil {
			t.Fatalf("decodePicks(%s): %v", tc.col, err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("decodePicks(%s) (-want +got):\n%s", tc.col, d)
		}
	}
	m := store.SyncPicks(store.Message{Picks: []store.Pick{{Branch: "task/a", ConversationID: "c9", At: at}}, PickedTo: []string{"task/b"}})
	if got, err := decodePicks(picksText(m)); err != nil || len(got) != 2 {
		t.Errorf("picks round trip = %+v, %v", got, err)
	}
}
