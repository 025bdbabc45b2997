// Package textsearch holds day1's keyword search primitives: a Unicode-aware tokenizer
// with a built-in English stopword list, term frequencies, and Okapi BM25 scoring.
//
// # Tokens
//
// [Tokenize] lowercases text and splits it on everything that is not a letter or a digit.
// Identifiers joined by underscores stay whole and also yield their parts, so a search
// for "user" finds "user_id". Han, Hiragana and Katakana characters become one token
// each, because those scripts do not separate words with spaces. Stopwords and
// single Latin letters are dropped; single digits are kept.
//
// There is no stemming on purpose: "authenticate" and "authentication" are different
// keywords here, and the vector retriever is the one that covers morphology.
//
// # Scoring
//
// [BM25] scores one term of one document; a search sums the scores of the query terms:
//
//	score(q, d) = Σ over terms t of q:  BM25.Score(tf(t, d), |d|, avg|d|, BM25.IDF(df(t), N))
//
// where tf is the term's frequency in the document, |d| the document's length in tokens,
// avg|d| the mean length over the collection, df the number of documents that contain the
// term and N the number of documents.
package textsearch
