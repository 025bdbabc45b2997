package textsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind says how [Scan] found a token.
type Kind uint8

const (
	// Word is an ordinary run of letters and digits, such as "login" or "ipv6".
	Word Kind = iota + 1
	// Compound is an identifier whose parts are joined by underscores, such as
	// "user_id". Its parts follow it, each reported as a Part.
	Compound
	// Part is one part of the Compound reported before it, such as "user" and "id".
	Part
	// Ideograph is a single Han, Hiragana or Katakana character.
	Ideograph
)

// String returns the kind's name in lower case, "word", "compound", "part" or
// "ideograph".
func (k Kind) String() string {
	switch k {
	case Word:
		return "word"
	case Compound:
		return "compound"
	case Part:
		return "part"
	case Ideograph:
		return "ideograph"
	}
	return "kind(" + itoa(int(k)) + ")"
}

// Tokenize splits s into lowercase search tokens, in text order.
//
// A token is a run of letters and digits (unicode.IsLetter, unicode.IsDigit, with
// combining marks kept inside a word); everything else separates tokens. Identifiers
// joined by underscores are kept whole and followed by their parts: "user_id" gives
// "user_id", "user", "id". Han, Hiragana and Katakana characters are one token each;
// Hangul, which Korean separates with spaces, forms words like Latin letters do.
// Stopwords (see [IsStopword]) and single Latin letters are dropped, single digits kept.
// Tokens are not stemmed: [Terms] stems them for keyword search.
//
// Tokens that need no lowercasing share memory with s.
func Tokenize(s string) []string {
	return AppendTokens(nil, s)
}

// AppendTokens appends the tokens of s, as [Tokenize] finds them, to dst and returns the
// extended slice. It lets a caller reuse one slice across many texts.
func AppendTokens(dst []string, s string) []string {
	if dst == nil {
		dst = make([]string, 0, len(s)/8+1)
	}
	Scan(s, func(tok string, _ Kind) { dst = append(dst, tok) })
	return dst
}

// Scan calls fn for each token of s, in text order, with the token's kind. It finds the
// same tokens as [Tokenize], which is Scan collecting them, and lets a caller tell whole
// words from identifier parts and ideographs without allocating a slice.
func Scan(s string, fn func(tok string, kind Kind)) {
	var w wordState
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				w.char(i)
			case 'A' <= c && c <= 'Z':
				w.upper = true
				w.char(i)
			case c == '_':
				// Underscores join parts; leading, trailing and repeated ones add nothing.
				w.closePart(i)
			default:
				w.flush(s, i, fn)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isIdeograph(r):
			w.flush(s, i, fn)
			fn(s[i:i+size], Ideograph)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			w.nonASCII = true
			w.char(i)
		case w.inPart && unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
			// A combining mark belongs to the letter before it, as in decomposed "é"
			// or the vowel signs of Indic scripts.
		default:
			w.flush(s, i, fn)
		}
		i += size
	}
	w.flush(s, len(s), fn)
}

// span is a part of an identifier: s[start:end].
type span struct{ start, end int }

// wordState is the word being read by Scan: the parts closed so far and, when inPart,
// the one being read from partStart. The first parts live in an array so that Scan
// does not allocate for ordinary identifiers.
type wordState struct {
	first     [8]span
	more      []span // parts beyond len(first)
	nparts    int
	partStart int
	inPart    bool
	upper     bool // an ASCII capital was seen: lowercase before emitting
	nonASCII  bool // a non-ASCII letter was seen: lowercase by Unicode rules
}

// char records a letter or digit at byte offset i.
func (w *wordState) char(i int) {
	if !w.inPart {
		w.inPart = true
		w.partStart = i
	}
}

// closePart ends the part being read, if any, at byte offset i.
func (w *wordState) closePart(i int) {
	if w.inPart {
		p := span{w.partStart, i}
		if w.nparts < len(w.first) {
			w.first[w.nparts] = p
		} else {
			w.more = append(w.more, p)
		}
		w.nparts++
		w.inPart = false
	}
}

// part returns the i-th closed part.
func (w *wordState) part(i int) span {
	if i < len(w.first) {
		return w.first[i]
	}
	return w.more[i-len(w.first)]
}

// flush ends the word at byte offset i and reports its tokens.
func (w *wordState) flush(s string, i int, fn func(string, Kind)) {
	w.closePart(i)
	switch w.nparts {
	case 0:
		return
	case 1:
		p := w.first[0]
		if tok := w.lower(s[p.start:p.end]); keep(tok) {
			fn(tok, Word)
		}
	default:
		first, last := w.first[0].start, w.part(w.nparts-1).end
		whole := w.lower(s[first:last])
		fn(whole, Compound)
		for i := range w.nparts {
			p := w.part(i)
			var part string
			if w.nonASCII {
				// Unicode lowercasing may change byte lengths, so offsets into whole
				// do not hold; lower each part on its own.
				part = w.lower(s[p.start:p.end])
			} else {
				part = whole[p.start-first : p.end-first]
			}
			if keep(part) {
				fn(part, Part)
			}
		}
	}
	w.nparts, w.more = 0, w.more[:0]
	w.upper, w.nonASCII = false, false
}

// lower lowercases tok when the word needs it.
func (w *wordState) lower(tok string) string {
	if w.upper || w.nonASCII {
		return strings.ToLower(tok)
	}
	return tok
}

// keep reports whether a lowercase word or part is worth indexing: not a stopword and
// not a single Latin letter.
func keep(tok string) bool {
	if IsStopword(tok) {
		return false
	}
	if len(tok) == 1 {
		return tok[0] < 'a' || tok[0] > 'z'
	}
	if len(tok) <= utf8.UTFMax {
		r, size := utf8.DecodeRuneInString(tok)
		if size == len(tok) && unicode.IsLetter(r) && unicode.Is(unicode.Latin, r) {
			return false
		}
	}
	return true
}

// isIdeograph reports whether r is written without spaces between words and so stands
// as a token of its own: Han, Hiragana, Katakana and the Katakana prolonged sound mark.
func isIdeograph(r rune) bool {
	if r < 0x2E80 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || r == 'ー'
}

// itoa formats a small non-negative integer without importing strconv.
func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
