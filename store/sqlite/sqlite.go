// Package sqlite is a driver (package store/driver) that keeps a memory in one SQLite
// database file, through modernc.org/sqlite: SQLite compiled to pure Go, so the module
// still builds without cgo for every platform it supports. Options.OpenStore opens
// it as a store: the portable store (package store/portable) over this driver.
//
// Any number of processes open one file at once. SQLite's write-ahead log lets readers
// go on while one writer commits; writers take turns on the database's write lock,
// waiting up to Options.LockTimeout (and no longer than the caller's context) instead of
// being refused. Each Update begins with the write lock held, so it decides on every
// commit made before it, in this process or another. A process killed at any point
// loses no acknowledged commit and leaves nothing torn; the next writer takes the lock
// at once. Opening costs the same at any size: nothing is read until it is asked for,
// and the portable store maps the index it saved in the memory's folder (Folder)
// rather than reading it.
//
// # Why SQLite
//
// The embedded store had two shapes to choose from for many processes on one memory:
// files of our own (the log store, package store/memstore, with mapped segments to
// come), or SQLite as the file format. Measured on a 2-core machine with 100,000
// facts of 384-dimension embeddings, the same data and queries on both (a new process
// each time for the open):
//
//	                                     log store (memstore)   SQLite + portable
//	writes, batches of 500               24,500 facts/s         10,400 facts/s
//	new process: open                    2.4-2.7 s              4.5-5.6 ms
//	new process: open + first hybrid     2.4-2.7 s              0.27-0.33 s
//	steady hybrid search, p50 / p95      2.1-2.9 / 2.3-4.1 ms   6.8-7.4 / 54-69 ms
//	steady keyword search, p50 / p95     0.55-0.86 / 1.0-1.8 ms 0.67-0.79 / 1.1-1.6 ms
//	resident memory after the searches   440-480 MB             130-140 MB
//
// Most of a SQLite write is SQLite's own inserts (about 60% of its CPU); most of a
// steady hybrid search on it is reading the embeddings of the nearest codes to score
// them exactly, which the log store holds in memory. Mapping the file (SQLite's
// mmap_size) made neither faster here and more than doubled the resident memory.
// Since format 4 (plists.go) a write inserts one packed posting list per term of
// each chunk of rows rather than a row per term of every version, which the figures
// above predate: in the store benchmarks at 10,000 facts (storetest.RunBenchmarks)
// that took writes from 3,100-3,200 to 5,000-5,200 facts/s in batches of 100 and a
// merge of 100 changes from 16.5-17.3 to 8.6-9.1 ms.
//
// SQLite gives what a file format of our own would have to earn again: a lock many
// processes share with a timeout, readers that never wait, atomic commits that a
// killed process cannot tear, and pages read on demand. So a new memory at
// day1.Config.Path (and at the command line's, the MCP server's and the hooks'
// --path) is kept here: a memory that many processes open and close (hooks,
// commands, one MCP server per agent session) is what agents share. The log store
// stays for a long-lived process that wants the faster steady state, and a folder
// that holds one is still opened as one. Compact deletes the history older than
// Options.Retention that nothing reads, as the log store's compaction leaves it
// out, and the file gives the freed pages back to the file system (a file made
// before day1 did so keeps them, and reuses them for later writes). On this machine a
// first touch of fresh memory costs about 3 ms per MB (page faults), which set the
// floor of reading the index back into the heap: about half of the 0.3 s above. The
// index is now saved as a file of its own beside the database and mapped
// (store/portable), 15 MB of it in under 1 ms: in the bench (examples/bench), a new
// process opens the memory above and answers its first hybrid search in 72 ms at
// 39 MB peak RSS (411 ms and 87 MB before), and a memory of a million facts in 285 ms
// at 193 MB (2.32 s and 548 MB before).
//
// What SQLite itself costs is measured beside the store (BenchmarkFloor, the same
// machine): inserting 100 records of the store benchmarks' size (a body of about 300
// bytes and an embedding of 384 dimensions) into a table of 10,000 or more and
// committing takes 1.7-2.0 ms, and reading 200 of them back by row number 1.7-1.8 ms.
// The log store applies a merge of 100 changes in about 0.7 ms and diffs 100 changes
// in about 0.15 ms from memory, so no store on this file format merges within 2× of
// it: a merge of 100 changes here (about 7-9 ms) writes three tables and a posting
// list per term, each through that floor. Reads are nearer: the portable store keeps
// the records it decodes in a cache, and keeps those of a small diff or merge there
// too, so a diff read again costs about 0.3 ms, and a merge after its diff reads its
// records from the cache rather than the file.
//
// The file is FileName in the memory's folder. Its tables: commits (sequence number
// and instant), branches, rows (the metadata of every version), bodies (each
// version's record, embedding and terms), plists (packed posting lists: which
// versions' search texts hold each term), postings (the same, a row per posting, in
// files made before format 4) and items (sessions, snapshots, merge records,
// documents). The portable store's saved index is a file beside it (Folder).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/day1ai/day1/internal/filelock"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
	"github.com/day1ai/day1/store/portable"
)

// FileName is the name of the database file in a memory's folder.
const FileName = "memory.db"

// HoldsMemory reports whether the folder dir holds a memory kept in SQLite (its
// FileName), which the programs that are given the folder then open as one.
func HoldsMemory(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, FileName))
	return err == nil
}

