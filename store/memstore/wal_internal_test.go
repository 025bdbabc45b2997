package memstore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
)

// A frame encoded in place holds the same bytes as the entry encoded whole.
func TestAppendEntryFrame(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 123456789, time.UTC)
	for _, e := range []entry{
		{Seq: 1, At: at},
		{Seq: 42, At: at, Ops: []op{}},
		{Seq: 7, At: at, Ops: []op{
			putOp(store.Fact{ID: "f1", Text: "a <b> & \"c\"", Embedding: []float32{0.5, -1}, Metadata: map[string]string{"k": "v"}}),
			{Type: opDelete, Name: "main", Kind: store.KindFact, ID: "f2"},
			{Type: opMerge, Merge: &store.MergeRecord{ID: "m1", Source: "a", Target: "main"}, SourceSeq: 5},
		}},
	} {
		payload, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		want := appendFrame([]byte("prefix"), payload)
		got, err := appendEntryFrame([]byte("prefix"), e)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("entry %d: in place\n%q, %v\nwhole\n%q", e.Seq, got, err, want)
		}
	}
}
