package memstore

import (
	"reflect"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
	"github.com/google/go-cmp/cmp"
)

// TestFactRecKeepsEveryField fills every field of a store.Fact, whatever fields it
// has, and checks that the compact form gives each back: a field added to store.Fact
// and forgotten here fails the test.
func TestFactRecKeepsEveryField(t *testing.T) {
	var f store.Fact
	v := reflect.ValueOf(&f).Elem()
	for i := range v.NumField() {
		fv, name := v.Field(i), v.Type().Field(i).Name
		switch fv.Kind() {
		case reflect.String:
			fv.SetString("value of " + name)
		case reflect.Float64:
			fv.SetFloat(0.25 + float64(i))
		case reflect.Map:
			fv.Set(reflect.ValueOf(map[string]string{"k": name}))
		case reflect.Int64:
			if name != "TTL" {
				t.Fatalf("store.Fact.%s: an integer the test does not know", name)
			}
			// TTL is an input: a write turns it into ExpiresAt, and no store keeps it.
		case reflect.Slice:
			if name != "Embedding" {
				t.Fatalf("store.Fact.%s: a slice the test does not know", name)
			}
		case reflect.Struct:
			switch fv.Interface().(type) {
			case time.Time:
				fv.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, i, 0, time.UTC)))
			case store.Verification:
				fv.Set(reflect.ValueOf(store.Verification{Status: store.Verified, Score: 0.8, By: "judge",
					At: time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC), Notes: "n", Scores: store.Scores{Accuracy: 0.9}}))
			default:
				t.Fatalf("store.Fact.%s: a struct the test does not know", name)
			}
		default:
			t.Fatalf("store.Fact.%s: a kind the test does not know", name)
		}
	}
	f.Embedding = []float32{1, 2}
	want := f
	want.Embedding = nil
	if diff := cmp.Diff(want, keepFact(f).fact()); diff != "" {
		t.Errorf("a fact with every field set, kept and given back (-want +got):\n%s", diff)
	}

	// The fields most facts leave zero take no memory then; an empty map stays empty
	// rather than nil.
	core := store.Fact{ID: "f", Text: "t", Category: "c", Status: store.FactActive, Confidence: 1}
	if r := keepFact(core); r.more != nil {
		t.Errorf("a fact without the rarer fields keeps %+v", *r.more)
	}
	for _, g := range []store.Fact{
		{ID: "f", SessionID: "s"},
		{ID: "f", Metadata: map[string]string{}},
		{ID: "f", Verify: store.Verification{Score: 0.5}},
	} {
		if diff := cmp.Diff(g, keepFact(g).fact()); diff != "" {
			t.Errorf("%+v, kept and given back (-want +got):\n%s", g, diff)
		}
	}
	if got := keepFact(store.Fact{Metadata: map[string]string{}}).fact().Metadata; got == nil {
		t.Error("an empty metadata map came back nil")
	}
}

// TestKeptFactsAreReadInPlace checks that filters and comparisons read a kept fact
// without building a store.Fact on the heap: a filtered search and a diff run them for
// every candidate.
func TestKeptFactsAreReadInPlace(t *testing.T) {
	f := store.Fact{ID: "f", Text: "kept", Category: "c", Status: store.FactActive, Confidence: 1,
		SessionID: "s", Metadata: map[string]string{"k": "v"}}
	a, b := &version{rec: keepFact(f)}, &version{rec: keepFact(f)}
	filter := store.Filter{Category: "c", SessionID: "s", Metadata: map[string]string{"k": "v"}}
	var r store.Record = f
	checks := []struct {
		name string
		fn   func() bool
	}{
		{"matches", func() bool { return a.matches(filter) }},
		{"holdsExceptEmbedding", func() bool { return a.holdsExceptEmbedding(r) }},
		{"equivalent", func() bool { return equivalent(a, b) }},
	}
	for _, c := range checks {
		if !c.fn() {
			t.Errorf("%s: false for a fact and itself", c.name)
		}
		if allocs := testing.AllocsPerRun(100, func() { c.fn() }); allocs != 0 {
			t.Errorf("%s allocates %v times", c.name, allocs)
		}
	}
}
