// Package vecmath holds the vector arithmetic behind day1's vector search: dot products,
// norms and cosine similarity over float32 embeddings, sign-bit quantisation with
// Hamming distance for a fast first pass over many candidates, and a bounded top-k
// collector.
//
// Functions that take two vectors of different lengths use the shorter length: the
// extra components of the longer one are ignored. Embeddings that day1 compares always
// come from one embedder and so have equal lengths; the rule only keeps a mismatch from
// panicking.
package vecmath
