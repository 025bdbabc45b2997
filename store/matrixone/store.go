package matrixone

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1/internal/ids"
	"github.com/day1ai/day1/store"
)

// Store is a store.Store on a MatrixOne server. It is safe for concurrent use, also by
// several processes sharing one database.
type Store struct {
	opts   Options
	db     *sql.DB
	dbName string
	caps   Capabilities
	closed atomic.Bool
	writes atomic.Uint64 // write transactions begun, to pace the pruning of tokens

	// wordsAsWritten says some rows hold their search tokens unstemmed (see
	// migration 011): keyword search then also matches the query's words as written.
	wordsAsWritten bool

	// expiring is set once the database is known to hold a fact with an expiry
	// (day1_expiring has its row); expiryChecked is when a read last asked, in Unix
	// nanoseconds (see holdsExpiring).
	expiring      atomic.Bool
	expiryChecked atomic.Int64

	dup       *dupCoder  // near-duplicate codes
	codeCache codeCache  // near-duplicate codes of the live facts, per table
	termCache termCache  // search terms of the rows at a branch's head, per table
	stats     statsCache // keyword statistics of each table at its branch's head
	indexes   indexCatalog
	// beforeFork, when set, runs between the revision a fork reads and the making of
	// its tables: tests commit there a write that races the fork.
	beforeFork func()
	// beforeSeal, when set, runs in every write just before it takes the commit lock,
	// with the operation and the branches it locked; for tests.
	beforeSeal func(op string, branches []string)
	// indexer builds vector indexes after writes, off their path (see afterWrite).
	indexer indexer
	// Searches answered through each index, record kinds diffed through DATA BRANCH
	// DIFF, and batches of rows sent as LOAD DATA, for tests.
	fullTextQueries, ivfQueries, codeQueries, statsQueries, termQueries, sessionQueries, nativeDiffs, loads atomic.Int64
}

var (
	_ store.Store    = (*Store)(nil)
	_ store.Namer    = (*Store)(nil)
	_ store.Durabler = (*Store)(nil)
)

