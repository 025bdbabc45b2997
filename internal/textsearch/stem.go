package textsearch

// Stem returns a light stem of a lowercase word: it strips common English inflections
// and a few derivational suffixes, so that the forms of one word share a stem. Words of
// three bytes or fewer and words with bytes outside ASCII letters are returned as they
// are. It is not a full Porter stemmer: it aims at merging forms, and two unrelated
// words may share a stem.
func Stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return w
		}
	}
	// Plurals and third persons.
	switch {
	case hasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case hasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case hasSuffix(w, "ss"), hasSuffix(w, "us"), hasSuffix(w, "is"):
	case hasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	// Derivational endings, longest first, then past tenses and participles; each
	// needs a stem of at least three bytes.
	derived := false
	for _, s := range derivational {
		if len(w)-len(s.from) >= 3 && hasSuffix(w, s.from) {
			w = w[:len(w)-len(s.from)] + s.to
			derived = true
			break
		}
	}
	for _, s := range []string{"ing", "ed"} {
		if derived {
			break
		}
		if len(w)-len(s) >= 3 && hasSuffix(w, s) && hasVowel(w[:len(w)-len(s)]) {
			w = w[:len(w)-len(s)]
			// "running" -> "run", but "falling" keeps "fall".
			if n := len(w); n >= 4 && w[n-1] == w[n-2] && !isVowel(w[n-1]) &&
				w[n-1] != 'l' && w[n-1] != 's' && w[n-1] != 'z' {
				w = w[:n-1]
			}
			break
		}
	}
	// A final "y" or "e" varies between forms ("happy"/"happiness" became "happi";
	// "hope"/"hoping"): drop it.
	if n := len(w); n >= 4 && (w[n-1] == 'e' || w[n-1] == 'y' || w[n-1] == 'i') {
		w = w[:n-1]
	}
	return w
}

// derivational lists the derivational suffixes Stem strips, and what replaces them.
var derivational = []struct{ from, to string }{
	{"ational", ""}, {"ization", ""}, {"isation", ""}, {"fulness", ""},
	{"iveness", ""}, {"ousness", ""}, {"ations", ""}, {"ation", ""}, {"ating", ""},
	{"ated", ""}, {"ator", ""}, {"izing", ""}, {"ising", ""}, {"ized", ""}, {"ised", ""},
	{"ement", ""}, {"ment", ""}, {"ness", ""}, {"fully", ""}, {"ably", ""}, {"ibly", ""},
	{"ally", "al"}, {"ly", ""}, {"ity", ""}, {"ate", ""}, {"able", ""}, {"ible", ""},
	{"ful", ""}, {"ize", ""}, {"ise", ""},
}

func hasSuffix(w, s string) bool { return len(w) >= len(s) && w[len(w)-len(s):] == s }

func isVowel(c byte) bool { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' }

func hasVowel(w string) bool {
	for i := 0; i < len(w); i++ {
		if isVowel(w[i]) || w[i] == 'y' {
			return true
		}
	}
	return false
}

// Terms returns the search terms of s: its tokens, as [Tokenize] finds them, each
// reduced by [Stem]. Keyword search indexes and queries terms, so "painted",
// "painting" and "paints" all match a search for "paint".
func Terms(s string) []string {
	out := make([]string, 0, len(s)/8+1)
	ScanTerms(s, func(t string) { out = append(out, t) })
	return out
}

// ScanTerms calls fn for each search term of s, in text order: what [Terms] returns,
// without allocating a slice.
func ScanTerms(s string, fn func(term string)) {
	Scan(s, func(tok string, _ Kind) { fn(Stem(tok)) })
}
