// Package evaldata generates a deterministic, labelled conversational-memory data set
// for evaluating day1's search: long multi-session dialogues between a user and an
// assistant, and questions about them, each labelled with the turns that hold its
// answer.
//
// A dialogue is one persona's chat with an assistant over several sessions. The user
// mentions facts about their life (a pet, a job, a trip, a hobby ...) once, sometimes
// changes them in a later session ("I quit the hospital and started teaching"), and
// talks about other people's pets, jobs and trips too: distractor turns that share the
// words of the facts but do not answer the questions. Small talk and the assistant's
// replies fill the rest. Questions are written as a user would ask them, in four
// categories:
//
//   - single-hop: a direct question that reuses some of the answer turn's words;
//   - paraphrase: the same question in other words (synonyms, other forms of a word),
//     sharing few or no keywords with the answer;
//   - temporal: about what held before a change ("where did I live before ..."),
//     answered by the earlier turn and the turn that tells of the change;
//   - multi-session: every value a fact took ("which cars have I owned?"), answered by
//     the turns of two sessions, in words that need not be theirs.
//
// The same Options always give the same data set, on any machine.
package evaldata

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Category is the kind of a question.
type Category string

// Question categories.
const (
	SingleHop    Category = "single-hop"
	Paraphrase   Category = "paraphrase"
	Temporal     Category = "temporal"
	MultiSession Category = "multi-session"
)

// Categories lists every category, in the order reports show them.
var Categories = []Category{SingleHop, Paraphrase, Temporal, MultiSession}

// Turn is one message of a dialogue.
type Turn struct {
	ID      string // unique in the data set, such as "d2-s03-t017"
	Session int    // 0-based session of the dialogue
	Speaker string // "user" or "assistant"
	Text    string
	// Name is the speaker's name and At the session's time, where the data set gives
	// them (ReadLoCoMo); Generate leaves them empty.
	Name string
	At   time.Time
}

// Question is a question about one dialogue with the turns that answer it.
type Question struct {
	Text     string
	Category Category
	Evidence []string // ids of the answer turns
}

// Dialogue is one persona's multi-session conversation and the questions about it.
type Dialogue struct {
	ID        string
	Turns     []Turn
	Questions []Question
}

// Options size a data set. Zero fields take the defaults in parentheses.
type Options struct {
	Dialogues       int    // number of dialogues (6)
	Sessions        int    // sessions per dialogue (10)
	TurnsPerSession int    // turns per session, at least (30)
	Topics          int    // facts per dialogue, at most len(topics) (16)
	Seed            uint64 // 0 is a seed like any other
}

func (o Options) withDefaults() Options {
	if o.Dialogues <= 0 {
		o.Dialogues = 6
	}
	if o.Sessions <= 1 {
		o.Sessions = 10
	}
	if o.TurnsPerSession <= 0 {
		o.TurnsPerSession = 30
	}
	if o.Topics <= 0 {
		o.Topics = 16
	}
	o.Topics = min(o.Topics, len(topics))
	return o
}

// Generate returns the data set opts describe.
func Generate(opts Options) []Dialogue {
	opts = opts.withDefaults()
	out := make([]Dialogue, opts.Dialogues)
	for d := range out {
		r := rand.New(rand.NewPCG(opts.Seed, uint64(d)*0x9e3779b97f4a7c15+1))
		out[d] = dialogue(r, fmt.Sprintf("d%d", d), opts)
	}
	return out
}

// slot is a turn placed in a session before the sessions are laid out.
type slot struct {
	speaker string
	text    string
	key     string // non-empty for an answer turn, to find its id afterwards
}

