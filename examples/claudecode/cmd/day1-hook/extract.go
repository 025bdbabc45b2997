package main

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Bounds of what a transcript yields.
const (
	maxTurns     = 400 // the most recent turns an extraction reads
	maxRelations = 20  // relations kept from one transcript
)

// relationPattern finds "X uses Y", "the X service depends on the Y service" and
// the like; an entity is a name, optionally followed by the kind of thing it is.
var relationPattern = regexp.MustCompile(`\b` + entity + `\s+(uses|calls|depends on|imports|requires|extends|implements|wraps|reads from|writes to)\s+(?:the\s+|a\s+|an\s+)?` + entity)

const entity = "`?([A-Za-z][\\w./-]{1,60})`?(?:\\s+(package|service|module|library|class|struct|function|method|handler|client|server|api|API|table|database|queue|component))?"

// notEntities are words a relation's ends cannot be.
var notEntities = map[string]bool{
	"it": true, "this": true, "that": true, "which": true, "who": true, "we": true, "i": true,
	"you": true, "also": true, "and": true, "or": true, "now": true, "still": true, "only": true,
	"same": true, "one": true, "code": true, "function": true, "test": true, "then": true, "he": true,
	"package": true, "service": true, "module": true, "library": true, "class": true, "the": true,
	"she": true, "they": true, "there": true, "what": true, "everything": true, "something": true,
}

// relations returns the relations the assistant's sentences state, each once.
func relations(turns []turn, sessionID string) []relation {
	var out []relation
	seen := map[string]bool{}
	for _, t := range turns {
		if t.Role != "assistant" {
			continue
		}
		for _, m := range relationPattern.FindAllStringSubmatch(t.Text, -1) {
			src, typ, dst := strings.TrimRight(m[1], "./-"), m[3], strings.TrimRight(m[4], "./-")
			if notEntities[strings.ToLower(src)] || notEntities[strings.ToLower(dst)] || utf8.RuneCountInString(dst) < 2 {
				continue
			}
			src, dst = strings.TrimSpace(src+" "+m[2]), strings.TrimSpace(dst+" "+m[5])
			typ = strings.ReplaceAll(typ, " ", "_")
			key := fmt.Sprintf("%s|%s|%s", strings.ToLower(src), typ, strings.ToLower(dst))
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, relation{SessionID: sessionID, Source: src, Target: dst, Type: typ})
			if len(out) == maxRelations {
				return out
			}
		}
	}
	return out
}
