package llm

import "strings"

// commonWords lists frequent English words of conversation and notes that the search
// tokenizer keeps (it drops function words): verbs such as "get" and "think", vague
// nouns such as "thing" and "time", fillers such as "yeah" and "really". They say
// little about which text is meant, so the StemEmbedder weighs them less. The list is
// general English, in no way tied to one data set.
const commonWordList = `
able actually ago ah alright already also always anything anyway around ask asked
away back bad basically be become began begin best better big bit came can't come
comes coming could couldn't day days definitely different do doing done down each
else enough even ever every everyone everything exactly fact far feel feeling felt
find fine first found get gets getting give given go goes going gone good got great
guess guy guys had happen happened hard hey hi hmm honestly hope huh idea i'd i'll
i'm i've keep kind knew know known last later least left let let's like liked
little long look looked looking lot lots made make makes making many may maybe mean
means might mind much must need needed needs never new next nice no nope not nothing
of oh ok okay old one ones out over part people perhaps pretty probably put quite
rather really right said say saying says see seem seemed seems seen set several
shall sure show since something sometimes soon sort start started still stuff sure
take taken taking talk talked tell thank thanks that's thing things think thinking
thought time times today told took totally tried true try trying turn two um uh
understand up use used using usually want wanted wants way ways well went what's
whatever wish without wonder wondering work worked working yeah yes yet yep
sounds sound awesome cool wow glad great lovely interesting wonderful
`

// commonWords is commonWordList as a set.
var commonWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(commonWordList) {
		m[w] = struct{}{}
	}
	return m
}()

// isCommonWord reports whether the lowercase word w is on commonWordList.
func isCommonWord(w string) bool {
	_, ok := commonWords[w]
	return ok
}
