package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/day1ai/day1/internal/localmem"
)

func newInitCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create an empty memory at --path (or $DAY1_PATH, or the user data folder)",
		Long: `init creates an empty memory where the other commands look for one, as git init
does a repository. Reading commands never create one: at a path that holds no
memory they fail with exit code 3. Commands that write create it as init does.

--store chooses how the memory is kept: "sqlite" (the default: one SQLite file that
any number of processes open in constant time, for agents, hooks and commands
sharing a memory) or "log" (each process that opens it loads it whole, then reads
and writes at memory speed). $DAY1_STORE sets the default; a memory that exists is
opened as the kind it is.`,
		Example: "  day1 init --path ./memory\n  day1 init --path ./fast --store log",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.inMemory {
				return usagef("init makes a durable memory; --memory keeps one in this process only")
			}
			if a.storeKind != "" && a.storeKind != localmem.StoreLog && a.storeKind != localmem.StoreSQLite {
				return usagef("--store %q: want %q or %q", a.storeKind, localmem.StoreLog, localmem.StoreSQLite)
			}
			// A read-only open finds a memory that is there and creates none.
			_, err := a.readClient(cmd.Context())
			var nm *noMemoryError
			created := errors.As(err, &nm)
			if created {
				_, err = a.client(cmd.Context())
			}
			if err != nil {
				return err
			}
			where := a.opened
			if where == "" {
				where = "the MatrixOne database"
			}
			return a.out.emit(map[string]any{"path": where, "created": created}, func() {
				if !created {
					a.out.line("%s already holds a day1 memory", where)
					return
				}
				a.out.line("created an empty day1 memory at %s", a.out.style(bold, where))
			})
		},
	}
	cmd.Flags().StringVar(&a.storeKind, "store", "", `how a new memory is kept: "sqlite" or "log" (default $DAY1_STORE, else sqlite)`)
	return cmd
}
