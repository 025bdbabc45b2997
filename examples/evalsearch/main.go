// Command evalsearch measures the quality of day1's search on a labelled, synthetic
// conversational-memory data set (internal/evaldata): long multi-session dialogues,
// one branch per dialogue with the default Config, and questions labelled with the
// turns that answer them. The turns are written in two ways, each in its own memory:
// as facts with WriteFacts (the facts mode), and as the messages of conversations,
// one conversation per session, with AppendMessages (the messages mode). Both are
// searched with the default Kinds. Each fact carries its session's SessionID, so
// that the facts of a session lend each other score as the messages of a conversation
// do; -no-sessions writes them without it.
//
// It also prints the precision and recall of the contradiction heuristics
// (curation.Contradicts) on the labelled pairs of internal/evaldata.
//
// For keyword, vector and hybrid search it prints recall@1, @5 and @10, MRR and
// nDCG@10, overall and per question category (single-hop, paraphrase, temporal,
// multi-session), and the p50 and p95 latency of a search; in the messages mode also
// hybrid search with a context window (SearchQuery.Window) and on the user's turns
// only (Filter.Role), and in the facts mode the latter through the speaker metadata.
//
//	go run ./examples/evalsearch                     # the default data set, both modes
//	go run ./examples/evalsearch -mode messages
//	go run ./examples/evalsearch -mode facts -no-sessions
//	go run ./examples/evalsearch -dialogues 20 -seed 7
//	go run ./examples/evalsearch -json > eval.json
//	go run ./examples/evalsearch -all                # also RRF and Weighted fusion
//	go run ./examples/evalsearch -locomo locomo10.json
//
// -locomo evaluates on the public LoCoMo benchmark instead (Maharana et al., 2024: ten
// long two-person dialogues, 5,882 turns, 1,981 questions labelled with the turns
// that answer them, in categories locomo-1 to locomo-5), read by evaldata.ReadLoCoMo
// from the data set's locomo10.json or from its archive's directory of one file per
// dialogue (data/multimodal_dialog/locomo10_v2 in data/locomo10.zip of
// github.com/snap-research/locomo). The data set is not part of this module: fetch it
// yourself under its own licence.
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
	"slices"
	"text/tabwriter"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/curation"
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
	mode     string
	locomo   string
	// noSessions writes the facts of the facts mode with no SessionID.
	noSessions bool
}

// Modes of writing the turns.
const (
	modeFacts    = "facts"
	modeMessages = "messages"
	modeBoth     = "both"
)

// Report is what -json prints.
type Report struct {
	Dialogues int    `json:"dialogues"`
	Turns     int    `json:"turns"`
	Questions int    `json:"questions"`
	Seed      uint64 `json:"seed"`
	// DataSet is empty for the generated data set, "LoCoMo" for -locomo.
	DataSet   string `json:"data_set,omitempty"`
	Embedder  string `json:"embedder"`
	LostTurns int    `json:"lost_answer_turns"`
	// LoadTime and Results are those of the facts mode.
	LoadTime time.Duration       `json:"load_ns"`
	Results  []searcheval.Result `json:"results"`
	// MessagesLoadTime and MessageResults are those of the messages mode.
	MessagesLoadTime time.Duration       `json:"messages_load_ns"`
	MessageResults   []searcheval.Result `json:"message_results"`
	// Floors and MessageFloors are the default search at relevance floors, in the
	// facts and the messages mode: recall on each question's own dialogue, and how
	// often a question asked of another dialogue's memory returns nothing.
	Floors        []searcheval.Floor `json:"relevance_floors,omitempty"`
	MessageFloors []searcheval.Floor `json:"message_relevance_floors,omitempty"`
	// Contradictions are the contradiction heuristics' scores on the labelled pairs
	// of internal/evaldata, each pair both ways round.
	Contradictions []ContradictionScore `json:"contradictions"`
}

