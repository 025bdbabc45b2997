package memstore

// syncDir does nothing on Windows, which cannot flush a directory: NTFS journals the
// changes of names it holds.
func syncDir(dir string) error { return nil }
