package textsearch

// stopwordList holds common English function words. Words that carry meaning in
// technical notes, such as "up", "down", "off", "out", "over" and "not", are left out
// on purpose: "server down" must not become "server".
var stopwordList = [...]string{
	"a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any",
	"are", "aren", "as", "at", "be", "because", "been", "before", "being", "below",
	"between", "both", "but", "by", "can", "could", "did", "didn", "do", "does", "doesn",
	"doing", "don", "during", "each", "few", "for", "from", "further", "had", "has",
	"have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his",
	"how", "i", "if", "in", "into", "is", "isn", "it", "its", "itself", "just", "ll", "me",
	"more", "most", "my", "myself", "nor", "now", "of", "on", "once", "only", "or",
	"other", "our", "ours", "ourselves", "own", "re", "same", "she", "should", "so",
	"some", "such", "than", "that", "the", "their", "theirs", "them", "themselves",
	"then", "there", "these", "they", "this", "those", "through", "to", "too", "until",
	"ve", "very", "was", "wasn", "we", "were", "weren", "what", "when", "where",
	"which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
	"yours", "yourself", "yourselves",
}

// stopwordTable is stopwordList as an open-addressing hash set, faster than a map for
// these short keys; maxStopwordLen is the length of the longest stopword, so longer
// tokens skip the lookup.
var stopwordTable, maxStopwordLen = func() ([stopwordSlots]string, int) {
	var t [stopwordSlots]string
	n := 0
	for _, w := range stopwordList {
		i := stopwordHash(w)
		for t[i] != "" {
			i = (i + 1) & (stopwordSlots - 1)
		}
		t[i] = w
		n = max(n, len(w))
	}
	return t, n
}()

// stopwordSlots is the size of stopwordTable, a power of two well above the number of
// stopwords so that probe chains stay short.
const stopwordSlots = 1024

// stopwordHash is 32-bit FNV-1a reduced to a slot of stopwordTable.
func stopwordHash(w string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(w); i++ {
		h ^= uint32(w[i])
		h *= 16777619
	}
	return (h ^ h>>16) & (stopwordSlots - 1)
}

// IsStopword reports whether word, in lower case, is on the built-in English stopword
// list that [Tokenize] drops. The list holds about 130 function words ("the", "of",
// "and", "is", "with", ...) and keeps words that carry meaning in technical notes,
// such as "not", "no", "up", "down", "off", "out" and "over".
func IsStopword(word string) bool {
	if len(word) == 0 || len(word) > maxStopwordLen {
		return false
	}
	for i := stopwordHash(word); ; i = (i + 1) & (stopwordSlots - 1) {
		switch stopwordTable[i] {
		case word:
			return true
		case "":
			return false
		}
	}
}
