package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/localmem"
	"github.com/day1ai/day1/internal/memview"
	"github.com/day1ai/day1/internal/pathkind"
)

// app is the state the commands share: the chosen memory, opened on first use, and
// how to print.
type app struct {
	path, dsn string
	inMemory  bool
	retention time.Duration // set by "day1 compact --retention"
	storeKind string        // set by "day1 init --store"
	asJSON    bool
	noColor   bool
	at        string // set by "day1 at <point> ..."

	stdin          io.Reader
	stdout, stderr io.Writer
	out            *printer

	c      *day1.Client
	opened string // the folder of the durable store c opened, "" for another
}

// client opens the memory the flags and the environment choose, creating it when it
// does not exist.
func (a *app) client(ctx context.Context) (*day1.Client, error) {
	return a.open(ctx, false)
}

// flagError says what a flag's value must be, in place of the parser's words
// (strconv.ParseFloat: parsing "abc": invalid syntax).
func flagError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	var want string
	switch t := ive.GetFlag().Value.Type(); {
	case strings.HasPrefix(t, "float"):
		want = "a number, such as 0.8"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		want = "a whole number"
	case t == "duration":
		want = "a duration, such as 90s, 15m or 72h"
	case t == "bool":
		want = "true or false"
	case t == "stringToString":
		want = "a list of key=value pairs, such as team=auth,tier=1"
	default:
		return err // the parser's words name what is wrong
	}
	return fmt.Errorf("--%s: %q is not %s", ive.GetFlag().Name, ive.GetValue(), want)
}

// existingClient opens the memory for a command that changes what it already holds
// (a branch, a merge, a compaction, a verdict): one that does not exist is an error
// rather than a new, empty memory (a mistyped --path). Only init and the commands
// that add records (write, bundle import) and serve make a new memory.
func (a *app) existingClient(ctx context.Context) (*day1.Client, error) {
	if a.c == nil {
		_, path, err := localmem.Config(localmem.Options{Path: a.path, DSN: a.dsn, InMemory: a.inMemory, Store: a.storeKind})
		if err != nil {
			return nil, err
		}
		if path != "" && pathkind.Held(path) == "" {
			return nil, &noMemoryError{path: path}
		}
	}
	return a.open(ctx, false)
}

// readClient opens the memory for a command that only reads it: a durable embedded
// store read-only, and one that does not exist is an error rather than a new, empty
// memory (a mistyped --path).
func (a *app) readClient(ctx context.Context) (*day1.Client, error) {
	return a.open(ctx, true)
}

func (a *app) open(ctx context.Context, readOnly bool) (*day1.Client, error) {
	if a.c != nil {
		return a.c, nil
	}
	o := localmem.Options{Path: a.path, DSN: a.dsn, InMemory: a.inMemory, Retention: a.retention, ReadOnly: readOnly, Store: a.storeKind}
	c, path, err := localmem.Open(ctx, o)
	switch {
	case errors.Is(err, day1.ErrLocked):
		return nil, lockedError(path, err)
	case readOnly && path != "" && errors.Is(err, day1.ErrNotFound):
		return nil, &noMemoryError{path: path} // a read-only open never creates one
	case err != nil:
		return nil, err
	}
	a.c, a.opened = c, path
	return c, nil
}

// lockedError explains what to do when a commit waited too long for the memory.
func lockedError(path string, err error) error {
	return fmt.Errorf("%w\nanother process (a day1 serve, an MCP server or a hook) has been committing to %s for longer than the lock timeout; try again", err, path)
}

// reader returns the client, or a view of the past when the command runs under
// "day1 at".
func (a *app) reader(ctx context.Context) (day1.Reader, error) {
	c, err := a.readClient(ctx)
	if err != nil {
		return nil, err
	}
	if a.at != "" {
		return c.TimeTravel(memview.ParseAt(a.at)), nil
	}
	return c, nil
}

func (a *app) close() {
	if a.c != nil {
		a.c.Close()
	}
}

// atVerbs are the commands "day1 at" can run in the past.
var atVerbs = []string{"show", "search", "log", "replay"}

// rewriteAt turns "day1 [flags] at <point> <verb> ..." into the verb with --at
// <point>, so that every reading command takes the point the same way.
func rewriteAt(args []string) ([]string, error) {
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" || len(a) == 0 || a[0] != '-' {
			break
		}
		if slices.Contains([]string{"--path", "--dsn"}, a) {
			i++
		}
		i++
	}
	if i >= len(args) || args[i] != "at" {
		return args, nil
	}
	if slices.ContainsFunc(args[i+1:], func(s string) bool { return s == "-h" || s == "--help" }) && len(args) < i+4 {
		return args, nil // day1 at --help: cobra prints the help of at
	}
	if len(args) < i+3 {
		return nil, usagef("at needs a point and a command, such as: day1 at before-refactor search token")
	}
	point, verb := args[i+1], args[i+2]
	if !slices.Contains(atVerbs, verb) {
		return nil, usagef("at cannot run %q in the past; it runs %v", verb, atVerbs)
	}
	if slices.ContainsFunc(args[i+3:], func(s string) bool { return s == "--at" || strings.HasPrefix(s, "--at=") }) {
		return nil, usagef("at %s and --at both name a point in the past: give one of them", point)
	}
	out := slices.Concat(args[:i], args[i+2:], []string{"--at", point})
	return out, nil
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	defer a.close()
	asJSON := slices.Contains(args, "--json")
	args, err := rewriteAt(args)
	if err != nil {
		return report(stderr, err, asJSON)
	}
	root := newRoot(a)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	running := false
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		var chosen []string
		for _, f := range []string{"path", "dsn", "memory"} {
			if cmd.Flags().Changed(f) {
				chosen = append(chosen, "--"+f)
			}
		}
		if len(chosen) > 1 {
			return usagef("%s each choose a memory: give one of them", strings.Join(chosen, " and "))
		}
		running = true
		a.out = newPrinter(stdout, a.asJSON, a.noColor)
		return nil
	}
	if cmd, err := root.ExecuteContextC(ctx); err != nil {
		if !running {
			err = &usageError{err}
		}
		return report(stderr, inCLITerms(cmd, err), a.asJSON || asJSON)
	}
	return exitOK
}

