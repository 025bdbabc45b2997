//go:build !windows

package memstore

import "os"

// syncDir flushes a directory, so that files created, renamed or removed in it stay so
// after a power loss.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
