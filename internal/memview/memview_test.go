package memview

import (
	"errors"
	"strings"
	"testing"

	"github.com/day1ai/day1"
)

func TestParseRef(t *testing.T) {
	for _, c := range []struct {
		in   string
		want day1.Ref
		says string // a part of the error, when the input is bad
	}{
		{in: "f1", want: day1.Ref{Kind: day1.KindFact, ID: "f1"}},
		{in: "fact/f1", want: day1.Ref{Kind: day1.KindFact, ID: "f1"}},
		{in: "facts/f1", want: day1.Ref{Kind: day1.KindFact, ID: "f1"}},
		{in: "Observations/o1", want: day1.Ref{Kind: day1.KindObservation, ID: "o1"}},
		{in: "message/m1", want: day1.Ref{Kind: day1.KindMessage, ID: "m1"}},
		{in: "bogus/x", says: `"bogus/x"`},
		{in: "factss/x", says: `"factss/x"`},
		{in: "fact/", says: `"fact/"`},
	} {
		got, err := ParseRef("record", c.in)
		if c.says == "" {
			if err != nil || got != c.want {
				t.Errorf("ParseRef(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
			continue
		}
		if !errors.Is(err, day1.ErrInvalidArgument) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParseRef(%q) = %v; want an invalid argument naming %s", c.in, err, c.says)
		}
	}
}
