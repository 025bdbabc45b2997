package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
)

func newLogCmd(a *app) *cobra.Command {
	var q day1.TimelineQuery
	var kinds []string
	var reverse, byCreation bool
	cmd := &cobra.Command{
		Use:   "log [branch]",
		Short: "List what happened on a branch, newest first",
		Long: `List what happened on a branch, newest first. A record stands at the time its
current version was written, so a corrected fact or a renamed conversation shows
again at the top, as a new commit does in git log; --by-creation places every
record at its creation instead.`,
		Example:           "  day1 log agent-a --agent agent-a --kind fact\n  day1 at before-agents log main",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeBranches(a),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				q.Branch = args[0]
			}
			q.Newest, q.ByUpdate = !reverse, !byCreation
			for _, k := range kinds {
				kind, err := memview.ParseKind("--kind", k)
				if err != nil {
					return err
				}
				q.Kinds = append(q.Kinds, kind)
			}
			views, err := logViews(cmd, a, q)
			if err != nil {
				return err
			}
			return a.out.emit(views, func() {
				rows := make([][]string, len(views))
				for i, e := range views {
					rows[i] = []string{a.out.style(dim, when(e.At)), string(e.Kind) + "/" + e.ID, or(e.Agent, "-"), memview.Shorten(e.Summary, 80)}
				}
				a.out.table([]string{"TIME", "RECORD", "AGENT", "SUMMARY"}, rows)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.AgentID, "agent", "", "only this agent's records")
	f.StringVar(&q.SessionID, "session", "", "only this session's records")
	f.StringVar(&q.TaskID, "task", "", "only this task's records")
	f.StringSliceVar(&kinds, "kind", nil, "only these kinds: fact, observation, relation, conversation, message")
	f.IntVar(&q.Limit, "limit", 0, "the most records: the newest ones, or with --reverse the oldest (default 1000)")
	f.BoolVar(&reverse, "reverse", false, "oldest first")
	f.BoolVar(&byCreation, "by-creation", false, "place records at their creation, not at their latest update")
	f.BoolVar(&q.IncludeExpired, "include-expired", false, "also show facts whose expiry has passed")
	addAt(a, cmd)
	return cmd
}

// logViews reads the timeline q asks for.
func logViews(cmd *cobra.Command, a *app, q day1.TimelineQuery) ([]memview.Event, error) {
	r, err := a.reader(cmd.Context())
	if err != nil {
		return nil, err
	}
	evs, err := r.Timeline(cmd.Context(), q)
	if err != nil {
		return nil, err
	}
	return memview.Events(evs), nil
}

func newShowCmd(a *app) *cobra.Command {
	var branch string
	cmd := &cobra.Command{
		Use:     "show <kind/id>",
		Short:   "Show one record (a bare id means a fact)",
		Example: "  day1 show fact/f-jwt\n  day1 show observation/o-grep --branch agent-a",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := memview.ParseRef("record", args[0])
			if err != nil {
				return err
			}
			r, err := a.reader(cmd.Context())
			if err != nil {
				return err
			}
			rec, err := getRecord(cmd, r, branch, ref)
			if err != nil {
				return err
			}
			v := memview.View(rec)
			return a.out.emit(v, func() { showRecord(a.out, v) })
		},
	}
	cmd.Flags().StringVar(&branch, "branch", "", "the branch to read (default main)")
	addAt(a, cmd)
	return cmd
}

func getRecord(cmd *cobra.Command, r day1.Reader, branch string, ref day1.Ref) (day1.Record, error) {
	ctx := cmd.Context()
	switch ref.Kind {
	case day1.KindFact:
		return r.GetFact(ctx, branch, ref.ID)
	case day1.KindObservation:
		return r.GetObservation(ctx, branch, ref.ID)
	case day1.KindRelation:
		return r.GetRelation(ctx, branch, ref.ID)
	case day1.KindConversation:
		return r.GetConversation(ctx, branch, ref.ID)
	default:
		return r.GetMessage(ctx, branch, ref.ID)
	}
}

// showRecord prints a record's fields, one per line, in a stable order.
func showRecord(p *printer, v *memview.Record) {
	data, _ := json.Marshal(v.Record)
	var fields map[string]any
	json.Unmarshal(data, &fields)
	showFields(p, v.Kind, v.ID, v.Branch, fields)
}

