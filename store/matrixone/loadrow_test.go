package matrixone

import (
	"bytes"
	"testing"
	"time"
)

// TestAppendLoadRow states the fields format LOAD DATA reads the store's rows in.
func TestAppendLoadRow(t *testing.T) {
	var buf bytes.Buffer
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	row := []any{nil, "a\\b\"c\nd\re\x00f,g", "", 7, int64(-8), 0.25, true, false, at, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}
	if err := appendLoadRow(&buf, row); err != nil {
		t.Fatal(err)
	}
	want := `\N,"a\\b\"c\nd\re\0f,g","",7,-8,0.25,1,0,"2026-01-02 02:04:05.123456789","2026-01-02 00:00:00"` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("row:\n got %s\nwant %s", got, want)
	}
	if err := appendLoadRow(&buf, []any{[]byte("x")}); err == nil {
		t.Errorf("a []byte value loaded; want an error naming its type")
	}
}
