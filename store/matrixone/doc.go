// Package matrixone is day1's store on MatrixOne (or any server speaking its SQL over
// the MySQL protocol): a store.Store that passes the same conformance suite as the
// embedded store.
//
// # Opening
//
//	s, err := matrixone.Open(ctx, matrixone.Options{DSN: "root:111@tcp(127.0.0.1:6001)/day1"})
//
// Open creates the database when missing, applies the embedded migrations
// (migrations/NNN_name.sql, tracked in day1_migrations, safe to run twice) and probes
// the server's features once per address (Store.Capabilities). Without Docker,
// scripts/matrixone.sh start builds and starts a local server.
//
// # Data model
//
// Global tables hold the store state (the revision counter and its commit clock),
// branches, snapshots, sessions and merge records; JSON is kept as TEXT. Each branch has
// its own table set, one table per record kind, named <kind>_<suffix> where the suffix
// ("b0" for main, then "b1", "b2", ...) is mapped from the branch name in
// day1_branches: branch names such as task/fix-auth/agent-a are not identifiers.
//
// Every row is one version of one record. Each write transaction takes the store's
// write lock (the day1_state row), allocates the next store revision and stamps its
// rows with it (rev); the version it replaces gets next_rev, and a delete writes a
// tombstone version. Writes are therefore serialized store-wide, revisions follow
// commit order, and nothing is ever overwritten:
//
//   - a read at the head, at a snapshot (a named revision) or at an instant (the last
//     revision committed then, from day1_commits) selects rev <= cut < next_rev, so
//     time travel is exact and costs what a read at the head costs, with no server
//     snapshot or retention window (Options.Retention bounds instant reads anyway,
//     leaving room to prune history later);
//   - a read of a branch at a point before it was created reads its parent as of
//     min(point, fork), recursively, like the embedded store;
//   - a diff reads, on each side, the current rows written after the merge base's
//     revision (inherited rows keep their revisions), and the base versions from the
//     base branch's history: its cost follows the number of changes.
//
// # Branches
//
// A branch's tables are made with DATA BRANCH CREATE TABLE when the server has it
// (MatrixOne 3.x, zero-copy, Capabilities.BranchPath "native"); otherwise, and for
// forks from the past, with CREATE TABLE ... LIKE and an INSERT ... SELECT of the
// versions visible at the fork (Capabilities.BranchPath "portable"): a copy whose cost
// grows with the size of the parent. Writes wait while it runs, so a fork is
// consistent.
//
// # Search
//
// Vector search runs in the database: cosine_similarity over the vecf32 column,
// filters pushed into SQL (built with squirrel, every value a bound parameter),
// ORDER BY ... LIMIT. Keyword search computes BM25 in Go, with the same tokenizer and
// parameters as the embedded store, over the candidates the database returns: each row
// keeps its search tokens in a column and the server selects the visible rows holding
// a query token. MatrixOne's FULLTEXT relevance (Capabilities.FullText) is another
// scoring over another tokenizer and is not used. Hybrid search fuses both rankings
// exactly like the embedded store (RRF or weighted).
//
// # Errors and retries
//
// Server and driver failures are *Error values that wrap a store sentinel where one
// applies and keep *mysql.MySQLError reachable with errors.As. Transient failures (lost
// connections, deadlocks, lock wait timeouts, transaction conflicts) report
// Retryable() true and are retried with exponential backoff by idempotent operations:
// reads, Put (idempotent by id) and PutSession.
package matrixone
