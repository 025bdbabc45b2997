package simhash

import "math"

// HammingBound is the largest Hamming distance between the bits-long codes of two
// vectors whose cosine is at least threshold, but for a negligible chance: each code
// bit differs with probability p = acos(threshold)/π, and the bound is the mean plus
// four standard deviations, plus one. A pair at the threshold itself passes with a
// probability above 0.9999 (the distances follow the binomial law closely:
// TestHammingBoundKeepsNearPairs), while most pairs well below it are turned away
// before an exact cosine.
func HammingBound(threshold float64, bits int) int {
	p := math.Acos(max(-1, min(1, threshold))) / math.Pi
	n := float64(bits)
	return int(math.Ceil(n*p + 4*math.Sqrt(n*p*(1-p)) + 1))
}
