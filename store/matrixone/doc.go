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
// Aliases (store.Alias) are a kind of their own with a table per branch,
// aliases_<suffix> (migration 008), forked, diffed and merged like the record tables.
//
// Every row is one version of one record. A write transaction first locks the rows of
// the branches it writes in day1_branches (its branch locks) and reads what it decides
// on; then it takes the store's commit lock (the day1_state row), allocates the next
// store revision and stamps its rows with it (rev); the version it replaces gets
// next_rev, and a delete writes a tombstone version. Writers of one branch therefore
// wait for each other; writers of different branches read and decide at once and wait
// for each other only while they insert and commit. Revisions follow commit order,
// and nothing is ever overwritten:
//
//   - a read at the head, at a snapshot (a named revision) or at an instant (the last
//     revision committed then, from day1_commits) selects rev <= cut < next_rev, so
//     time travel is exact and costs what a read at the head costs, with no server
//     snapshot or retention window (Options.Retention bounds instant reads anyway,
//     leaving room to prune history later). The server's {timestamp='...'} reads,
//     even under a database PITR, fail before a table existed and see a commit at the
//     server's commit time rather than the store's commit instant
//     (TestQuirkPITRTimeTravel), so they are not used;
//   - a read of a branch at a point before it was created reads its parent as of
//     min(point, fork), recursively, like the embedded store;
//   - a diff compares the current rows written after the merge base's revision on each
//     side (inherited rows keep their revisions) with the base versions from the base
//     branch's history: its cost follows the number of changes (see "Diff and merge").
//
// # Branches
//
// A branch's tables are made with DATA BRANCH CREATE TABLE when the server has it
// (MatrixOne 3.x, zero-copy, Capabilities.BranchPath "native"); otherwise with CREATE
// TABLE ... LIKE and an INSERT ... SELECT of the versions visible at the fork
// (Capabilities.BranchPath "portable"): a copy whose cost grows with the size of the
// parent, one statement per kind, the kinds in parallel. A fork from the past (a
// snapshot or an instant) on a server with DATA BRANCH is native too when the
// versions written or closed since number at most a twentieth of the parent's rows:
// they are taken out of the new tables as below; else it is a copy.
// Either runs from the revision committed when it starts and without the write locks:
// versions visible at a revision never change, so writers go on meanwhile and the fork
// is still consistent. DATA BRANCH copies the parent's tables as they are when it runs,
// so the versions committed after that revision are then deleted from the new tables
// and those closed after it opened again (a handful of rows, those that raced the
// fork). Only the branch's row is written under the lock: no DDL or autocommit
// statement ever waits on a lock its own caller holds.
//
// # Diff and merge
//
// A diff first finds the records changed on either side since the merge base. Between
// a branch and the parent its tables were forked from with DATA BRANCH CREATE
// (recorded in day1_branches.fork_path), on servers with DATA BRANCH DIFF and with
// Options.NativeDiff on (Capabilities.DiffPath "native"), the server lists the rows
// that differ since their common ancestor, one statement per record kind in
// autocommit; otherwise, and for any other pair of branches, each side's rows are read
// by revision range ("portable"), the default, which measured faster on 3.0.15.
// Either way the store keeps the same rows (current at the compared revision, written
// after the merge base), so both paths give the same diff; a kind whose DATA BRANCH
// DIFF fails is read the portable way. DiffLean (store.LeanDiffer), which the merge
// engine plans native and cherry-pick merges from, then reads the changed versions
// without their embeddings (see Embeddings). The versions of a side, or of a merge
// base, whose branch nothing was written to since its fork are read from its parent's
// tables at the fork, as are a merge target's current versions: they are the same
// versions, and a fresh copy's first reads are slow on the server.
//
// # Embeddings
//
// The embeddings of facts, observations and messages are kept in one vectors table per
// kind (facts_vectors, ...: vid, embedding), not in the branch tables: a version's vid
// is unique in the store and a version never changes, so every branch whose tables
// hold a version (the one that wrote it, and the copies and forks made after) shares
// its one row there. The server carries out an UPDATE as a rewrite of the whole row,
// and reads one value of a column by decompressing the column's whole block: with the
// embeddings in the branch tables, closing the versions a merge replaces cost a read
// of each one's embedding block (a second for 50 versions of a 100k-row copy on the
// 2024-11 build), and a branch copy copied every embedding. Reads that return records
// with their embeddings read them by vid afterwards; search reads only those of its
// hits. Deleting a branch deletes the embeddings of the versions it wrote.
//
// A branch whose parent has not changed since the fork lands on it (Store.Land, a
// store.Lander; what a bundle import does with its staging branch): the versions it
// wrote are copied by the server, INSERT ... SELECT a chunk of ids at a time, with
// the landing's revision and their own vids, so the copies share their embeddings
// and nothing but ids passes through the process; deleting the landed branch then
// keeps the embeddings its parent holds.
//
// Merges, cherry-picks and squashes apply a store.MergePlan in one transaction, with
// the merge record and the source branch's status, exactly like every other write.
// DATA BRANCH MERGE and PICK are probed (Capabilities.DataBranchMerge,
// DataBranchPick) but not used: they run in autocommit, one table per statement, so a
// merge over five record tables could stop halfway; they copy rows with the source
// branch's revisions, so the target's history would show merged records before the
// merge; and a plan holds what the server cannot express: records a resolver wrote,
// chains kept whole, and the gate's verdict.
//
// # Search
//
// Filters are pushed into SQL (built with squirrel, every value a bound parameter) and
// hybrid search fuses both rankings exactly like the embedded store (RRF or weighted).
//
// Keyword search computes BM25 in Go, with the same terms (stemmed tokens), parameters
// and postings lists (internal/textsearch) as the embedded store. Each row keeps its
// search terms in a column. The
// store ranks from memory (Options.KeywordCache): it keeps the terms of every row
// version of a table, with the revisions each is visible between, read whole at the
// first search and then only the versions written or closed since (by any process:
// the rows carry their revisions); a search ranks the versions visible at the revision
// it reads, head or past, and reads the best by primary key, checking the filter in
// Go. Searches whose filter rejects the best few hundred candidates select their
// candidates in the database instead: the server returns the visible rows holding a
// query term.
// On servers with FULLTEXT indexes (Capabilities.KeywordPath "fulltext") each facts,
// observations, conversations and messages table has one on that column and
// MATCH ... AGAINST selects the candidates, one statement part per query token joined
// by UNION (several words in one AGAINST match any of them on the 2024-11 build and
// all of them, as a phrase, on 3.x); the portable path ("scan", Options.FullText off or
// no index) scans the
// visible rows' tokens with INSTR. Both give the same hits and scores: MatrixOne's own
// relevance is another scoring and is not used. The 2024-11 build's tokenizer fails a
// whole statement on a non-ASCII word it cuts inside a character (24 bytes or more:
// a 12-letter Russian or Greek word), so the tokens column holds such a word in an
// ASCII form, undone on reading.
//
// Vector search of facts first ranks every live fact of the branch by its
// near-duplicate code (below), in memory: the Hamming distance between two codes
// estimates the angle between the embeddings. The closest few hundred are read by id
// and ranked by the server's exact cosine similarity (Options.VectorCodes). It needs no
// index on the server, so no write waits on an index build, and it answers for the
// facts the branch sees now; a read of the past, a search with history included, or a
// filter that leaves too few of the candidates takes the paths below.
//
// Otherwise vector search ranks by the server's cosine_similarity over the visible
// versions joined with their embeddings, ORDER BY ... LIMIT. On servers with IVFFLAT indexes (Capabilities.VectorPath
// "ivfflat", not chosen on servers with DATA BRANCH DIFF unless Options.NativeDiff is
// off: an index built on a branched table after writes makes DATA BRANCH DIFF forget
// them, TestQuirkDiffAfterIndex) a
// kind's vectors table gets one when a write brings it to Options.VectorIndexRows rows
// (10,000), and a rebuild at each fourfold growth; the index serves every branch.
// Searches on it take the nearest versions by l2_distance among Options.VectorProbes
// lists (four times the number asked, at least 64, of any branch and revision) and rank
// those the search sees by exact cosine similarity, so results are exact within the
// candidates; when fewer than asked remain, and for smaller tables and searches with
// metadata filters, every visible row is ranked ("exact", also the path with
// Options.VectorIndex off). Conversations have no embeddings: vector search leaves
// them out.
//
// The facts of the best fact candidates' sessions, which lend them context, come from
// the term index, which also keeps each fact version's session and creation time (one
// query when keyword search does not rank from memory); the neighbours the candidates
// lack are read by primary key, without their embeddings, which only the hits among
// them get. The facts with no session written just before and after the best fact
// candidates come from the term index too (in one more query without it, for all the
// candidates at once). The neighbours of the best message candidates are read in one
// more query;
// a message hit's conversation title, and with a Window its neighbouring messages, in
// two more for all the hits at once. With Fill fusion (the default for a lexical embedder) the vector
// queries are sent only when the keyword hits fall short of the limit.
//
// Record tables are keyed by a BIGINT version id: on the 2024-11 build both kinds of
// index return no rows from large tables with a composite primary key
// (TestQuirkIndexesNeedSimpleKey).
//
// A new fact supersedes a near-duplicate (PutOptions.DedupeThreshold). The candidates
// come from short codes of the embeddings (sign bits after a fixed rotation, stored in
// dup_code and kept in memory per branch table), so that a batch of new facts costs one
// read of the rows written since the last batch instead of one vector scan per fact;
// the decision is the embedded store's arithmetic, in Go. From 4,096 live facts on, the
// codes of a table are bucketed by the embedded store's band index (internal/simhash:
// 32 slices of 16 bits, with a tag test), and a new fact is compared with the facts
// sharing a bucket with it, a small share of them, where a scan compared it with every
// one. A fact at cosine 0.92 of the new one is found about 97 times in 100, and above
// 0.95 more than 99.8 times in 100, as on the embedded store. The candidates' embeddings are read
// alone, by the primary keys the code index keeps, and the rows of only those whose
// cosine reaches the threshold (or that the batch writes) are read whole: facts from
// one template are often within the bound and rarely within the threshold.
//
// # Errors and retries
//
// Server and driver failures are *Error values that wrap a store sentinel where one
// applies and keep *mysql.MySQLError reachable with errors.As. Transient failures
// report Retryable() true: a lost or refused connection (driver.ErrBadConn,
// mysql.ErrInvalidConn, EOF, reset, refused), a server shutting down or gone, a
// deadlock, a lock wait timeout, too many connections, a busy or unavailable backend,
// and MatrixOne's transaction conflicts ("txn need retry", "w-w conflict"). Every
// other error is returned at once.
//
// The store retries transient failures itself, with exponential backoff from 20 ms to
// 1 s between attempts, for at most Options.RetryTimeout (10 s) per operation, and
// stops when the context ends (its error is returned, naming the operation):
//
//   - reads (Get, List, Search, Diff, the branch, snapshot, session, merge and
//     document reads) and PutSession (an upsert of the same values) run again as
//     they are;
//   - every write transaction (Put, Delete, WriteDocs, ApplyMerge, the branch and
//     snapshot records) runs again whole, in a new transaction that re-reads all it
//     decides on, but only when the failed attempt is known not to have committed.
//
// A failure before COMMIT is sent leaves nothing: the server rolls the transaction
// back when its connection ends. A COMMIT whose answer never arrives (the connection
// dropped, the server died, the context ended) may or may not have committed, and the
// store does not guess. Every write transaction inserts a row with a token of its own
// into day1_txns, in the same transaction, and holds the commit lock when it commits.
// After such a COMMIT the store opens another transaction, waits for the commit lock (held by the
// lost transaction until it ended, so that it has committed or never will) and looks
// the token up: found, the write succeeded and its result is returned; missing, it
// did not apply and runs again. When the lookup cannot be done within
// Options.RetryTimeout (the server is still down), the write fails with an *Error
// wrapping ErrCommitUnknown, which is not retryable: the write then applied wholly or
// not at all, and reading it back tells which. A retry therefore never applies a write
// twice, and a write's result (created, not deduplicated; version 1, not 2) is the
// one of the attempt that committed. Tokens are pruned after an hour.
//
// Allocating a branch's table suffix is the one transaction without a token: a lost
// acknowledgement there skips a suffix number, which is harmless. The DDL of branch
// tables runs in autocommit and is not retried.
//
// Connections idle for Options.ConnMaxIdleTime (5 minutes) are closed, and the driver
// checks a pooled connection's liveness before using it, so that after a server
// restart stale connections are dropped from the pool; a read that still meets one
// runs again on a fresh connection.
package matrixone
