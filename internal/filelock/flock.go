//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package filelock

import (
	"errors"
	"os"
	"syscall"
)

// LockFile takes an exclusive, non-blocking flock on f.
func LockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrHeld
	}
	return err
}

// UnlockFile undoes LockFile's lock.
func UnlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// ReadOnlyFS reports whether err says the file system is mounted read-only.
func ReadOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }
