package evaldata

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"strings"
)

// Labels of a pair of fact texts.
const (
	// LabelContradict: the two facts cannot both be true now.
	LabelContradict = "contradict"
	// LabelParaphrase: the same statement in other words or units.
	LabelParaphrase = "paraphrase"
	// LabelElaborate: one adds detail to the other.
	LabelElaborate = "elaborate"
	// LabelUnrelated: facts about other things.
	LabelUnrelated = "unrelated"
)

// Pair is two fact texts and how they relate.
type Pair struct {
	Label string
	A, B  string
}

// Pair sets: labelled pairs written for day1's contradiction heuristics.
const (
	// PairsContradictions holds 112 pairs, written beside the heuristics.
	PairsContradictions = "contradictions"
	// PairsHeldOut holds 36 pairs, written after the heuristics and never used to
	// change them.
	PairsHeldOut = "contradictions_heldout"
)

//go:embed pairs/*.tsv
var pairFiles embed.FS

// Pairs returns a set of labelled pairs (PairsContradictions or PairsHeldOut): one
// per line of a tab-separated file of label, text a and text b, lines starting with
// '#' left out.
func Pairs(set string) ([]Pair, error) {
	data, err := pairFiles.ReadFile("pairs/" + set + ".tsv")
	if err != nil {
		return nil, fmt.Errorf("evaldata: no pair set %q", set)
	}
	var out []Pair
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 3 {
			return nil, fmt.Errorf("evaldata: %s.tsv line %d: want label, a and b separated by tabs", set, n)
		}
		switch parts[0] {
		case LabelContradict, LabelParaphrase, LabelElaborate, LabelUnrelated:
		default:
			return nil, fmt.Errorf("evaldata: %s.tsv line %d: unknown label %q", set, n, parts[0])
		}
		out = append(out, Pair{Label: parts[0], A: parts[1], B: parts[2]})
	}
	return out, sc.Err()
}

// PairScores is how well a test of contradiction labels a set of pairs, each pair
// taken both ways round.
type PairScores struct {
	Pairs              int
	TP, FP, FN, TN     int
	Precision, Recall  float64
	FalsePos, FalseNeg []Pair // the pairs the test got wrong, in the order they were tried
}

// ScoreContradictions runs contradicts on every pair both ways round and scores it
// at finding the pairs labelled LabelContradict.
func ScoreContradictions(pairs []Pair, contradicts func(a, b string) bool) PairScores {
	s := PairScores{Pairs: len(pairs)}
	for _, p := range pairs {
		for _, ab := range [][2]string{{p.A, p.B}, {p.B, p.A}} {
			got, want := contradicts(ab[0], ab[1]), p.Label == LabelContradict
			switch {
			case got && want:
				s.TP++
			case got:
				s.FP++
				s.FalsePos = append(s.FalsePos, Pair{Label: p.Label, A: ab[0], B: ab[1]})
			case want:
				s.FN++
				s.FalseNeg = append(s.FalseNeg, Pair{Label: p.Label, A: ab[0], B: ab[1]})
			default:
				s.TN++
			}
		}
	}
	s.Precision = float64(s.TP) / float64(max(s.TP+s.FP, 1))
	s.Recall = float64(s.TP) / float64(max(s.TP+s.FN, 1))
	return s
}
