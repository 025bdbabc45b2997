package evaldata

import (
	"slices"
	"strings"
	"testing"
)

func TestGenerate(t *testing.T) {
	ds := Generate(Options{Dialogues: 3, Sessions: 5, TurnsPerSession: 20, Seed: 4})
	if len(ds) != 3 {
		t.Fatalf("%d dialogues, want 3", len(ds))
	}
	ids := map[string]bool{}
	for _, d := range ds {
		if len(d.Turns) < 5*20 {
			t.Errorf("%s: %d turns, want at least 100", d.ID, len(d.Turns))
		}
		text := map[string]string{}
		for _, tu := range d.Turns {
			if ids[tu.ID] {
				t.Fatalf("turn id %s twice", tu.ID)
			}
			ids[tu.ID] = true
			text[tu.ID] = tu.Text
			if strings.Contains(tu.Text, "{") {
				t.Errorf("unfilled template: %q", tu.Text)
			}
		}
		cats := map[Category]int{}
		for _, q := range d.Questions {
			cats[q.Category]++
			if strings.Contains(q.Text, "{") {
				t.Errorf("unfilled question: %q", q.Text)
			}
			for _, e := range q.Evidence {
				if _, ok := text[e]; !ok {
					t.Errorf("%q: evidence %q is no turn of %s", q.Text, e, d.ID)
				}
			}
			want := 1
			if q.Category == Temporal || q.Category == MultiSession {
				want = 2
			}
			if len(q.Evidence) != want {
				t.Errorf("%q (%s): %d answer turns, want %d", q.Text, q.Category, len(q.Evidence), want)
			}
		}
		if len(cats) < 2 {
			t.Errorf("%s: categories %v", d.ID, cats)
		}
	}
	if !slices.Equal(Categories, []Category{SingleHop, Paraphrase, Temporal, MultiSession}) {
		t.Errorf("Categories = %v", Categories)
	}
}

// TestPairs checks the labelled pair sets read whole, with every label present, and
// that the scores count each pair both ways round.
func TestPairs(t *testing.T) {
	for set, atLeast := range map[string]int{PairsContradictions: 100, PairsHeldOut: 30} {
		pairs, err := Pairs(set)
		if err != nil {
			t.Fatal(err)
		}
		labels := map[string]int{}
		for _, p := range pairs {
			labels[p.Label]++
		}
		if len(pairs) < atLeast || labels[LabelContradict] == 0 || labels[LabelUnrelated] == 0 {
			t.Errorf("%s: %d pairs, labels %v", set, len(pairs), labels)
		}
		all := ScoreContradictions(pairs, func(a, b string) bool { return true })
		if all.TP+all.FP != 2*len(pairs) || all.Recall != 1 || all.FN != 0 || len(all.FalsePos) != all.FP {
			t.Errorf("%s: a test that says yes to everything scored %+v", set, all)
		}
	}
	if _, err := Pairs("nope"); err == nil {
		t.Error("an unknown set was read")
	}
}