// checkFolder refuses a folder that holds files but no memory: a mistyped path, or
// the folder of a memory of another kind, which a new database would hide. Hidden
// files (.DS_Store, .git) do not count, nor does the marker of a tenant's folder.
func checkFolder(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("day1: sqlite: %w", err)
	}
	var others []string
	for _, e := range ents {
		switch name := e.Name(); {
		case name == FileName:
			return nil
		case name == tenantMarker, strings.HasPrefix(name, "."), strings.HasPrefix(name, FileName), name == LockName:
		default:
			others = append(others, name)
		}
	}
	if len(others) > 0 {
		return store.Invalid("Options.Path", fmt.Sprintf("holds %d other files (%s, ...) and no memory (no %s): name a new or empty folder, or the folder of a memory", len(others), others[0], FileName), dir)
	}
	return nil
}

// tenantMarker is the file that marks a folder as a tenant's (day1.TenantMarkerFile):
// a tenant's memory is made in a folder that holds it.
const tenantMarker = "day1.tenant"

// LockName is the name of the file in a memory's folder whose lock the writers of
// every process take in turn.
const LockName = "memory.lock"

// appID marks a day1 memory in the database header (PRAGMA application_id): "day1".
const appID = 0x64617931

// formatVersion is the version of the tables this package writes (PRAGMA user_version).
// Version 2 added rows.exp (driver.Index.Expires), version 3 rows.upd
// (driver.Index.Updated), version 4 the packed posting lists (plists, bodies.terms;
// see plists.go); a writer upgrades an older file as it opens it, and a reader of
// one reads no expiry (before 2), no update time (before 3) and only the postings
// table (before 4).
const formatVersion = 4

// pageSize is the size of the database's pages.
var pageSize = 65536

// DefaultLockTimeout is how long an Update waits for the write lock by default.
const DefaultLockTimeout = 30 * time.Second

// Options configure a driver, and the portable store over it that OpenStore opens.
type Options struct {
	// Path is the folder of the memory: the database file is FileName in it.
	Path string
	// LockTimeout bounds the wait for the write lock another process holds (0:
	// DefaultLockTimeout). The caller's context can end the wait sooner.
	LockTimeout time.Duration
	// ReadOnly opens the memory for reading only: Update fails with
	// store.ErrReadOnly, and a missing memory is store.ErrNotFound.
	ReadOnly bool
	// NoSync leaves the syncing of commits to the operating system: a crash of the
	// machine (not of the process) may lose the last commits, never tear one.
	NoSync bool
	// Dimensions is the length of the embeddings of the store OpenStore opens; 0
	// takes the Client's, or the length of the first embedding written.
	Dimensions int
	// Now is the clock of the store OpenStore opens; nil takes the Client's, or the
	// commit's instant.
	Now func() time.Time
	// Retention is how much history the store OpenStore opens keeps when compacted
	// (portable.Options.Retention); 0 keeps all of it.
	Retention time.Duration
}

// Folder returns the folder of the memory.
func (o Options) Folder() string { return o.Path }

// WithFolder returns the options of the memory in the folder path.
func (o Options) WithFolder(path string) store.Opener {
	o.Path = path
	return o
}

// Validate checks the options without opening anything.
func (o Options) Validate() error {
	if o.LockTimeout < 0 {
		return store.Invalid("Options.LockTimeout", "must not be negative", o.LockTimeout)
	}
	if o.Dimensions < 0 {
		return store.Invalid("Options.Dimensions", "must not be negative", o.Dimensions)
	}
	if o.Retention < 0 {
		return store.Invalid("Options.Retention", "must be 0 (keep all history) or more", o.Retention.String())
	}
	return nil
}

var _ store.FolderOpener = Options{}

// OpenStore opens the memory as a store (a portable store over the driver) for a
// day1.Config, whose Backend Options can be (a store.Opener).
func (o Options) OpenStore(ctx context.Context, env store.OpenEnv) (store.Store, error) {
	var logger *slog.Logger
	env.Fill(&o.Dimensions, &o.Now, &logger)
	d, err := Open(ctx, o)
	if err != nil {
		return nil, err
	}
	s, err := portable.New(ctx, d, portable.Options{Name: "sqlite", Dimensions: o.Dimensions, Now: o.Now, ReadOnly: o.ReadOnly, Retention: o.Retention})
	if err != nil {
		d.Close()
		return nil, err
	}
	return s, nil
}

// Driver is a memory in a SQLite database. It is safe for concurrent use.
type Driver struct {
	path string
	opts Options
	rdb  *sql.DB // reads: deferred transactions
	wdb  *sql.DB // writes: one connection, immediate transactions
	// lock queues the writers of every process: a file lock they wait on without
	// polling the database (SQLite's own wait sleeps up to 100 ms at a time).
	lock *filelock.Lock
	// expCol and updCol are what reads select for a row's expiry and update time:
	// the columns, or 0 on a file opened for reading whose format version is older
	// than the column's (2 and 3).
	expCol, updCol string
	// plists says the file has packed posting lists (format 4): set at open, or by
	// the first read that finds a writer upgraded the file since.
	plists atomic.Bool
	// vacuum says the file gives the pages a compaction frees back to the file
	// system (auto_vacuum=INCREMENTAL, which files made before it lack).
	vacuum bool

	closeOnce sync.Once
}

