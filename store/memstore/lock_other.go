//go:build !(aix || darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd || solaris || windows)

package memstore

import "os"

// lockFile takes no lock where the system offers none that this package uses: only
// the semaphore of this process applies there, and one process at a time may write
// a directory (see commitLock).
func lockFile(*os.File) error { return nil }

// unlockFile undoes lockFile's lock, which there is none of.
func unlockFile(*os.File) {}

// readOnlyFS reports whether err says the file system is mounted read-only: it
// cannot tell there.
func readOnlyFS(error) bool { return false }
