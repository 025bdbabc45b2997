package store

import (
	"reflect"
	"testing"
	"time"
)

// TestSameContentCoversEveryField changes each field of each record kind in turn, down
// into nested structs, and checks that SameContent and Equivalent notice: a field added
// to a record but forgotten in the comparison fails here.
func TestSameContentCoversEveryField(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	full := []Record{
		Fact{ID: "f", Branch: "main", Text: "t", Embedding: []float32{1, 2}, Category: "c", Confidence: 0.5,
			Status: FactActive, SourceType: "st", SourceID: "si", ParentID: "p", SessionID: "s", TaskID: "k",
			AgentID: "a", Metadata: map[string]string{"m": "1"}, CreatedAt: t0, UpdatedAt: t0,
			Verify: Verification{Status: Verified, Score: 0.7, By: "b", At: t0, Notes: "n",
				Scores: Scores{Accuracy: .1, Relevance: .2, Specificity: .3, Tools: .4, Reasoning: .5, Outcome: .6, Errors: .7}}},
		Observation{ID: "o", Branch: "main", SessionID: "s", TaskID: "k", AgentID: "a", Type: "tool_call", Tool: "x",
			Summary: "y", Embedding: []float32{1}, RawInput: "i", RawOutput: "o", Metadata: map[string]string{"m": "1"}, CreatedAt: t0},
		Relation{ID: "r", Branch: "main", Source: "a", Target: "b", Type: "uses", Properties: map[string]string{"p": "1"},
			Confidence: 0.5, ValidFrom: t0, ValidTo: t0.Add(time.Hour), SessionID: "s", TaskID: "k", AgentID: "a", CreatedAt: t0},
		Conversation{ID: "c", Branch: "main", SessionID: "s", AgentID: "a", TaskID: "k", Title: "t",
			Verify: Verification{Status: Verified, Score: 0.7, By: "b", At: t0, Notes: "n"}, Metadata: map[string]string{"m": "1"},
			CreatedAt: t0, UpdatedAt: t0},
		Message{ID: "m", Branch: "main", ConversationID: "c", Seq: 1, Role: "user", Content: "hi", Embedding: []float32{1}, Tool: "x",
			PickedTo: []string{"b"}, SessionID: "s", TaskID: "k", AgentID: "a", Metadata: map[string]string{"m": "1"}, CreatedAt: t0},
	}
	for _, r := range full {
		if !SameContent(r, r) || !Equivalent(r, r) {
			t.Fatalf("%T is not the same as itself", r)
		}
		base := reflect.ValueOf(r)
		for _, path := range fieldPaths(base.Type(), nil) {
			changed := reflect.New(base.Type()).Elem()
			changed.Set(base)
			name := setOther(t, changed, path)
			c := changed.Interface().(Record)
			// Maps and slices are shared with r; setOther replaces them, never mutates.
			// TTL is an input a write turns into ExpiresAt; no stored record has one.
			wantSame := name == "Branch" || name == "TTL"
			wantEquiv := wantSame || name == "UpdatedAt"
			if got := SameContent(r, c); got != wantSame {
				t.Errorf("%T: SameContent with %s changed = %v, want %v", r, name, got, wantSame)
			}
			if got := Equivalent(r, c); got != wantEquiv {
				t.Errorf("%T: Equivalent with %s changed = %v, want %v", r, name, got, wantEquiv)
			}
		}
	}
}

// fieldPaths lists the index paths of every leaf field of t, entering structs other
// than time.Time.
func fieldPaths(t reflect.Type, prefix []int) [][]int {
	var out [][]int
	for i := range t.NumField() {
		f := t.Field(i)
		p := append(append([]int(nil), prefix...), i)
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[time.Time]() {
			out = append(out, fieldPaths(f.Type, p)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// setOther gives the field at path another, non-zero value and returns its name.
func setOther(t *testing.T, v reflect.Value, path []int) string {
	t.Helper()
	f := v.FieldByIndex(path)
	name := v.Type().FieldByIndex(path).Name
	switch f.Kind() {
	case reflect.String:
		f.SetString(f.String() + "x")
	case reflect.Float32, reflect.Float64:
		f.SetFloat(f.Float() + 0.125)
	case reflect.Int, reflect.Int32, reflect.Int64:
		f.SetInt(f.Int() + 1)
	case reflect.Slice:
		n := reflect.MakeSlice(f.Type(), f.Len(), f.Len()+1)
		reflect.Copy(n, f)
		n = reflect.Append(n, reflect.New(f.Type().Elem()).Elem())
		f.Set(n)
	case reflect.Map:
		n := reflect.MakeMap(f.Type())
		n.SetMapIndex(reflect.ValueOf("other"), reflect.ValueOf("v"))
		f.Set(n)
	case reflect.Struct: // time.Time
		f.Set(reflect.ValueOf(f.Interface().(time.Time).Add(time.Second)))
	default:
		t.Fatalf("field %s has kind %s, which this test cannot change", name, f.Kind())
	}
	return name
}
