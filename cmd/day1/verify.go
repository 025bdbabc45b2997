package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/day1ai/day1"
)

func newVerifyCmd(a *app) *cobra.Command {
	var req day1.VerifyBranchRequest
	var summary bool
	cmd := &cobra.Command{
		Use:   "verify <branch>",
		Short: "Judge every unverified record of a branch (with $DAY1_MODEL, or heuristics)",
		Example: `  day1 verify agent-a
  day1 verify agent-a --summary`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeBranches(a),
		RunE: func(cmd *cobra.Command, args []string) error {
			open := a.existingClient
			if summary {
				open = a.readClient
			}
			c, err := open(cmd.Context())
			if err != nil {
				return err
			}
			if summary {
				s, err := c.VerificationSummary(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return a.out.emit(s, func() {
					a.out.table([]string{"", "VERIFIED", "PENDING", "UNVERIFIED", "INVALIDATED"}, [][]string{
						{"facts", fmt.Sprint(s.Facts.Verified), fmt.Sprint(s.Facts.Pending), fmt.Sprint(s.Facts.Unverified), fmt.Sprint(s.Facts.Invalidated)},
						{"conversations", fmt.Sprint(s.Conversations.Verified), fmt.Sprint(s.Conversations.Pending), fmt.Sprint(s.Conversations.Unverified), fmt.Sprint(s.Conversations.Invalidated)},
					})
				})
			}
			req.Branch = args[0]
			pr := newProgress(a.stderr, "verifying")
			req.Progress = func(p day1.VerifyProgress) { pr.update(p.Done, p.Total) }
			res, err := c.VerifyBranch(cmd.Context(), req)
			pr.done()
			if err != nil {
				return err
			}
			return a.out.emit(res, func() {
				a.out.line("judged %d records of %s: %s verified, %s pending, %s invalidated", res.Total, a.out.style(bold, res.Branch),
					a.out.style(green, fmt.Sprint(res.Verified)), a.out.style(yellow, fmt.Sprint(res.Pending)), a.out.style(red, fmt.Sprint(res.Invalidated)))
				rows := make([][]string, len(res.Verdicts))
				for i, v := range res.Verdicts {
					rows[i] = []string{"  " + v.Ref.String(), string(v.Status), fmt.Sprintf("%.2f", v.Score), v.By}
				}
				a.out.table(nil, rows)
			})
		},
	}
	cmd.Flags().BoolVar(&req.Rejudge, "rejudge", false, "also judge records an earlier verdict left pending")
	cmd.Flags().BoolVar(&summary, "summary", false, "count the records by state instead of judging")
	return cmd
}
