package sqlite

import (
	"errors"
	"slices"
	"testing"
)

// TestPostingLists packs posting lists and reads them back, from any RID on; a list
// cut short is reported, not read as fewer postings.
func TestPostingLists(t *testing.T) {
	in := []posting{{1, 1}, {2, 3}, {130, 1}, {70000, 200}, {1 << 40, 7}}
	b := encodePostings(in)
	for _, after := range []int64{0, 1, 129, 130, 1 << 40} {
		var got []posting
		if err := decodePostings(b, after, func(rid int64, tf int) error {
			got = append(got, posting{rid, tf})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := slices.DeleteFunc(slices.Clone(in), func(p posting) bool { return p.rid <= after })
		if !slices.Equal(got, want) {
			t.Errorf("after %d: %v; want %v", after, got, want)
		}
	}
	err := decodePostings(b[:len(b)-1], 0, func(int64, int) error { return nil })
	if !errors.Is(err, errPostings) {
		t.Errorf("a list cut short: %v; want errPostings", err)
	}
	if got := splitTerms(joinTerms([]string{"cache", "ttl"})); !slices.Equal(got, []string{"cache", "ttl"}) {
		t.Errorf("terms kept with a body: %v", got)
	}
	if got := splitTerms(joinTerms(nil)); got != nil {
		t.Errorf("no terms kept with a body: %v", got)
	}
}
