package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestValidateBranchName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
		says string // a part of the error's reason
	}{
		{"main", true, ""},
		{"task/fix-auth/agent-a", true, ""},
		{"v1.2_rc", true, ""},
		{"", false, "must not be empty"},
		{"/a", false, "separated by single '/'"},
		{"a/", false, "separated by single '/'"},
		{"a//b", false, "separated by single '/'"},
		{"a b", false, "letters, digits and . _ -"},
		{"a/../b", false, "must not contain '..'"},
		{"..", false, "must not contain '..'"},
		{"-a", false, "each starting with a letter or digit"},
		{strings.Repeat("a", MaxBranchNameLen), true, ""},
		{strings.Repeat("a", MaxBranchNameLen+1), false, "is 101 characters long; at most 100"},
	} {
		err := ValidateBranchName("Branch", c.name)
		if (err == nil) != c.ok {
			t.Errorf("ValidateBranchName(%q) = %v; want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), c.says) {
			t.Errorf("ValidateBranchName(%q) = %v; want it to say %q", c.name, err, c.says)
		}
		if err != nil && len(c.name) <= MaxBranchNameLen && strings.Contains(err.Error(), "at most") {
			t.Errorf("ValidateBranchName(%q) = %v; the name is not too long", c.name, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ValidateBranchName(%q) error %v does not match ErrInvalidArgument", c.name, err)
		}
	}
}

func TestValidateRecordNamesTheField(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		rec   Record
		field string
	}{
		{Fact{ID: "f", Text: " "}, "Fact.Text"},
		{Fact{ID: "bad id", Text: "x"}, "Fact.ID"},
		{Fact{ID: "f", Text: "x", Embedding: []float32{1, nan}}, "Fact.Embedding"},
		{Fact{ID: "f", Text: "x", Embedding: []float32{0, 0}}, "Fact.Embedding"},
		{Fact{ID: "f", Text: "x", Confidence: 1.5}, "Fact.Confidence"},
		{Fact{ID: "f", Text: "x", Status: "maybe"}, "Fact.Status"},
		{Observation{ID: "o", Summary: "s", Type: "guess"}, "Observation.Type"},
		{Relation{ID: "r", Source: "a", Target: "b", Type: "t", ValidFrom: time.Unix(10, 0), ValidTo: time.Unix(5, 0)}, "Relation.ValidTo"},
		{Message{ID: "m", ConversationID: "c", Role: "robot"}, "Message.Role"},
		{Message{ID: "m", ConversationID: "c", Role: RoleUser, Seq: -1}, "Message.Seq"},
		{Fact{ID: "f", Text: "x", Verify: Verification{Scores: Scores{Relevance: 1.2}}}, "Fact.Verify.Scores.Relevance"},
		{Conversation{ID: "c", Verify: Verification{Scores: Scores{Errors: -0.1}}}, "Conversation.Verify.Scores.Errors"},
		{nil, "Record"},
	} {
		err := ValidateRecord(c.rec, 0)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("ValidateRecord(%#v) = %v; want a ValidationError on %s", c.rec, err, c.field)
		}
	}
	if err := ValidateRecord(Fact{ID: "f", Text: "x", Embedding: []float32{1, 2, 3}}, 4); err == nil {
		t.Error("a 3-dimension embedding passed where 4 are required")
	}
}

func TestValidateEmbeddingFindsEveryBadComponent(t *testing.T) {
	bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	for n := 1; n <= 9; n++ {
		for i := range n {
			for _, x := range bad {
				v := make([]float32, n)
				for j := range v {
					v[j] = 0.5
				}
				v[i] = x
				err := ValidateEmbedding("E", v, 0)
				want := fmt.Sprintf("component %d is %v", i, x)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("ValidateEmbedding(%v) = %v; want an error saying %q", v, err, want)
				}
			}
		}
		if err := ValidateEmbedding("E", make([]float32, n), 0); err == nil {
			t.Errorf("an all-zero %d-dimension embedding passed", n)
		}
		v := make([]float32, n)
		v[n-1] = -1e-30 // squares to a float32 zero, but not in float64
		if err := ValidateEmbedding("E", v, 0); err != nil {
			t.Errorf("ValidateEmbedding(%v) = %v; want nil", v, err)
		}
	}
}

func TestSameContentAndEquivalent(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := Fact{ID: "f", Branch: "main", Text: "x", CreatedAt: t0, UpdatedAt: t0}
	b := a
	b.Branch = "other"
	if !SameContent(a, b) {
		t.Error("records differing only in Branch are not the same content")
	}
	c := a
	c.UpdatedAt = t0.Add(time.Hour)
	if SameContent(a, c) {
		t.Error("records with different UpdatedAt count as the same content")
	}
	if !Equivalent(a, c) {
		t.Error("records differing only in UpdatedAt are not equivalent")
	}
	d := a
	d.Text = "y"
	if Equivalent(a, d) {
		t.Error("records with different text are equivalent")
	}
	in := Fact{ID: "f", Text: "x"}
	if stored := WithDefaults(a, t0); !SameContent(stored, StampLike(in, stored)) {
		t.Error("a repeated write with zero times does not match the stored version")
	}
	for _, c := range []struct{ x, y Record }{
		{Fact{ID: "f", Text: "x", Embedding: []float32{1, 0}}, Fact{ID: "f", Text: "x"}},
		{Observation{ID: "o", Summary: "x", Embedding: []float32{1, 0}}, Observation{ID: "o", Summary: "x", Embedding: []float32{0, 1}}},
	} {
		if SameContent(c.x, c.y) || !SameContentExceptEmbedding(c.x, c.y) {
			t.Errorf("%#v and %#v: SameContent %v, SameContentExceptEmbedding %v; want false, true",
				c.x, c.y, SameContent(c.x, c.y), SameContentExceptEmbedding(c.x, c.y))
		}
	}
	if SameContentExceptEmbedding(Fact{ID: "f", Text: "x"}, Fact{ID: "f", Text: "y"}) {
		t.Error("facts with different text are the same content apart from embeddings")
	}
}

