package llm

import (
	"context"
	"fmt"
	"math"

	"github.com/day1ai/day1/internal/textsearch"
)

// Feature weights of the StemEmbedder, before a word's own weight (see wordWeightOf).
// The stem carries most of a word; the exact form adds a little so that an exact
// match still ranks above a match of the stem alone.
const (
	stemStemWeight   = 1.0
	stemFormWeight   = 0.35
	stemBigramWeight = 0.45
	stemGramWeight   = 0.8
)

// More hash salts, apart from the LocalEmbedder's.
const (
	saltStem       = 's'
	saltStemBigram = 'p'
)

// StemEmbedder is a deterministic, offline [Embedder] that ranks texts by their
// content words better than [LocalEmbedder]. It needs no model and no network, and
// equal texts always give equal vectors, on any machine.
//
// A text is split with the search tokenizer (lowercase words, stopwords removed), and
// each word contributes:
//   - its stem, from a light suffix stripper ("failures", "failed", "failing" and
//     "fail" share the stem "fail"; "authentication" and "authenticate" share
//     "authentic"), weight 1.0;
//   - the word as written, weight 0.35, so an exact match still ranks first;
//   - the pair of its stem with the previous word's, weight 0.45;
//   - the character 3-, 4- and 5-grams of the word padded as "<word>", together
//     weight 0.8, which make spelling variants and compounds close.
//
// Every feature of a word is scaled by the word's weight, an estimate of how much the
// word tells apart without any corpus: about 400 common English words of conversation
// ("really", "thing", "going", "think", "stuff") weigh 0.35, short words weigh less than
// long ones, and words with digits weigh more. A word repeated tf times counts
// 1+ln(tf) times. Features are hashed into signed dimensions as in LocalEmbedder and
// the sum is L2-normalised, so the dot product of two vectors is their cosine. Each
// coordinate is rounded to bfloat16 precision, as LocalEmbedder's are.
//
// Like LocalEmbedder it captures words, word forms and phrases, not synonyms, so it
// reports [QualityLexical].
type StemEmbedder struct {
	dims int
	name string
}

var (
	_ Embedder        = (*StemEmbedder)(nil)
	_ QualityReporter = (*StemEmbedder)(nil)
)

// NewStemEmbedder returns a StemEmbedder producing vectors of dims components; dims
// <= 0 means DefaultDimensions (384).
func NewStemEmbedder(dims int) *StemEmbedder {
	if dims <= 0 {
		dims = DefaultDimensions
	}
	return &StemEmbedder{dims: dims, name: fmt.Sprintf("local-stem-%d", dims)}
}

// Quality returns QualityLexical: the vectors capture words and word forms, not
// synonyms.
func (e *StemEmbedder) Quality() Quality { return QualityLexical }

// Dimensions returns the length of every vector the embedder returns.
func (e *StemEmbedder) Dimensions() int { return e.dims }

// Name returns "local-stem-" followed by the number of dimensions, such as
// "local-stem-384". It differs from every LocalEmbedder's name: the two embedders'
// vectors must not be compared.
func (e *StemEmbedder) Name() string { return e.name }

// Embed returns one unit-length vector per text, with the same errors as
// [LocalEmbedder.Embed].
func (e *StemEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return embedBatch(ctx, texts, e.dims, (*featurizer).embedStem)
}

// EmbedOne returns the unit-length vector of one text, or an error wrapping
// [ErrEmptyText] when the text has no words to embed.
func (e *StemEmbedder) EmbedOne(text string) ([]float32, error) {
	return embedOne(text, e.dims, (*featurizer).embedStem)
}

// embedStem writes the StemEmbedder vector of text into v, which must be zeroed. It
// returns false when text has no features.
func (f *featurizer) embedStem(text string, v []float32) bool {
	f.tokens = f.tokens[:0]
	f.v = v
	textsearch.Scan(text, func(tok string, kind textsearch.Kind) {
		f.tokens = append(f.tokens, token{s: tok, kind: kind})
	})
	if len(f.tokens) == 0 {
		return false
	}
	f.countTokens()

	var prevPair uint64 // the previous word's pairHash
	prevWeight := 0.0
	for _, t := range f.tokens {
		scale := 1.0
		if t.count > 1 {
			c := float64(t.count)
			scale = (1 + math.Log(c)) / c
		}
		form := hashString(saltWord, t.s)
		var ww float64
		var stem string
		var stemHash, pairHash uint64
		var wi *wordInfo
		if t.kind == textsearch.Ideograph {
			ww, stem = wordWeightOf(t.s)*scale, t.s
			stemHash, pairHash = stemHashes(stem)
		} else {
			wi = f.word(t.s, form)
			ww, stem, stemHash, pairHash = wi.weight*scale, wi.stem, wi.stemHash, wi.pairHash
		}
		f.add(stemHash, stemStemWeight*ww)
		f.add(form, stemFormWeight*ww)
		if wi != nil {
			wi.addGrams(f, stemGramWeight*ww)
		}
		if t.kind == textsearch.Part {
			continue
		}
		if prevWeight > 0 {
			f.add(hashMore(prevPair, stem), stemBigramWeight*math.Sqrt(prevWeight*ww))
		}
		prevPair, prevWeight = pairHash, ww
	}

	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return false
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] = bfloat16(v[i] * inv)
	}
	return true
}

// wordWeightOf estimates how much a lowercase word tells texts apart, with no corpus:
// common words of conversation weigh 0.35, words with a digit 1.2, and other words
// from 0.6 (two letters) to 1.0 (six letters or more).
func wordWeightOf(w string) float64 {
	if isCommonWord(w) {
		return 0.35
	}
	for i := 0; i < len(w); i++ {
		if w[i] >= '0' && w[i] <= '9' {
			return 1.2
		}
	}
	switch n := len(w); {
	case n <= 2:
		return 0.6
	case n == 3:
		return 0.75
	case n <= 5:
		return 0.9
	}
	return 1.0
}

// Stem returns a light stem of a lowercase word: it strips common English inflections
// and a few derivational suffixes, so that the forms of one word share a stem. It is the
// stemmer keyword search uses for its terms; see the stemming rules in
// internal/textsearch. Words of three bytes or fewer and words with bytes outside ASCII
// letters are returned as they are. It is not a full Porter stemmer: it aims at merging
// forms, and two unrelated words may share a stem.
func Stem(w string) string { return textsearch.Stem(w) }
