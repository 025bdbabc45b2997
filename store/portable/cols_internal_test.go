package portable

import "testing"

// TestTailGrowsByDoubling checks how a column's tail grows: beside a larger base (a
// process catching up with the rows past the index it mapped) it doubles, so that
// catching up with many rows copies them few times; without a base it grows as append
// grows it.
func TestTailGrowsByDoubling(t *testing.T) {
	grows := func(c *col[int64], n int) int {
		moves := 0
		for i := range n {
			old := cap(c.tail)
			c.add(int64(i))
			if cap(c.tail) != old {
				moves++
			}
		}
		return moves
	}
	beside := &col[int64]{base: make([]int64, 1_000_000)}
	if got := grows(beside, 100_000); got > 10 {
		t.Errorf("a tail of 100,000 values beside a base of 1,000,000 grew %d times; want at most 10 (doubling from 256)", got)
	}
	if got := beside.at(1_000_000 + 99_999); *got != 99_999 {
		t.Errorf("the last value added reads %d; want 99999", *got)
	}
	alone := &col[int64]{}
	if got := grows(alone, 100_000); got <= 10 {
		t.Errorf("a tail of 100,000 values without a base grew %d times; want append's growth (more than 10)", got)
	}
}
