package matrixone

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	sq "github.com/Masterminds/squirrel"

	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/store"
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

// FuzzKeywordSQL builds the keyword search statement from arbitrary query text and
// filter values: every value reaches the server as a bound argument, never as SQL
// text. The statement's text must be the one plain values give, with one placeholder
// per argument.
func FuzzKeywordSQL(f *testing.F) {
	f.Add("cache warmed", "build", "active", "s1", "x\"); DROP TABLE facts; --", false)
	f.Add("naïve café 東京 ' OR 1=1 --", "", "", "", "?", true)
	f.Fuzz(func(t *testing.T, text, category, status, session, id string, fullText bool) {
		terms := textsearch.TermFreqs(textsearch.Terms(text))
		list := make([]string, 0, len(terms))
		plain := make([]string, 0, len(terms))
		for term := range terms {
			list = append(list, term)
			plain = append(plain, fmt.Sprint("t", len(plain)))
		}
		slices.Sort(list)
		or := func(v string) string {
			if v == "" {
				return ""
			}
			return "v"
		}
		for _, kind := range []store.Kind{store.KindFact, store.KindObservation} {
			filter := func(category, status, session, id string) sq.And {
				conds, _, _ := filterSQL(kind, store.Filter{Category: category, Status: store.FactStatus(status), SessionID: session,
					IDs: []string{id}, ExcludeStatuses: store.HistoryStatuses})
				return conds
			}
			if _, possible, _ := filterSQL(kind, store.Filter{Category: category, Status: store.FactStatus(status)}); !possible || len(list) == 0 {
				continue
			}
			p := pos{tab: branchRow{suffix: "b1"}, cut: 7}
			query, args := keywordSQL(kind, p, list, fullText, filter(category, status, session, id))
			want, _ := keywordSQL(kind, p, plain, fullText, filter(or(category), or(status), or(session), or(id)))
			if query != want {
				t.Fatalf("the values changed the statement:\n%s\nplain values give\n%s", query, want)
			}
			if n := strings.Count(query, "?"); n != len(args) {
				t.Fatalf("%d placeholders, %d arguments in %s", n, len(args), query)
			}
		}
	})
}
