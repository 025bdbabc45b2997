package main

import (
	"github.com/spf13/cobra"

	"github.com/day1ai/day1"
)

func newCompactCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compact",
		Short: "Replace the log of the durable store by a checkpoint; drop history past --retention",
		Long: `compact writes a checkpoint of the durable store and starts a new log after it, so
that the next open loads the checkpoint instead of replaying every write, and removes
the files it replaces. With --retention, versions replaced longer ago than that are
dropped unless a branch, a snapshot or a merge base still reads them, and reads at
older instants fail as too old from then on; snapshots keep their own. Without it all
history is kept.`,
		Example: `  day1 compact
  day1 compact --retention 720h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.retention < 0 {
				return usagef("--retention must not be negative")
			}
			c, err := a.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			pr := newProgress(a.stderr, "compacting")
			pr.its = "versions"
			pr.spin()
			st, err := c.Compact(day1.WithProgress(cmd.Context(), pr.update))
			pr.done()
			if err != nil {
				return err
			}
			return a.out.emit(st, func() {
				switch {
				case st.Generation == 0 && st.Horizon.IsZero():
					// A SQLite memory has no checkpoints: it only deletes old history.
					a.out.line("nothing to compact: all history is kept (--retention lets old versions go)")
				case st.Generation == 0:
					a.out.line("compacted: %d versions kept, %d dropped", st.Versions, st.Dropped)
				default:
					a.out.line("compacted into generation %d: %d versions kept, %d dropped", st.Generation, st.Versions, st.Dropped)
				}
				if !st.Horizon.IsZero() {
					a.out.line("reads reach back to %s; snapshots further", when(st.Horizon))
				}
			})
		},
	}
	cmd.Flags().DurationVar(&a.retention, "retention", 0, "drop the history older than this (such as 720h); default: keep all history")
	return cmd
}
