// Package searcheval measures the quality of day1's search on the labelled dialogues of
// internal/evaldata: each turn is written as a fact with WriteFacts, one branch per
// dialogue, as a user would, and every question is searched in each mode. It reports
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
}

// DefaultVariants are keyword, vector and the default hybrid search.
var DefaultVariants = []Variant{
	{Name: "keyword", Mode: day1.Keyword},
	{Name: "vector", Mode: day1.Vector},
	{Name: "hybrid", Mode: day1.Hybrid},
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
}

// Branch returns the branch that holds dialogue d.
func Branch(d evaldata.Dialogue) string { return "eval/" + d.ID }

// Load writes every dialogue to its own branch, one WriteFacts batch per session.
func Load(ctx context.Context, c *day1.Client, ds []evaldata.Dialogue) (*Loaded, error) {
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
		for lo := 0; lo < len(d.Turns); {
			hi := lo
			for hi < len(d.Turns) && d.Turns[hi].Session == d.Turns[lo].Session {
				hi++
			}
			facts := make([]day1.Fact, 0, hi-lo)
			for _, t := range d.Turns[lo:hi] {
				facts = append(facts, day1.Fact{
					ID: t.ID, Branch: br, Text: t.Text,
					SessionID: fmt.Sprintf("%s-s%02d", d.ID, t.Session),
					Metadata:  map[string]string{"speaker": t.Speaker},
				})
			}
			ws, err := c.WriteFacts(ctx, facts)
			if err != nil {
				return nil, err
			}
			for i, w := range ws {
				id := d.Turns[lo+i].ID
				l.stored[id] = w.Record.ID
				if evidence[id] && w.Outcome != day1.Created {
					l.Lost++
				}
			}
			l.Turns += hi - lo
			lo = hi
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
			start := time.Now()
			hits, err := c.Search(ctx, day1.SearchQuery{
				Branch: Branch(d), Text: q.Text, Mode: v.Mode, Fusion: v.Fusion, Alpha: v.Alpha, VectorWeight: v.VectorWeight,
				Kinds: []day1.Kind{day1.KindFact}, Limit: 10,
			})
			lat = append(lat, time.Since(start))
			if err != nil {
				return Result{}, fmt.Errorf("%s: %q: %w", v.Name, q.Text, err)
			}
			ids := make([]string, len(hits))
			for i, h := range hits {
				ids[i] = h.Record.RecordID()
			}
			want := make([]string, len(q.Evidence))
			for i, e := range q.Evidence {
				want[i] = l.stored[e]
			}
			scores = append(scores, score{q.Category, Judge(ids, want)})
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