func dialogue(r *rand.Rand, id string, opts Options) Dialogue {
	sessions := make([][]slot, opts.Sessions)
	order := r.Perm(len(topics))[:opts.Topics]
	var qs []pending
	for n, ti := range order {
		t := topics[ti]
		v := r.IntN(len(t.values))
		first := r.IntN(opts.Sessions - 1)
		key := fmt.Sprintf("%d-a", n)
		sessions[first] = append(sessions[first], slot{"user", chat(r, fill(pick(r, t.say), t.values[v])), key})
		sessions[first] = append(sessions[first], slot{"assistant", fill(pick(r, t.reply), t.values[v]), ""})
		// A fact changes later in about half of the dialogues' topics.
		if len(t.change) > 0 && r.IntN(2) == 0 {
			w := (v + 1 + r.IntN(len(t.values)-1)) % len(t.values)
			later := first + 1 + r.IntN(opts.Sessions-first-1)
			key2 := fmt.Sprintf("%d-b", n)
			vals := append(append([]string{}, t.values[w]...), t.values[v]...)
			sessions[later] = append(sessions[later], slot{"user", chat(r, fill(pick(r, t.change), vals)), key2})
			sessions[later] = append(sessions[later], slot{"assistant", fill(pick(r, t.reply), t.values[w]), ""})
			qs = append(qs,
				pending{fill(pick(r, t.before), t.values[w]), Temporal, []string{key, key2}},
				pending{fill(pick(r, t.history), t.values[w]), MultiSession, []string{key, key2}})
		} else {
			qs = append(qs,
				pending{fill(pick(r, t.ask), t.values[v]), SingleHop, []string{key}},
				pending{fill(pick(r, t.para), t.values[v]), Paraphrase, []string{key}})
		}
		// Other people's versions of the same topic, in other sessions.
		for range 2 + r.IntN(3) {
			o := (v + 1 + r.IntN(len(t.values)-1)) % len(t.values)
			s := r.IntN(opts.Sessions)
			sessions[s] = append(sessions[s], slot{"user", chat(r, fill(pick(r, t.other), append([]string{pick(r, people)}, t.values[o]...))), ""})
			sessions[s] = append(sessions[s], slot{"assistant", fill(pick(r, t.reply), t.values[o]), ""})
		}
	}
	d := Dialogue{ID: id}
	ids := map[string]string{}
	for s, sl := range sessions {
		for len(sl) < opts.TurnsPerSession {
			sl = append(sl, slot{"user", chat(r, pick(r, smallTalk)), ""}, slot{"assistant", chat(r, pick(r, replies)), ""})
		}
		// Keep each user turn with the reply after it; shuffle the pairs.
		pairs := len(sl) / 2
		perm := r.Perm(pairs)
		for _, p := range perm {
			for _, x := range sl[2*p : 2*p+2] {
				tid := fmt.Sprintf("%s-s%02d-t%03d", id, s, len(d.Turns))
				if x.key != "" {
					ids[x.key] = tid
				}
				d.Turns = append(d.Turns, Turn{ID: tid, Session: s, Speaker: x.speaker, Text: x.text})
			}
		}
	}
	for _, q := range qs {
		ev := make([]string, len(q.keys))
		for i, k := range q.keys {
			ev[i] = ids[k]
		}
		d.Questions = append(d.Questions, Question{Text: q.text, Category: q.cat, Evidence: ev})
	}
	return d
}

type pending struct {
	text string
	cat  Category
	keys []string
}

// chat wraps a statement in the words people add around what they mean: an opening,
// a closing, or both, drawn from the same small set for every speaker. They make turns
// long and their common words frequent, as in real conversations.
func chat(r *rand.Rand, s string) string {
	switch r.IntN(4) {
	case 0:
		return s
	case 1:
		return pick(r, openings) + " " + s
	case 2:
		return s + " " + pick(r, closings)
	}
	return pick(r, openings) + " " + s + " " + pick(r, closings)
}

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

// fill replaces {0}, {1}, ... in t with vals.
func fill(t string, vals []string) string {
	for i, v := range vals {
		t = strings.ReplaceAll(t, fmt.Sprintf("{%d}", i), v)
	}
	return t
}