// ContradictionScore is how the contradiction heuristics label one set of pairs.
type ContradictionScore struct {
	Set       string  `json:"set"`
	Pairs     int     `json:"pairs"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	TP        int     `json:"true_positives"`
	FP        int     `json:"false_positives"`
	FN        int     `json:"false_negatives"`
	TN        int     `json:"true_negatives"`
}

// scoreContradictions scores curation.Contradicts on every pair set.
func scoreContradictions() ([]ContradictionScore, error) {
	var out []ContradictionScore
	for _, set := range []string{evaldata.PairsContradictions, evaldata.PairsHeldOut} {
		pairs, err := evaldata.Pairs(set)
		if err != nil {
			return nil, err
		}
		s := evaldata.ScoreContradictions(pairs, func(a, b string) bool { _, ok := curation.Contradicts(a, b); return ok })
		out = append(out, ContradictionScore{Set: set, Pairs: s.Pairs, Precision: s.Precision, Recall: s.Recall,
			TP: s.TP, FP: s.FP, FN: s.FN, TN: s.TN})
	}
	return out, nil
}

// relevanceFloors are the relevance floors the report measures.
var relevanceFloors = []float64{0, 0.2, day1.DefaultMinRelevance, 0.4, 0.5}

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
	fs.StringVar(&o.mode, "mode", modeBoth, "how the turns are written: facts, messages or both")
	fs.BoolVar(&o.noSessions, "no-sessions", false, "in the facts mode, write the facts with no SessionID, so that they lend each other no score")
	fs.StringVar(&o.locomo, "locomo", "", "evaluate on the LoCoMo data set at this path (locomo10.json, or a directory of one file per dialogue) instead of the generated one")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if o.mode != modeFacts && o.mode != modeMessages && o.mode != modeBoth {
		return o, fmt.Errorf("-mode %q: want facts, messages or both", o.mode)
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
	ds := evaldata.Generate(o.data)
	rep := Report{Dialogues: len(ds), Seed: o.data.Seed}
	if o.locomo != "" {
		var err error
		if ds, err = evaldata.ReadLoCoMo(o.locomo); err != nil {
			return Report{}, err
		}
		rep = Report{Dialogues: len(ds), DataSet: "LoCoMo"}
	}
	for _, d := range ds {
		rep.Questions += len(d.Questions)
	}
	var err error
	if rep.Contradictions, err = scoreContradictions(); err != nil {
		return Report{}, err
	}
	variants := searcheval.DefaultVariants
	if o.all {
		variants = append(slices.Clip(variants),
			searcheval.Variant{Name: "hybrid rrf w=1", Mode: day1.Hybrid, Fusion: day1.RRF, VectorWeight: 1},
			searcheval.Variant{Name: "hybrid weighted 0.5", Mode: day1.Hybrid, Fusion: day1.Weighted, Alpha: 0.5},
			searcheval.Variant{Name: "hybrid rrf w=0.5", Mode: day1.Hybrid, VectorWeight: 0.5},
			searcheval.Variant{Name: "hybrid rrf w=0.3", Mode: day1.Hybrid, VectorWeight: 0.3},
			searcheval.Variant{Name: "hybrid weighted 0.2", Mode: day1.Hybrid, Fusion: day1.Weighted, Alpha: 0.2},
		)
	}
	speaker := searcheval.ContextVariants[len(searcheval.ContextVariants)-1]
	if o.mode != modeMessages {
		loadFacts := searcheval.Load
		if o.noSessions {
			loadFacts = searcheval.LoadWithoutSessions
		}
		l, load, emb, err := evaluateMode(ctx, cfg, ds, loadFacts, append(slices.Clip(variants), speaker), &rep.Results, &rep.Floors)
		if err != nil {
			return Report{}, err
		}
		rep.Turns, rep.LostTurns, rep.LoadTime, rep.Embedder = l.Turns, l.Lost, load, emb
	}
	if o.mode != modeFacts {
		l, load, emb, err := evaluateMode(ctx, cfg, ds, searcheval.LoadMessages,
			append(slices.Clip(variants), searcheval.ContextVariants...), &rep.MessageResults, &rep.MessageFloors)
		if err != nil {
			return Report{}, err
		}
		rep.Turns, rep.MessagesLoadTime, rep.Embedder = l.Turns, load, emb
	}
	return rep, nil
}

// evaluateMode loads the data set into a new memory with load and evaluates each
// variant on it, appending the results to out, and the relevance floors, into fl.
func evaluateMode(ctx context.Context, cfg day1.Config, ds []evaldata.Dialogue,
	load func(context.Context, *day1.Client, []evaldata.Dialogue) (*searcheval.Loaded, error),
	variants []searcheval.Variant, out *[]searcheval.Result, fl *[]searcheval.Floor) (*searcheval.Loaded, time.Duration, string, error) {
	c, err := day1.Open(ctx, cfg)
	if err != nil {
		return nil, 0, "", err
	}
	defer c.Close()
	start := time.Now()
	l, err := load(ctx, c, ds)
	if err != nil {
		return nil, 0, "", err
	}
	took := time.Since(start)
	for _, v := range variants {
		r, err := searcheval.Evaluate(ctx, c, l, v)
		if err != nil {
			return nil, 0, "", err
		}
		*out = append(*out, r)
	}
	if len(ds) > 1 {
		if *fl, err = searcheval.Floors(ctx, c, l, relevanceFloors); err != nil {
			return nil, 0, "", err
		}
	}
	return l, took, c.Capabilities().Embedder, nil
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
	source := fmt.Sprintf("seed %d", rep.Seed)
	if rep.DataSet != "" {
		source = rep.DataSet
	}
	fmt.Fprintf(w, "%d dialogues, %d turns, %d questions, %s, embedder %s\n",
		rep.Dialogues, rep.Turns, rep.Questions, source, rep.Embedder)
	if rep.Results != nil {
		fmt.Fprintf(w, "\nturns as facts, loaded in %v", rep.LoadTime.Round(time.Millisecond))
		if rep.LostTurns > 0 {
			fmt.Fprintf(w, " (%d answer turns not stored as their own fact)", rep.LostTurns)
		}
		fmt.Fprintln(w)
		printResults(w, rep.Results)
		printFloors(w, rep.Floors)
	}
	if rep.MessageResults != nil {
		fmt.Fprintf(w, "\nturns as messages of conversations, loaded in %v\n", rep.MessagesLoadTime.Round(time.Millisecond))
		printResults(w, rep.MessageResults)
		printFloors(w, rep.MessageFloors)
	}
	fmt.Fprintln(w, "\ncontradiction heuristics on labelled pairs (each pair both ways round)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "set\tpairs\tprecision\trecall\ttp\tfp\tfn\ttn\t")
	for _, c := range rep.Contradictions {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%d\t%d\t%d\t%d\t\n", c.Set, c.Pairs, c.Precision, c.Recall, c.TP, c.FP, c.FN, c.TN)
	}
	tw.Flush()
}

// printFloors prints the default search at each relevance floor.
func printFloors(w io.Writer, fs []searcheval.Floor) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nrelevance floors (MinRelevance): recall on the own dialogue, nothing returned when asked of the next one")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "min relevance\trecall@10\tnothing on unrelated\t")
	for _, f := range fs {
		name := fmt.Sprintf("%.2f", f.MinRelevance)
		if f.MinRelevance == day1.DefaultMinRelevance {
			name += " (default for agents)"
		}
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f%%\t\n", name, 100*f.Recall10, 100*f.Nothing)
	}
	tw.Flush()
}

func printResults(w io.Writer, results []searcheval.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\tcategory\tquestions\trecall@1\trecall@5\trecall@10\tMRR\tnDCG@10\tp50\tp95\t")
	for _, r := range results {
		row := func(cat string, m searcheval.Metrics, lat bool) {
			p50, p95 := "", ""
			if lat {
				p50, p95 = fmtDur(r.P50), fmtDur(r.P95)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t%.1f%%\t%.1f%%\t%.3f\t%.3f\t%s\t%s\t\n", r.Variant, cat, m.Questions,
				100*m.Recall1, 100*m.Recall5, 100*m.Recall10, m.MRR, m.NDCG10, p50, p95)
		}
		row("all", r.All, true)
		for _, c := range slices.Concat(evaldata.Categories, evaldata.LoCoMoCategories) {
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
