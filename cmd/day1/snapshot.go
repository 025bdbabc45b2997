package main

import (
	"github.com/spf13/cobra"

	"github.com/day1ai/day1"
)

func newSnapshotCmd(a *app) *cobra.Command {
	var desc string
	list := &cobra.Command{
		Use:   "list [branch]",
		Short: "List snapshots, oldest first",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return listSnapshots(cmd, a, args)
		},
	}
	cmd := &cobra.Command{
		Use:   "snapshot [<branch> <name>]",
		Short: "Name the head of a branch; with no argument, list the snapshots",
		Example: `  day1 snapshot main before-refactor --description "before the auth refactor"
  day1 snapshot
  day1 at before-refactor search token`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 && len(args) != 2 {
				return usagef("snapshot takes a branch and a name, or nothing to list the snapshots; got %q", args)
			}
			return nil
		},
		ValidArgsFunction: completeBranches(a),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return listSnapshots(cmd, a, nil)
			}
			c, err := a.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			s, err := c.Snapshot(cmd.Context(), args[0], args[1], day1.SnapshotOptions{Description: desc})
			if err != nil {
				return err
			}
			return a.out.emit(s, func() {
				a.out.line("snapshot %s of %s at %s", a.out.style(bold, s.Name), s.Branch, when(s.At))
			})
		},
	}
	cmd.Flags().StringVar(&desc, "description", "", "what the snapshot marks")
	cmd.AddCommand(list, &cobra.Command{
		Use:               "delete <name>",
		ValidArgsFunction: completeSnapshots(a),
		Short:             "Delete a snapshot",
		Args:              cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			if err := c.DeleteSnapshot(cmd.Context(), args[0]); err != nil {
				return err
			}
			return a.out.emit(map[string]string{"deleted": args[0]}, func() { a.out.line("deleted snapshot %s", args[0]) })
		},
	})
	return cmd
}

// listSnapshots prints the snapshots, of one branch when args names it.
func listSnapshots(cmd *cobra.Command, a *app, args []string) error {
	c, err := a.readClient(cmd.Context())
	if err != nil {
		return err
	}
	branch := ""
	if len(args) == 1 {
		branch = args[0]
	}
	ss, err := c.Snapshots(cmd.Context(), branch)
	if err != nil {
		return err
	}
	return a.out.emit(ss, func() {
		rows := make([][]string, len(ss))
		for i, s := range ss {
			rows[i] = []string{a.out.style(bold, s.Name), s.Branch, when(s.At), s.Description}
		}
		a.out.table([]string{"SNAPSHOT", "BRANCH", "AT", "DESCRIPTION"}, rows)
	})
}