var (
	_ driver.Driver = (*Driver)(nil)
	_ driver.Folder = (*Driver)(nil)
)

// Open opens the memory in the folder opts.Path, creating the folder and the database
// unless opts.ReadOnly.
func Open(ctx context.Context, opts Options) (*Driver, error) {
	dir := opts.Path
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.LockTimeout == 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if dir == "" {
		return nil, store.Invalid("Options.Path", "names the folder of a memory; it is empty", dir)
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, store.Invalid("Options.Path", "is a file; a memory is a folder: name a new or empty folder, or the folder of a memory", dir)
	}
	path := filepath.Join(dir, FileName)
	if opts.ReadOnly {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: no memory at %s", store.ErrNotFound, dir)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("day1: sqlite: %w", err)
	} else if err := checkFolder(dir); err != nil {
		return nil, err
	}
	d := &Driver{path: path, opts: opts, expCol: "exp", updCol: "upd"}
	d.plists.Store(true)
	var err error
	if d.rdb, err = sql.Open("sqlite", d.dsn(false)); err != nil {
		return nil, fmt.Errorf("day1: sqlite: %w", err)
	}
	if !opts.ReadOnly {
		if d.lock, err = filelock.Open(dir, LockName); err != nil {
			d.rdb.Close()
			return nil, err
		}
		if d.wdb, err = sql.Open("sqlite", d.dsn(true)); err != nil {
			d.rdb.Close()
			d.lock.Close()
			return nil, fmt.Errorf("day1: sqlite: %w", err)
		}
		d.wdb.SetMaxOpenConns(1)
		d.wdb.SetConnMaxIdleTime(0)
	}
	if err := d.setup(ctx); err != nil {
		d.Close()
		return nil, err
	}
	var vacuum int
	if err := d.rdb.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&vacuum); err != nil {
		d.Close()
		return nil, d.openError(err)
	}
	d.vacuum = vacuum == 2
	return d, nil
}

// dsn is the connection string of the reading or the writing pool.
func (d *Driver) dsn(write bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", d.opts.LockTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(0)")
	if d.opts.NoSync {
		q.Add("_pragma", "synchronous(off)")
	} else {
		q.Add("_pragma", "synchronous(normal)")
	}
	if d.opts.ReadOnly {
		q.Set("mode", "ro")
	}
	if write {
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: d.path}).EscapedPath() + "?" + q.Encode()
}

const schema = `
CREATE TABLE IF NOT EXISTS commits (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS branches (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	name TEXT NOT NULL UNIQUE,
	parent INTEGER NOT NULL,
	fork_seq INTEGER NOT NULL,
	data BLOB
);
CREATE TABLE IF NOT EXISTS rows (
	rid INTEGER PRIMARY KEY AUTOINCREMENT,
	br INTEGER NOT NULL,
	kind TEXT NOT NULL,
	id TEXT NOT NULL,
	seq INTEGER NOT NULL,
	until INTEGER NOT NULL,
	del INTEGER NOT NULL, -- 1: a deletion marker; 2: history (driver.Index.History)
	tkey INTEGER NOT NULL,
	dlen INTEGER NOT NULL,
	grp TEXT NOT NULL,
	ord INTEGER NOT NULL,
	time INTEGER NOT NULL,
	code BLOB,
	exp INTEGER NOT NULL DEFAULT 0,
	upd INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS bodies (
	rid INTEGER PRIMARY KEY,
	data BLOB,
	vec BLOB,
	terms BLOB -- the version's terms, NUL-separated (from format 4)
);
CREATE INDEX IF NOT EXISTS rows_key ON rows (br, kind, id, seq);
CREATE INDEX IF NOT EXISTS rows_ended ON rows (until) WHERE until < 9223372036854775807;
CREATE TABLE IF NOT EXISTS postings (
	kind TEXT NOT NULL,
	term TEXT NOT NULL,
	rid INTEGER NOT NULL,
	tf INTEGER NOT NULL,
	PRIMARY KEY (kind, term, rid)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS plists (
	kind TEXT NOT NULL,
	term TEXT NOT NULL,
	last INTEGER NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (kind, term, last)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS items (
	coll TEXT NOT NULL,
	id TEXT NOT NULL,
	data BLOB,
	PRIMARY KEY (coll, id)
) WITHOUT ROWID;
`

