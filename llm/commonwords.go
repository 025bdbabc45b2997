package llm

import "strings"

// commonWords lists frequent English words of conversation and notes that the search
// tokenizer keeps (it drops function words): verbs such as "get" and "think", vague
// nouns such as "thing" and "stuff", fillers such as "yeah" and "really". They say
// little about which text is meant, so the StemEmbedder weighs them less. The list is
// general English, in no way tied to one data set. Words that carry meaning in
// technical notes ("time", "out", "down", "use", "work", "new") are left out.
const commonWordList = `
able actually ago ah alright already also always anything anyway around ask asked
away back basically be become bit came can't come comes coming could couldn't
definitely different do doing done each else enough even ever every everyone
everything exactly fact far feel feeling felt find fine found get gets getting give
given go goes going gone good got great guess guy guys had happen happened hey hi
hmm honestly hope huh idea i'd i'll i'm i've keep kind knew know known later least
let let's like liked little look looked looking lot lots made make makes making many
may maybe mean means might mind much must need needed needs never nice no nope not
nothing of oh ok okay one ones over people perhaps pretty probably put quite rather
really right said say saying says see seem seemed seems seen several shall sure
since something sometimes soon sort still stuff take taken taking talk talked tell
thank thanks that's thing things think thinking thought today told took totally
tried try trying um uh understand usually want wanted wants way ways well went
what's whatever wish without wonder wondering yeah yes yet yep sounds sound awesome
cool wow glad lovely interesting wonderful
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
