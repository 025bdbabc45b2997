package textsearch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAbsentWeights(t *testing.T) {
	for _, c := range []struct {
		text string
		want Weights
	}{
		{"what does the gateway retry", nil},
		{"When did Caroline go to the LGBTQ support group?", Weights{Stem("caroline"): 2, Stem("lgbtq"): 2}},
		{"What did Melanie paint on 3 May, 2023?", Weights{Stem("melanie"): 2, "3": 0, Stem("may"): 0, "2023": 0}},
		{"Caroline went home. Then Jon called", Weights{Stem("jon"): 2}},           // a sentence's first word is no name
		{"How Does The Auth Service Retry Calls", nil},                             // title case names nothing
		{"what port does the service use in october?", Weights{"october": 0}},      // a month in lower case
		{"what changed in v2 of the API after 2024", Weights{"api": 2, "2024": 0}}, // v2 is a word, not a time
	} {
		if diff := cmp.Diff(c.want, AbsentWeights(c.text)); diff != "" {
			t.Errorf("AbsentWeights(%q) (-want +got):\n%s", c.text, diff)
		}
	}
	w := Weights{"caroline": 2, "2023": 0}
	for _, c := range []struct {
		term string
		df   int
		want float64
	}{{"caroline", 0, 6}, {"caroline", 1, 3}, {"2023", 0, 0}, {"paint", 0, 3}} {
		if got := w.Of(c.term, c.df, 3); got != c.want {
			t.Errorf("Of(%q, %d, 3) = %v; want %v", c.term, c.df, got, c.want)
		}
	}
}
