//go:build aix || illumos || solaris

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// LockFile takes an exclusive, non-blocking fcntl lock on the whole of f. fcntl locks
// belong to the process: the LOCK file is open once per process (see Lock).
func LockFile(f *os.File) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return ErrHeld
	}
	return err
}

// UnlockFile undoes LockFile's lock.
func UnlockFile(f *os.File) {
	lk := unix.Flock_t{Type: unix.F_UNLCK}
	unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
}

// ReadOnlyFS reports whether err says the file system is mounted read-only.
func ReadOnlyFS(err error) bool { return errors.Is(err, unix.EROFS) }
