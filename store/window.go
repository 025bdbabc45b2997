package store

import (
	"cmp"
	"iter"
	"slices"
	"strings"
	"time"
)

// SearchDepth is how many candidates each retriever of a search ranks: q.Limit, or
// for a Hybrid search, one with a Window or one with message context more, so that
// fusion and context have candidates beyond the last hit to rank. q must be
// normalised.
func SearchDepth(q SearchQuery) int {
	if q.Mode == Hybrid || q.Window > 0 || messageContext(q) || factContext(q) {
		return max(q.Limit*3, 50)
	}
	return q.Limit
}

// DefaultContextSpan is the least distance in Seq within which the messages of one
// conversation lend each other keyword score (see ContextSpan).
const DefaultContextSpan = 2

// ContextSpan is the distance in Seq within which the messages of one conversation
// lend each other keyword score in a search (see SearchQuery.WindowWeight): the
// query's Window, at least DefaultContextSpan. q must be normalised.
func ContextSpan(q SearchQuery) int { return max(q.Window, DefaultContextSpan) }

// contextSeeds is how many of the best candidates of a keyword ranking, messages or
// facts, per hit asked for, have their neighbours added (see NeighbourRanges,
// ContextSessions and LooseSeeds). A neighbour borrows a share of the scores near it,
// so the neighbours of the best matches are those that can reach the hits: on LoCoMo,
// one seed per hit found as many answers by recall@10 as two with the turns written
// as messages, and 0.4 points more as facts, with half the neighbours to read and
// rank.
const contextSeeds = 1

// SeqRange is the messages of one conversation whose Seq is from Lo to Hi.
type SeqRange struct {
	ConversationID string
	Lo, Hi         int
}

// NeighbourRanges returns the ranges of messages around the best message candidates
// of a keyword ranking (q.Limit of them, best first) that a store reads and passes
// to AddNeighbours before fusion, so that a turn with no word of the query, next to
// turns that match, can be found: the answer that follows a question. It returns nil
// when the search gives no message context: a Vector search, one without messages in
// its Kinds, or one with a negative WindowWeight. q must be normalised.
func NeighbourRanges(q SearchQuery, keyword []Ranked) []SeqRange {
	if !messageContext(q) {
		return nil
	}
	span := ContextSpan(q)
	var out []SeqRange
	for _, r := range bestSeeds(q, keyword, func(r Record) bool { _, ok := r.(Message); return ok }) {
		m := r.Record.(Message)
		out = append(out, SeqRange{m.ConversationID, m.Seq - span, m.Seq + span})
	}
	return out
}

// AddNeighbours adds to a keyword ranking, with score 0, the messages of msgs it does
// not hold that q.Filter accepts: the neighbours a store read for NeighbourRanges.
// Fusion then gives them the context of the candidates around them; those that gain
// nothing are dropped.
func AddNeighbours(q SearchQuery, keyword []Ranked, msgs []Message) []Ranked {
	if len(msgs) == 0 {
		return keyword
	}
	have := make(map[Ref]bool, len(keyword))
	for _, r := range keyword {
		have[RefOf(r.Record)] = true
	}
	for _, m := range msgs {
		if ref := RefOf(m); !have[ref] && q.Filter.Match(m) {
			have[ref] = true
			keyword = append(keyword, Ranked{Record: m})
		}
	}
	return keyword
}

// messageContext reports whether the messages of a search lend each other keyword
// score.
func messageContext(q SearchQuery) bool {
	return q.WindowWeight > 0 && q.Mode != Vector && slices.Contains(q.Kinds, KindMessage)
}

// factContext reports whether facts lend each other keyword score in a search: those
// of one session, and those with no session written one after another.
func factContext(q SearchQuery) bool {
	return q.WindowWeight > 0 && q.Mode != Vector && slices.Contains(q.Kinds, KindFact)
}

// MaxContextFacts bounds the facts a store reads for the context of the facts of one
// search (ContextSessions): when the sessions of the best fact candidates hold more
// facts than this together, the search gives facts no context.
const MaxContextFacts = 4096

// factSeeds returns the best fact candidates of a keyword ranking that have a
// session, at most contextSeeds per hit asked for: those whose sessions a store reads
// and whose neighbours are added.
func factSeeds(q SearchQuery, keyword []Ranked) []Ranked {
	return bestSeeds(q, keyword, func(r Record) bool { f, ok := r.(Fact); return ok && f.SessionID != "" })
}