func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "day1",
		Short: "Git-like memory for AI agents: branches, diff, merge, snapshots, time travel",
		Long: `day1 looks at and steers the memory of AI agents the way git does a repository.

The memory is the durable store at --path (default $DAY1_PATH, or day1 in the user's
data folder), the MatrixOne database at --dsn (or $DAY1_DSN), or an empty memory in
this process with --memory. Add --json to any command for output that scripts read.
Other processes (day1 serve, MCP servers, hooks) may have the memory open meanwhile.

Exit codes: 0 success, 1 error, 2 usage, 3 not found, 4 conflict (merge conflict,
merge gate, name exists, stale or archived branch), 5 locked (a write waited too
long for other processes' writes), 6 not supported.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version(),
	}
	root.SetVersionTemplate("day1 {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVar(&a.path, "path", "", "folder of the durable embedded store (default $DAY1_PATH or the user data folder)")
	pf.StringVar(&a.dsn, "dsn", "", "MatrixOne DSN, such as root:111@tcp(127.0.0.1:6001)/day1 (default $DAY1_DSN)")
	pf.BoolVar(&a.inMemory, "memory", false, "use an empty memory in this process only")
	pf.BoolVar(&a.asJSON, "json", false, "print JSON for scripts")
	pf.BoolVar(&a.noColor, "no-color", false, "never colour the output (NO_COLOR does the same)")
	root.MarkFlagsMutuallyExclusive("path", "dsn", "memory")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return &usageError{flagError(err)} })

	root.AddGroup(&cobra.Group{ID: "read", Title: "Reading memory:"}, &cobra.Group{ID: "write", Title: "Changing memory:"},
		&cobra.Group{ID: "work", Title: "Tasks and knowledge:"})
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("read", newLogCmd(a), newShowCmd(a), newSearchCmd(a), newDiffCmd(a), newAtCmd(a))
	add("write", newInitCmd(a), newWriteCmd(a), newCorrectCmd(a), newBranchCmd(a), newMergeCmd(a), newSnapshotCmd(a), newCompactCmd(a))
	add("work", newTasksCmd(a), newHandoffsCmd(a), newReplayCmd(a), newVerifyCmd(a), newBundleCmd(a), newServeCmd(a), newMCPCmd(a))
	return root
}

// newAtCmd documents "day1 at"; run rewrites the command line before cobra sees it,
// so this only runs when the arguments are missing.
func newAtCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:               "at <snapshot|RFC3339> <command> [args]",
		ValidArgsFunction: completeSnapshots(a),
		Short:             "Run a reading command (show, search, log, replay) on memory as it was",
		Example: `  day1 at before-refactor search "token signing"
  day1 at 2025-03-01T09:00:10Z log main`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("at cannot run %q in the past; it runs %v", args[1], atVerbs)
		},
	}
}

// addAt adds the --at flag to a reading command.
func addAt(a *app, cmd *cobra.Command) {
	cmd.Flags().StringVar(&a.at, "at", "", "read memory as it was at a snapshot or an RFC 3339 instant")
	_ = cmd.RegisterFlagCompletionFunc("at", forFlag(completeSnapshots(a)))
}

// completer completes arguments with the names of what list returns, name giving
// each one's: the first argument only, or with all every one.
func completer[T any](a *app, all bool, list func(ctx context.Context, c *day1.Client, prefix string) ([]T, error), name func(T) string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 && !all {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := a.readClient(cmd.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		items, err := list(cmd.Context(), c, toComplete)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, it := range items {
			if n := name(it); strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// forFlag makes a completion of arguments complete a flag's value, whatever the
// arguments before it.
func forFlag(f cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return f(cmd, nil, toComplete)
	}
}

// completeBranches completes branch names, in every argument.
func completeBranches(a *app) cobra.CompletionFunc {
	return completer(a, true, func(ctx context.Context, c *day1.Client, prefix string) ([]day1.Branch, error) {
		return c.Branches(ctx, day1.BranchFilter{Prefix: prefix})
	}, func(b day1.Branch) string { return b.Name })
}

// completeSnapshots completes snapshot names.
func completeSnapshots(a *app) cobra.CompletionFunc {
	return completer(a, false, func(ctx context.Context, c *day1.Client, _ string) ([]day1.Snapshot, error) {
		return c.Snapshots(ctx, "")
	}, func(s day1.Snapshot) string { return s.Name })
}

// completeTasks completes task names.
func completeTasks(a *app) cobra.CompletionFunc {
	return completer(a, false, func(ctx context.Context, c *day1.Client, _ string) ([]day1.Task, error) {
		return c.Tasks(ctx, day1.TaskFilter{})
	}, func(t day1.Task) string { return t.Name })
}

// completeBundles completes the ids of stored bundles.
func completeBundles(a *app) cobra.CompletionFunc {
	return completer(a, false, func(ctx context.Context, c *day1.Client, _ string) ([]day1.Bundle, error) {
		return c.Bundles(ctx, day1.BundleFilter{})
	}, func(b day1.Bundle) string { return b.ID })
}

// version is the module version the command was built from ("go install
// github.com/day1ai/day1/cmd/day1@v1.2.3" gives v1.2.3), or "devel" for a build in a
// checkout.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
