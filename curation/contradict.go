package curation

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/day1ai/day1/internal/textsearch"
)

// ContradictionKind says how two facts contradict each other.
type ContradictionKind string

// Contradiction kinds.
const (
	// ContradictValue: the facts give different values (numbers, durations, sizes,
	// dates, versions) in the same statement.
	ContradictValue ContradictionKind = "value"
	// ContradictNegation: one fact denies what the other states (a negation, or one
	// of a pair of opposites such as enabled and disabled).
	ContradictNegation ContradictionKind = "negation"
)

// Contradiction is what Contradicts found between two fact texts.
type Contradiction struct {
	Kind ContradictionKind
	// A and B are what differs, as each text has it: the values, or the negation or
	// opposite word ("" where a text has none).
	A, B string
}

// MinContradictionOverlap is how alike two fact texts' other words must be (the
// Jaccard similarity of their stemmed content words, values and negations left out)
// for Contradicts to compare their values and negations.
const MinContradictionOverlap = 0.5

// Contradicts reports whether two fact texts state different things about the same
// subject, by heuristics that need no model:
//
//   - the texts are about the same: their content words (stemmed, stopwords, values,
//     units and negations left out) overlap by MinContradictionOverlap or more, and
//     share two words at least (one, when a text has only one);
//   - and either each gives a value the other does not, after durations, sizes and
//     percentages are brought to one unit (24 hours is a day, 2048 MB is 2 GB) and
//     number words read as numbers; a text that only adds values to the other's is
//     more specific, not contradicting;
//   - or the values agree (or neither has any) and one text is negated where the
//     other is not ("not", "never", "no", "n't", "without"), or they hold opposite
//     words (enabled and disabled, allowed and forbidden, true and false, ...).
//
// Paraphrases with other words, and facts about other subjects, are not contradictions.
// On the labelled pairs of this package's tests the heuristics reach the precision and
// recall TestContradictionHeuristics prints.
func Contradicts(a, b string) (Contradiction, bool) {
	ta, tb := analyzeClaim(a), analyzeClaim(b)
	if !ta.about(tb) {
		return Contradiction{}, false
	}
	if da, db := ta.differing(tb), tb.differing(ta); len(da) > 0 && len(db) > 0 {
		// Each gives a value the other does not: a value that only one of them has
		// (and the other lacks nothing of) is detail, not contradiction.
		return Contradiction{Kind: ContradictValue, A: strings.Join(da, " "), B: strings.Join(db, " ")}, true
	} else if len(da) > 0 || len(db) > 0 {
		return Contradiction{}, false
	}
	if ta.negated != tb.negated {
		return Contradiction{Kind: ContradictNegation, A: ta.negWord, B: tb.negWord}, true
	}
	for _, w := range opposites {
		p := [2]string{textsearch.Stem(w[0]), textsearch.Stem(w[1])}
		if ta.words[p[0]] && tb.words[p[1]] && !ta.words[p[1]] && !tb.words[p[0]] {
			return Contradiction{Kind: ContradictNegation, A: w[0], B: w[1]}, true
		}
		if ta.words[p[1]] && tb.words[p[0]] && !ta.words[p[0]] && !tb.words[p[1]] {
			return Contradiction{Kind: ContradictNegation, A: w[1], B: w[0]}, true
		}
	}
	return Contradiction{}, false
}

// claim is a fact text taken apart for Contradicts.
type claim struct {
	content map[string]bool // stemmed content words
	ids     map[string]bool // identifiers: a number after an identifying noun or a '#'
	words   map[string]bool // every word, stemmed, for the opposites
	values  []value
	negated bool
	negWord string
}

// value is a number with its unit brought to a base unit (seconds, bytes, percent),
// and the text it was read from.
type value struct {
	n    float64
	unit string
	text string
}

func (v value) key() string { return strconv.FormatFloat(v.n, 'g', 10, 64) + v.unit }

// differing returns the texts of c's values that o does not have.
func (c claim) differing(o claim) []string {
	theirs := map[string]int{}
	for _, v := range o.values {
		theirs[v.key()]++
	}
	var out []string
	for _, v := range c.values {
		if theirs[v.key()] > 0 {
			theirs[v.key()]--
			continue
		}
		out = append(out, v.text)
	}
	return out
}

