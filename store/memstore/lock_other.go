//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || windows)

package memstore

import "os"

// lockFile takes no lock where the system offers none that this package uses: only
// the check against a second open in the same process applies there.
func lockFile(*os.File) error { return nil }

// unlockFile undoes lockFile's lock, which there is none of.
func unlockFile(*os.File) {}
