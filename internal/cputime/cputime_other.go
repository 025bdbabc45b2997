//go:build !unix

// Package cputime reads the CPU time the process has used, for benchmarks that report
// it beside wall-clock time.
package cputime

import "time"

// Process returns 0: the process's CPU time is not read on this system, and figures
// per CPU second are meaningless there.
func Process() time.Duration { return 0 }
