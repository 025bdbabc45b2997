//go:build unix

// Package cputime reads the CPU time the process has used, for benchmarks that report
// it beside wall-clock time.
package cputime

import (
	"syscall"
	"time"
)

// Process returns the user and system CPU time the process has used.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
