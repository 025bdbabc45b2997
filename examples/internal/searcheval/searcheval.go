// Package searcheval measures the quality of day1's search on the labelled dialogues of
// internal/evaldata, written one branch per dialogue as a user would: each turn as a
// fact with WriteFacts (Load), or each session as a conversation and its turns as
// messages with AppendMessages (LoadMessages). Every question is searched with each
// variant, with the default Kinds (what a default Search searches). It reports
// recall@1, @5 and @10, MRR and nDCG@10 overall and per question category, with the
// latency of the searches. The evalsearch command prints its results and the bench
// table shows a row of them.
package searcheval

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/evaldata"
)

// Variant is one way of searching: a name for reports and the query fields to set.
type Variant struct {
	Name   string
	Mode   day1.SearchMode
	Fusion day1.Fusion
	Alpha  float64
	// VectorWeight is the vector ranking's weight in RRF fusion; 0 is the default.
	VectorWeight float64
	// Window is SearchQuery.Window: 0, the default, for none.
	Window int
	// WindowWeight is SearchQuery.WindowWeight; 0 is the default.
	WindowWeight float64
	// Speaker, when set ("user" or "assistant"), searches that speaker's turns only:
	// Filter.Role for turns written as messages, the "speaker" metadata for facts.
	Speaker string
}

// DefaultVariants are keyword, vector and the default hybrid search.
var DefaultVariants = []Variant{
	{Name: "keyword", Mode: day1.Keyword},
	{Name: "vector", Mode: day1.Vector},
	{Name: "hybrid", Mode: day1.Hybrid},
}

// ContextVariants are the default hybrid search with a context window of one and of two
// turns (with the default WindowWeight, and one of 0.5), and restricted to the user's
// turns (which every answer of the data set is).
var ContextVariants = []Variant{
	{Name: "hybrid window=1", Mode: day1.Hybrid, Window: 1},
	{Name: "hybrid window=2", Mode: day1.Hybrid, Window: 2},
	{Name: "hybrid window=1 weight=0.5", Mode: day1.Hybrid, Window: 1, WindowWeight: 0.5},
	{Name: "hybrid speaker=user", Mode: day1.Hybrid, Speaker: "user"},
}

// Metrics are the mean scores of a set of questions. Recall@k is the share of a
// question's answer turns found in the top k; MRR is the mean of 1/rank of the first
// answer turn in the top 10 (0 when none is); nDCG@10 is the discounted cumulative
// gain of the answer turns in the top 10 over the best possible, with binary relevance.
type Metrics struct {
	Questions int     `json:"questions"`
	Recall1   float64 `json:"recall_at_1"`
	Recall5   float64 `json:"recall_at_5"`
	Recall10  float64 `json:"recall_at_10"`
	MRR       float64 `json:"mrr"`
	NDCG10    float64 `json:"ndcg_at_10"`
}

// Result is the evaluation of one variant.
type Result struct {
	Variant    string                        `json:"variant"`
	All        Metrics                       `json:"all"`
	ByCategory map[evaldata.Category]Metrics `json:"by_category"`
	P50        time.Duration                 `json:"p50_ns"`
	P95        time.Duration                 `json:"p95_ns"`
}

// Loaded is a data set written into a client.
type Loaded struct {
	Dialogues []evaldata.Dialogue
	// stored maps each turn id to the id of the fact that holds its text: the turn's
	// own id, or for a Deduplicated repeat, the fact it repeated.
	stored map[string]string
	// Turns is the number of turns written; Lost counts answer turns that were not
	// stored as facts of their own (deduplicated or superseded at write).
	Turns, Lost int
	// Messages says the turns were written as messages (LoadMessages).
	Messages bool
}

// SessionTime is when session n of every dialogue took place: a week apart, from
// 2025-01-06. LoadMessages stamps a session's conversation and messages with it.
func SessionTime(n int) time.Time {
	return time.Date(2025, 1, 6, 18, 0, 0, 0, time.UTC).AddDate(0, 0, 7*n)
}

