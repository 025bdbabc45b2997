package textsearch

import (
	"strings"
	"unicode"
)

// Weights are the weights that the IDFs of a query's terms carry in [Full] when no
// document holds them; see [AbsentWeights].
type Weights map[string]float64

// Of returns what a term that df documents hold adds to Full, given its idf: the idf
// itself, weighted when df is 0 and the term has a weight.
func (w Weights) Of(term string, df int, idf float64) float64 {
	if df == 0 {
		if x, ok := w[term]; ok {
			return x * idf
		}
	}
	return idf
}

// AbsentWeights returns the weights of the query text's terms that count other than
// once in Full when no document holds them, so that relevance, a hit's score over
// Full, weighs what a memory lacks by what it says of the query:
//
//   - a time (a number, or a month's name): 0. Questions to a memory name when things
//     happened ("in May 2023", "on the 3rd"), and records keep when they happened as
//     their time rather than in their text, so a memory whose texts lack the date
//     is not thereby about something else;
//   - a name (a word with a capital letter that does not begin a sentence, in a query
//     not written in title case): 2. A memory that never mentions the person,
//     project or place a query names is unlikely to hold its answer, however many of
//     its other words it shares.
//
// Other terms weigh 1, and are not listed.
func AbsentWeights(text string) Weights {
	var w Weights
	set := func(t string, x float64) {
		if w == nil {
			w = Weights{}
		}
		if _, ok := w[t]; !ok {
			w[t] = x
		}
	}
	type word struct {
		text  string
		start bool // it begins the text or a sentence
	}
	var words []word
	start, rest := true, text
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’' }) {
		i := strings.Index(rest, f)
		before := strings.TrimRightFunc(rest[:i], unicode.IsSpace)
		rest = rest[i+len(f):]
		if strings.HasSuffix(before, ".") || strings.HasSuffix(before, "?") || strings.HasSuffix(before, "!") {
			start = true
		}
		words = append(words, word{f, start})
		start = false
	}
	// A title capitalises most of its words: three in four of the longer words that
	// begin no sentence, acronyms aside.
	capital, long := 0, 0
	for _, wd := range words {
		r := []rune(wd.text)
		if wd.start || len(r) <= 3 || !unicode.IsLetter(r[0]) || strings.ToUpper(wd.text) == wd.text {
			continue
		}
		long++
		if unicode.IsUpper(r[0]) {
			capital++
		}
	}
	titled := capital >= 3 && capital*4 >= long*3
	for _, wd := range words {
		first := []rune(wd.text)[0]
		name := !wd.start && !titled && unicode.IsUpper(first)
		time := unicode.IsDigit(first) || months[strings.ToLower(wd.text)]
		if !name && !time {
			continue
		}
		ScanTerms(wd.text, func(t string) {
			if time {
				set(t, 0)
			} else {
				set(t, 2)
			}
		})
	}
	return w
}

// months are the English months' names, in lower case.
var months = map[string]bool{
	"january": true, "february": true, "march": true, "april": true, "may": true, "june": true,
	"july": true, "august": true, "september": true, "october": true, "november": true, "december": true,
}
