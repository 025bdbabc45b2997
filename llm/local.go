package llm

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/day1ai/day1/internal/parallel"
	"github.com/day1ai/day1/internal/textsearch"
)

// DefaultDimensions is the vector length of a LocalEmbedder made with dims <= 0. It
// matches small sentence-embedding models such as all-MiniLM-L6-v2, so a MatrixOne
// vecf32(384) column fits either.
const DefaultDimensions = 384

// Feature weights of the LocalEmbedder. A word counts fully; a pair of neighbouring
// words counts half, so phrases matter without swamping single words. The character
// n-grams of one word together weigh ngramWeight (in L2 norm), however long the word:
// each of its c n-grams gets ngramWeight/sqrt(c), so long words do not dominate and
// morphological variants ("fail", "failure", "failing") share part of their weight.
// Giving the n-grams as much weight as the word itself ranked paraphrases of short
// engineering notes better than lower weights did; higher weights help paraphrases a
// little more but let common endings such as "-ation" make unrelated words
// ("authentication", "migration") look alike.
const (
	wordWeight   = 1.0
	bigramWeight = 0.5
	ngramWeight  = 1.0

	// N-gram lengths, in runes, over the word padded as "<word>".
	minGram = 3
	maxGram = 5
	// Words longer than this many runes (hashes, base64, long numbers) get no
	// n-grams: they have no morphology and would only cost time.
	maxGramWord = 40
)

// Hash salts keep the feature families apart, so that the word "ing" and the n-gram
// "ing" of "logging" land in unrelated dimensions.
const (
	saltWord   = 'w'
	saltBigram = 'b'
	saltGram   = 'g'
)

// LocalEmbedder is a deterministic, offline [Embedder] based on feature hashing. It
// needs no model and no network, and equal texts always give equal vectors, on any
// machine.
//
// A text is split with the search tokenizer (lowercase words without stopwords, see
// internal/textsearch), and each word contributes three kinds of features:
//   - the word itself, weight 1.0;
//   - the pair it forms with the previous word, weight 0.5 (the parts of an identifier
//     such as "user_id" form no pairs; consecutive Han characters do);
//   - the character 3-, 4- and 5-grams of the word padded as "<word>", which together
//     weigh as much as the word: each of a word's c n-grams gets 1/sqrt(c). They make
//     "authenticate" and "authentication" close. Single-character words and words
//     over 40 characters get none.
//
// A word repeated tf times counts 1+ln(tf) times, not tf times. Each feature is hashed
// with 64-bit FNV-1a and a final bit mix: the low 32 bits choose the dimension and the
// top bit the sign, so collisions cancel out on average instead of piling up. The sum
// is L2-normalised, so the dot product of two vectors is their cosine similarity, and
// each coordinate is rounded to the nearest bfloat16 value (8 significant bits; see
// [LocalEmbedder.Embed]).
//
// Hash collisions put a noise floor under the cosine of unrelated texts: at 384
// dimensions it is typically within ±0.1 and occasionally near 0.2 for short texts.
// More dimensions lower it.
//
// The result captures shared words, phrases and stems, not synonyms: "login" and
// "logging in" are close, "login" and "sign-in" are not.
type LocalEmbedder struct {
	dims int
	name string
}

var (
	_ Embedder        = (*LocalEmbedder)(nil)
	_ QualityReporter = (*LocalEmbedder)(nil)
)

// NewLocalEmbedder returns a LocalEmbedder producing vectors of dims components; dims
// <= 0 means DefaultDimensions (384).
func NewLocalEmbedder(dims int) *LocalEmbedder {
	if dims <= 0 {
		dims = DefaultDimensions
	}
	return &LocalEmbedder{dims: dims, name: fmt.Sprintf("local-hash-%d", dims)}
}

// Quality returns QualityLexical: the vectors capture words and word forms, not
// meaning.
func (e *LocalEmbedder) Quality() Quality { return QualityLexical }

// Dimensions returns the length of every vector the embedder returns.
func (e *LocalEmbedder) Dimensions() int { return e.dims }

// Name returns "local-hash-" followed by the number of dimensions, such as
// "local-hash-384".
func (e *LocalEmbedder) Name() string { return e.name }

// Embed returns one unit-length vector per text. It fails as a whole: if any text has
// no words to embed it returns nil and an error wrapping [ErrEmptyText] that names the
// text's index. It returns ctx.Err() when ctx is done before or during the work. No
// texts give an empty result.
//
// Each coordinate is rounded to the nearest bfloat16 value, a float32 with 8
// significant bits: a vector's length is 1 to within 0.4%, and a cosine moves by less
// than 0.008. A store may then keep a vector in half the space, without loss (the
// embedded store does).
func (e *LocalEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return embedBatch(ctx, texts, e.dims, (*featurizer).embed)
}

