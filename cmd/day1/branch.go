package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
)

func newBranchCmd(a *app) *cobra.Command {
	var f day1.BranchFilter
	var status string
	cmd := &cobra.Command{
		Use:   "branch",
		Short: "List branches; create, archive, reactivate or delete one",
		Example: `  day1 branch
  day1 branch create agent-a --description "agent A's attempt"
  day1 branch create retry --from main --at before-agents`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.readClient(cmd.Context())
			if err != nil {
				return err
			}
			f.Status = day1.BranchStatus(status)
			bs, err := c.Branches(cmd.Context(), f)
			if err != nil {
				return err
			}
			return a.out.emit(bs, func() {
				rows := make([][]string, len(bs))
				for i, b := range bs {
					st := string(b.Status)
					switch b.Status {
					case day1.BranchActive:
						st = a.out.style(green, st)
					case day1.BranchMerged:
						st = a.out.style(cyan, st+" into "+b.MergedInto)
					default:
						st = a.out.style(yellow, st)
					}
					rows[i] = []string{a.out.style(bold, b.Name), or(b.Parent, "-"), st, when(b.ForkedAt), b.Description}
				}
				a.out.table([]string{"BRANCH", "PARENT", "STATUS", "FORKED", "DESCRIPTION"}, rows)
			})
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only branches in this status: active, merged, archived")
	cmd.Flags().StringVar(&f.Prefix, "prefix", "", "only branches whose name starts with this")
	cmd.Flags().StringVar(&f.Parent, "parent", "", "only the children of this branch")
	cmd.AddCommand(newBranchCreateCmd(a), branchAction(a, "archive", "Archive a branch: it keeps its records and refuses writes"),
		branchAction(a, "reactivate", "Make an archived or merged branch active again"),
		branchAction(a, "delete", "Delete a branch and its records; one holding changes its parent lacks needs --force"))
	return cmd
}

func newBranchCreateCmd(a *app) *cobra.Command {
	var o day1.BranchOptions
	var at string
	cmd := &cobra.Command{
		Use:   "create <name>",
		Short: "Fork a branch from a parent's head, a snapshot or an instant",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			o.At = memview.ParseAt(at)
			b, err := c.Branch(cmd.Context(), args[0], o)
			if err != nil {
				return err
			}
			return a.out.emit(b, func() {
				from := b.Parent
				if b.FromSnap != "" {
					from += " at snapshot " + b.FromSnap
				}
				a.out.line("created branch %s from %s", a.out.style(bold, b.Name), from)
			})
		},
	}
	cmd.Flags().StringVar(&o.From, "from", "", "the parent branch (default main)")
	cmd.Flags().StringVar(&at, "at", "", "fork from the parent's past: a snapshot or an RFC 3339 instant")
	_ = cmd.RegisterFlagCompletionFunc("at", forFlag(completeSnapshots(a)))
	cmd.Flags().StringVar(&o.Description, "description", "", "what the branch is for")
	cmd.RegisterFlagCompletionFunc("from", forFlag(completeBranches(a)))
	return cmd
}

func branchAction(a *app, verb, short string) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:               verb + " <name>",
		Short:             short,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeBranches(a),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			ctx, name := cmd.Context(), args[0]
			var b day1.Branch
			switch verb {
			case "archive":
				b, err = c.ArchiveBranch(ctx, name)
			case "reactivate":
				b, err = c.ReactivateBranch(ctx, name)
			case "delete":
				if !force {
					if err := unmerged(ctx, c, name); err != nil {
						return err
					}
				}
				err = c.DeleteBranch(ctx, name)
				b = day1.Branch{Name: name}
			}
			if err != nil {
				return err
			}
			past := map[string]string{"archive": "archived", "reactivate": "reactivated", "delete": "deleted"}[verb]
			return a.out.emit(map[string]any{past: b.Name, "branch": b}, func() {
				a.out.line("%s branch %s", past, a.out.style(bold, name))
			})
		},
	}
	if verb == "delete" {
		cmd.Flags().BoolVarP(&force, "force", "D", false, "delete the branch even when it holds changes its parent does not have")
	}
	return cmd
}

// unmerged refuses, as git branch -d does, to delete a branch that holds changes its
// parent does not have, unless it was marked merged.
func unmerged(ctx context.Context, c *day1.Client, name string) error {
	b, err := c.GetBranch(ctx, name)
	if err != nil || b.Parent == "" || b.Status == day1.BranchMerged {
		return err
	}
	d, err := c.Diff(ctx, name, b.Parent)
	if errors.Is(err, day1.ErrBranchNotFound) {
		return nil // the parent is gone: nothing to merge into
	}
	if err != nil {
		return err
	}
	if n := len(d.SourceChanges); n > 0 {
		return &unmergedError{branch: name, parent: b.Parent, changes: n}
	}
	return nil
}
