package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
)

func newDiffCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:               "diff <source> [target]",
		Short:             "Show what changed on each side since the merge base, with conflicts",
		Example:           "  day1 diff agent-a\n  day1 diff agent-a agent-b",
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: completeBranches(a),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.readClient(cmd.Context())
			if err != nil {
				return err
			}
			target := day1.DefaultBranch
			if len(args) == 2 {
				target = args[1]
			}
			d, err := c.Diff(cmd.Context(), args[0], target)
			if err != nil {
				return err
			}
			v := memview.DiffView(d)
			return a.out.emit(v, func() { printDiff(a.out, v) })
		},
	}
}

func printDiff(p *printer, d memview.Diff) {
	p.line("%s %s into %s %s", p.style(bold, "diff"), p.style(bold, d.Source), p.style(bold, d.Target),
		p.style(dim, fmt.Sprintf("(base %s at %s)", d.Base, when(d.BaseAt))))
	section := func(title string, cs []memview.Change) {
		p.line("\n%s (%d)", title, len(cs))
		rows := make([][]string, len(cs))
		for i, c := range cs {
			rows[i] = changeRow(p, c)
		}
		p.table(nil, rows)
	}
	section("changes on "+d.Source, d.SourceChanges)
	section("changes on "+d.Target, d.TargetChanges)
	p.line("\n%s (%d)", "conflicts", len(d.Conflicts))
	for _, c := range d.Conflicts {
		p.line("  %s %s (%s)", p.style(red, "!"), c.Ref, c.Reason)
		p.line("    %s: %s", d.Source, after(c.Source))
		p.line("    %s: %s", d.Target, after(c.Target))
	}
}

func after(c memview.Change) string {
	if c.After == nil {
		return "(deleted)"
	}
	return memview.Shorten(c.After.Summary, 90)
}

func changeRow(p *printer, c memview.Change) []string {
	switch c.Op {
	case day1.OpAdded:
		return []string{"  " + p.style(green, "+"), c.Ref, memview.Shorten(c.After.Summary, 80)}
	case day1.OpDeleted:
		return []string{"  " + p.style(red, "-"), c.Ref, memview.Shorten(c.Before.Summary, 80)}
	}
	return []string{"  " + p.style(yellow, "~"), c.Ref, memview.Shorten(c.After.Summary, 80)}
}

func newMergeCmd(a *app) *cobra.Command {
	var strategy, policy string
	var picks []string
	var req day1.MergeRequest
	cmd := &cobra.Command{
		Use:   "merge <source> [target]",
		Short: "Merge a branch into another (main by default); --dry-run previews it",
		Example: `  day1 merge agent-a --dry-run
  day1 merge agent-b agent-a --policy accept
  day1 merge agent-a --strategy cherry_pick --pick fact/f-a1 --mark-merged`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: completeBranches(a),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			req.Source, req.Target = args[0], day1.DefaultBranch
			if len(args) == 2 {
				req.Target = args[1]
			}
			if req.Strategy, err = memview.ParseStrategy("--strategy", strategy); err != nil {
				return err
			}
			if req.Policy, err = memview.ParsePolicy("--policy", policy); err != nil {
				return err
			}
			for _, s := range picks {
				ref, err := memview.ParseRef("--pick", s)
				if err != nil {
					return err
				}
				req.Pick = append(req.Pick, ref)
			}
			c, err := a.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			res, err := c.Merge(cmd.Context(), req)
			if err != nil {
				return err
			}
			v := memview.MergeView(res)
			return a.out.emit(v, func() { printMerge(a.out, v) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&strategy, "strategy", "", "native (default), cherry_pick, squash or auto")
	f.StringVar(&policy, "policy", "", "what a native or squash merge does with conflicts: fail (default), skip (keep the target's), accept (take the source's)")
	f.StringSliceVar(&picks, "pick", nil, "records a cherry_pick merge copies, as kind/id")
	f.BoolVar(&req.DryRun, "dry-run", false, "show what the merge would do and change nothing")
	f.BoolVar(&req.MarkMerged, "mark-merged", false, "mark the source merged: for a branch whose work is done")
	f.StringVar(&req.Message, "message", "", "a message kept in the merge history")
	f.StringVar(&req.MergedBy, "by", "", "who merges, kept in the merge history")
	cmd.RegisterFlagCompletionFunc("strategy", cobra.FixedCompletions([]cobra.Completion{"native", "cherry_pick", "squash", "auto"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("policy", cobra.FixedCompletions([]cobra.Completion{"fail", "skip", "accept"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func printMerge(p *printer, m memview.Merge) {
	r := m.Record
	verb := "merged"
	if !m.Applied {
		verb = "would merge"
	}
	p.line("%s %s into %s (%s): %d merged, %d rejected, %d resolved", verb, p.style(bold, r.Source), p.style(bold, r.Target),
		r.Strategy, len(r.Merged), len(r.Rejected), len(r.Resolutions))
	rows := make([][]string, 0, len(r.Merged)+len(r.Rejected)+len(r.Resolutions))
	for _, it := range r.Merged {
		rows = append(rows, []string{"  " + p.style(green, string(it.Action)), it.Ref.String(), it.Reason})
	}
	for _, it := range r.Rejected {
		rows = append(rows, []string{"  " + p.style(red, string(it.Action)), it.Ref.String(), it.Reason})
	}
	for _, res := range r.Resolutions {
		rows = append(rows, []string{"  " + p.style(yellow, string(res.Action)), res.Ref.String(), "resolved by " + res.By + ": " + res.Reason})
	}
	p.table(nil, rows)
	if !m.Applied {
		p.line("%s", p.style(dim, "dry run: nothing changed; run again without --dry-run to merge"))
	}
}
