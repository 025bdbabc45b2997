//go:build windows

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// LockFile takes an exclusive lock on the first byte of f, failing at once when
// another process holds it.
func LockFile(f *os.File) error {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return ErrHeld
	}
	return err
}

// UnlockFile undoes LockFile's lock.
func UnlockFile(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}

// ReadOnlyFS reports whether err says the medium cannot be written.
func ReadOnlyFS(err error) bool { return errors.Is(err, windows.ERROR_WRITE_PROTECT) }
