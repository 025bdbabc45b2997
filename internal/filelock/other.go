//go:build !(aix || darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd || solaris || windows)

package filelock

import "os"

// LockFile takes no lock where the system offers none that this package uses: only
// the semaphore of this process applies there, and one process at a time may write
// a directory (see Lock).
func LockFile(*os.File) error { return nil }

// UnlockFile undoes LockFile's lock, which there is none of.
func UnlockFile(*os.File) {}

// ReadOnlyFS reports whether err says the file system is mounted read-only: it
// cannot tell there.
func ReadOnlyFS(error) bool { return false }