// about reports whether c and o speak of the same subject.
func (c claim) about(o claim) bool {
	// Bug 123 and bug 456 are two bugs: facts that name other things are about
	// other things.
	if len(c.ids) > 0 && len(o.ids) > 0 && !maps.Equal(c.ids, o.ids) {
		return false
	}
	shared := 0
	for w := range c.content {
		if o.content[w] {
			shared++
		}
	}
	union := len(c.content) + len(o.content) - shared
	if union == 0 {
		return false
	}
	need := 2
	if min(len(c.content), len(o.content)) <= 1 {
		need = 1
	}
	return shared >= need && float64(shared)/float64(union) >= MinContradictionOverlap
}

// negations are the words that deny a statement.
var negations = map[string]bool{
	"not": true, "no": true, "never": true, "none": true, "nothing": true, "without": true, "neither": true, "nor": true,
	"cannot": true, "can't": true, "don't": true, "doesn't": true, "didn't": true, "isn't": true, "aren't": true,
	"wasn't": true, "weren't": true, "won't": true, "wouldn't": true, "shouldn't": true, "mustn't": true, "hasn't": true,
	"haven't": true, "hadn't": true, "couldn't": true,
}

// opposites are pairs of words that state opposite things of the same subject.
var opposites = [][2]string{
	{"enabled", "disabled"}, {"enable", "disable"}, {"on", "off"}, {"true", "false"}, {"allowed", "forbidden"},
	{"allowed", "blocked"}, {"allow", "deny"}, {"allow", "block"}, {"synchronously", "asynchronously"}, {"accepted", "rejected"}, {"required", "optional"}, {"public", "private"},
	{"synchronous", "asynchronous"}, {"sync", "async"}, {"before", "after"}, {"increase", "decrease"},
	{"increased", "decreased"}, {"up", "down"}, {"open", "closed"}, {"succeeds", "fails"}, {"passes", "fails"},
	{"supported", "unsupported"}, {"always", "never"}, {"mandatory", "optional"}, {"encrypted", "unencrypted"},
}

// oppositeWords are the words of opposites, stemmed, left out of the content words.
var oppositeWords = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range opposites {
		m[textsearch.Stem(p[0])], m[textsearch.Stem(p[1])] = true, true
	}
	return m
}()

// units maps unit words to their base unit and factor.
var units = map[string]struct {
	base   string
	factor float64
}{
	"ms": {"s", 0.001}, "millisecond": {"s", 0.001}, "milliseconds": {"s", 0.001},
	"s": {"s", 1}, "sec": {"s", 1}, "secs": {"s", 1}, "second": {"s", 1}, "seconds": {"s", 1},
	"m": {"s", 60}, "min": {"s", 60}, "mins": {"s", 60}, "minute": {"s", 60}, "minutes": {"s", 60},
	"h": {"s", 3600}, "hr": {"s", 3600}, "hrs": {"s", 3600}, "hour": {"s", 3600}, "hours": {"s", 3600},
	"d": {"s", 86400}, "day": {"s", 86400}, "days": {"s", 86400},
	"w": {"s", 604800}, "wk": {"s", 604800}, "week": {"s", 604800}, "weeks": {"s", 604800},
	"month": {"s", 2592000}, "months": {"s", 2592000}, "year": {"s", 31536000}, "years": {"s", 31536000},
	"b": {"B", 1}, "byte": {"B", 1}, "bytes": {"B", 1},
	"kb": {"B", 1 << 10}, "kib": {"B", 1 << 10}, "mb": {"B", 1 << 20}, "mib": {"B", 1 << 20},
	"gb": {"B", 1 << 30}, "gib": {"B", 1 << 30}, "tb": {"B", 1 << 40}, "tib": {"B", 1 << 40},
	"%": {"%", 1}, "percent": {"%", 1},
}

// identifying are the nouns whose number names a thing (bug 123) rather than giving
// a value (port 8080): the number is part of the subject.
var identifying = map[string]bool{
	"bug": true, "issue": true, "ticket": true, "pr": true, "incident": true, "fact": true, "item": true,
	"step": true, "case": true, "order": true, "invoice": true, "user": true, "customer": true, "task": true,
	"story": true, "epic": true, "job": true, "build": true, "run": true, "commit": true, "page": true,
	"chapter": true, "section": true, "room": true, "account": true, "id": true, "no": true, "number": true,
	"test": true, "request": true, "cve": true, "rfc": true, "release": true, "#": true,
}

