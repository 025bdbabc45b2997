package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/cmd/day1/internal/api"
	"github.com/day1ai/day1/internal/memview"
)

func newTasksCmd(a *app) *cobra.Command {
	var f day1.TaskFilter
	var status string
	cmd := &cobra.Command{
		Use:               "tasks [name]",
		ValidArgsFunction: completeTasks(a),
		Short:             "List tasks, or show one with its objectives and members",
		Args:              cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.readClient(cmd.Context())
			if err != nil {
				return err
			}
			f.Status = day1.TaskStatus(status)
			if len(args) == 1 {
				t, err := c.GetTask(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return a.out.emit(t, func() { printTask(a.out, t) })
			}
			ts, err := c.Tasks(cmd.Context(), f)
			if err != nil {
				return err
			}
			return printTasks(a, ts)
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only tasks in this status: active, completed")
	cmd.Flags().StringVar(&f.Agent, "agent", "", "only tasks this agent joined")
	return cmd
}

func printTasks(a *app, ts []day1.Task) error {
	return a.out.emit(ts, func() {
		rows := make([][]string, len(ts))
		for i, t := range ts {
			rows[i] = []string{a.out.style(bold, t.Name), string(t.Status), or(t.Owner, "-"),
				strconv.Itoa(t.ObjectiveCount), t.Branch, when(t.LastActivity), t.Description}
		}
		a.out.table([]string{"TASK", "STATUS", "OWNER", "OBJECTIVES", "BRANCH", "LAST ACTIVITY", "DESCRIPTION"}, rows)
	})
}

func printTask(p *printer, t day1.Task) {
	p.line("%s %s on %s (from %s)", p.style(bold, "task "+t.Name), t.Status, t.Branch, t.Parent)
	if t.Description != "" {
		p.line("%s", t.Description)
	}
	p.line("\nobjectives")
	rows := make([][]string, len(t.Objectives))
	for i, o := range t.Objectives {
		rows[i] = []string{"  " + strconv.Itoa(o.ID), string(o.Status), or(strings.Join(o.Assignees, ","), "-"), o.Description}
	}
	p.table(nil, rows)
	p.line("\nmembers")
	rows = make([][]string, len(t.Members))
	for i, m := range t.Members {
		rows[i] = []string{"  " + m.Agent, or(m.Role, "-"), string(m.Status), m.Branch}
	}
	p.table(nil, rows)
}

func newHandoffsCmd(a *app) *cobra.Command {
	var f day1.HandoffFilter
	var status string
	cmd := &cobra.Command{
		Use:   "handoffs [id]",
		Short: "List handoffs, or show one with its context packet",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.readClient(cmd.Context())
			if err != nil {
				return err
			}
			f.Status = day1.HandoffStatus(status)
			if len(args) == 1 {
				h, err := c.GetHandoff(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				h = memview.Handoff(h)
				return a.out.emit(h, func() { printHandoff(a.out, h) })
			}
			hs, err := c.Handoffs(cmd.Context(), f)
			if err != nil {
				return err
			}
			return printHandoffs(a, memview.Handoffs(hs))
		},
	}
	cmd.Flags().StringVar(&f.Task, "task", "", "only this task's handoffs")
	cmd.Flags().StringVar(&status, "status", "", "only handoffs in this status")
	cmd.Flags().StringVar(&f.Agent, "agent", "", "only handoffs from or to this agent")
	return cmd
}

func printHandoffs(a *app, hs []day1.HandoffRecord) error {
	return a.out.emit(hs, func() {
		rows := make([][]string, len(hs))
		for i, h := range hs {
			rows[i] = []string{a.out.style(bold, h.ID), h.Task, string(h.Type), string(h.Status), or(h.FromAgent, "-"), or(h.ToAgent, "-"), when(h.CreatedAt)}
		}
		a.out.table([]string{"HANDOFF", "TASK", "TYPE", "STATUS", "FROM", "TO", "CREATED"}, rows)
	})
}

func printHandoff(p *printer, h day1.HandoffRecord) {
	p.line("%s %s of task %s: %s, from %s to %s", p.style(bold, "handoff "+h.ID), h.Type, h.Task, h.Status, or(h.FromAgent, "-"), or(h.ToAgent, "anyone"))
	if h.Reason != "" {
		p.line("reason: %s", h.Reason)
	}
	if h.Instructions != "" {
		p.line("instructions: %s", h.Instructions)
	}
	pk := h.Packet
	p.line("\npacket: %d facts, %d conversations, %d pending objectives, %d blockers, %d recent errors",
		len(pk.Facts), len(pk.Conversations), len(pk.PendingObjectives), len(pk.Blockers), len(pk.RecentErrors))
	for _, f := range pk.Facts {
		p.line("  fact/%s  %s", f.ID, memview.Shorten(f.Text, 90))
	}
}

func newReplayCmd(a *app) *cobra.Command {
	var opts day1.ReplayOptions
	cmd := &cobra.Command{
		Use:               "replay <task>",
		ValidArgsFunction: completeTasks(a),
		Short:             "Rebuild a task's run from memory: its steps, each agent's part, the outcome",
		Example:           "  day1 replay fix-auth\n  day1 at 2025-03-01T09:00:30Z replay fix-auth",
		Args:              cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.readClient(cmd.Context())
			if err != nil {
				return err
			}
			opts.AsOf = memview.ParseAt(a.at)
			tr, err := c.TaskReplay(cmd.Context(), args[0], opts)
			if err != nil {
				return err
			}
			v := api.ReplayView(tr)
			return a.out.emit(v, func() { printReplay(a.out, v) })
		},
	}
	cmd.Flags().BoolVar(&opts.IncludeObservations, "observations", false, "put observations in the timeline")
	cmd.Flags().BoolVar(&opts.VerifiedOnly, "verified-only", false, "keep verified records only")
	addAt(a, cmd)
	return cmd
}

func printReplay(p *printer, r api.Replay) {
	p.line("%s %s, %d steps", p.style(bold, "replay of "+r.Task.Name), r.Outcome.Status, len(r.Timeline))
	rows := make([][]string, len(r.Timeline))
	for i, e := range r.Timeline {
		rows[i] = []string{p.style(dim, when(e.At)), string(e.Kind), or(e.Agent, "-"), memview.Shorten(e.Summary, 80)}
	}
	p.table([]string{"TIME", "STEP", "AGENT", "SUMMARY"}, rows)
	p.line("\nagents")
	rows = make([][]string, len(r.Agents))
	for i, c := range r.Agents {
		rows[i] = []string{"  " + c.Agent, or(c.Role, "-"), fmt.Sprintf("%d facts (%d verified)", len(c.Facts), c.FactsVerified), c.Summary}
	}
	p.table(nil, rows)
	o := r.Outcome
	p.line("\noutcome: %s; %d facts, %d verified; %d merged", o.Status, o.Facts, o.FactsVerified, o.FactsMerged)
}
