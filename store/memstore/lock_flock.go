//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package memstore

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive, non-blocking flock on f.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLockHeld
	}
	return err
}

// unlockFile undoes lockFile's lock.
func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// readOnlyFS reports whether err says the file system is mounted read-only.
func readOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }
