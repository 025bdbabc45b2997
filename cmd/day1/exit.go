package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/bundle"
	"github.com/day1ai/day1/internal/memview"
)

// Exit codes, as the package documentation lists them.
const (
	exitOK           = 0
	exitError        = 1
	exitUsage        = 2
	exitNotFound     = 3
	exitConflict     = 4
	exitLocked       = 5
	exitNotSupported = 6
)

// usageError is a mistake in the command line itself.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// unmergedError refuses to delete a branch that holds work its parent lacks: a
// conflict (exit 4) with a message and hint of its own.
type unmergedError struct {
	branch, parent string
	changes        int
}

func (e *unmergedError) Error() string {
	return fmt.Sprintf("day1: branch %s holds %d changes that %s does not have", e.branch, e.changes, e.parent)
}

func (e *unmergedError) Is(target error) bool { return target == day1.ErrConflict }

// noMemoryError is a read of a folder that holds no memory: not found (exit 3),
// rather than a new, empty memory made at a mistyped path.
type noMemoryError struct{ path string }

func (e *noMemoryError) Error() string {
	return fmt.Sprintf("day1: no day1 memory at %s", e.path)
}

func (e *noMemoryError) Is(target error) bool { return target == day1.ErrNotFound }

// classify returns the exit code of err and a short name of its class.
func classify(err error) (int, string) {
	var ue *usageError
	var um *unmergedError
	var nm *noMemoryError
	switch {
	case errors.As(err, &ue):
		return exitUsage, "usage"
	case errors.As(err, &um):
		return exitConflict, "unmerged"
	case errors.As(err, &nm):
		return exitNotFound, "no_memory"
	case errors.Is(err, bundle.ErrVersion):
		return exitNotSupported, "bundle_version"
	case errors.Is(err, bundle.ErrFormat):
		return exitError, "bad_bundle"
	case errors.Is(err, day1.ErrInvalidArgument):
		return exitUsage, "invalid_argument"
	case errors.Is(err, day1.ErrNotFound):
		return exitNotFound, "not_found"
	case errors.Is(err, day1.ErrMergeBlocked):
		return exitConflict, "merge_blocked"
	case errors.Is(err, day1.ErrConflict):
		return exitConflict, "conflict"
	case errors.Is(err, day1.ErrExists):
		return exitConflict, "exists"
	case errors.Is(err, day1.ErrStale):
		return exitConflict, "stale"
	case errors.Is(err, day1.ErrBranchArchived):
		return exitConflict, "archived"
	case errors.Is(err, day1.ErrLocked):
		return exitLocked, "locked"
	case errors.Is(err, day1.ErrNotSupported):
		return exitNotSupported, "not_supported"
	case errors.Is(err, context.Canceled):
		return exitError, "canceled"
	}
	return exitError, "error"
}

// hint says what to do about an error of class code.
func hint(code string) string {
	switch code {
	case "usage", "invalid_argument":
		return "run day1 help <command> for its arguments and flags"
	case "not_found":
		return "day1 branch lists the branches, day1 snapshot list the snapshots, day1 log <branch> the records"
	case "conflict":
		return "day1 diff <source> <target> shows the conflicts; merge with --policy skip|accept or --strategy auto"
	case "bundle_version":
		return "the bundle was written by a newer day1; import it with a day1 that reads its format version"
	case "bad_bundle":
		return "the file is not a whole, untampered day1 bundle: export it again from its source"
	case "no_memory":
		return "check --path (or $DAY1_PATH); day1 init creates a memory there, as does any command that writes"
	case "unmerged":
		return "merge it first (day1 merge <branch> <parent>), or delete it anyway with --force"
	case "merge_blocked":
		return "day1 verify <source> judges the records the gate refused"
	case "exists":
		return "choose another name, or delete the old one first"
	case "stale":
		return "the target changed while the merge was planned; run it again"
	case "archived":
		return "reactivate the branch with day1 branch reactivate <name>"
	}
	return ""
}

// cliError is an error whose text names the command line's argument or flag where the
// library's error named a Go field.
type cliError struct {
	err error
	msg string
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.err }

// fieldAnnotation, on a flag, names the library field it sets when the flag's name is
// not that field's (--expires-in sets Fact.TTL).
const fieldAnnotation = "day1-field"

// inCLITerms renames, in the text of a *day1.ValidationError from cmd, the field it
// names (Fact.Confidence, facts[2].Text) after the flag (--confidence) or argument
// (<text>) of cmd that gave it: the flag of that name, or annotated with it
// (fieldAnnotation), or the argument of that name in cmd's usage.
func inCLITerms(cmd *cobra.Command, err error) error {
	var ve *day1.ValidationError
	if cmd == nil || !errors.As(err, &ve) || ve.Field == "" {
		return err
	}
	name := ve.Field[strings.LastIndex(ve.Field, ".")+1:]
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	flag := b.String()
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if slices.Contains(f.Annotations[fieldAnnotation], name) {
			flag = f.Name
		}
	})
	var cli string
	switch {
	case cmd.Flags().Lookup(flag) != nil:
		cli = "--" + flag
	case strings.Contains(cmd.Use, "<"+flag+">"):
		cli = "<" + flag + ">"
	default:
		return err
	}
	return &cliError{err: err, msg: strings.Replace(err.Error(), ve.Field, cli, 1)}
}

// report writes err to w for people, or as JSON for scripts, and returns the exit
// code.
func report(w io.Writer, err error, asJSON bool) int {
	code, class := classify(err)
	msg := memview.ErrorText(err)
	h := hint(class)
	if asJSON {
		json.NewEncoder(w).Encode(struct {
			Error string `json:"error"`
			Code  string `json:"code"`
			Exit  int    `json:"exit"`
			Hint  string `json:"hint,omitempty"`
		}{msg, class, code, h})
		return code
	}
	fmt.Fprintln(w, msg)
	if h != "" {
		fmt.Fprintln(w, "hint: "+h)
	}
	return code
}