// setup checks that the file is a day1 memory of a format this package reads, and
// makes the tables of a new one.
func (d *Driver) setup(ctx context.Context) error {
	var app, ver int64
	if err := d.rdb.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return d.openError(err)
	}
	if err := d.rdb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&ver); err != nil {
		return d.openError(err)
	}
	switch {
	case app == appID && ver > formatVersion:
		return fmt.Errorf("%w: %s was written by a newer day1 (format %d; this one reads %d): upgrade day1",
			store.ErrNotSupported, d.path, ver, formatVersion)
	case app == appID && ver < formatVersion && d.opts.ReadOnly:
		d.plists.Store(ver >= 4)
		if ver < 3 {
			d.updCol = "0" // no update times before version 3
		}
		if ver == 1 {
			d.expCol = "0" // no expiries before version 2
		}
		return nil
	case app == appID && ver < formatVersion:
		return d.upgrade(ctx)
	case app == appID:
		return nil
	case app != 0:
		return store.Invalid("Options.Path", "holds a SQLite database that is not a day1 memory", d.path)
	}
	// application_id 0: a new file, or someone else's database.
	var tables int
	if err := d.rdb.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return d.openError(err)
	}
	if tables > 0 {
		return store.Invalid("Options.Path", "holds a SQLite database that is not a day1 memory", d.path)
	}
	if d.opts.ReadOnly {
		return fmt.Errorf("%w: no memory at %s", store.ErrNotFound, filepath.Dir(d.path))
	}
	if _, err := d.wdb.ExecContext(ctx, fmt.Sprintf("PRAGMA page_size=%d", pageSize)); err != nil {
		return d.openError(err)
	}
	// Pages that a compaction frees go back to the file system (Writer.Drop).
	if _, err := d.wdb.ExecContext(ctx, "PRAGMA auto_vacuum=INCREMENTAL"); err != nil {
		return d.openError(err)
	}
	if _, err := d.wdb.ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
		return d.openError(err)
	}
	tx, err := d.wdb.BeginTx(ctx, nil)
	if err != nil {
		return d.openError(err)
	}
	defer tx.Rollback()
	// Another process may have made the tables since the check above.
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return d.openError(err)
	}
	if app == appID {
		return nil
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return d.openError(err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id=%d; PRAGMA user_version=%d", appID, formatVersion)); err != nil {
		return d.openError(err)
	}
	return d.openError(tx.Commit())
}

// upgrade brings a file of an older format version to this one (version 2:
// rows.exp; version 3: rows.upd; version 4: plists and bodies.terms), in one write
// transaction; another process may have done it first. It rewrites nothing: the
// postings written before stay where they are.
func (d *Driver) upgrade(ctx context.Context) error {
	tx, err := d.wdb.BeginTx(ctx, nil)
	if err != nil {
		return d.openError(err)
	}
	defer tx.Rollback()
	var ver int64
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&ver); err != nil {
		return d.openError(err)
	}
	if ver >= formatVersion {
		return nil
	}
	for _, u := range []struct {
		ver int64
		sql string
	}{
		{2, "ALTER TABLE rows ADD COLUMN exp INTEGER NOT NULL DEFAULT 0"},
		{3, "ALTER TABLE rows ADD COLUMN upd INTEGER NOT NULL DEFAULT 0"},
		{4, "ALTER TABLE bodies ADD COLUMN terms BLOB"},
		{4, "CREATE TABLE plists (kind TEXT NOT NULL, term TEXT NOT NULL, last INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (kind, term, last)) WITHOUT ROWID"},
	} {
		if ver < u.ver {
			if _, err := tx.ExecContext(ctx, u.sql); err != nil {
				return d.openError(err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version=%d", formatVersion)); err != nil {
		return d.openError(err)
	}
	return d.openError(tx.Commit())
}

// openError wraps an error met opening the file with what to do about it.
func (d *Driver) openError(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("%w: %s is damaged or not a database (%v); restore it from a copy or a bundle", store.ErrCorrupt, d.path, err)
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
			return fmt.Errorf("%w: cannot write %s (%v); check the folder's permissions or open it read-only", store.ErrReadOnly, d.path, err)
		}
	}
	return d.fail(err)
}

// fail wraps an error of the database: a busy one is store.ErrLocked, a cancelled
// context its own error.
func (d *Driver) fail(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("%w: %s: another process held the write lock for %s (Options.LockTimeout)", store.ErrLocked, d.path, d.opts.LockTimeout)
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("day1: sqlite: the disk of %s is full; nothing of this write was kept: %w", d.path, err)
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%w: %s: %v", store.ErrCorrupt, d.path, err)
		}
	}
	return fmt.Errorf("day1: sqlite: %w", err)
}

// corrupt reports damage found in what the file holds.
func (d *Driver) corrupt(err error) error {
	return fmt.Errorf("%w: %s: %v; restore it from a copy or a bundle", store.ErrCorrupt, d.path, err)
}

// Close closes the database. Later calls fail.
func (d *Driver) Close() error {
	var err error
	d.closeOnce.Do(func() {
		if d.wdb != nil {
			err = d.wdb.Close()
		}
		if d.lock != nil {
			d.lock.Close()
		}
		if e := d.rdb.Close(); err == nil {
			err = e
		}
	})
	return err
}

// Path is the database file.
func (d *Driver) Path() string { return d.path }

// Durable reports that what the driver commits survives a restart of the process.
func (d *Driver) Durable() bool { return true }

// Folder returns the memory's folder, where the portable store keeps its saved
// index beside the database (driver.Folder).
func (d *Driver) Folder() string { return filepath.Dir(d.path) }

// Read calls fn in a read transaction: a snapshot of the latest commit.
func (d *Driver) Read(ctx context.Context, fn func(driver.Reader) error) error {
	tx, err := d.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return d.fail(err)
	}
	defer tx.Rollback()
	r := &reader{d: d, q: tx}
	if err := r.loadHead(ctx); err != nil {
		return err
	}
	return fn(r)
}

