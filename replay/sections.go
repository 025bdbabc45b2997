package replay

import (
	"fmt"
	"slices"
	"strings"

	"github.com/day1ai/day1/handoff"
	"github.com/day1ai/day1/store"
)

// maxSummaryFacts is how many of an agent's first facts its summary quotes.
const maxSummaryFacts = 2

// contributions returns what each agent did: the members in the order they joined,
// then agents that wrote records without joining, by id. Every record of the run
// counts, whatever the timeline's options.
func contributions(r *run) []Contribution {
	var out []Contribution
	idx := map[string]int{}
	for _, m := range r.task.Members {
		idx[m.Agent] = len(out)
		out = append(out, Contribution{Agent: m.Agent, Role: m.Role, Branch: m.Branch, Status: m.Status,
			JoinedAt: m.JoinedAt, LeftAt: m.LeftAt})
	}
	var extra []string
	for _, k := range store.Kinds {
		for _, en := range r.sortedEntries(k) {
			a := r.agent(en)
			if a == "" {
				continue
			}
			if _, ok := idx[a]; !ok {
				idx[a] = -1 - len(extra)
				extra = append(extra, a)
			}
		}
	}
	slices.Sort(extra)
	for _, a := range extra {
		idx[a] = len(out)
		out = append(out, Contribution{Agent: a})
	}
	firstFacts := map[string][]string{}
	for _, k := range store.Kinds {
		for _, en := range r.sortedEntries(k) {
			a := r.agent(en)
			if a == "" {
				continue
			}
			c := &out[idx[a]]
			switch v := en.latest().(type) {
			case store.Fact:
				c.Facts = append(c.Facts, v.ID)
				if factVerified(v) {
					c.FactsVerified++
				}
				if len(firstFacts[a]) < maxSummaryFacts {
					firstFacts[a] = append(firstFacts[a], oneLine(v.Text))
				}
			case store.Observation:
				c.Observations++
				if v.Type == store.ObsError {
					c.Errors++
				}
			case store.Conversation:
				c.Conversations = append(c.Conversations, v.ID)
			case store.Message:
				c.Messages++
			}
		}
	}
	given, received := r.handoffsByAgent()
	for i := range out {
		c := &out[i]
		c.HandoffsGiven, c.HandoffsReceived = given[c.Agent], received[c.Agent]
		c.Summary = contributionSummary(c, firstFacts[c.Agent], r.task.Members)
	}
	return out
}

// handoffsByAgent returns, per agent, the handoffs it offered and those it accepted
// by the run's point, oldest first.
func (r *run) handoffsByAgent() (given, received map[string][]string) {
	given, received = map[string][]string{}, map[string][]string{}
	for _, a := range r.audit {
		h, ok := r.handoffs[a.ev.Handoff]
		if !ok {
			continue
		}
		switch {
		case a.ev.Kind == handoff.EventHandoffCreated && h.FromAgent != "":
			given[h.FromAgent] = append(given[h.FromAgent], h.ID)
		case a.ev.Kind == handoff.EventHandoffStatus && (a.ev.To == string(handoff.StatusAccepted) || a.ev.To == string(handoff.StatusCompleted)):
			to := h.ToAgent
			if to == "" {
				to = a.ev.Actor
			}
			if !slices.Contains(received[to], h.ID) {
				received[to] = append(received[to], h.ID)
			}
		}
	}
	return given, received
}

// contributionSummary says in one line what an agent did.
func contributionSummary(c *Contribution, facts []string, members []handoff.Member) string {
	var b strings.Builder
	if c.Role != "" {
		b.WriteString(c.Role + ": ")
	}
	fmt.Fprintf(&b, "%d %s (%d verified), %d %s, %d %s",
		len(c.Facts), plural(len(c.Facts), "fact", "facts"), c.FactsVerified,
		len(c.Conversations), plural(len(c.Conversations), "conversation", "conversations"),
		c.Observations, plural(c.Observations, "observation", "observations"))
	if n := len(c.HandoffsGiven); n > 0 {
		fmt.Fprintf(&b, ", %d %s given", n, plural(n, "handoff", "handoffs"))
	}
	if n := len(c.HandoffsReceived); n > 0 {
		fmt.Fprintf(&b, ", %d %s received", n, plural(n, "handoff", "handoffs"))
	}
	if len(facts) > 0 {
		b.WriteString("; first: " + strings.Join(quoteAll(facts), ", "))
	}
	for _, m := range members {
		if m.Agent == c.Agent && m.Summary != "" {
			b.WriteString("; left saying " + fmt.Sprintf("%q", oneLine(m.Summary)))
		}
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// keyRecords returns the verified facts and conversations of a run, oldest first,
// each in its newest version.
func keyRecords(r *run) (facts []store.Fact, convs []store.Conversation) {
	for _, en := range r.sortedEntries(store.KindFact) {
		if f := en.latest().(store.Fact); factVerified(f) {
			facts = append(facts, f)
		}
	}
	for _, en := range r.sortedEntries(store.KindConversation) {
		if c := en.latest().(store.Conversation); c.Verify.Status == store.Verified {
			convs = append(convs, c)
		}
	}
	return facts, convs
}

// outcome says how the run ended, or stands at its point.
func outcome(r *run, timeline []Event) Outcome {
	t := r.task
	o := Outcome{Status: t.Status, ResultSummary: t.ResultSummary, CompletedBy: t.CompletedBy, CompletedAt: t.CompletedAt, MergeID: t.MergeID}
	for _, m := range r.merges {
		if m.ID != t.MergeID || t.MergeID == "" {
			continue
		}
		o.MergedInto = m.Target
		for _, it := range m.Merged {
			if it.Action == store.ActionSkip || it.Action == store.ActionKeepTarget || it.Action == store.ActionDeduplicate {
				continue
			}
			o.RecordsMerged++
			if it.Ref.Kind == store.KindFact {
				o.FactsMerged++
			}
		}
	}
	if o.MergedInto == "" {
		o.MergeID = ""
	}
	var sum float64
	judged := 0
	for _, en := range r.sortedEntries(store.KindFact) {
		f := en.latest().(store.Fact)
		o.Facts++
		if factVerified(f) {
			o.FactsVerified++
		}
		if !f.Verify.At.IsZero() {
			sum += f.Verify.Score
			judged++
		}
	}
	if judged > 0 {
		o.VerificationScore = sum / float64(judged)
	}
	switch {
	case t.Status == handoff.TaskCompleted && !t.CompletedAt.IsZero():
		o.Duration = t.CompletedAt.Sub(t.CreatedAt)
	case len(timeline) > 0:
		o.Duration = timeline[len(timeline)-1].At.Sub(t.CreatedAt)
	}
	return o
}