// Open connects to the server named by opts.DSN, creates the database when missing,
// applies the migrations, detects the server's capabilities and, on the full-text path,
// makes the FULLTEXT index of every searchable table that lacks one (a
// database written with Options.FullText off, or by a server without them). Errors: a
// *store.ValidationError for bad options, an *Error when the server cannot be reached
// or refuses the schema.
func Open(ctx context.Context, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cfg, err := ParseDSN(opts.DSN)
	if err != nil {
		return nil, err
	}
	if err := createDatabase(ctx, cfg); err != nil {
		return nil, err
	}
	db, err := openPool(cfg, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{opts: opts, db: db, dbName: cfg.DBName, dup: newDupCoder(opts.Dimensions)}
	s.indexer.ctx, s.indexer.cancel = context.WithCancel(context.Background())
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if s.wordsAsWritten, err = s.unstemmedRows(ctx); err != nil {
		db.Close()
		return nil, wrap(ctx, "Open", err)
	}
	var dims int
	if err := db.QueryRowContext(ctx, "SELECT dims FROM day1_state WHERE id = 1").Scan(&dims); err != nil {
		db.Close()
		return nil, wrap(ctx, "Open", err)
	}
	if dims != opts.Dimensions {
		db.Close()
		return nil, store.Invalid("Options.Dimensions", fmt.Sprintf("database %s holds %d-dimension embeddings", cfg.DBName, dims), opts.Dimensions)
	}
	caps, err := detectCapabilities(ctx, db, cfg)
	if err != nil {
		db.Close()
		return nil, err
	}
	caps.KeywordPath, caps.VectorPath, caps.DiffPath = KeywordPathScan, VectorPathExact, DiffPathPortable
	caps.WritePath = WritePathInsert
	if caps.LoadData && opts.LoadData == IndexAuto {
		caps.WritePath = WritePathLoad
	}
	if caps.DataBranchDiff && opts.NativeDiff == IndexOn {
		caps.DiffPath = DiffPathNative
	}
	if caps.FullText && opts.FullText == IndexAuto {
		caps.KeywordPath = KeywordPathFullText
	}
	// Where the server can diff natively (3.x), vector search scans (facts rank by
	// their codes first either way), unless NativeDiff is off. The IVFFLAT indexes are
	// on the vectors tables, which no DATA BRANCH statement touches, so the diff quirk
	// that first set this rule (TestQuirkDiffAfterIndex) no longer applies; it stays
	// because on 3.0.15 searches through such an index, with VectorProbes at 1024,
	// missed hits of the exact scan in 59 of TestVectorIndex's 120 comparisons.
	if caps.IVFFlat && opts.VectorIndex == IndexAuto && (!caps.DataBranchDiff || opts.NativeDiff == IndexOff) {
		caps.VectorPath = VectorPathIVFFlat
	}
	s.caps = caps
	// The session variables the search indexes need are set on every connection of
	// the pool, by the driver, when it connects.
	params := map[string]string{}
	if caps.KeywordPath == KeywordPathFullText {
		params["experimental_fulltext_index"] = "1"
	}
	if caps.VectorPath == VectorPathIVFFlat {
		params["experimental_ivf_index"] = "1"
		params[caps.ProbeVariable] = fmt.Sprint(opts.VectorProbes)
	}
	if len(params) > 0 {
		c := cfg.Clone()
		for k, v := range params {
			c.Params[k] = v
		}
		pool, err := openPool(c, opts)
		if err != nil {
			db.Close()
			return nil, err
		}
		db.Close()
		s.db = pool
	}
	if err := s.ensureFullText(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// openPool opens a connection pool on cfg with the options' settings.
func openPool(cfg *mysql.Config, opts Options) (*sql.DB, error) {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, store.Invalid("Options.DSN", err.Error(), nil)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(opts.MaxOpenConns)
	db.SetMaxIdleConns(opts.MaxIdleConns)
	db.SetConnMaxLifetime(opts.ConnMaxLifetime)
	db.SetConnMaxIdleTime(opts.ConnMaxIdleTime)
	return db, nil
}

// createDatabase creates cfg's database when it does not exist.
func createDatabase(ctx context.Context, cfg *mysql.Config) error {
	c := cfg.Clone()
	c.DBName = ""
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return store.Invalid("Options.DSN", err.Error(), nil)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	// The name was checked by ParseDSN: letters, digits and underscores only.
	_, err = db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+cfg.DBName+"`")
	return wrap(ctx, "Open", err)
}

// Close closes the connection pool. Later calls fail with store.ErrClosed; closing
// twice returns nil.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.indexer.stop()
	return s.db.Close()
}

// Name returns "matrixone".
func (s *Store) Name() string { return "matrixone" }

// Durable reports true: the server keeps what it acknowledged.
func (s *Store) Durable() bool { return true }

// Capabilities returns what the server was found to support when the store opened.
func (s *Store) Capabilities() Capabilities { return s.caps }

// Dimensions returns the embedding length the store holds.
func (s *Store) Dimensions() int { return s.opts.Dimensions }

// Database returns the name of the database the store uses.
func (s *Store) Database() string { return s.dbName }

// DB returns the connection pool, for tools and tests that inspect the tables.
func (s *Store) DB() *sql.DB { return s.db }

// usable checks the store's state and ctx before an operation.
func (s *Store) usable(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return ctx.Err()
}

// queryer is *sql.DB or *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// inTx runs fn in a transaction: committed when fn returns nil, rolled back on an error
// or a panic. A COMMIT that got no answer from the server fails with an *Error
// wrapping a *commitError: it may have committed.
func (s *Store) inTx(ctx context.Context, op string, fn func(tx *sql.Tx) error) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return wrap(ctx, op, err)
	}
	defer func() {
		if p := recover(); p != nil {
			tx.Rollback()
			panic(p)
		}
		if err != nil {
			tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return wrap(ctx, op, err)
	}
	if err = tx.Commit(); err != nil {
		if ambiguous(err) && !errors.Is(err, sql.ErrTxDone) {
			return &Error{Op: op, Err: &commitError{err}}
		}
		return wrap(ctx, op, err)
	}
	return nil
}

