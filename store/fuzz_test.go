package store

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The validators are the first thing outside input meets: ids and branch names from
// tool calls, bundles and share links, and search queries from agents. Arbitrary input
// must give nil or a *ValidationError, never a panic, and what they accept must be
// what their documentation promises.

func FuzzValidateID(f *testing.F) {
	for _, s := range []string{"", "f1", "a:b@c.d-e_f", "-x", strings.Repeat("a", MaxIDLen+1), "é", "a\x00b", "../etc", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := ValidateID("ID", id)
		if err != nil {
			checkValidation(t, err)
			return
		}
		if id == "" || len(id) > MaxIDLen || !utf8.ValidString(id) {
			t.Fatalf("ValidateID accepted %q", id)
		}
		for i, r := range id {
			ok := r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && strings.ContainsRune("._:@-", r))
			if !ok {
				t.Fatalf("ValidateID accepted %q: %q at %d", id, r, i)
			}
		}
	})
}

func FuzzValidateBranchName(f *testing.F) {
	for _, s := range []string{"", "main", "agent/a-1", "a//b", "/a", "a/", "..", "a/../b", "a.b", strings.Repeat("b", MaxBranchNameLen+1), "ü", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := ValidateBranchName("Branch", name)
		if err != nil {
			checkValidation(t, err)
			return
		}
		if name == "" || len(name) > MaxBranchNameLen {
			t.Fatalf("ValidateBranchName accepted %q", name)
		}
		for _, seg := range strings.Split(name, "/") {
			if seg == "" || seg == "." || seg == ".." || !isAlnum(seg[0]) {
				t.Fatalf("ValidateBranchName accepted %q: segment %q", name, seg)
			}
			for i := 0; i < len(seg); i++ {
				if c := seg[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
					t.Fatalf("ValidateBranchName accepted %q: byte %q", name, c)
				}
			}
		}
	})
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func FuzzNormalizeSearch(f *testing.F) {
	f.Add("hello world", "", "", 0, 0.0, 0.0, 0.0, 0.0, "", "", "", 0, 0, []byte{}, "", "", false)
	f.Add("", "vector", "weighted", 5, 60.0, 0.5, 0.3, 0.1, "active", "tool_use", "fact", 3, 1, []byte{0, 0, 128, 63}, "k", "v", true)
	f.Add(" ", "keyword", "rrf", -1, -1.0, 2.0, 1.5, math.Inf(1), "bogus", "nope", "relation", 2, 2, []byte{0, 0, 192, 127}, "", "", false)
	f.Fuzz(func(t *testing.T, text, mode, fusion string, limit int, rrfk, alpha, vw, minScore float64,
		status, obsType, kind string, dims, untilAfter int, vec []byte, mk, mv string, history bool) {
		var v []float32
		for i := 0; i+4 <= len(vec) && len(v) < 8; i += 4 {
			v = append(v, math.Float32frombits(uint32(vec[i])|uint32(vec[i+1])<<8|uint32(vec[i+2])<<16|uint32(vec[i+3])<<24))
		}
		since := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		q := SearchQuery{
			Text: text, Mode: SearchMode(mode), Fusion: Fusion(fusion), Limit: limit, RRFK: rrfk, Alpha: alpha,
			VectorWeight: vw, MinScore: minScore, Vector: v, IncludeHistory: history,
			Filter: Filter{Status: FactStatus(status), Statuses: []FactStatus{FactStatus(status)}, ObsType: ObservationType(obsType),
				Since: since, Until: since.Add(time.Duration(untilAfter) * time.Hour), Metadata: map[string]string{mk: mv}},
		}
		if kind != "" {
			q.Kinds = []Kind{Kind(kind)}
		}
		got, err := NormalizeSearch(q, dims%4)
		if err != nil {
			checkValidation(t, err)
			return
		}
		if !got.Mode.Valid() || got.Limit < 1 || got.Limit > MaxLimit || len(got.Kinds) == 0 ||
			got.Fusion != RRF && got.Fusion != Weighted || !(got.RRFK > 0) || math.IsInf(got.RRFK, 0) ||
			!(got.Alpha >= 0 && got.Alpha <= 1) || !(got.VectorWeight >= 0 && got.VectorWeight <= 1) || !finite(got.MinScore) {
			t.Fatalf("NormalizeSearch accepted and returned %+v", got)
		}
		for _, k := range got.Kinds {
			if k != KindFact && k != KindObservation {
				t.Fatalf("NormalizeSearch accepted kind %q", k)
			}
		}
		if err := ValidateFilter(got.Filter); err != nil {
			t.Fatalf("NormalizeSearch returned a filter ValidateFilter refuses: %v", err)
		}
		if again, err := NormalizeSearch(got, dims%4); err != nil || again.Limit != got.Limit || again.Mode != got.Mode {
			t.Fatalf("normalizing twice: %+v, %v", again, err)
		}
	})
}

func FuzzValidateFilter(f *testing.F) {
	f.Add("", "", "", "", int64(0), int64(0))
	f.Add("active", "verified", "decision", "cat", int64(1), int64(2))
	f.Add("x", "promoted", "y", "\xff", int64(-1), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, status, status2, obsType, category string, since, until int64) {
		fl := Filter{Status: FactStatus(status), Statuses: []FactStatus{FactStatus(status2)}, ObsType: ObservationType(obsType),
			Category: category, Since: time.Unix(0, since), Until: time.Unix(0, until), IDs: []string{category}}
		err := ValidateFilter(fl)
		if err != nil {
			checkValidation(t, err)
			return
		}
		if status != "" && !FactStatus(status).Valid() || !FactStatus(status2).Valid() || obsType != "" && !ObservationType(obsType).Valid() {
			t.Fatalf("ValidateFilter accepted %+v", fl)
		}
		if since != 0 && until != 0 && until <= since {
			t.Fatalf("ValidateFilter accepted Until %d not after Since %d", until, since)
		}
	})
}

func checkValidation(t *testing.T, err error) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	_ = err.Error()
}
