package llm

// Quality says how well an embedder's vectors rank texts by meaning, compared with
// keyword search over the same texts. Search uses it to weigh the vector ranking of a
// hybrid search (see the day1 package's Search).
type Quality int

// Embedding qualities.
const (
	// QualityUnknown is the quality of an embedder that does not report one. Search
	// treats it as QualitySemantic: an embedder someone chose to plug in is usually a
	// trained model.
	QualityUnknown Quality = iota
	// QualityLexical vectors capture shared words, word forms and phrases, not
	// synonyms: a hashing embedder such as LocalEmbedder. They rank no better than
	// keyword search and add noise from hash collisions and common words.
	QualityLexical
	// QualitySemantic vectors come from a trained model (an OpenAI-compatible
	// embedding endpoint, a sentence-embedding model): they match paraphrases and
	// synonyms that share no word, which keyword search cannot.
	QualitySemantic
)

// String returns "unknown", "lexical" or "semantic".
func (q Quality) String() string {
	switch q {
	case QualityLexical:
		return "lexical"
	case QualitySemantic:
		return "semantic"
	}
	return "unknown"
}

// QualityReporter is an optional capability of an [Embedder]: it reports the
// quality of its vectors. A wrapper (a cache, a fake) forwards its inner embedder's.
type QualityReporter interface {
	// Quality returns the quality of every vector the embedder returns. It must not
	// change over the embedder's lifetime.
	Quality() Quality
}

// QualityOf returns e's reported quality, or QualityUnknown when e does not report one
// (or is nil).
func QualityOf(e Embedder) Quality {
	if r, ok := e.(QualityReporter); ok {
		return r.Quality()
	}
	return QualityUnknown
}