// writeTx is a write transaction. It takes two kinds of locks, always in this order,
// so that no two writers deadlock:
//
//   - the rows in day1_branches of the branches it writes (its branch locks), in name
//     order, when it begins: a writer of a branch waits only for the other writers of
//     that branch, and reads that branch's tables at their latest state;
//   - the store's commit lock, the day1_state row (seal), before it allocates its
//     revision and commit instant, and at the latest before COMMIT: revisions follow
//     commit order, and a commit that got no answer is resolved by waiting for it.
//
// Writes to different branches therefore read and decide at once and hold the commit
// lock only to write what they decided and commit.
type writeTx struct {
	*sql.Tx
	s *Store
	// rev is the last committed revision: read after the branch locks were taken by a
	// write that seals late, and again under the commit lock.
	rev    int64
	lastAt time.Time // rev's commit instant, once sealed
	now    time.Time // this transaction's instant, after lastAt, once sealed
	sealed bool
	bumped bool
	op     string
	locked []string                      // the branches locked, in name order
	rows   map[string]branchRow          // the rows of the locked branches, as the locks read them
	added  map[string]map[store.Kind]int // rows written, by table suffix and kind
}

// lockBranches takes the branch locks of tx, in name order, and keeps the rows the
// locks read (lockedBranch). A name with no branch is locked too, so that a branch
// being created waits for no writer that found it missing.
func (w *writeTx) lockBranches(ctx context.Context, names []string) error {
	names = slices.Clone(names)
	slices.Sort(names)
	w.locked = slices.Compact(names)
	w.rows = make(map[string]branchRow, len(w.locked))
	for _, n := range w.locked {
		rs, err := w.QueryContext(ctx, "SELECT "+branchCols+" FROM day1_branches WHERE name = ? FOR UPDATE", n)
		if err != nil {
			return err
		}
		if rs.Next() {
			b, err := scanBranch(rs)
			if err != nil {
				rs.Close()
				return err
			}
			w.rows[n] = b
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
	}
	return nil
}

// lockedBranch returns a branch as its lock read it, or store.ErrBranchNotFound when
// the lock found none, sparing a read; a branch not locked is read. The row is the
// branch before this transaction changes it: callers read it first.
func (w *writeTx) lockedBranch(ctx context.Context, name string) (branchRow, error) {
	if b, ok := w.rows[name]; ok {
		return b, nil
	}
	if slices.Contains(w.locked, name) {
		return branchRow{}, fmt.Errorf("%w: %q", store.ErrBranchNotFound, name)
	}
	return loadBranch(ctx, w, name)
}

// seal takes the commit lock and reads the last committed revision and its instant:
// from then on rev, lastAt and now are set. Calling it again does nothing.
func (w *writeTx) seal(ctx context.Context) error {
	if w.sealed {
		return nil
	}
	if w.s.beforeSeal != nil {
		w.s.beforeSeal(w.op, w.locked)
	}
	if err := w.QueryRowContext(ctx, "SELECT rev, at FROM day1_state WHERE id = 1 FOR UPDATE").Scan(&w.rev, &w.lastAt); err != nil {
		return err
	}
	w.lastAt = w.lastAt.UTC()
	w.now = micro(w.s.opts.Now())
	if !w.now.After(w.lastAt) {
		// Commit instants strictly increase, so an instant names one revision.
		w.now = w.lastAt.Add(time.Microsecond)
	}
	w.sealed = true
	return nil
}

// bump seals the transaction and allocates its revision (rev+1), recording its commit
// instant. It returns the new revision; calling it again returns the same one.
func (w *writeTx) bump(ctx context.Context) (int64, error) {
	if err := w.seal(ctx); err != nil {
		return 0, err
	}
	if w.bumped {
		return w.rev + 1, nil
	}
	if _, err := w.ExecContext(ctx, "UPDATE day1_state SET rev = ?, at = ? WHERE id = 1", w.rev+1, w.now); err != nil {
		return 0, err
	}
	if _, err := w.ExecContext(ctx, "INSERT INTO day1_commits (rev, at) VALUES (?, ?)", w.rev+1, w.now); err != nil {
		return 0, err
	}
	w.bumped = true
	return w.rev + 1, nil
}

// writeSpec says which branches a write locks first, and whether its function seals
// the transaction itself (late), after the reads it decides on; otherwise it is
// sealed before the function runs.
type writeSpec struct {
	branches []string
	late     bool
}

// write runs fn in a write transaction, retried after a transient failure, and after
// the commit hands the tables it added rows to the indexer, which gives them their
// vector index in the background when they crossed a mark (afterWrite).
//
// Each attempt runs fn again in a new transaction, which re-reads everything it
// decides on, so fn must keep no state across attempts but what it returns. An
// attempt that failed before COMMIT was sent left nothing behind. One whose COMMIT
// got no answer (the connection dropped) is resolved by its token (resolveCommit):
// committed is success, not committed is retried, undecided is ErrCommitUnknown.
func (s *Store) write(ctx context.Context, op string, spec writeSpec, fn func(w *writeTx) error) error {
	var done *writeTx
	err := s.retry(ctx, op, func() error {
		w, err := s.writeOnce(ctx, op, spec, fn)
		done = w
		return err
	})
	if err == nil && done != nil && len(done.added) > 0 && s.caps.VectorPath == VectorPathIVFFlat {
		s.indexer.queue(s, done.added)
	}
	return err
}

// txnTokenTTL is how long a transaction's token is kept: far longer than resolving a
// lost acknowledgement takes.
const txnTokenTTL = time.Hour

// pruneEvery is how many writes of a Store pass between two prunings of old tokens.
const pruneEvery = 512

// writeOnce is one attempt of write: a transaction that takes its locks, inserts its
// token, runs fn, seals and commits. It returns the transaction when it committed.
func (s *Store) writeOnce(ctx context.Context, op string, spec writeSpec, fn func(w *writeTx) error) (*writeTx, error) {
	token := ids.New()
	var w *writeTx
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		w = &writeTx{Tx: tx, s: s, op: op}
		if err := w.lockBranches(ctx, spec.branches); err != nil {
			return err
		}
		if spec.late {
			err := tx.QueryRowContext(ctx, "SELECT rev FROM day1_state WHERE id = 1").Scan(&w.rev)
			if err != nil {
				return err
			}
		} else if err := w.seal(ctx); err != nil {
			return err
		}
		// Tokens are dated by the machine's clock, not Options.Now: only their pruning
		// reads the date, and a write reads Options.Now once, for its commit instant.
		at := micro(time.Now())
		if _, err := tx.ExecContext(ctx, "INSERT INTO day1_txns (token, at) VALUES (?, ?)", token, at); err != nil {
			return err
		}
		if s.writes.Add(1)%pruneEvery == 0 {
			if _, err := tx.ExecContext(ctx, "DELETE FROM day1_txns WHERE at < ?", at.Add(-txnTokenTTL)); err != nil {
				return err
			}
		}
		if err := fn(w); err != nil {
			return err
		}
		// Every commit holds the commit lock, so that resolveCommit can wait for it.
		return w.seal(ctx)
	})
	var ce *commitError
	if !errors.As(err, &ce) {
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	committed, rerr := s.resolveCommit(ctx, token)
	switch {
	case rerr != nil:
		if ctx.Err() != nil {
			rerr = errors.Join(rerr, ctx.Err())
		}
		return nil, &Error{Op: op, Sentinel: ErrCommitUnknown, Err: errors.Join(ce.err, rerr)}
	case committed:
		return w, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("day1: matrixone: %s: %w", op, ctx.Err())
	}
	// Not committed: nothing of the attempt remains, so it may run again.
	return nil, &Error{Op: op, Err: ce.err}
}