// LoadMessages writes every dialogue to its own branch as a user who keeps the chat
// itself would: each session a conversation (its SessionID and title name the
// session), each turn a message of it, appended with AppendMessages in one batch per
// session, with the turn's speaker as Role and the session's time. A message keeps its
// turn's id.
func LoadMessages(ctx context.Context, c *day1.Client, ds []evaldata.Dialogue) (*Loaded, error) {
	l := &Loaded{Dialogues: ds, stored: map[string]string{}, Messages: true}
	for _, d := range ds {
		br := Branch(d)
		if _, err := c.Branch(ctx, br, day1.BranchOptions{}); err != nil {
			return nil, err
		}
		for _, turns := range sessions(d.Turns) {
			n := turns[0].Session
			session := sessionID(d, n)
			at := SessionTime(n)
			if t := turns[0].At; !t.IsZero() {
				at = t
			}
			if _, err := c.WriteConversation(ctx, day1.Conversation{
				ID: session, Branch: br, SessionID: session, Title: fmt.Sprintf("Chat, session %d", n+1), CreatedAt: at,
			}); err != nil {
				return nil, err
			}
			msgs := make([]day1.Message, 0, len(turns))
			for i, t := range turns {
				msgs = append(msgs, day1.Message{
					ID: t.ID, Branch: br, ConversationID: session, Role: day1.Role(t.Speaker), Content: t.Text,
					SessionID: session, CreatedAt: at.Add(time.Duration(i) * time.Minute),
				})
			}
			ws, err := c.AppendMessages(ctx, msgs)
			if err != nil {
				return nil, err
			}
			for _, w := range ws {
				l.stored[w.Record.ID] = w.Record.ID
			}
			l.Turns += len(turns)
		}
	}
	return l, nil
}

// sessions splits a dialogue's turns into the runs of one session each, in order.
func sessions(turns []evaldata.Turn) [][]evaldata.Turn {
	var out [][]evaldata.Turn
	for lo := 0; lo < len(turns); {
		hi := lo
		for hi < len(turns) && turns[hi].Session == turns[lo].Session {
			hi++
		}
		out = append(out, turns[lo:hi])
		lo = hi
	}
	return out
}

// sessionID is the SessionID of session n of dialogue d, in both modes.
func sessionID(d evaldata.Dialogue, n int) string { return fmt.Sprintf("%s-s%02d", d.ID, n) }

// Branch returns the branch that holds dialogue d.
func Branch(d evaldata.Dialogue) string { return "eval/" + d.ID }

// Load writes every dialogue to its own branch, one WriteFacts batch per session, each
// turn a fact with its session's SessionID and its speaker in the metadata.
func Load(ctx context.Context, c *day1.Client, ds []evaldata.Dialogue) (*Loaded, error) {
	return load(ctx, c, ds, true)
}

// LoadWithoutSessions is Load with the facts' SessionID left empty, as a caller who
// does not keep sessions writes them: the facts then lend each other no score.
func LoadWithoutSessions(ctx context.Context, c *day1.Client, ds []evaldata.Dialogue) (*Loaded, error) {
	return load(ctx, c, ds, false)
}

func load(ctx context.Context, c *day1.Client, ds []evaldata.Dialogue, withSessions bool) (*Loaded, error) {
	l := &Loaded{Dialogues: ds, stored: map[string]string{}}
	evidence := map[string]bool{}
	for _, d := range ds {
		for _, q := range d.Questions {
			for _, e := range q.Evidence {
				evidence[e] = true
			}
		}
	}
	for _, d := range ds {
		br := Branch(d)
		if _, err := c.Branch(ctx, br, day1.BranchOptions{}); err != nil {
			return nil, err
		}
		for _, turns := range sessions(d.Turns) {
			facts := make([]day1.Fact, 0, len(turns))
			for _, t := range turns {
				f := day1.Fact{ID: t.ID, Branch: br, Text: t.Text, Metadata: map[string]string{"speaker": t.Speaker}}
				if withSessions {
					f.SessionID = sessionID(d, t.Session)
				}
				facts = append(facts, f)
			}
			ws, err := c.WriteFacts(ctx, facts)
			if err != nil {
				return nil, err
			}
			for i, w := range ws {
				id := turns[i].ID
				l.stored[id] = w.Record.ID
				if evidence[id] && w.Outcome != day1.Created {
					l.Lost++
				}
			}
			l.Turns += len(turns)
		}
	}
	return l, nil
}

// Evaluate asks every question of the loaded data set with variant v.
func Evaluate(ctx context.Context, c *day1.Client, l *Loaded, v Variant) (Result, error) {
	type score struct {
		cat evaldata.Category
		m   Metrics
	}
	var scores []score
	var lat []time.Duration
	for _, d := range l.Dialogues {
		for _, q := range d.Questions {
			sq := day1.SearchQuery{
				Branch: Branch(d), Text: q.Text, Mode: v.Mode, Fusion: v.Fusion, Alpha: v.Alpha, VectorWeight: v.VectorWeight,
				Window: v.Window, WindowWeight: v.WindowWeight, Limit: 10,
			}
			switch {
			case v.Speaker != "" && l.Messages:
				sq.Filter.Role = day1.Role(v.Speaker)
			case v.Speaker != "":
				sq.Filter.Metadata = map[string]string{"speaker": v.Speaker}
			}
			start := time.Now()
			hits, err := c.Search(ctx, sq)
			lat = append(lat, time.Since(start))
			if err != nil {
				return Result{}, fmt.Errorf("%s: %q: %w", v.Name, q.Text, err)
			}
			scores = append(scores, score{q.Category, l.judge(hits, q)})
		}
	}
	res := Result{Variant: v.Name, ByCategory: map[evaldata.Category]Metrics{}}
	var all []Metrics
	byCat := map[evaldata.Category][]Metrics{}
	for _, s := range scores {
		all = append(all, s.m)
		byCat[s.cat] = append(byCat[s.cat], s.m)
	}
	res.All = Mean(all)
	for c, ms := range byCat {
		res.ByCategory[c] = Mean(ms)
	}
	slices.Sort(lat)
	res.P50, res.P95 = percentile(lat, 50), percentile(lat, 95)
	return res, nil
}

