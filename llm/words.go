package llm

import (
	"math"
	"strings"
)

// wordCacheSize is how many words a featurizer remembers, a power of two. Words repeat
// from text to text, and what a local embedder derives from a word alone (its stem,
// its weight, the dimensions of its n-grams) costs several times a look-up.
const wordCacheSize = 2048

// maxCachedWord is the longest word, in bytes, a featurizer remembers: longer ones
// (hashes, encoded data) rarely repeat, and the cache would keep copies of them.
const maxCachedWord = 64

// wordInfo is what the local embedders derive from one word (not an ideograph) alone,
// for vectors of dims dimensions.
type wordInfo struct {
	word string
	dims int
	// grams holds the signed dimensions of the word's character n-grams (slot), in
	// the order gramSlots hashes them, and count their number.
	grams []uint64
	count int
	// stem is the word's stem, weight its wordWeightOf, and stemHash and pairHash the
	// hashes of stemHashes.
	stem               string
	weight             float64
	stemHash, pairHash uint64
}

// stemHashes returns the feature hash of stem and the hash that the feature of the
// pair stem forms with the next word's stem extends with that stem.
func stemHashes(stem string) (stemHash, pairHash uint64) {
	return hashString(saltStem, stem), hashByte(hashString(saltStemBigram, stem), 0)
}

// word returns what the local embedders derive from word, whose feature hash
// (hashString(saltWord, word)) is h, for vectors of len(f.v) dimensions: remembered
// when word was met lately, derived and remembered otherwise, in place of the word
// that held its place. The result is valid until the next call.
func (f *featurizer) word(word string, h uint64) *wordInfo {
	var wi *wordInfo
	if len(word) > maxCachedWord {
		wi = &f.long // derived each time, and not kept with the text
		wi.word = word
	} else {
		if f.words == nil {
			f.words = make([]wordInfo, wordCacheSize)
		}
		wi = &f.words[mix(h)&(wordCacheSize-1)]
		if wi.word == word && wi.dims == len(f.v) { // an empty place holds no word
			return wi
		}
		wi.word = strings.Clone(word)
	}
	wi.dims = len(f.v)
	wi.grams, f.offs, wi.count = gramSlots(wi.word, wi.dims, wi.grams[:0], f.offs)
	wi.stem, wi.weight = Stem(wi.word), wordWeightOf(wi.word)
	wi.stemHash, wi.pairHash = stemHashes(wi.stem)
	return wi
}

// addGrams adds the word's n-grams to f's vector, with a total L2 weight of weight:
// each of its count n-grams gets weight/sqrt(count).
func (wi *wordInfo) addGrams(f *featurizer, weight float64) {
	if wi.count == 0 {
		return
	}
	w := weight / math.Sqrt(float64(wi.count))
	for _, s := range wi.grams {
		f.addSlot(s, w)
	}
}