// resolveAfterCancel bounds resolving a commit whose context ended.
const resolveAfterCancel = 5 * time.Second

// commitError is a COMMIT that got no answer from the server: it may have committed.
type commitError struct{ err error }

func (e *commitError) Error() string { return "commit: " + e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

// resolveCommit learns whether the transaction that inserted token committed. It
// waits for the commit lock on another connection first: the transaction held it until
// it ended, so once the lock is free it has either committed (its token is there) or
// never will. It retries transient failures (the server may be restarting) for
// Options.RetryTimeout at most, and stops with ctx.
func (s *Store) resolveCommit(ctx context.Context, token string) (bool, error) {
	if ctx.Err() != nil {
		// The caller gave up, perhaps while COMMIT ran: still say what happened, briefly.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), min(s.opts.RetryTimeout, resolveAfterCancel))
		defer cancel()
	}
	var found bool
	err := s.retry(ctx, "resolve commit", func() error {
		return s.inTx(ctx, "resolve commit", func(tx *sql.Tx) error {
			var rev int64
			if err := tx.QueryRowContext(ctx, "SELECT rev FROM day1_state WHERE id = 1 FOR UPDATE").Scan(&rev); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM day1_txns WHERE token = ?", token).Scan(&n); err != nil {
				return err
			}
			found = n > 0
			return nil
		})
	})
	if err != nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return found, err
}