// judge scores the hits of a question against the turns that answer it.
func (l *Loaded) judge(hits []day1.Hit, q evaldata.Question) Metrics {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Record.RecordID()
	}
	want := make([]string, len(q.Evidence))
	for i, e := range q.Evidence {
		want[i] = l.stored[e]
	}
	return Judge(ids, want)
}

// Judge scores one ranking (best first) against the relevant ids.
func Judge(ranking, relevant []string) Metrics {
	m := Metrics{Questions: 1}
	if len(relevant) == 0 {
		return m
	}
	var dcg, idcg float64
	found := map[string]bool{}
	for i, id := range ranking {
		if i >= 10 {
			break
		}
		if !slices.Contains(relevant, id) || found[id] {
			continue
		}
		found[id] = true
		if m.MRR == 0 {
			m.MRR = 1 / float64(i+1)
		}
		dcg += 1 / math.Log2(float64(i+2))
		share := 1 / float64(len(relevant))
		if i < 1 {
			m.Recall1 += share
		}
		if i < 5 {
			m.Recall5 += share
		}
		m.Recall10 += share
	}
	for i := range min(len(relevant), 10) {
		idcg += 1 / math.Log2(float64(i+2))
	}
	m.NDCG10 = dcg / idcg
	return m
}

// Mean averages metrics over questions; Questions is their total.
func Mean(ms []Metrics) Metrics {
	var out Metrics
	for _, m := range ms {
		out.Questions += m.Questions
		out.Recall1 += m.Recall1
		out.Recall5 += m.Recall5
		out.Recall10 += m.Recall10
		out.MRR += m.MRR
		out.NDCG10 += m.NDCG10
	}
	if n := float64(len(ms)); n > 0 {
		out.Recall1 /= n
		out.Recall5 /= n
		out.Recall10 /= n
		out.MRR /= n
		out.NDCG10 /= n
	}
	return out
}

func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, min(i, len(sorted))-1)]
}

// Floor is how a relevance floor (SearchQuery.MinRelevance) does on a data set: the
// recall@10 of the default search on each question's own dialogue, and the share of
// questions that, asked of another dialogue's memory (the next one's, which holds
// nothing about them), return nothing.
type Floor struct {
	MinRelevance float64 `json:"min_relevance"`
	Recall10     float64 `json:"recall_at_10"`
	// Nothing is the share of questions asked of another dialogue that return no hit.
	Nothing float64 `json:"nothing_on_unrelated"`
}

// Floors evaluates the default search at each relevance floor. It needs two
// dialogues or more.
func Floors(ctx context.Context, c *day1.Client, l *Loaded, floors []float64) ([]Floor, error) {
	if len(l.Dialogues) < 2 {
		return nil, fmt.Errorf("relevance floors need two dialogues or more, have %d", len(l.Dialogues))
	}
	out := make([]Floor, len(floors))
	for i, floor := range floors {
		out[i].MinRelevance = floor
		var own []Metrics
		empty, asked := 0, 0
		for j, d := range l.Dialogues {
			other := l.Dialogues[(j+1)%len(l.Dialogues)]
			for _, q := range d.Questions {
				hits, err := c.Search(ctx, day1.SearchQuery{Branch: Branch(d), Text: q.Text, Limit: 10, MinRelevance: floor})
				if err != nil {
					return nil, fmt.Errorf("%q: %w", q.Text, err)
				}
				own = append(own, l.judge(hits, q))
				hits, err = c.Search(ctx, day1.SearchQuery{Branch: Branch(other), Text: q.Text, Limit: 10, MinRelevance: floor})
				if err != nil {
					return nil, fmt.Errorf("%q: %w", q.Text, err)
				}
				asked++
				if len(hits) == 0 {
					empty++
				}
			}
		}
		out[i].Recall10 = Mean(own).Recall10
		out[i].Nothing = float64(empty) / float64(max(asked, 1))
	}
	return out, nil
}
