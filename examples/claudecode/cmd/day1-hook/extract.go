package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/llm"
)

// Bounds of an extraction.
const (
	maxTurns      = 400 // the most recent turns an extraction reads
	maxFacts      = 30  // facts kept from one extraction
	maxRelations  = 20  // relations kept from one extraction
	maxFactLength = 400 // characters of a heuristic fact
)

// extraction is what a transcript yields.
type extraction struct {
	Facts     []fact
	Relations []relation
	// By is "model:<name>" or "heuristic".
	By string
}

// extract finds the facts and relations of a transcript. The facts come from the
// library's conversation-to-facts extraction (curation's CherryPickFacts), run on a
// scratch memory in this process that holds the transcript as one conversation:
// with model the model states them; without one (or when the model fails) the
// library's finding heuristic picks them, and the decisions the heuristic below
// finds are added. Relations come from "X uses Y"-style sentences. Nothing is
// written to the real memory here: its deduplication applies when the hook writes.
func extract(ctx context.Context, turns []turn, sessionID string, model llm.Model) (extraction, error) {
	if len(turns) > maxTurns {
		turns = turns[len(turns)-maxTurns:]
	}
	x := extraction{}
	facts, by, err := libraryFacts(ctx, turns, model)
	if err != nil && model != nil {
		// A failed model is not a reason to lose what the heuristics find.
		facts, by, err = libraryFacts(ctx, turns, nil)
	}
	if err != nil {
		return x, err
	}
	x.By = by
	seen := map[string]bool{}
	add := func(f fact) {
		key := strings.ToLower(f.Text)
		if len(x.Facts) < maxFacts && !seen[key] {
			seen[key] = true
			f.SessionID = sessionID
			x.Facts = append(x.Facts, f)
		}
	}
	for _, f := range facts {
		add(f)
	}
	if by == "heuristic" {
		for _, f := range decisions(turns) {
			add(f)
		}
	}
	x.Relations = relations(turns, sessionID)
	return x, nil
}

// libraryFacts runs CherryPickFacts on the turns in a scratch, in-memory day1.
func libraryFacts(ctx context.Context, turns []turn, model llm.Model) ([]fact, string, error) {
	scratch, err := day1.Open(ctx, day1.Config{Model: model, NoEmbeddings: true})
	if err != nil {
		return nil, "", err
	}
	defer scratch.Close()
	conv, err := scratch.WriteConversation(ctx, day1.Conversation{Title: "Claude Code transcript"})
	if err != nil {
		return nil, "", err
	}
	for i, t := range turns {
		role := day1.RoleUser
		if t.Role == "assistant" {
			role = day1.RoleAssistant
		}
		if _, err := scratch.AppendMessage(ctx, day1.Message{ConversationID: conv.Record.ID, Seq: i + 1,
			Role: role, Content: t.Text}); err != nil {
			return nil, "", err
		}
	}
	res, err := scratch.CherryPickFacts(ctx, day1.FactPick{Target: day1.DefaultBranch, ConversationID: conv.Record.ID})
	if err != nil {
		return nil, "", err
	}
	out := make([]fact, 0, len(res.Facts))
	for _, w := range res.Facts {
		text := w.Fact.Text
		if model == nil {
			text = clip(text, maxFactLength)
		}
		out = append(out, fact{Text: text, Category: w.Fact.Category, Confidence: w.Fact.Confidence})
	}
	return out, res.By, nil
}

// decisionMarkers mark an assistant sentence that states a decision or how the
// project works.
var decisionMarkers = []string{
	"decided", "we'll use", "we will use", "i'll use", "chose ", "going with", "switched to",
	"the fix is", "fixed by", "the cause is", "settled on", "instead of",
}

// decisions returns the assistant sentences that state a decision.
func decisions(turns []turn) []fact {
	var out []fact
	for _, t := range turns {
		if t.Role != "assistant" {
			continue
		}
		for _, s := range splitSentences(t.Text) {
			low := strings.ToLower(s)
			n := len(strings.Fields(s))
			if n < 4 || n > 60 || !containsAny(low, decisionMarkers) {
				continue
			}
			out = append(out, fact{Text: clip(s, maxFactLength), Category: "decision", Confidence: 0.7})
		}
	}
	return out
}

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

// splitSentences splits text at '.', '!' or '?' followed by a space, and at line
// breaks; code fences and their content are dropped.
func splitSentences(text string) []string {
	var out []string
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-*#>0123456789) "))
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') {
				if s := strings.TrimSpace(line[start : i+1]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(line[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