// branchRow is a branch as stored, with what reads need to find its tables.
type branchRow struct {
	info       store.Branch
	suffix     string
	forkRev    int64
	createdRev int64
	// forkPath is how the branch's tables were made: BranchPathNative (DATA BRANCH
	// CREATE from the parent's tables, so the server knows their common ancestor),
	// BranchPathPortable, or "" for main and for branches made before migration 006.
	forkPath string
}

const branchCols = "name, suffix, parent, forked_at, fork_rev, created_rev, from_snap, status, description, metadata, created_at, merged_at, merged_into, head, fork_path"

func scanBranch(sc scanner, extra ...any) (branchRow, error) {
	var b branchRow
	var meta string
	var merged sql.NullTime
	var head int64
	dest := []any{&b.info.Name, &b.suffix, &b.info.Parent, &b.info.ForkedAt, &b.forkRev, &b.createdRev,
		&b.info.FromSnap, &b.info.Status, &b.info.Description, &meta, &b.info.CreatedAt, &merged, &b.info.MergedInto, &head, &b.forkPath}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return b, err
	}
	b.info.Head = uint64(head)
	b.info.ForkedAt = b.info.ForkedAt.UTC()
	b.info.CreatedAt = b.info.CreatedAt.UTC()
	if merged.Valid {
		b.info.MergedAt = merged.Time.UTC()
	}
	m, err := decodeMeta(meta)
	b.info.Metadata = m
	return b, err
}

// loadBranch reads one branch, or store.ErrBranchNotFound.
func loadBranch(ctx context.Context, q queryer, name string) (branchRow, error) {
	b, err := scanBranch(q.QueryRowContext(ctx, "SELECT "+branchCols+" FROM day1_branches WHERE name = ?", name))
	if errors.Is(err, sql.ErrNoRows) {
		return b, fmt.Errorf("%w: %q", store.ErrBranchNotFound, name)
	}
	return b, err
}

// loadBranchRev reads one branch and the store's current revision in one statement.
func loadBranchRev(ctx context.Context, q queryer, name string) (branchRow, int64, error) {
	var rev int64
	b, err := scanBranch(q.QueryRowContext(ctx, "SELECT "+prefixed("b.", branchCols)+", s.rev FROM day1_branches b JOIN day1_state s ON s.id = 1 WHERE b.name = ?", name), &rev)
	if errors.Is(err, sql.ErrNoRows) {
		return b, 0, fmt.Errorf("%w: %q", store.ErrBranchNotFound, name)
	}
	return b, rev, err
}

// pos is a resolved read position: the tables of one branch, cut at a revision.
type pos struct {
	name string    // the branch the caller asked for; records read carry it
	tab  branchRow // the branch whose tables hold the state
	cut  int64     // versions with rev <= cut and next_rev > cut are visible
}