// bestSeeds returns the best candidates of a keyword ranking whose records keep
// accepts, at most contextSeeds per hit asked for, best first: the seeds whose
// neighbours a search reads.
func bestSeeds(q SearchQuery, keyword []Ranked, keep func(Record) bool) []Ranked {
	var seeds []Ranked
	for _, r := range keyword {
		if keep(r.Record) {
			seeds = append(seeds, r)
		}
	}
	SortRanked(seeds)
	return seeds[:min(len(seeds), contextSeeds*q.Limit)]
}

// creationOrder orders the facts of a session, or of a stretch of facts with no
// session, as they were created: by CreatedAt, then the shorter id, then the id
// ("turn-9" before "turn-10", and generated ids in the order they were made).
func creationOrder(a, b SessionEntry) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(len(a.ID), len(b.ID)), strings.Compare(a.ID, b.ID))
}

// ContextSessions returns the sessions whose facts a store reads for the context of
// the facts of a search: those of its best fact candidates, each once, nil when facts
// have no context in the search, in order. The store passes where every fact its
// view sees in them falls (of any status, up to MaxContextFacts+1 of them) to
// AddSessionNeighbours.
func ContextSessions(q SearchQuery, keyword []Ranked) []string {
	if !factContext(q) {
		return nil
	}
	var out []string
	for _, r := range factSeeds(q, keyword) {
		if s := r.Record.(Fact).SessionID; !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// SessionEntry is where a fact falls in its session, what AddSessionNeighbours reads
// of each fact of the sessions of ContextSessions.
type SessionEntry struct {
	ID, SessionID string
	CreatedAt     time.Time
}

// AddSessionNeighbours gives the facts of a keyword ranking their context. entries
// holds every fact the search's view sees in the sessions of ContextSessions, in any
// order. The facts of each session, in creation order (CreatedAt, then the shorter
// id, then the id: "turn-9" comes before "turn-10", and generated ids in the order
// they were made), get their places (Ranked.Place); the facts within ContextSpan places of the best candidates
// that the ranking lacks are read with fetch, which returns those of the ids it is
// given that the view sees, in any order, and added with score 0 when q's filter
// accepts them. Fusion then lets the facts of a session lend each other score as the
// messages of a conversation do (SearchQuery.WindowWeight). With more than
// MaxContextFacts entries it changes nothing. It reorders entries.
func AddSessionNeighbours(q SearchQuery, keyword []Ranked, entries []SessionEntry,
	fetch func(ids []string) ([]Fact, error)) ([]Ranked, error) {
	if !factContext(q) || len(entries) == 0 || len(entries) > MaxContextFacts {
		return keyword, nil
	}
	slices.SortFunc(entries, func(a, b SessionEntry) int {
		return cmp.Or(strings.Compare(a.SessionID, b.SessionID), creationOrder(a, b))
	})
	// The ranking's facts by id, and the seeds among them.
	at := make(map[string]int, len(keyword))
	for i, r := range keyword {
		if f, ok := r.Record.(Fact); ok && f.SessionID != "" {
			at[f.ID] = i
		}
	}
	seed := map[string]bool{}
	for _, r := range factSeeds(q, keyword) {
		seed[r.Record.RecordID()] = true
	}
	var want []string
	wanted := map[string]int{} // id: place
	span := ContextSpan(q)
	for lo := 0; lo < len(entries); {
		hi := lo + 1
		for hi < len(entries) && entries[hi].SessionID == entries[lo].SessionID {
			hi++
		}
		for i := lo; i < hi; i++ {
			e := entries[i]
			k, ok := at[e.ID]
			if !ok || keyword[k].Record.(Fact).SessionID != e.SessionID {
				continue
			}
			keyword[k].Place = i - lo + 1
			if !seed[e.ID] {
				continue
			}
			for j := max(i-span, lo); j < min(i+span+1, hi); j++ {
				n := entries[j].ID
				if _, have := at[n]; !have {
					if _, dup := wanted[n]; !dup {
						wanted[n] = j - lo + 1
						want = append(want, n)
					}
				}
			}
		}
		lo = hi
	}
	if len(want) == 0 {
		return keyword, nil
	}
	facts, err := fetch(want)
	if err != nil {
		return nil, err
	}
	for _, f := range facts {
		if p, ok := wanted[f.ID]; ok && q.Filter.Match(f) {
			keyword = append(keyword, Ranked{Record: f, Place: p})
		}
	}
	return keyword, nil
}

// LooseGap is the longest pause between two facts written with no session that lets
// them lend each other score in a search: facts written one after another, with no
// pause longer than this between them, are taken as one stretch of work, the way web
// analytics divide a visitor's requests into visits at thirty minutes of inactivity.
const LooseGap = 30 * time.Minute

// LooseScan bounds the rows a store steps over on each side of a seed of LooseSeeds
// looking for the seed's neighbours: of every kind on the branches the search reads
// in the embedded and portable stores, of facts of the branch in MatrixOne, which
// keeps a table for each kind and branch.
const LooseScan = 64

// LooseSeeds returns the best fact candidates of a keyword ranking that have no
// session, at most contextSeeds per hit asked for, best first: the facts whose
// neighbours in creation order a store reads and passes to LooseRun. It returns nil
// when facts have no context in the search. q must be normalised.
func LooseSeeds(q SearchQuery, keyword []Ranked) []Fact {
	if !factContext(q) {
		return nil
	}
	seeds := bestSeeds(q, keyword, func(r Record) bool { f, ok := r.(Fact); return ok && f.SessionID == "" })
	out := make([]Fact, len(seeds))
	for i, r := range seeds {
		out[i] = r.Record.(Fact)
	}
	return out
}

// LooseRun returns the facts around a seed of LooseSeeds that lend it score and
// borrow from it: the seed and up to ContextSpan(q) facts with no session on each
// side of it, in the order they were written, with no more than LooseGap between the
// creation times of one and the next. before and after yield the facts with no session that the search's view
// sees (of any status), written before and after the seed, nearest first; a store
// stops each after LooseScan rows of its own.
func LooseRun(q SearchQuery, seed SessionEntry, before, after iter.Seq[SessionEntry]) []SessionEntry {
	span := ContextSpan(q)
	side := func(near iter.Seq[SessionEntry]) []SessionEntry {
		var out []SessionEntry
		last := seed.CreatedAt
		for e := range near {
			// A fact created long before or after the last one (a version of an
			// old fact written later, a CreatedAt given out of order) ends the run.
			if gap := e.CreatedAt.Sub(last); gap > LooseGap || gap < -LooseGap {
				break
			}
			out = append(out, e)
			last = e.CreatedAt
			if len(out) == span {
				break
			}
		}
		return out
	}
	run := side(before)
	slices.Reverse(run)
	run = append(run, seed)
	return append(run, side(after)...)
}

// AddLooseNeighbours gives the facts with no session of a keyword ranking their
// context, as AddSessionNeighbours gives the facts of a session theirs: runs holds
// the LooseRun of each seed of LooseSeeds. Runs that share a fact are one stretch;
// the facts of each stretch get their places in it (Ranked.Place), stretches far
// enough apart that they lend each other nothing, and the facts of the runs that the
// ranking lacks are read with fetch, which returns those of the ids it is given that
// the view sees, in any order, and added with score 0 when q's filter accepts them.
func AddLooseNeighbours(q SearchQuery, keyword []Ranked, runs [][]SessionEntry,
	fetch func(ids []string) ([]Fact, error)) ([]Ranked, error) {
	if !factContext(q) || len(runs) == 0 {
		return keyword, nil
	}
	// Join the runs that share a fact: each fact's stretch is the first run that
	// holds it, and a later run that meets an earlier stretch joins it.
	stretch := map[string]int{} // fact id: stretch
	var members [][]SessionEntry
	for _, run := range runs {
		join := -1
		for _, e := range run {
			if s, ok := stretch[e.ID]; ok {
				join = s
				break
			}
		}
		if join < 0 {
			join = len(members)
			members = append(members, nil)
		}
		for _, e := range run {
			if s, ok := stretch[e.ID]; ok && s != join {
				for _, m := range members[s] {
					stretch[m.ID] = join
				}
				members[join] = append(members[join], members[s]...)
				members[s] = nil
			} else if !ok {
				stretch[e.ID] = join
				members[join] = append(members[join], e)
			}
		}
	}
	place := map[string]int{}
	next, span := 1, ContextSpan(q)
	for _, ms := range members {
		if len(ms) == 0 {
			continue
		}
		slices.SortFunc(ms, creationOrder)
		for i, m := range ms {
			place[m.ID] = next + i
		}
		next += len(ms) + span + 1
	}
	for i, r := range keyword {
		if f, ok := r.Record.(Fact); ok && f.SessionID == "" {
			if p, ok := place[f.ID]; ok {
				keyword[i].Place = p
				delete(place, f.ID)
			}
		}
	}
	if len(place) == 0 {
		return keyword, nil
	}
	want := make([]string, 0, len(place))
	for id := range place {
		want = append(want, id)
	}
	slices.Sort(want)
	facts, err := fetch(want)
	if err != nil {
		return nil, err
	}
	for _, f := range facts {
		if p, ok := place[f.ID]; ok && f.SessionID == "" && q.Filter.Match(f) {
			keyword = append(keyword, Ranked{Record: f, Place: p})
		}
	}
	return keyword, nil
}

// addContext gives each message of a keyword ranking the context of its
// conversation: its score gains q.WindowWeight times the sum of the keyword scores of
// the other messages of the ranking within ContextSpan(q) of it. gains receives each
// message's gain. Every message gains from the scores before any gain, so the order of
// the ranking does not matter; the result is unsorted.
func addContext(q SearchQuery, keyword []Ranked, gains map[Ref]float64) []Ranked {
	if !messageContext(q) && !factContext(q) {
		return keyword
	}
	type cand struct {
		seq   int
		id    string
		score float64
		i     int
	}
	// The messages of a conversation, the facts of a session.
	type group struct {
		fact bool
		id   string
	}
	byConv := map[group][]cand{}
	for i, r := range keyword {
		switch rec := r.Record.(type) {
		case Message:
			if messageContext(q) {
				k := group{false, rec.ConversationID}
				byConv[k] = append(byConv[k], cand{rec.Seq, rec.ID, r.Score, i})
			}
		case Fact:
			if r.Place > 0 {
				k := group{true, rec.SessionID}
				byConv[k] = append(byConv[k], cand{r.Place, rec.ID, r.Score, i})
			}
		}
	}
	if len(byConv) == 0 {
		return keyword
	}
	out := slices.Clone(keyword)
	span := ContextSpan(q)
	for _, cs := range byConv {
		if len(cs) < 2 {
			continue
		}
		slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.id, b.id)) })
		for i, c := range cs {
			sum := 0.0
			for j := i - 1; j >= 0 && c.seq-cs[j].seq <= span; j-- {
				sum += cs[j].score
			}
			for j := i + 1; j < len(cs) && cs[j].seq-c.seq <= span; j++ {
				sum += cs[j].score
			}
			if gain := q.WindowWeight * sum; gain > 0 {
				out[c.i].Score += gain
				gains[RefOf(out[c.i].Record)] = gain
			}
		}
	}
	// Neighbours that gained nothing have no score at all.
	return slices.DeleteFunc(out, func(r Ranked) bool { return r.Score <= 0 })
}

