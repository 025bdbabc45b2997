// Package benchdata generates a deterministic synthetic corpus of agent memories for
// day1's benchmarks: short technical sentences of the kind an agent writes down while
// it works ("The auth service rejects expired JWT tokens after the 15 minute window",
// "Migration 42 added an index on orders.customer_id"), and search queries that
// paraphrase a chosen sentence, so that every query has one known relevant document.
//
// Sentences are composed from a few dozen templates filled from vocabularies of
// services, technologies, tables and columns, files, functions, errors, environments,
// teams and numbers. The corpus holds a few thousand distinct words; no two sentences
// of one corpus are equal. The same n and seed always give the same corpus, on any
// machine, and a corpus is a prefix of every larger one with the same seed.
package benchdata

import (
	"math/rand/v2"
	"strings"
)

// Facts returns n distinct sentences generated from seed. Facts(m, seed) is a prefix of
// Facts(n, seed) for m <= n. n <= 0 gives none.
func Facts(n int, seed uint64) []string {
	if n <= 0 {
		return nil
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]string, 0, n)
	seen := make(map[string]struct{}, n)
	for len(out) < n {
		t := templates[r.IntN(len(templates))]
		s := t(r)
		if _, dup := seen[s]; dup {
			continue
		}
		seen[s] = struct{}{}
		out = append(out, s)
	}
	return out
}

// Query is a search query that paraphrases one fact of a corpus.
type Query struct {
	// Text is the query: a question or a few keywords that reuse some of the fact's
	// words, with others dropped, replaced by a synonym or reordered.
	Text string
	// Fact is the index, in the corpus the query was made from, of the fact it
	// paraphrases: the one document a search for Text should find.
	Fact int
}

// Queries returns n queries, each paraphrasing a fact of facts chosen at random with
// seed. The same facts, n and seed always give the same queries. It returns none when
// facts is empty or n <= 0.
func Queries(facts []string, n int, seed uint64) []Query {
	if len(facts) == 0 || n <= 0 {
		return nil
	}
	r := rand.New(rand.NewPCG(seed^0x51ed27c1, seed))
	out := make([]Query, 0, n)
	for len(out) < n {
		i := r.IntN(len(facts))
		if q := paraphrase(r, facts[i]); q != "" {
			out = append(out, Query{Text: q, Fact: i})
		}
	}
	return out
}

// paraphrase keeps the distinctive words of a sentence (numbers, identifiers, names),
// keeps about half of the others, swaps some for synonyms, shuffles them lightly and
// may prefix a question word.
func paraphrase(r *rand.Rand, fact string) string {
	var keep, rest []string
	for i, w := range strings.Fields(fact) {
		w = strings.Trim(w, ".,;:()\"'")
		lw := strings.ToLower(w)
		if w == "" || filler[lw] {
			continue
		}
		if distinctive(w, i == 0) {
			keep = append(keep, w)
			continue
		}
		if syn, ok := synonyms[lw]; ok && r.IntN(2) == 0 {
			lw = syn[r.IntN(len(syn))]
		}
		rest = append(rest, lw)
	}
	r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	rest = rest[:(len(rest)+1)/2]
	// Keep at most three distinctive words, so the query does not quote the fact.
	r.Shuffle(len(keep), func(i, j int) { keep[i], keep[j] = keep[j], keep[i] })
	if len(keep) > 3 {
		keep = keep[:3]
	}
	words := append(keep, rest...)
	if len(words) == 0 {
		return ""
	}
	// A light shuffle: swap a couple of neighbours, as people reorder a phrase.
	for range 2 {
		if len(words) > 1 {
			i := r.IntN(len(words) - 1)
			words[i], words[i+1] = words[i+1], words[i]
		}
	}
	q := strings.Join(words, " ")
	if p := questionWords[r.IntN(len(questionWords))]; p != "" {
		q = p + " " + q
	}
	return q
}

// distinctive reports whether a word is a name, a number or an identifier rather than
// an ordinary word. The capital of the first word of a sentence does not count.
func distinctive(w string, first bool) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= '0' && c <= '9', c == '_', c == '.', c == '/', c == '-', c == ':':
			return true
		case c >= 'A' && c <= 'Z' && (i > 0 || !first):
			return true
		}
	}
	return false
}

var questionWords = []string{"", "", "why", "what", "how", "when did", "which", "where"}

var filler = map[string]bool{
	"the": true, "a": true, "an": true, "of": true, "on": true, "in": true, "to": true,
	"for": true, "and": true, "is": true, "at": true, "by": true, "with": true, "from": true,
	"when": true, "after": true, "it": true, "its": true, "are": true, "be": true,
}

var synonyms = map[string][]string{
	"rejects":    {"refuses", "denies", "blocks"},
	"expired":    {"stale", "old", "outdated"},
	"added":      {"created", "introduced"},
	"index":      {"idx", "indexes"},
	"fails":      {"breaks", "errors", "crashes"},
	"returns":    {"gives", "responds with", "throws"},
	"requires":   {"needs", "must have"},
	"caches":     {"stores", "keeps", "memoizes"},
	"timeout":    {"deadline", "time limit"},
	"times":      {"runs"},
	"uses":       {"relies on", "depends on"},
	"decided":    {"chose", "agreed"},
	"instead":    {"rather than", "over"},
	"latency":    {"response time", "delay"},
	"deploys":    {"releases", "rollouts"},
	"approval":   {"sign-off", "review"},
	"moved":      {"relocated", "refactored"},
	"owns":       {"maintains", "is responsible for"},
	"runs":       {"executes", "starts"},
	"cleans":     {"purges", "deletes from"},
	"prefers":    {"likes", "wants"},
	"limit":      {"cap", "quota"},
	"requests":   {"calls", "hits"},
	"fixed":      {"resolved", "solved"},
	"slow":       {"sluggish", "laggy"},
	"error":      {"failure", "exception"},
	"publishes":  {"emits", "sends"},
	"events":     {"messages", "notifications"},
	"retries":    {"retry", "reattempts"},
	"broken":     {"failing", "down"},
	"disabled":   {"turned off", "off"},
	"enabled":    {"turned on", "on"},
	"replicas":   {"instances", "pods"},
	"connection": {"conn", "link"},
	"logs":       {"records", "prints"},
	"nullable":   {"optional", "allowed null"},
	"tokens":     {"token", "credentials"},
	"window":     {"period", "interval"},
	"breaks":     {"fails", "stops compiling"},
	"gates":      {"guards", "controls"},
	"leak":       {"leaks", "growth"},
	"memory":     {"ram", "heap"},
}
