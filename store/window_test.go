package store

import "testing"

func TestNaturalCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"d1:9", "d1:10", -1},
		{"d1:10", "d1:9", 1},
		{"d1:10", "d1:10", 0},
		{"d2:1", "d10:1", -1},
		{"t8", "t13", -1},
		{"a", "b", -1},
		{"a", "a1", -1},
		{"a1", "a", 1},
		{"07", "7", -1}, // the same value: the strings decide
		{"7", "07", 1},
		{"x07y", "x7z", -1}, // equal runs, then the next bytes
		{"", "0", -1},
		{"9", "a", -1},
	} {
		if got := NaturalCompare(c.a, c.b); got != c.want {
			t.Errorf("NaturalCompare(%q, %q) = %d; want %d", c.a, c.b, got, c.want)
		}
	}
}
