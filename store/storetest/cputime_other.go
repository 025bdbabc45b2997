//go:build !unix

package storetest

import "time"

// cpuTime returns 0 where the process's CPU time is not read: the cpu-p50-ns and
// facts/cpu-s figures are then meaningless.
func cpuTime() time.Duration { return 0 }
