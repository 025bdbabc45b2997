package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/day1ai/day1"
)

func newBundleCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "List, create, export, import and share bundles of verified knowledge",
		Example: `  day1 bundle create "auth fixes" --task fix-auth --visibility team
  day1 bundle export <id> -o auth.day1bundle.gz
  day1 --path ./other bundle import auth.day1bundle.gz --branch main`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return listBundles(a, cmd) },
	}
	cmd.AddCommand(&cobra.Command{
		Use: "list", Short: "List stored bundles", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return listBundles(a, cmd) },
	}, newBundleCreateCmd(a), newBundleExportCmd(a), newBundleImportCmd(a), newBundleShareCmd(a))
	return cmd
}

func listBundles(a *app, cmd *cobra.Command) error {
	c, err := a.readClient(cmd.Context())
	if err != nil {
		return err
	}
	bs, err := c.Bundles(cmd.Context(), day1.BundleFilter{})
	if err != nil {
		return err
	}
	return a.out.emit(bs, func() {
		rows := make([][]string, len(bs))
		for i, b := range bs {
			rows[i] = []string{a.out.style(bold, b.ID), b.Name, string(b.Type), string(b.Visibility), fmt.Sprint(b.Counts.Facts), fmt.Sprint(b.Size), when(b.CreatedAt)}
		}
		a.out.table([]string{"BUNDLE", "NAME", "TYPE", "VISIBILITY", "FACTS", "BYTES", "CREATED"}, rows)
	})
}

func printBundle(p *printer, b day1.Bundle) {
	p.line("bundle %s %q: %d facts, %d relations, %d conversations, %s", p.style(bold, b.ID), b.Name, b.Counts.Facts, b.Counts.Relations, b.Counts.Conversations, b.Visibility)
	if b.ShareToken != "" {
		p.line("share token: %s", b.ShareToken)
	}
}

func newBundleCreateCmd(a *app) *cobra.Command {
	var req day1.CreateBundleRequest
	var vis string
	cmd := &cobra.Command{
		Use:   "create <name>",
		Short: "Package a task's, a branch's or a template's verified knowledge",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			req.Name, req.Visibility = args[0], day1.BundleVisibility(vis)
			b, err := c.CreateBundle(cmd.Context(), req)
			if err != nil {
				return err
			}
			return a.out.emit(b, func() { printBundle(a.out, b) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Task, "task", "", "what this task's branch added")
	f.StringVar(&req.Branch, "branch", "", "this branch's records")
	f.StringVar(&req.Template, "template", "", "this template's records")
	f.StringVar(&req.Description, "description", "", "what the bundle is for")
	f.StringVar(&vis, "visibility", "", "private (default), team or public")
	f.BoolVar(&req.IncludeUnverified, "include-unverified", false, "take unverified facts too")
	f.BoolVar(&req.IncludeObservations, "include-observations", false, "take observations too")
	f.BoolVar(&req.Verify, "verify", false, "verify the task's branch first")
	cmd.MarkFlagsOneRequired("task", "branch", "template")
	cmd.MarkFlagsMutuallyExclusive("task", "branch", "template")
	return cmd
}

func newBundleExportCmd(a *app) *cobra.Command {
	var out string
	var plain bool
	cmd := &cobra.Command{
		Use:               "export <id>",
		ValidArgsFunction: completeBundles(a),
		Short:             "Write a stored bundle's file (gzip-compressed unless --plain)",
		Args:              cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.readClient(cmd.Context())
			if err != nil {
				return err
			}
			var w io.Writer = a.stdout
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			} else if !plain && isTerminal(a.stdout) {
				return usagef("the bundle is compressed: write it to a file with -o, or pass --plain")
			}
			b, err := c.ExportBundle(cmd.Context(), args[0], w, day1.ExportBundleOptions{Compress: !plain})
			if err != nil {
				if out != "" && out != "-" {
					os.Remove(out)
				}
				return err
			}
			if w == a.stdout {
				return nil
			}
			if f, ok := w.(*os.File); ok {
				if err := f.Close(); err != nil {
					return err
				}
			}
			if a.asJSON {
				return a.out.json(map[string]any{"bundle": b.ID, "file": out})
			}
			fmt.Fprintf(a.stderr, "wrote bundle %s to %s\n", b.ID, out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the file to write (default standard output)")
	cmd.Flags().BoolVar(&plain, "plain", false, "write plain lines, not gzip")
	return cmd
}

func newBundleImportCmd(a *app) *cobra.Command {
	var req day1.ImportBundleRequest
	var policy string
	cmd := &cobra.Command{
		Use:   "import [file|-]",
		Short: "Import a bundle file, a stored bundle (--bundle) or a shared one (--share-token) into a branch",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (req.Bundle != "" || req.ShareToken != "") {
				return usagef("import takes a file, or --bundle, or --share-token: exactly one")
			}
			if len(args) == 1 {
				if args[0] == "-" {
					req.From = a.stdin
				} else {
					f, err := os.Open(args[0])
					if err != nil {
						return err
					}
					defer f.Close()
					req.From = f
				}
			}
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			req.Policy = day1.BundleConflictPolicy(policy)
			pr := newProgress(a.stderr, "importing")
			req.Progress = func(p day1.ImportBundleProgress) {
				pr.verb = "importing (" + string(p.Phase) + ")"
				pr.update(p.Done, p.Total)
			}
			res, err := c.ImportBundle(cmd.Context(), req)
			pr.done()
			if err != nil {
				return err
			}
			return a.out.emit(res, func() {
				a.out.line("imported %q into %s: %d created, %d deduplicated, %d superseded, %d updated, %d skipped, %d conflicts",
					res.Bundle.Name, a.out.style(bold, res.Branch), res.Created, res.Deduplicated, res.Superseded, res.Updated, res.Skipped, res.Conflicts)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Branch, "branch", "", "the branch that receives the records (default main)")
	f.BoolVar(&req.CreateBranch, "create-branch", false, "create the branch when it is missing")
	f.StringVar(&req.Parent, "parent", "", "where a created branch forks from (default main)")
	f.StringVar(&policy, "policy", "", "records the branch holds with other content: keep_target (default) or take_bundle")
	f.StringVar(&req.Bundle, "bundle", "", "import this stored bundle")
	_ = cmd.RegisterFlagCompletionFunc("bundle", forFlag(completeBundles(a)))
	f.StringVar(&req.ShareToken, "share-token", "", "import the bundle this token shares")
	return cmd
}

func newBundleShareCmd(a *app) *cobra.Command {
	var vis string
	cmd := &cobra.Command{
		Use:               "share <id>",
		ValidArgsFunction: completeBundles(a),
		Short:             "Share a bundle with a token (team or public), or make it private again",
		Args:              cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.existingClient(cmd.Context())
			if err != nil {
				return err
			}
			b, err := c.SetBundleVisibility(cmd.Context(), args[0], day1.BundleVisibility(vis))
			if err != nil {
				return err
			}
			return a.out.emit(b, func() { printBundle(a.out, b) })
		},
	}
	cmd.Flags().StringVar(&vis, "visibility", "team", "team, public, or private to revoke the token")
	return cmd
}
