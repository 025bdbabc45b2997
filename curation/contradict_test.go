package curation

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

type labelledPair struct {
	label, a, b string
}

// contradictionPairs reads a file of labelled pairs of fact texts written for these
// tests, each labelled contradict, paraphrase (the same statement in other words or
// units), elaborate (one adds detail to the other) or unrelated:
// testdata/contradictions.tsv (112 pairs, written with the heuristics) and
// testdata/contradictions_heldout.tsv (36 pairs, written after them and never used
// to change them).
func contradictionPairs(t *testing.T, file string) []labelledPair {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelledPair
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 3 {
			t.Fatalf("bad line %q", line)
		}
		out = append(out, labelledPair{parts[0], parts[1], parts[2]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestContradictionHeuristics measures Contradicts on the labelled pairs, both ways
// round, and holds its precision and recall a little under what they reached (on the
// held-out pairs, lower floors). Raise the floors when the heuristics get better.
func TestContradictionHeuristics(t *testing.T) {
	for _, set := range []struct {
		file              string
		precision, recall float64
		atLeast           int
	}{
		{"testdata/contradictions.tsv", 0.95, 0.9, 100},
		{"testdata/contradictions_heldout.tsv", 0.9, 0.8, 30},
	} {
		t.Run(set.file, func(t *testing.T) {
			precision, recall := measureContradictions(t, contradictionPairs(t, set.file), set.atLeast)
			if precision < set.precision || recall < set.recall {
				t.Errorf("precision %.3f, recall %.3f; want at least %.2f and %.2f", precision, recall, set.precision, set.recall)
			}
		})
	}
}

// measureContradictions runs Contradicts on the pairs both ways round and returns
// its precision and recall at finding the contradicting ones.
func measureContradictions(t *testing.T, pairs []labelledPair, atLeast int) (precision, recall float64) {
	if len(pairs) < atLeast {
		t.Fatalf("%d labelled pairs; the set holds at least %d", len(pairs), atLeast)
	}
	var tp, fp, fn, tn int
	for _, p := range pairs {
		for _, ab := range [][2]string{{p.a, p.b}, {p.b, p.a}} {
			c, got := Contradicts(ab[0], ab[1])
			want := p.label == "contradict"
			switch {
			case got && want:
				tp++
			case got && !want:
				fp++
				t.Logf("false contradiction (%s, %s %q / %q): %q / %q", p.label, c.Kind, c.A, c.B, ab[0], ab[1])
			case !got && want:
				fn++
				t.Logf("missed contradiction: %q / %q", ab[0], ab[1])
			default:
				tn++
			}
		}
	}
	precision = float64(tp) / float64(max(tp+fp, 1))
	recall = float64(tp) / float64(max(tp+fn, 1))
	t.Logf("%d pairs both ways: precision %.3f, recall %.3f (tp %d, fp %d, fn %d, tn %d)", len(pairs), precision, recall, tp, fp, fn, tn)
	return precision, recall
}

func TestContradictsSaysWhatDiffers(t *testing.T) {
	c, ok := Contradicts("The cache TTL is 24 hours", "The cache TTL is 12h")
	if !ok || c.Kind != ContradictValue || c.A != "24 hours" || c.B != "12h" {
		t.Errorf("value contradiction = %+v, %v", c, ok)
	}
	c, ok = Contradicts("Deploys go out on Fridays", "Deploys never go out on Fridays")
	if !ok || c.Kind != ContradictNegation || c.A != "" || c.B != "never" {
		t.Errorf("negation = %+v, %v", c, ok)
	}
	c, ok = Contradicts("Feature flags are enabled in production", "Feature flags are disabled in production")
	if !ok || c.Kind != ContradictNegation || c.A != "enabled" || c.B != "disabled" {
		t.Errorf("opposites = %+v, %v", c, ok)
	}
	for _, same := range [][2]string{{"", ""}, {"x", "x"}, {"The cache TTL is 24 hours", "The cache TTL is 24 hours"},
		{"Bug 123 is fixed in the parser", "Bug 456 is fixed in the parser"}, {"Ticket #88 is closed", "Ticket #91 is closed"}} {
		if _, ok := Contradicts(same[0], same[1]); ok {
			t.Errorf("%q contradicts %q", same[0], same[1])
		}
	}
}