// Update calls fn in a write transaction, with the database's write lock held, and
// commits what it wrote.
func (d *Driver) Update(ctx context.Context, fn func(driver.Writer) error) error {
	if d.opts.ReadOnly {
		return fmt.Errorf("%w: %s was opened read-only", store.ErrReadOnly, d.path)
	}
	if err := d.lock.Acquire(ctx, d.opts.LockTimeout, filepath.Dir(d.path)); err != nil {
		return err
	}
	defer d.lock.Release()
	tx, err := d.wdb.BeginTx(ctx, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return d.fail(err)
	}
	defer tx.Rollback()
	w := &writer{reader: reader{d: d, q: tx}}
	if err := w.loadHead(ctx); err != nil {
		return err
	}
	w.pending = driver.Commit{Seq: w.head.Seq + 1, At: driver.After(w.head.At, time.Now())}
	if err := fn(w); err != nil {
		return err
	}
	if !w.dirty {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO commits(seq, at) VALUES (?, ?)", w.pending.Seq, w.pending.At.UnixNano()); err != nil {
		return d.fail(err)
	}
	if err := tx.Commit(); err != nil {
		return d.fail(err)
	}
	return nil
}

// queryer is what a reader needs of a transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

type reader struct {
	d    *Driver
	q    queryer
	head driver.Commit
}

func (r *reader) loadHead(ctx context.Context) error {
	var seq, at int64
	err := r.q.QueryRowContext(ctx, "SELECT seq, at FROM commits ORDER BY seq DESC LIMIT 1").Scan(&seq, &at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		r.head = driver.Commit{}
	case err != nil:
		return r.d.fail(err)
	default:
		r.head = driver.Commit{Seq: seq, At: time.Unix(0, at).UTC()}
	}
	return nil
}

// Head implements driver.Reader.
func (r *reader) Head() driver.Commit { return r.head }

// CommitAt implements driver.Reader.
func (r *reader) CommitAt(ctx context.Context, t time.Time) (driver.Commit, error) {
	var seq, at int64
	err := r.q.QueryRowContext(ctx, "SELECT seq, at FROM commits WHERE at <= ? AND seq <= ? ORDER BY seq DESC LIMIT 1",
		t.UnixNano(), r.head.Seq).Scan(&seq, &at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return driver.Commit{}, nil
	case err != nil:
		return driver.Commit{}, r.d.fail(err)
	}
	return driver.Commit{Seq: seq, At: time.Unix(0, at).UTC()}, nil
}

// CommitOf implements driver.Reader.
func (r *reader) CommitOf(ctx context.Context, seq int64) (driver.Commit, error) {
	var at int64
	err := r.q.QueryRowContext(ctx, "SELECT at FROM commits WHERE seq = ? AND seq <= ?", seq, r.head.Seq).Scan(&at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return driver.Commit{}, nil
	case err != nil:
		return driver.Commit{}, r.d.fail(err)
	}
	return driver.Commit{Seq: seq, At: time.Unix(0, at).UTC()}, nil
}

// Branches implements driver.Reader.
func (r *reader) Branches(ctx context.Context) ([]driver.BranchRow, error) {
	rows, err := r.q.QueryContext(ctx, "SELECT id, name, parent, fork_seq, data FROM branches ORDER BY id")
	if err != nil {
		return nil, r.d.fail(err)
	}
	defer rows.Close()
	var out []driver.BranchRow
	for rows.Next() {
		var b driver.BranchRow
		if err := rows.Scan(&b.ID, &b.Name, &b.Parent, &b.ForkSeq, &b.Data); err != nil {
			return nil, r.d.fail(err)
		}
		out = append(out, b)
	}
	return out, r.d.fail(rows.Err())
}

// Row implements driver.Reader.
func (r *reader) Row(ctx context.Context, kind store.Kind, id string, branch, at int64) (driver.Row, bool, error) {
	row := driver.Row{Kind: kind, ID: id, Branch: branch}
	var del int
	err := r.q.QueryRowContext(ctx,
		"SELECT r.rid, r.seq, r.until, r.del, b.data, b.vec FROM rows r JOIN bodies b ON b.rid = r.rid WHERE r.br = ? AND r.kind = ? AND r.id = ? AND r.seq <= ? ORDER BY r.seq DESC, r.rid DESC LIMIT 1",
		branch, string(kind), id, at).Scan(&row.RID, &row.Seq, &row.Until, &del, &row.Data, &row.Vector)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return driver.Row{}, false, nil
	case err != nil:
		return driver.Row{}, false, r.d.fail(err)
	}
	row.Deleted = del&1 != 0
	return row, row.Until > at, nil
}

// Rows implements driver.Reader.
func (r *reader) Rows(ctx context.Context, kind store.Kind, branch, at int64, fn func(driver.Row) error) error {
	rows, err := r.q.QueryContext(ctx,
		"SELECT r.rid, r.id, r.seq, r.until, r.del, b.data, b.vec FROM rows r JOIN bodies b ON b.rid = r.rid WHERE r.br = ? AND r.kind = ? AND r.seq <= ? AND r.until > ? ORDER BY r.id",
		branch, string(kind), at, at)
	if err != nil {
		return r.d.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		row := driver.Row{Kind: kind, Branch: branch}
		var del int
		if err := rows.Scan(&row.RID, &row.ID, &row.Seq, &row.Until, &del, &row.Data, &row.Vector); err != nil {
			return r.d.fail(err)
		}
		row.Deleted = del&1 != 0
		if err := fn(row); err != nil {
			return err
		}
	}
	return r.d.fail(rows.Err())
}