// countedNext reports whether the token after toks[i] makes it a count or a measure
// ("3 times", "5 minutes"), not an identifier.
func countedNext(toks []string, i int) bool {
	if i+1 >= len(toks) {
		return false
	}
	_, unit := units[toks[i+1]]
	return unit || toks[i+1] == "times" || toks[i+1] == "x"
}

// numberWords read as numbers.
var numberWords = map[string]float64{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
	"nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
	"forty": 40, "fifty": 50, "sixty": 60, "hundred": 100, "thousand": 1000, "once": 1, "twice": 2,
	"single": 1, "half": 0.5, "a": 1, "an": 1,
}

// analyzeClaim takes a fact text apart: its words, values and negations.
func analyzeClaim(text string) claim {
	c := claim{content: map[string]bool{}, words: map[string]bool{}, ids: map[string]bool{}}
	toks := claimTokens(text)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		c.words[textsearch.Stem(t)] = true
		if i > 0 && identifying[toks[i-1]] && unicode.IsDigit(rune(t[0])) && !countedNext(toks, i) {
			c.ids[t] = true
			continue
		}
		if negations[t] || strings.HasSuffix(t, "n't") {
			c.negated = !c.negated
			if c.negWord == "" {
				c.negWord = t
			}
			continue
		}
		if n, rest, ok := parseNumber(t); ok {
			v := value{n: n, text: t}
			unit := rest
			if unit == "" && i+1 < len(toks) {
				if _, isUnit := units[toks[i+1]]; isUnit && toks[i+1] != "a" {
					unit = toks[i+1]
					v.text += " " + unit
					i++
				}
			}
			if u, ok := units[unit]; ok {
				v.n, v.unit = v.n*u.factor, u.base
			} else if unit != "" {
				v.unit = unit // a version's or a date's other parts, an unknown unit
			}
			c.values = append(c.values, v)
			continue
		}
		if n, ok := numberWords[t]; ok && t != "a" && t != "an" {
			// A number word counts with a unit after it ("one day"), or alone when it
			// is a count ("three retries").
			v := value{n: n, text: t}
			if i+1 < len(toks) {
				if u, ok := units[toks[i+1]]; ok {
					v.n, v.unit, v.text = n*u.factor, u.base, t+" "+toks[i+1]
					i++
				}
			}
			c.values = append(c.values, v)
			continue
		}
		if (t == "a" || t == "an") && i+1 < len(toks) {
			if u, ok := units[toks[i+1]]; ok && u.base == "s" {
				c.values = append(c.values, value{n: u.factor, unit: u.base, text: t + " " + toks[i+1]})
				i++
				continue
			}
		}
		if _, isUnit := units[t]; isUnit || oppositeWords[textsearch.Stem(t)] || textsearch.IsStopword(t) {
			continue
		}
		c.content[textsearch.Stem(t)] = true
	}
	return c
}

// claimTokens splits a text into lower-case tokens: words (with an apostrophe kept),
// numbers with the dots, colons, dashes and slashes of versions, dates and times, and
// a percent sign.
func claimTokens(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, strings.Trim(b.String(), ".:-/'"))
			b.Reset()
		}
	}
	rs := []rune(strings.ToLower(text))
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case r == '%' || r == '#':
			flush()
			out = append(out, string(r))
		case (r == '.' || r == ':' || r == '-' || r == '/' || r == ',') && b.Len() > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i+1]) && unicode.IsDigit(rs[i-1]):
			if r != ',' { // 1,000 is a thousand
				b.WriteRune(r)
			}
		case r == '\'' || r == '’':
			b.WriteRune('\'')
		default:
			flush()
		}
	}
	flush()
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}

// parseNumber reads a token that starts with a digit (or "v" and a digit): its
// number, and what follows it ("h" in 24h, "" in 24). A version or a date
// ("1.2.3", "2025-03-01") is a number of its own kind, compared as written.
func parseNumber(t string) (float64, string, bool) {
	s := strings.TrimPrefix(t, "v")
	if s == "" || !unicode.IsDigit(rune(s[0])) {
		return 0, "", false
	}
	end := 0
	for end < len(s) && (unicode.IsDigit(rune(s[end])) || s[end] == '.') {
		end++
	}
	num, rest := s[:end], s[end:]
	if strings.Count(num, ".") > 1 || strings.ContainsAny(rest, ":-/") || (rest != "" && unicode.IsDigit(rune(rest[len(rest)-1]))) {
		// A version, a date, a time: compared as written.
		return 0, "=" + t, true
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, "=" + t, true
	}
	return n, rest, true
}
