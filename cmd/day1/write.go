package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
)

func newWriteCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "write",
		Short: "Write a fact or an observation",
		Example: `  day1 write fact "The cache TTL is 12 hours" --category config
  day1 write observation error "go test ./auth failed: token expired" --tool Bash`,
	}
	cmd.AddCommand(newWriteFactCmd(a), newWriteObservationCmd(a))
	return cmd
}

func newWriteFactCmd(a *app) *cobra.Command {
	var f day1.Fact
	cmd := &cobra.Command{
		Use:   "fact <text>",
		Short: "Write a fact (deduplicated against the branch's; contradictions are reported)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.Text = strings.Join(args, " ")
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			w, err := c.WriteFact(cmd.Context(), f)
			if err != nil {
				return err
			}
			return a.out.emit(map[string]any{"outcome": w.Outcome, "replaced": w.Replaced, "contradicts": w.Contradicts,
				"fact": memview.View(w.Record)}, func() {
				a.out.line("fact %s %s on %s", a.out.style(bold, w.Record.ID), w.Outcome, w.Record.Branch)
				for _, cd := range w.Contradicts {
					a.out.line("  it contradicts fact %s (%q there, %q here)", cd.FactID, cd.Theirs, cd.Mine)
				}
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Branch, "branch", "", "branch to write to (default main)")
	fl.StringVar(&f.ID, "id", "", "the fact's id (default: a new one)")
	fl.StringVar(&f.Category, "category", "", "a short category, such as config or bug_fix")
	fl.Float64Var(&f.Confidence, "confidence", 0, "how sure, 0 to 1 (default 1)")
	fl.StringVar(&f.SessionID, "session", "", "the session it belongs to")
	fl.StringVar(&f.AgentID, "agent", "", "the agent that learnt it")
	fl.StringToStringVar(&f.Metadata, "meta", nil, "metadata, key=value")
	fl.DurationVar(&f.TTL, "expires-in", 0, "how long the fact holds, such as 72h; searches and lists leave it out afterwards (default: never expires)")
	_ = fl.SetAnnotation("expires-in", fieldAnnotation, []string{"TTL"})
	return cmd
}

func newWriteObservationCmd(a *app) *cobra.Command {
	var o day1.Observation
	cmd := &cobra.Command{
		Use:   "observation <type> <summary>",
		Short: "Write an observation: a tool_use, discovery, decision, error or insight",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Type, o.Summary = day1.ObservationType(args[0]), strings.Join(args[1:], " ")
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			w, err := c.WriteObservation(cmd.Context(), o)
			if err != nil {
				return err
			}
			return a.out.emit(map[string]any{"outcome": w.Outcome, "observation": memview.View(w.Record)}, func() {
				a.out.line("observation %s %s on %s", a.out.style(bold, w.Record.ID), w.Outcome, w.Record.Branch)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Branch, "branch", "", "branch to write to (default main)")
	fl.StringVar(&o.Tool, "tool", "", "the tool used, such as Bash")
	fl.StringVar(&o.SessionID, "session", "", "the session it belongs to")
	fl.StringVar(&o.AgentID, "agent", "", "the agent that saw it")
	return cmd
}