// minPart is the smallest number of texts worth a goroutine of their own.
const minPart = 64

// embedChunk is how many texts a goroutine embedding a batch takes at a time.
const embedChunk = 32

// embedBatch embeds texts with embed, which writes one text's vector into a zeroed
// slice and reports false for a text with no features; the local embedders share it.
// It fails as a whole, with an error wrapping ErrEmptyText that names the first text
// without features, or with ctx's error.
func embedBatch(ctx context.Context, texts []string, dims int, embed func(f *featurizer, text string, v []float32) bool) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	// One backing array for the whole batch; each vector is capped so that appending to
	// one cannot overwrite the next.
	backing := make([]float32, len(texts)*dims)
	// A large batch is shared by the processors, a chunk at a time: each chunk writes
	// its own vectors.
	workers := parallel.Parts(len(texts), minPart)
	chunks := (len(texts) + embedChunk - 1) / embedChunk
	errs := make([]error, chunks)
	fs := make([]*featurizer, workers)
	parallel.Each(len(texts), embedChunk, workers, func(w, lo, hi int) {
		if fs[w] == nil {
			fs[w] = getFeaturizer()
		}
		f := fs[w]
		// Check once a chunk, not for every short text: the check costs more than
		// embedding one sentence.
		if err := ctx.Err(); err != nil {
			errs[lo/embedChunk] = err
			return
		}
		for i := lo; i < hi; i++ {
			v := backing[i*dims : (i+1)*dims : (i+1)*dims]
			if !embed(f, texts[i], v) {
				errs[lo/embedChunk] = fmt.Errorf("%w (texts[%d] = %q)", ErrEmptyText, i, shorten(texts[i], 80))
				return
			}
			out[i] = v
		}
	})
	for _, f := range fs {
		if f != nil {
			putFeaturizer(f)
		}
	}
	// The first failing chunk holds the first failing text.
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EmbedOne returns the unit-length vector of one text, or an error wrapping
// [ErrEmptyText] when the text has no words to embed. It needs no context: the work
// is bounded by the length of text and never blocks.
func (e *LocalEmbedder) EmbedOne(text string) ([]float32, error) {
	return embedOne(text, e.dims, (*featurizer).embed)
}

// embedOne embeds one text with embed, as embedBatch does a batch.
func embedOne(text string, dims int, embed func(f *featurizer, text string, v []float32) bool) ([]float32, error) {
	v := make([]float32, dims)
	f := getFeaturizer()
	defer putFeaturizer(f)
	if !embed(f, text, v) {
		return nil, ErrEmptyText
	}
	return v, nil
}

// token is one token of the text being embedded, with how many times its string
// occurs in the text.
type token struct {
	s     string
	kind  textsearch.Kind
	count int32
}

// featurizer holds the scratch space of one embedding, reused through a pool so that
// embedding allocates only the result.
type featurizer struct {
	tokens []token
	counts map[string]int32 // used only for long texts
	offs   []int32          // rune offsets of a non-ASCII word
	v      []float32
	words  []wordInfo // the words met lately, by feature hash (see word)
	long   wordInfo   // a word too long to remember
}

var featurizers = sync.Pool{New: func() any { return new(featurizer) }}

func getFeaturizer() *featurizer { return featurizers.Get().(*featurizer) }

func putFeaturizer(f *featurizer) {
	if cap(f.tokens) > 4096 {
		// Do not keep the scratch space of one huge text alive.
		f.tokens = nil
		f.counts = nil
	}
	// Drop references to the text so the pool does not keep it alive.
	clear(f.tokens[:cap(f.tokens)])
	clear(f.counts)
	f.v = nil
	f.long.word, f.long.stem = "", ""
	featurizers.Put(f)
}

// quadraticCountLimit is the token count up to which repeated tokens are counted by
// comparing every pair, faster than a map for short texts.
const quadraticCountLimit = 48

