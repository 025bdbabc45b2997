package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newInitCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create an empty memory at --path (or $DAY1_PATH, or the user data folder)",
		Long: `init creates an empty memory where the other commands look for one, as git init
does a repository. Reading commands never create one: at a path that holds no
memory they fail with exit code 3. Commands that write create it as init does.`,
		Example: "  day1 init --path ./memory",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.inMemory {
				return usagef("init makes a durable memory; --memory keeps one in this process only")
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
}