// WindowRange is the Seq range of the messages around a message hit that a search
// with a window of w returns beside it: [m.Seq-w, m.Seq+w].
func WindowRange(m Message, w int) (lo, hi int) { return m.Seq - w, m.Seq + w }

// SetWindow fills h.Before and h.After, for a message hit, from msgs: messages of the
// hit's conversation as the search saw them, in any order, among them those with Seq
// in WindowRange (others, and the hit's own message, are left out). Up to w messages
// are kept on each side, the nearest, in Seq order (then id), without their
// embeddings. It does nothing for a hit of another kind.
func SetWindow(h *Hit, msgs []Message, w int) {
	m, ok := h.Record.(Message)
	if !ok {
		return
	}
	lo, hi := WindowRange(m, w)
	var near []Message
	for _, n := range msgs {
		if n.ConversationID == m.ConversationID && n.ID != m.ID && n.Seq >= lo && n.Seq <= hi {
			n.Embedding = nil
			near = append(near, Clone(n).(Message))
		}
	}
	slices.SortFunc(near, func(a, b Message) int { return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID)) })
	split, _ := slices.BinarySearchFunc(near, m, func(a, b Message) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID))
	})
	before, after := near[:split], near[split:]
	if len(before) > w {
		before = before[len(before)-w:]
	}
	if len(after) > w {
		after = after[:w]
	}
	h.Before, h.After = slices.Clip(before), slices.Clip(after)
}