func TestFilterMatch(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := Fact{ID: "f", Text: "x", Category: "bug_fix", Status: FactActive, SessionID: "s1",
		Metadata: map[string]string{"team": "auth"}, CreatedAt: t0}
	r := Relation{ID: "r", Source: "A", Target: "B", Type: "calls", CreatedAt: t0}
	for _, c := range []struct {
		name string
		f    Filter
		rec  Record
		want bool
	}{
		{"empty", Filter{}, f, true},
		{"category", Filter{Category: "bug_fix"}, f, true},
		{"other category", Filter{Category: "pattern"}, f, false},
		{"statuses", Filter{Statuses: []FactStatus{FactVerified, FactActive}}, f, true},
		{"metadata", Filter{Metadata: map[string]string{"team": "auth"}}, f, true},
		{"metadata missing", Filter{Metadata: map[string]string{"team": "db"}}, f, false},
		{"since inclusive", Filter{Since: t0}, f, true},
		{"until exclusive", Filter{Until: t0}, f, false},
		{"entity on relation", Filter{Entity: "B"}, r, true},
		{"entity excludes facts", Filter{Entity: "B"}, f, false},
		{"relation type", Filter{RelationType: "uses"}, r, false},
		{"ids", Filter{IDs: []string{"g", "f"}}, f, true},
	} {
		if got := c.f.Match(c.rec); got != c.want {
			t.Errorf("%s: Match = %v; want %v", c.name, got, c.want)
		}
	}
}

func TestAtIndex(t *testing.T) {
	err := AtIndex(Invalid("Fact.Text", "must not be empty", nil), "records", 3)
	if !strings.HasPrefix(err.Error(), "day1: invalid records[3].Fact.Text") {
		t.Errorf("AtIndex message = %q", err)
	}
	plain := errors.New("other")
	if AtIndex(plain, "records", 1) != plain {
		t.Error("AtIndex changed an error that is not a ValidationError")
	}
}

// Per-dimension scores survive a JSON round trip (how both stores keep verification),
// and a repeated write with the same scores is the same content while changed scores
// are not.
func TestVerificationScoresContent(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v := Verification{Status: Verified, Score: 0.8, By: "judge", At: t0,
		Scores: Scores{Accuracy: 0.9, Relevance: 0.7, Specificity: 0.8}}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back Verification
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != v {
		t.Errorf("round trip = %+v; want %+v", back, v)
	}
	if b, _ := json.Marshal(Verification{}); string(b) != "{}" {
		t.Errorf("the zero Verification marshals to %s; want {}", b)
	}
	a := Fact{ID: "f", Text: "x", CreatedAt: t0, UpdatedAt: t0, Verify: v}
	same := a
	same.Verify.At = t0.In(time.FixedZone("x", 3600))
	if !SameContent(a, same) {
		t.Error("equal scores at the same instant are not the same content")
	}
	changed := a
	changed.Verify.Scores.Relevance = 0.2
	if Equivalent(a, changed) {
		t.Error("facts with different scores are equivalent")
	}
	if err := ValidateRecord(a, 0); err != nil {
		t.Errorf("ValidateRecord with scores in range: %v", err)
	}
}

// TestValidIDMatchesPattern checks the hand-written id check against the pattern it
// implements, on every short string over an alphabet around its edges.
func TestValidIDMatchesPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]*$`)
	alphabet := []byte("aZ09._:@-/ é\\x00")
	var check func(prefix []byte, depth int)
	check = func(prefix []byte, depth int) {
		if got, want := validID(string(prefix)), pattern.Match(prefix); got != want {
			t.Errorf("validID(%q) = %v, want %v", prefix, got, want)
		}
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			check(append(prefix, c), depth-1)
		}
	}
	check(nil, 3)
}

// wrapped is a store that exposes the store it wraps through As.
type wrapped struct {
	Store
	inner Store
}

func (w wrapped) As(target any) bool { return As(w.inner, target) }

// plain is a store that exposes nothing.
type plain struct{ Store }

func TestAs(t *testing.T) {
	inner := plain{}
	w := wrapped{inner: inner}
	var p plain
	if !As(w, &p) {
		t.Error("As did not reach the wrapped store through the store's own As")
	}
	var got wrapped
	if !As(w, &got) || got.inner == nil {
		t.Error("As did not set a target of the store's own type")
	}
	var s Store
	if !As(w, &s) {
		t.Error("As did not set a Store target")
	}
	var a Aser
	if !As(w, &a) {
		t.Error("As did not set an interface the store implements")
	}
	var n Namer
	if As(w, &n) {
		t.Error("As set an interface neither store implements")
	}
	if As(nil, &s) || As(w, nil) || As(w, s) {
		t.Error("As accepted a nil store or a target that is not a non-nil pointer")
	}
}