// embed writes the normalised feature vector of text into v, which must be zeroed. It
// returns false when text has no features.
func (f *featurizer) embed(text string, v []float32) bool {
	f.tokens = f.tokens[:0]
	f.v = v
	textsearch.Scan(text, func(tok string, kind textsearch.Kind) {
		f.tokens = append(f.tokens, token{s: tok, kind: kind})
	})
	if len(f.tokens) == 0 {
		return false
	}
	f.countTokens()

	var prev string
	havePrev := false
	for _, t := range f.tokens {
		// Sublinear term frequency: tf occurrences count 1+ln(tf) in total.
		scale := 1.0
		if t.count > 1 {
			c := float64(t.count)
			scale = (1 + math.Log(c)) / c
		}
		h := hashString(saltWord, t.s)
		f.add(h, wordWeight*scale)
		if t.kind != textsearch.Ideograph {
			f.word(t.s, h).addGrams(f, ngramWeight*scale)
		}
		if t.kind == textsearch.Part {
			continue
		}
		if havePrev {
			h := hashString(saltBigram, prev)
			h = hashByte(h, 0)
			f.add(hashMore(h, t.s), bigramWeight)
		}
		prev, havePrev = t.s, true
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

// countTokens sets the count of every token to the number of tokens with its string.
func (f *featurizer) countTokens() {
	ts := f.tokens
	if len(ts) <= quadraticCountLimit {
		for i := range ts {
			if ts[i].count != 0 {
				continue // counted with an earlier equal token
			}
			n := int32(1)
			for j := i + 1; j < len(ts); j++ {
				if ts[j].s == ts[i].s {
					n++
				}
			}
			ts[i].count = n
			for j := i + 1; j < len(ts); j++ {
				if ts[j].s == ts[i].s {
					ts[j].count = n
				}
			}
		}
		return
	}
	if f.counts == nil {
		f.counts = make(map[string]int32, len(ts))
	}
	clear(f.counts)
	for _, t := range ts {
		f.counts[t.s]++
	}
	for i := range ts {
		ts[i].count = f.counts[ts[i].s]
	}
}

// gramSlots appends to dst the signed dimensions, of dims, of the character n-grams of
// word padded as "<word>", in the order they are hashed, and returns it with the
// number of n-grams, which share a total L2 weight (see wordInfo.addGrams). offs is
// scratch space for the rune offsets of a word outside ASCII.
func gramSlots(word string, dims int, dst []uint64, offs []int32) ([]uint64, []int32, int) {
	// m is the number of runes; off(k) is the byte offset of rune k, off(m) = len(word).
	m := len(word)
	ascii := true
	for i := 0; i < len(word); i++ {
		if word[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if !ascii {
		offs = offs[:0]
		for i := range word {
			offs = append(offs, int32(i))
		}
		m = len(offs)
		offs = append(offs, int32(len(word)))
	}
	if m < 2 || m > maxGramWord {
		return dst, offs, 0
	}
	padded := m + 2
	count := 0
	for n := minGram; n <= maxGram; n++ {
		if padded >= n {
			count += padded - n + 1
		}
	}
	// feed hashes padded position p: 0 is '<', m+1 is '>', and p in between is rune
	// p-1 of the word.
	feed := func(h uint64, p int) uint64 {
		switch p {
		case 0:
			return hashByte(h, '<')
		case m + 1:
			return hashByte(h, '>')
		}
		if ascii {
			return hashByte(h, word[p-1])
		}
		return hashMore(h, word[offs[p-1]:offs[p]])
	}
	// The grams starting at one position share their prefix, so each longer gram
	// extends the hash of the shorter one.
	for j := 0; j+minGram <= padded; j++ {
		h := hashByte(fnvOffset, saltGram)
		for p := j; p < j+minGram-1; p++ {
			h = feed(h, p)
		}
		for p := j + minGram - 1; p < min(j+maxGram, padded); p++ {
			h = feed(h, p)
			dst = append(dst, slot(h, dims))
		}
	}
	return dst, offs, count
}

// add adds weight to the dimension h selects, with the sign its top bit selects.
func (f *featurizer) add(h uint64, weight float64) {
	f.addSlot(slot(h, len(f.v)), weight)
}

// slot returns the signed dimension, of dims, that feature hash h selects: the
// dimension shifted left by one, and 1 in the low bit when the feature is subtracted.
func slot(h uint64, dims int) uint64 {
	h = mix(h)
	// Lemire's multiply-shift maps the low 32 bits onto [0, dims) without a division.
	return (h&0xffffffff)*uint64(dims)>>32<<1 | h>>63
}

// addSlot adds weight to the signed dimension s (see slot).
func (f *featurizer) addSlot(s uint64, weight float64) {
	if s&1 != 0 {
		weight = -weight
	}
	f.v[s>>1] += float32(weight)
}

// 64-bit FNV-1a, written out so that hashing a feature never allocates.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashByte(h uint64, b byte) uint64 {
	return (h ^ uint64(b)) * fnvPrime
}

func hashMore(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func hashString(salt byte, s string) uint64 {
	return hashMore(hashByte(fnvOffset, salt), s)
}

// mix is the finaliser of MurmurHash3. FNV-1a's low bits depend only on the low bits
// of its input bytes; mixing spreads every input bit over the dimension and the sign.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// bfloat16 rounds x to the nearest float32 whose low 16 bits are zero, ties to even:
// a bfloat16 value, with 8 significant bits. x must be finite and well below the
// largest float32.
func bfloat16(x float32) float32 {
	b := math.Float32bits(x)
	b += 0x7fff + b>>16&1
	return math.Float32frombits(b &^ 0xffff)
}