// showFields prints a record's fields, given as JSON values.
func showFields(p *printer, kind day1.Kind, id, branch string, fields map[string]any) {
	p.line("%s %s", p.style(bold, string(kind)+"/"+id), p.style(dim, "on "+branch))
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "id" && k != "branch" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	rows := make([][]string, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, []string{k + ":", fieldText(fields[k])})
	}
	p.table(nil, rows)
}

func fieldText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	data, _ := json.Marshal(v)
	return string(data)
}

func newSearchCmd(a *app) *cobra.Command {
	var q day1.SearchQuery
	var mode string
	var kinds []string
	cmd := &cobra.Command{
		Use:   "search <query>",
		Short: "Search facts, observations, conversations and messages; show each retriever's score",
		Example: `  day1 search "token refresh"
  day1 search retries --branch agent-a --mode keyword --kind fact
  day1 search "which database" --kind message --role user --window 1`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q.Text = strings.Join(args, " ")
			q.Mode = day1.SearchMode(mode)
			for _, k := range kinds {
				kind, err := memview.ParseKind("--kind", k)
				if err != nil {
					return err
				}
				q.Kinds = append(q.Kinds, kind)
			}
			views, err := searchViews(cmd, a, q)
			if err != nil {
				return err
			}
			return a.out.emit(views, func() {
				if len(views) == 0 && q.MinRelevance > 0 {
					a.out.line("nothing relevant: no hit reached relevance %.2f (--min-relevance 0 shows every hit)", q.MinRelevance)
					return
				}
				var rows [][]string
				context := func(ms []*memview.Record) {
					for _, m := range ms {
						rows = append(rows, []string{"", "", "", "", "", "  " + string(m.Kind) + "/" + m.ID, memview.Shorten(m.Summary, 68)})
					}
				}
				for i, h := range views {
					context(h.Before)
					rows = append(rows, []string{
						strconv.Itoa(i + 1), fmt.Sprintf("%.2f", h.Relevance), fmt.Sprintf("%.4f", h.Score), rankScore(h.KeywordRank, h.KeywordScore),
						rankScore(h.VectorRank, h.VectorScore), string(h.Record.Kind) + "/" + h.Record.ID, memview.Shorten(h.Record.Summary, 70),
					})
					context(h.After)
				}
				a.out.table([]string{"#", "RELEVANCE", "SCORE", "KEYWORD", "VECTOR", "RECORD", "SUMMARY"}, rows)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.Branch, "branch", "", "the branch to search (default main)")
	f.StringVar(&mode, "mode", "", "hybrid (default), keyword or vector")
	f.StringSliceVar(&kinds, "kind", nil, "fact, observation, conversation, message (default all four)")
	f.IntVar(&q.Limit, "limit", 0, "the most hits (default 10)")
	f.StringVar(&q.Filter.AgentID, "agent", "", "only this agent's records")
	f.StringVar(&q.Filter.Category, "category", "", "only facts of this category")
	f.StringVar((*string)(&q.Filter.Role), "role", "", "only the messages of this speaker: user, assistant, tool_call, tool_result, system")
	f.StringVar(&q.Filter.ConversationID, "conversation", "", "only the messages of this conversation")
	f.IntVar(&q.Window, "window", 0, "show each message hit with this many messages before and after it (0 to 20)")
	f.Float64Var(&q.MinRelevance, "min-relevance", day1.DefaultMinRelevance,
		"show nothing unless a hit reaches this relevance (0 to 1), and leave out the hits below half of it; 0 shows every hit")
	f.BoolVar(&q.IncludeExpired, "include-expired", false, "also show facts whose expiry has passed")
	addAt(a, cmd)
	return cmd
}

// searchViews runs q on the memory.
func searchViews(cmd *cobra.Command, a *app, q day1.SearchQuery) ([]memview.Hit, error) {
	r, err := a.reader(cmd.Context())
	if err != nil {
		return nil, err
	}
	hits, err := r.Search(cmd.Context(), q)
	if err != nil {
		return nil, err
	}
	return memview.Hits(hits), nil
}

// rankScore formats one retriever's rank and score, "-" when it did not find the hit.
func rankScore(rank int, score *float64) string {
	if rank == 0 || score == nil {
		return "-"
	}
	return fmt.Sprintf("#%d %.3f", rank, *score)
}