// resolve turns a view into a read position. Reads at a snapshot use the snapshot's
// revision, reads at an instant the last revision committed then. A cut before the
// branch existed reads its parent as of min(cut, fork), recursively, like the
// embedded store.
func (s *Store) resolve(ctx context.Context, q queryer, v store.View) (pos, error) {
	name := v.Branch
	var b branchRow
	var cut int64
	switch {
	case v.At.Snapshot != "":
		sn, err := loadSnapshot(ctx, q, v.At.Snapshot)
		if err != nil {
			return pos{}, err
		}
		if name == "" {
			name = sn.info.Branch
		}
		if err := store.ValidateBranchName("View.Branch", name); err != nil {
			return pos{}, err
		}
		if name != sn.info.Branch {
			return pos{}, store.Invalid("View.At.Snapshot", fmt.Sprintf("is a snapshot of branch %q, not of %q", sn.info.Branch, name), v.At.Snapshot)
		}
		if b, err = loadBranch(ctx, q, name); err != nil {
			return pos{}, err
		}
		cut = sn.rev
	default:
		if name == "" {
			name = store.DefaultBranch
		}
		if err := store.ValidateBranchName("View.Branch", name); err != nil {
			return pos{}, err
		}
		var err error
		if b, cut, err = loadBranchRev(ctx, q, name); err != nil {
			return pos{}, err
		}
		if !v.At.Time.IsZero() {
			if s.opts.Retention > 0 && v.At.Time.Before(s.opts.Now().Add(-s.opts.Retention)) {
				return pos{}, fmt.Errorf("%w: %s is more than %s ago", store.ErrTooOld, v.At.Time.UTC().Format(time.RFC3339Nano), s.opts.Retention)
			}
			if err := store.CheckInstant(b.info, v.At.Time); err != nil {
				return pos{}, err
			}
			if cut, err = revAt(ctx, q, v.At.Time); err != nil {
				return pos{}, err
			}
		}
	}
	return tablesAt(ctx, q, pos{name: name, tab: b, cut: cut})
}

// tablesAt moves p to the tables that hold its state: a cut before a branch's tables
// were made is read from its parent's, at the fork, and so on up.
func tablesAt(ctx context.Context, q queryer, p pos) (pos, error) {
	return tablesAtWith(p, func(name string) (branchRow, error) { return loadBranch(ctx, q, name) })
}

// tablesAtWith is tablesAt with the parent branches read by branch.
func tablesAtWith(p pos, branch func(name string) (branchRow, error)) (pos, error) {
	for p.cut < p.tab.createdRev && p.tab.info.Parent != "" {
		p.cut = min(p.cut, p.tab.forkRev)
		parent, err := branch(p.tab.info.Parent)
		if err != nil {
			return pos{}, err
		}
		p.tab = parent
	}
	return p, nil
}

// A branch no write has committed to since its tables were made holds in them the
// versions its parent's tables held visible at the fork, with their vids, all current:
// reading it at any revision reads what its parent's tables give at the fork. The
// first reads of a fresh copy's blocks are slow on the server, while the parent's have
// usually been read since (docs/matrixone.md, "What a read costs"), so the reads of a
// diff and of a merge's target go to the parent's tables for such a branch (asParent).

// unwritten reports whether no write has committed to b since its tables were made.
func unwritten(b branchRow) bool {
	return b.info.Parent != "" && int64(b.info.Head) <= b.createdRev
}

// asParent moves p, a read of branch tables at or after their creation, up to the
// parent's tables at the fork while the branch it reads is unwritten and the parent's
// tables are the ones it was forked from (made before the branch's); parent looks a
// branch up, false when there is none.
func asParent(p pos, parent func(name string) (branchRow, bool)) pos {
	for unwritten(p.tab) && p.cut >= p.tab.createdRev {
		par, ok := parent(p.tab.info.Parent)
		if !ok || par.createdRev > p.tab.createdRev {
			break
		}
		p.cut = min(p.cut, p.tab.forkRev)
		p.tab = par
	}
	return p
}

// revAt returns the last revision committed at or before t (0 before the first).
func revAt(ctx context.Context, q queryer, t time.Time) (int64, error) {
	var rev sql.NullInt64
	err := q.QueryRowContext(ctx, "SELECT MAX(rev) FROM day1_commits WHERE at <= ?", micro(t)).Scan(&rev)
	return rev.Int64, err
}

// timeOfRev returns the commit instant of a revision.
func timeOfRev(ctx context.Context, q queryer, rev int64) (time.Time, error) {
	var at time.Time
	err := q.QueryRowContext(ctx, "SELECT at FROM day1_commits WHERE rev <= ? ORDER BY rev DESC LIMIT 1", rev).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	return at.UTC(), err
}

func prefixed(p, cols string) string {
	out := []byte{}
	start := true
	for i := 0; i < len(cols); i++ {
		if start && cols[i] != ' ' {
			out = append(out, p...)
			start = false
		}
		out = append(out, cols[i])
		if cols[i] == ',' {
			start = true
		}
	}
	return string(out)
}