// Meta implements driver.Reader.
func (r *reader) Meta(ctx context.Context, after int64, fn func(driver.Meta) error) error {
	rows, err := r.q.QueryContext(ctx,
		"SELECT rid, kind, id, br, seq, until, del, tkey, dlen, grp, ord, time, code, "+r.d.expCol+", "+r.d.updCol+" FROM rows WHERE rid > ? AND seq <= ? ORDER BY rid", after, r.head.Seq)
	if err != nil {
		return r.d.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var m driver.Meta
		var kind string
		var del int
		if err := rows.Scan(&m.RID, &kind, &m.ID, &m.Branch, &m.Seq, &m.Until, &del, &m.TextKey, &m.DocLen, &m.Group, &m.Order, &m.Time, &m.Code, &m.Expires, &m.Updated); err != nil {
			return r.d.fail(err)
		}
		m.Kind, m.Deleted, m.History = store.Kind(kind), del&1 != 0, del&2 != 0
		if err := fn(m); err != nil {
			return err
		}
	}
	return r.d.fail(rows.Err())
}

// Ended implements driver.Reader.
func (r *reader) Ended(ctx context.Context, after int64, fn func(rid, until int64) error) error {
	rows, err := r.q.QueryContext(ctx,
		"SELECT rid, until FROM rows WHERE until > ? AND until <= ? AND until < ?", after, r.head.Seq, driver.Never)
	if err != nil {
		return r.d.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var rid, until int64
		if err := rows.Scan(&rid, &until); err != nil {
			return r.d.fail(err)
		}
		if err := fn(rid, until); err != nil {
			return err
		}
	}
	return r.d.fail(rows.Err())
}

// Postings implements driver.Reader.
// The postings of a file made before format 4 are in the postings table, and those
// of a writer of an older day1 still running when the file was upgraded: they are
// merged with the packed lists by RID.
func (r *reader) Postings(ctx context.Context, kind store.Kind, term string, after int64, fn func(rid int64, tf int) error) error {
	rows, err := r.q.QueryContext(ctx, "SELECT rid, tf FROM postings WHERE kind = ? AND term = ? AND rid > ? ORDER BY rid", string(kind), term, after)
	if err != nil {
		return r.d.fail(err)
	}
	var old []posting
	for rows.Next() {
		var p posting
		if err := rows.Scan(&p.rid, &p.tf); err != nil {
			rows.Close()
			return r.d.fail(err)
		}
		old = append(old, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return r.d.fail(err)
	}
	if !r.d.plists.Load() {
		// A file opened before a writer upgraded it.
		var ver int64
		if err := r.q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&ver); err != nil {
			return r.d.fail(err)
		}
		if ver < 4 {
			return emit(old, fn)
		}
		r.d.plists.Store(true)
	}
	lists, err := r.q.QueryContext(ctx, "SELECT data FROM plists WHERE kind = ? AND term = ? AND last > ? ORDER BY last", string(kind), term, after)
	if err != nil {
		return r.d.fail(err)
	}
	defer lists.Close()
	for lists.Next() {
		var data sql.RawBytes
		if err := lists.Scan(&data); err != nil {
			return r.d.fail(err)
		}
		err := decodePostings(data, after, func(rid int64, tf int) error {
			for len(old) > 0 && old[0].rid < rid {
				if err := fn(old[0].rid, old[0].tf); err != nil {
					return err
				}
				old = old[1:]
			}
			return fn(rid, tf)
		})
		if err != nil {
			if errors.Is(err, errPostings) {
				return r.d.corrupt(err)
			}
			return err
		}
	}
	if err := lists.Err(); err != nil {
		return r.d.fail(err)
	}
	return emit(old, fn)
}

// emit calls fn with each posting.
func emit(ps []posting, fn func(rid int64, tf int) error) error {
	for _, p := range ps {
		if err := fn(p.rid, p.tf); err != nil {
			return err
		}
	}
	return nil
}

// fetchChunk is the most RIDs one query of Fetch names.
const fetchChunk = 256

// Fetch implements driver.Reader.
func (r *reader) Fetch(ctx context.Context, rids []int64, fn func(driver.Row) error) error {
	for len(rids) > 0 {
		n := min(len(rids), fetchChunk)
		args := make([]any, n)
		for i, rid := range rids[:n] {
			args[i] = rid
		}
		rids = rids[n:]
		q := "SELECT r.rid, r.kind, r.id, r.br, r.seq, r.until, r.del, b.data, b.vec FROM rows r JOIN bodies b ON b.rid = r.rid WHERE r.rid IN (?" + strings.Repeat(", ?", n-1) + ")"
		rows, err := r.q.QueryContext(ctx, q, args...)
		if err != nil {
			return r.d.fail(err)
		}
		for rows.Next() {
			var row driver.Row
			var kind string
			var del int
			if err := rows.Scan(&row.RID, &kind, &row.ID, &row.Branch, &row.Seq, &row.Until, &del, &row.Data, &row.Vector); err != nil {
				rows.Close()
				return r.d.fail(err)
			}
			row.Kind, row.Deleted = store.Kind(kind), del&1 != 0
			if err := fn(row); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return r.d.fail(err)
		}
	}
	return nil
}

// Item implements driver.Reader.
func (r *reader) Item(ctx context.Context, coll, id string) ([]byte, bool, error) {
	var data []byte
	err := r.q.QueryRowContext(ctx, "SELECT data FROM items WHERE coll = ? AND id = ?", coll, id).Scan(&data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, r.d.fail(err)
	}
	return data, true, nil
}

