// Command evalsearch measures the quality of day1's search on a labelled, synthetic
// conversational-memory data set (internal/evaldata): long multi-session dialogues,
// each turn written as a fact with WriteFacts on one branch per dialogue with the
// default Config, and questions labelled with the turns that answer them.
//
// For keyword, vector and hybrid search it prints recall@1, @5 and @10, MRR and
// nDCG@10, overall and per question category (single-hop, paraphrase, temporal,
// multi-session), and the p50 and p95 latency of a search.
//
//	go run ./examples/evalsearch                     # the default data set
//	go run ./examples/evalsearch -dialogues 20 -seed 7
//	go run ./examples/evalsearch -json > eval.json
//	go run ./examples/evalsearch -all                # also RRF and Weighted fusion
//
// The same flags always give the same data set and the same quality figures.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/examples/internal/searcheval"
	"github.com/day1ai/day1/internal/evaldata"
	"github.com/day1ai/day1/llm"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	data     evaldata.Options
	json     bool
	all      bool
	embedder string
}

// Report is what -json prints.
type Report struct {
	Dialogues int                 `json:"dialogues"`
	Turns     int                 `json:"turns"`
	Questions int                 `json:"questions"`
	Seed      uint64              `json:"seed"`
	Embedder  string              `json:"embedder"`
	LostTurns int                 `json:"lost_answer_turns"`
	LoadTime  time.Duration       `json:"load_ns"`
	Results   []searcheval.Result `json:"results"`
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("evalsearch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.data.Dialogues, "dialogues", 6, "number of dialogues (one branch each)")
	fs.IntVar(&o.data.Sessions, "sessions", 10, "sessions per dialogue")
	fs.IntVar(&o.data.TurnsPerSession, "turns", 30, "turns per session, at least")
	fs.IntVar(&o.data.Topics, "topics", 16, "facts about the user per dialogue")
	fs.Uint64Var(&o.data.Seed, "seed", 1, "seed of the data set")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.BoolVar(&o.all, "all", false, "also evaluate hybrid with other RRF weights and with Weighted fusion")
	fs.StringVar(&o.embedder, "embedder", "", "embedder: empty for the Config default, hash or stem")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "evalsearch:", err)
		return 2
	}
	rep, err := evaluate(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "evalsearch:", err)
		return 1
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(stderr, "evalsearch:", err)
			return 1
		}
		return 0
	}
	printReport(stdout, rep)
	return 0
}

func evaluate(ctx context.Context, o options) (Report, error) {
	cfg := day1.Config{}
	if o.embedder != "" {
		e, err := embedderByName(o.embedder)
		if err != nil {
			return Report{}, err
		}
		cfg.Embedder = e
	}
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		return Report{}, err
	}
	defer c.Close()
	ds := evaldata.Generate(o.data)
	start := time.Now()
	l, err := searcheval.Load(ctx, c, ds)
	if err != nil {
		return Report{}, err
	}
	rep := Report{
		Dialogues: len(ds), Turns: l.Turns, Seed: o.data.Seed, LostTurns: l.Lost,
		LoadTime: time.Since(start), Embedder: c.Capabilities().Embedder,
	}
	for _, d := range ds {
		rep.Questions += len(d.Questions)
	}
	variants := searcheval.DefaultVariants
	if o.all {
		variants = append(variants,
			searcheval.Variant{Name: "hybrid rrf w=1", Mode: day1.Hybrid, Fusion: day1.RRF, VectorWeight: 1},
			searcheval.Variant{Name: "hybrid weighted 0.5", Mode: day1.Hybrid, Fusion: day1.Weighted, Alpha: 0.5},
			searcheval.Variant{Name: "hybrid rrf w=0.5", Mode: day1.Hybrid, VectorWeight: 0.5},
			searcheval.Variant{Name: "hybrid rrf w=0.3", Mode: day1.Hybrid, VectorWeight: 0.3},
			searcheval.Variant{Name: "hybrid weighted 0.2", Mode: day1.Hybrid, Fusion: day1.Weighted, Alpha: 0.2},
		)
	}
	for _, v := range variants {
		r, err := searcheval.Evaluate(ctx, c, l, v)
		if err != nil {
			return Report{}, err
		}
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

// embedderByName returns the embedder a -embedder flag names.
func embedderByName(name string) (llm.Embedder, error) {
	switch name {
	case "hash":
		return llm.NewLocalEmbedder(llm.DefaultDimensions), nil
	case "stem":
		return llm.NewStemEmbedder(llm.DefaultDimensions), nil
	}
	return nil, fmt.Errorf("-embedder %q: want hash or stem", name)
}

func printReport(w io.Writer, rep Report) {
	fmt.Fprintf(w, "%d dialogues, %d turns, %d questions, seed %d, embedder %s, loaded in %v",
		rep.Dialogues, rep.Turns, rep.Questions, rep.Seed, rep.Embedder, rep.LoadTime.Round(time.Millisecond))
	if rep.LostTurns > 0 {
		fmt.Fprintf(w, " (%d answer turns not stored as their own fact)", rep.LostTurns)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\tcategory\tquestions\trecall@1\trecall@5\trecall@10\tMRR\tnDCG@10\tp50\tp95\t")
	for _, r := range rep.Results {
		row := func(cat string, m searcheval.Metrics, lat bool) {
			p50, p95 := "", ""
			if lat {
				p50, p95 = fmtDur(r.P50), fmtDur(r.P95)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t%.1f%%\t%.1f%%\t%.3f\t%.3f\t%s\t%s\t\n", r.Variant, cat, m.Questions,
				100*m.Recall1, 100*m.Recall5, 100*m.Recall10, m.MRR, m.NDCG10, p50, p95)
		}
		row("all", r.All, true)
		for _, c := range evaldata.Categories {
			if m, ok := r.ByCategory[c]; ok {
				row(string(c), m, false)
			}
		}
	}
	tw.Flush()
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	}
}
