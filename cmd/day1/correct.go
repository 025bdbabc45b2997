package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/memview"
)

func newCorrectCmd(a *app) *cobra.Command {
	var fc day1.FactCorrection
	var text, category string
	var confidence float64
	var invalidate, del bool
	cmd := &cobra.Command{
		Use:   "correct <fact-id>",
		Short: "Correct a fact: a new text or fields, an invalidation or a deletion, kept with who and why",
		Example: `  day1 correct f-ttl --text "The cache TTL is 12 hours" --why "changed on Monday"
  day1 correct f-ttl --invalidate --why "the cache was removed"
  day1 correct f-typo --delete --why "written by mistake" --by alice`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fc.ID = args[0]
			flags := cmd.Flags()
			switch {
			case invalidate:
				fc.Action = day1.CorrectInvalidate
			case del:
				fc.Action = day1.CorrectDelete
			default:
				fc.Action = day1.CorrectUpdate
			}
			if flags.Changed("text") {
				fc.Text = &text
			}
			if flags.Changed("category") {
				fc.Category = &category
			}
			if flags.Changed("confidence") {
				fc.Confidence = &confidence
			}
			if fc.By == "" {
				fc.By = os.Getenv("USER")
			}
			if fc.By == "" {
				fc.By = "day1"
			}
			c, err := a.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			f, err := c.CorrectFact(cmd.Context(), fc)
			if err != nil {
				return err
			}
			return a.out.emit(memview.View(f), func() {
				a.out.line("%s fact %s on %s: %s", fc.Action, a.out.style(bold, f.ID), f.Branch, f.Text)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&fc.Branch, "branch", "", "the fact's branch (default main)")
	f.StringVar(&text, "text", "", "the corrected text")
	f.StringVar(&category, "category", "", "the corrected category")
	f.Float64Var(&confidence, "confidence", 0, "the corrected confidence, 0 to 1")
	f.StringToStringVar(&fc.Metadata, "meta", nil, "metadata to set, key=value (an empty value removes the key)")
	f.BoolVar(&invalidate, "invalidate", false, "invalidate the fact: it leaves search, its history stays")
	f.BoolVar(&del, "delete", false, "delete the fact from the branch; the past still reads it")
	f.StringVar(&fc.Why, "why", "", "why the fact is corrected (required)")
	f.StringVar(&fc.By, "by", "", "who corrects it (default $USER)")
	cmd.MarkFlagsMutuallyExclusive("invalidate", "delete")
	return cmd
}
