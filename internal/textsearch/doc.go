// Package textsearch holds day1's keyword search primitives: a Unicode-aware tokenizer
// with a built-in English stopword list, a light stemmer, term frequencies, and Okapi
// BM25 scoring.
//
// # Tokens
//
// [Tokenize] lowercases text and splits it on everything that is not a letter or a digit.
// Identifiers joined by underscores stay whole and also yield their parts, so a search
// for "user" finds "user_id". Han, Hiragana and Katakana characters become one token
// each, because those scripts do not separate words with spaces. Stopwords and
// single Latin letters are dropped; single digits are kept.
//
// # Terms
//
// Keyword search indexes and queries terms, not tokens: [Terms] reduces each token with
// [Stem], a light English suffix stripper, so "painted", "painting" and "paints" are
// all the term "paint", and "authenticate" and "authentication" share "authentic".
// People ask about what they said in other forms of the same words ("what did I
// paint?" of "I painted a sunrise"): on the LoCoMo conversational benchmark stemming
// raised keyword search's recall@10 from 56.6% to 59.8%. Stems are not shown to
// anyone; two unrelated words that share a stem only cost a little precision.
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
//
// # Index
//
// Both stores keep their keyword index in the same form: per term, a [List] of
// postings in the order documents were indexed, each posting 8 bytes (the document's
// number, a tag the store uses to decide visibility, the term's frequency and the
// document's length). A store decides which postings a search sees, counts them for
// the term's document frequency, and hands them to a [Scorer], which ranks the top k
// with MaxScore ([Scorer.Top]) or scores every document ([Scorer.All]). The store
// then knows nothing of BM25 but the statistics it counts: the documents it sees and
// their total length.
package textsearch
