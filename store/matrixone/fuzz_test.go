package matrixone

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The metadata and verification columns hold JSON that any client of the database may
// have written. Decoding arbitrary text must fail with an error or give a value that
// encodes and decodes to itself, never panic.

func FuzzDecodeMeta(f *testing.F) {
	for _, s := range []string{"", "{}", "null", `{"a":"b"}`, `{"a":1}`, `[1]`, `{"\u0000":"\ud800"}`, `{"a":"b"`, `"x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := decodeMeta(s)
		if err != nil {
			return
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("re-encoding %v: %v", m, err)
		}
		back, err := decodeMeta(string(b))
		if err != nil {
			t.Fatalf("decoding %s again: %v", b, err)
		}
		if len(m) != 0 && !reflect.DeepEqual(m, back) {
			t.Fatalf("decoded %v, then %v", m, back)
		}
	})
}

func FuzzDecodeVerify(f *testing.F) {
	for _, s := range []string{"", "{}", "null", `{"status":"verified","score":0.9,"by":"judge","at":"2025-01-02T03:04:05.123456+02:00","scores":{"accuracy":1}}`,
		`{"at":"not a time"}`, `{"score":"x"}`, `{"at":"9999-12-31T23:59:59-23:59"}`, `[]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := decodeVerify(s)
		if err != nil {
			return
		}
		if v.At.Location().String() != "UTC" {
			t.Fatalf("decoded instant %v not in UTC", v.At)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return // an instant JSON cannot hold (a year past 9999 once in UTC) is refused on the way back
		}
		back, err := decodeVerify(string(b))
		if err != nil {
			t.Fatalf("decoding %s again: %v", b, err)
		}
		if !back.At.Equal(v.At) || back.Status != v.Status || back.Score != v.Score || back.Scores != v.Scores || back.By != v.By || back.Notes != v.Notes {
			t.Fatalf("decoded %+v, then %+v", v, back)
		}
	})
}
