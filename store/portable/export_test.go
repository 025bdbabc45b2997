package portable

import (
	"context"
	"errors"
	"time"

	"github.com/day1ai/day1/store/driver"
)

// SetSaveMinRows sets how many rows the index reads past its saved copy before a
// write saves it, and returns a function that puts it back.
func SetSaveMinRows(n int) (restore func()) {
	old := saveMinRows
	saveMinRows = n
	return func() { saveMinRows = old }
}

// IndexSaved reports how many rows the index of s was loaded with or last saved.
func IndexSaved(s *Store) int {
	s.ix.mu.RLock()
	defer s.ix.mu.RUnlock()
	return s.ix.saved
}

// IndexBuilt reports whether the index of s has been built or loaded.
func IndexBuilt(s *Store) bool {
	s.ix.mu.RLock()
	defer s.ix.mu.RUnlock()
	return s.ix.built
}

// ChangeBranchThenFail runs an update that changes the description of a branch in
// its state, writes nothing and fails: what it changed must go with it.
func ChangeBranchThenFail(ctx context.Context, s *Store, name, description string) error {
	return s.update(ctx, func(st *state, w driver.Writer) error {
		b, err := st.branch(name)
		if err != nil {
			return err
		}
		b.info.Description = description
		return errFailed
	})
}

var errFailed = errors.New("failed on purpose")

// WaitSaves waits for the saves of the index that reads of s started.
func WaitSaves(s *Store) { s.bg.Wait() }

// RetrySavesNow lets the next read of s start a save at once, after one failed.
func RetrySavesNow(s *Store) { s.saveAfter.Store(0) }

// IndexFiles returns the saved indexes in the folder of a memory, the latest first.
func IndexFiles(dir string) []string {
	paths, _ := indexFiles(dir)
	return paths
}

// IndexMapped reports whether the index of s reads a saved index in place.
func IndexMapped(s *Store) bool {
	s.ix.mu.RLock()
	defer s.ix.mu.RUnlock()
	return s.ix.file != nil
}

// IndexFileName returns the name a saved index of the commit seq takes in dir.
func IndexFileName(dir string, seq int64) string { return indexName(dir, seq) }

// SetSaveEvery sets how old a saved index must be before a quarter of saveMinRows
// rows past it make it due, and returns a function that puts it back.
func SetSaveEvery(d time.Duration) (restore func()) {
	old := saveEvery
	saveEvery = d
	return func() { saveEvery = old }
}
