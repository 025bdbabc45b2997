// Package simhash finds near-duplicate embeddings among many without comparing every
// pair: the one near-duplicate index of day1's stores.
//
// An embedding's code is the sign bits of the embedding after a fixed pseudo-random
// rotation (vecmath.Rotation): random-hyperplane hashing, or SimHash. Two embeddings
// at angle θ differ in each bit with probability θ/π, so the Hamming distance between
// their codes estimates the angle. [HammingBound] turns a cosine threshold into the
// largest distance a pair above it shows but for a negligible chance, a test that
// spares most exact cosines. [Bands] is a locality-sensitive index over slices of the
// codes (bands), which finds the vectors that may be near a query by reading a few
// buckets rather than every code; [TagBound] sets the test of the 16 code bits each
// bucket keeps beside a vector.
//
// Both stores use it: the memory store over every indexed fact version, the MatrixOne
// store over the live facts of each branch it writes.
package simhash