// Items implements driver.Reader.
func (r *reader) Items(ctx context.Context, coll, after string, fn func(id string, data []byte) error) error {
	rows, err := r.q.QueryContext(ctx, "SELECT id, data FROM items WHERE coll = ? AND id > ? ORDER BY id", coll, after)
	if err != nil {
		return r.d.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var data sql.RawBytes // not copied again: fn copies what it keeps
		if err := rows.Scan(&id, &data); err != nil {
			return r.d.fail(err)
		}
		if err := fn(id, data); err != nil {
			return err
		}
	}
	return r.d.fail(rows.Err())
}

type writer struct {
	reader
	pending driver.Commit
	dirty   bool
	nextRID int64 // the RID of the next row Put writes; 0 until the first
}

// Pending implements driver.Writer.
func (w *writer) Pending() driver.Commit { return w.pending }

// SetInstant implements driver.Writer.
func (w *writer) SetInstant(t time.Time) driver.Commit {
	w.pending.At = driver.After(w.head.At, t)
	return w.pending
}

// Head of a writer is the pending commit once something is written, so that its
// reads see its own writes.
func (w *writer) Head() driver.Commit {
	if w.dirty {
		return w.pending
	}
	return w.head
}

// Put implements driver.Writer. It writes the rows a chunk at a time, each chunk in
// a few statements of many rows: ending the rows they replace, then inserting the
// rows, their bodies and their postings.
func (w *writer) Put(ctx context.Context, rows ...driver.Row) error {
	if len(rows) == 0 {
		return nil
	}
	// A row given twice in one call keeps only its last version: the earlier one
	// would end at once (its Until its Seq), and no read could see it.
	type key struct {
		br   int64
		kind store.Kind
		id   string
	}
	last := make(map[key]int, len(rows))
	for i, r := range rows {
		last[key{r.Branch, r.Kind, r.ID}] = i
	}
	if len(last) < len(rows) {
		kept := make([]driver.Row, 0, len(last))
		for i, r := range rows {
			if last[key{r.Branch, r.Kind, r.ID}] == i {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	if w.nextRID == 0 {
		// RIDs are given here, not by SQLite, so that a chunk is one INSERT; they go
		// on from the largest ever given (AUTOINCREMENT's sqlite_sequence), so none is
		// reused after a branch's rows are deleted.
		err := w.q.QueryRowContext(ctx,
			"SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'rows'), 0), coalesce((SELECT max(rid) FROM rows), 0))").Scan(&w.nextRID)
		if err != nil {
			return w.d.fail(err)
		}
		w.nextRID++
	}
	for len(rows) > 0 {
		n := min(len(rows), putChunk)
		if err := w.putChunk(ctx, rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	w.dirty = true
	return nil
}

// putChunk is how many rows one statement of Put writes.
const putChunk = 256

func (w *writer) putChunk(ctx context.Context, rows []driver.Row) error {
	seq := w.pending.Seq
	// End the live rows these replace, by branch and kind.
	type group struct {
		br   int64
		kind store.Kind
	}
	ids := map[group][]any{}
	var order []group
	for _, r := range rows {
		g := group{r.Branch, r.Kind}
		if ids[g] == nil {
			order = append(order, g)
		}
		ids[g] = append(ids[g], r.ID)
	}
	for _, g := range order {
		args := append([]any{seq, driver.Never, g.br, string(g.kind)}, ids[g]...)
		q := "UPDATE rows SET until = ? WHERE until = ? AND br = ? AND kind = ? AND id IN (?" + strings.Repeat(", ?", len(ids[g])-1) + ")"
		if _, err := w.q.ExecContext(ctx, q, args...); err != nil {
			return w.d.fail(err)
		}
	}
	rowArgs := make([]any, 0, 14*len(rows))
	bodyArgs := make([]any, 0, 4*len(rows))
	posts := map[termKey][]posting{}
	for _, r := range rows {
		rid := w.nextRID
		w.nextRID++
		del := 0
		if r.Deleted {
			del = 1
		}
		if r.Index.History {
			del |= 2
		}
		ix := r.Index
		rowArgs = append(rowArgs, rid, r.Branch, string(r.Kind), r.ID, seq, driver.Never, del, ix.TextKey, ix.DocLen, ix.Group, ix.Order, ix.Time, ix.Code, ix.Expires, ix.Updated)
		bodyArgs = append(bodyArgs, rid, r.Data, r.Vector, joinTerms(ix.Terms))
		for i, term := range ix.Terms {
			k := termKey{r.Kind, term}
			posts[k] = append(posts[k], posting{rid, ix.Counts[i]})
		}
	}
	if err := w.insert(ctx, "rows (rid, br, kind, id, seq, until, del, tkey, dlen, grp, ord, time, code, exp, upd)", 15, rowArgs); err != nil {
		return err
	}
	if err := w.insert(ctx, "bodies (rid, data, vec, terms)", 4, bodyArgs); err != nil {
		return err
	}
	return w.insert(ctx, "plists (kind, term, last, data)", 4, listArgs(posts))
}

// insert inserts rows of cols values each, given back to back in args, a statement
// of at most maxParams values at a time.
func (w *writer) insert(ctx context.Context, into string, cols int, args []any) error {
	tuple := "(?" + strings.Repeat(", ?", cols-1) + ")"
	per := maxParams / cols
	for len(args) > 0 {
		n := min(len(args)/cols, per)
		q := "INSERT INTO " + into + " VALUES " + tuple + strings.Repeat(", "+tuple, n-1)
		if _, err := w.q.ExecContext(ctx, q, args[:n*cols]...); err != nil {
			return w.d.fail(err)
		}
		args = args[n*cols:]
	}
	return nil
}

// maxParams is the most values one statement binds. modernc.org/sqlite binds each
// value after a search of all of them, so a statement's binding costs the square of
// its values: a few hundred write fastest, and far fewer than SQLite's limit.
const maxParams = 512

// Drop implements driver.Writer.
func (w *writer) Drop(ctx context.Context, rows ...driver.Row) error {
	for len(rows) > 0 {
		n := min(len(rows), maxParams)
		chunk := rows[:n]
		rows = rows[n:]
		rids := make([]any, n)
		var posts []any // of rows written before format 4, in the postings table
		for i, r := range chunk {
			rids[i] = r.RID
			for _, t := range r.Index.Terms {
				posts = append(posts, string(r.Kind), t, r.RID)
			}
		}
		in := "(?" + strings.Repeat(", ?", n-1) + ")"
		// The packed lists of the rows written since are found by the terms kept with
		// them, which are those they were indexed by.
		gone, err := w.keptTerms(ctx, "r.rid IN "+in, rids...)
		if err != nil {
			return err
		}
		if err := w.dropPostings(ctx, gone); err != nil {
			return err
		}
		for _, table := range []string{"rows", "bodies"} {
			if _, err := w.q.ExecContext(ctx, "DELETE FROM "+table+" WHERE rid IN "+in, rids...); err != nil {
				return w.d.fail(err)
			}
		}
		for len(posts) > 0 {
			k := min(len(posts)/3, maxParams/3)
			q := "DELETE FROM postings WHERE (kind, term, rid) IN (VALUES (?, ?, ?)" + strings.Repeat(", (?, ?, ?)", k-1) + ")"
			if _, err := w.q.ExecContext(ctx, q, posts[:3*k]...); err != nil {
				return w.d.fail(err)
			}
			posts = posts[3*k:]
		}
	}
	w.dirty = true
	if w.d.vacuum {
		// The file gives back the pages the deletes freed (when the WAL is next
		// checkpointed).
		if _, err := w.q.ExecContext(ctx, "PRAGMA incremental_vacuum"); err != nil {
			return w.d.fail(err)
		}
	}
	return nil
}

// Size returns the bytes the memory's files take on disk: the database and its
// write-ahead log.
func (d *Driver) Size() (int64, error) {
	var n int64
	for _, name := range []string{d.path, d.path + "-wal"} {
		fi, err := os.Stat(name)
		switch {
		case err == nil:
			n += fi.Size()
		case !errors.Is(err, os.ErrNotExist):
			return 0, err
		}
	}
	return n, nil
}

// PutBranch implements driver.Writer.
func (w *writer) PutBranch(ctx context.Context, b driver.BranchRow) (int64, error) {
	w.dirty = true
	if b.ID == 0 {
		res, err := w.q.ExecContext(ctx, "INSERT INTO branches (name, parent, fork_seq, data) VALUES (?, ?, ?, ?)", b.Name, b.Parent, b.ForkSeq, b.Data)
		if err != nil {
			return 0, w.d.fail(err)
		}
		id, err := res.LastInsertId()
		return id, w.d.fail(err)
	}
	_, err := w.q.ExecContext(ctx, "UPDATE branches SET name = ?, parent = ?, fork_seq = ?, data = ? WHERE id = ?", b.Name, b.Parent, b.ForkSeq, b.Data, b.ID)
	return b.ID, w.d.fail(err)
}

// DeleteBranch implements driver.Writer.
func (w *writer) DeleteBranch(ctx context.Context, id int64) error {
	w.dirty = true
	gone, err := w.keptTerms(ctx, "r.br = ?", id)
	if err != nil {
		return err
	}
	if err := w.dropPostings(ctx, gone); err != nil {
		return err
	}
	if _, err := w.q.ExecContext(ctx, "DELETE FROM postings WHERE rid IN (SELECT rid FROM rows WHERE br = ?)", id); err != nil {
		return w.d.fail(err)
	}
	if _, err := w.q.ExecContext(ctx, "DELETE FROM bodies WHERE rid IN (SELECT rid FROM rows WHERE br = ?)", id); err != nil {
		return w.d.fail(err)
	}
	if _, err := w.q.ExecContext(ctx, "DELETE FROM rows WHERE br = ?", id); err != nil {
		return w.d.fail(err)
	}
	_, err = w.q.ExecContext(ctx, "DELETE FROM branches WHERE id = ?", id)
	return w.d.fail(err)
}

// PutItem implements driver.Writer.
func (w *writer) PutItem(ctx context.Context, coll, id string, data []byte) error {
	w.dirty = true
	_, err := w.q.ExecContext(ctx, "INSERT OR REPLACE INTO items (coll, id, data) VALUES (?, ?, ?)", coll, id, data)
	return w.d.fail(err)
}

// DeleteItem implements driver.Writer.
func (w *writer) DeleteItem(ctx context.Context, coll, id string) error {
	w.dirty = true
	_, err := w.q.ExecContext(ctx, "DELETE FROM items WHERE coll = ? AND id = ?", coll, id)
	return w.d.fail(err)
}
