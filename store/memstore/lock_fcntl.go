//go:build aix || illumos || solaris

package memstore

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive, non-blocking fcntl lock on the whole of f. fcntl locks
// belong to the process: the LOCK file is open once per process (see commitLock).
func lockFile(f *os.File) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return errLockHeld
	}
	return err
}

// unlockFile undoes lockFile's lock.
func unlockFile(f *os.File) {
	lk := unix.Flock_t{Type: unix.F_UNLCK}
	unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
}

// readOnlyFS reports whether err says the file system is mounted read-only.
func readOnlyFS(err error) bool { return errors.Is(err, unix.EROFS) }
