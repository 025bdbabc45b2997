package matrixone

// SearchIndexQueries returns how many keyword queries went through a FULLTEXT index and
// how many vector queries were answered through an IVFFLAT index, for tests.
func SearchIndexQueries(s *Store) (fullText, ivf int64) {
	return s.fullTextQueries.Load(), s.ivfQueries.Load()
}

// NativeDiffs returns how many record kinds diffs compared through DATA BRANCH DIFF,
// for tests.
func NativeDiffs(s *Store) int64 { return s.nativeDiffs.Load() }

// CodeQueries returns how many vector searches ranked their candidates by the
// near-duplicate codes, for tests.
func CodeQueries(s *Store) int64 { return s.codeQueries.Load() }

// TermQueries returns how many keyword searches ranked through the in-memory term
// index, for tests.
func TermQueries(s *Store) int64 { return s.termQueries.Load() }

// SessionQueries returns how many searches read the facts of their best candidates'
// sessions from the server rather than from the term index, for tests.
func SessionQueries(s *Store) int64 { return s.sessionQueries.Load() }

// StatsQueries returns how many keyword searches read a table's statistics from the
// server, for tests.
func StatsQueries(s *Store) int64 { return s.statsQueries.Load() }

// SetBeforeFork sets the function CreateBranch runs between the revision it forks from
// and the making of the branch's tables, for tests.
func SetBeforeFork(s *Store, fn func()) { s.beforeFork = fn }

// SetBeforeSeal sets the function every write runs just before it takes the commit
// lock, with the operation and the branches it locked, for tests.
func SetBeforeSeal(s *Store, fn func(op string, branches []string)) { s.beforeSeal = fn }

// SetWordsAsWritten marks the store's rows as holding some tokens unstemmed, as
// migration 011 leaves them beside natively forked branches, for tests.
func SetWordsAsWritten(s *Store, on bool) { s.wordsAsWritten = on }

// WaitIndexBuilds returns when the vector index builds that writes started are done,
// for tests.
func WaitIndexBuilds(s *Store) { s.indexer.wait() }

// Loads returns how many batches of rows the store sent as LOAD DATA, for tests.
func Loads(s *Store) int64 { return s.loads.Load() }

// SetWritePath sets the store's write path (Capabilities.WritePath), whatever the
// probe found, for tests.
func SetWritePath(s *Store, path string) { s.caps.WritePath = path }
