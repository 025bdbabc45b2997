// Package driver is the contract between the portable store (package store/portable)
// and a storage backend, in the way database/sql stands over database/sql/driver: the
// backend keeps versioned rows, branch rows and small items, and commits atomically;
// the portable store does every rule above that once (validation, defaults, dedupe,
// supersede, aliases, branch chains, time travel, snapshots, documents).
//
// The model: every commit has a sequence number (Commit.Seq, from 1, each one more
// than the last) and an instant (Commit.At, later than the last). A row is one version
// of one record on one branch, live from the commit that wrote it (Seq) until the
// commit that wrote the next row of the same record on the same branch (Until; Never
// while it is the latest). A branch row names the branch's parent and the commit it
// was forked at; how chains of branches are read is the portable store's business.
// Items are small values kept by collection and id outside branches (sessions,
// snapshots, merge records, documents). A driver whose memory is a folder says so
// (Folder): the portable store then keeps its saved index there, as a file it maps.
//
// A driver is safe for concurrent use. Read and Update honour ctx; a driver may share
// its files with other processes, in which case Update serializes with them too and
// every Update sees every commit made before it.
//
// Two drivers implement it: package store/sqlite (a file that many processes share)
// and package store/memdriver (the process's memory). Package store/driver/drivertest
// checks a driver against this contract, and the store conformance suite
// (store/storetest) checks the portable store over it.
package driver

import (
	"context"
	"math"
	"time"

	"github.com/day1ai/day1/store"
)

// Never is the Until of a row that no later row replaces.
const Never int64 = math.MaxInt64

// After returns the instant of a commit that follows one made at last: t in UTC,
// without a monotonic reading, or the nanosecond after last when t is not later.
// Drivers date their commits with it (the system's clock for t, or the instant
// Writer.SetInstant is given).
func After(last, t time.Time) time.Time {
	t = t.UTC().Round(0)
	if !t.After(last) {
		t = last.Add(time.Nanosecond)
	}
	return t
}

// Commit is a point in a backend's history.
type Commit struct {
	Seq int64     // 0 before the first commit
	At  time.Time // zero before the first commit
}

// Row is one version of one record on one branch.
type Row struct {
	// RID is the driver's number for the row, from 1, never reused, set on reads:
	// the rows of a later commit have larger RIDs than every row before them.
	RID     int64
	Kind    store.Kind
	ID      string
	Branch  int64 // the BranchRow.ID of its branch
	Seq     int64 // the commit that wrote it
	Until   int64 // the commit that replaced it on its branch; Never while it is the latest
	Deleted bool  // a deletion marker: Data and Vector are empty
	// Data is the record as the portable store encoded it; the driver keeps it as
	// bytes and never looks inside.
	Data []byte
	// Vector is the record's embedding as little-endian float32s, nil without one.
	Vector []byte
	// Index is what the portable store searches the row by, kept beside it.
	Index Index
}

// Index is what the portable store finds a row by without reading it: the driver
// keeps it with the row and returns it in Meta, and Postings lists the rows by the
// terms of their search text.
type Index struct {
	TextKey int64    // a hash of a fact's folded text (0: none), for finding equal texts
	Terms   []string // the search text's terms, each once
	Counts  []int    // how often each of Terms occurs
	DocLen  int      // the number of terms in the search text
	Code    []byte   // the sign-bit code of the embedding, nil without one
	// History marks a record that default searches leave out (a fact superseded or
	// invalidated: store.IsHistory).
	History bool
	// Group and Order place the record among others: a fact's session and creation
	// time (Unix nanoseconds), a message's conversation and sequence number.
	Group string
	Order int64
	// Time is the record's time (store.Record.RecordTime, Unix nanoseconds), which
	// lists are ordered by.
	Time int64
	// Expires is when a fact expires (store.Fact.ExpiresAt, Unix nanoseconds); 0 for
	// none.
	Expires int64
	// Updated is the time of the record's current version (store.UpdateTime, Unix
	// nanoseconds), which lists by update are ordered by.
	Updated int64
}

// Meta is what a driver returns of a row for the portable store's indexes: all but
// the record.
type Meta struct {
	RID     int64
	Kind    store.Kind
	ID      string
	Branch  int64
	Seq     int64
	Until   int64
	Deleted bool
	TextKey int64
	DocLen  int
	Code    []byte
	History bool
	Group   string
	Order   int64
	Time    int64
	Expires int64
	// Updated is Index.Updated; 0 for a row its driver kept without one (a file
	// written before drivers kept it), whose record then says.
	Updated int64
}

// BranchRow is a branch as a driver keeps it.
type BranchRow struct {
	ID      int64  // unique, from 1; never reused
	Name    string // unique
	Parent  int64  // the parent's ID; 0 for a root
	ForkSeq int64  // the parent's commit the branch was forked at
	Data    []byte // the rest, encoded by the portable store
}

// Reader reads one consistent state: every commit up to Head, nothing after it.
type Reader interface {
	// Head is the latest commit the reader sees.
	Head() Commit
	// CommitAt returns the latest commit at or before t (a zero Commit for none).
	CommitAt(ctx context.Context, t time.Time) (Commit, error)
	// CommitOf returns the commit with sequence number seq (a zero Commit for none).
	CommitOf(ctx context.Context, seq int64) (Commit, error)
	// Branches returns every branch, by ID.
	Branches(ctx context.Context) ([]BranchRow, error)
	// Row returns the row of a record on a branch that is live at commit at:
	// Seq <= at < Until. ok is false when there is none.
	Row(ctx context.Context, kind store.Kind, id string, branch, at int64) (r Row, ok bool, err error)
	// Rows calls fn with every row of a kind on a branch live at commit at, deletion
	// markers included, ordered by ID. An error from fn stops it and is returned.
	Rows(ctx context.Context, kind store.Kind, branch, at int64, fn func(Row) error) error
	// Meta calls fn with every row whose RID is above after, by RID, without its
	// record: what the portable store's indexes are built and caught up from. Meta and
	// Ended of a Writer report what was committed before it, never its own writes:
	// indexes that outlive a commit must not hold one that may yet fail.
	Meta(ctx context.Context, after int64, fn func(Meta) error) error
	// Ended calls fn with every row a commit after seq ended: its RID and Until.
	Ended(ctx context.Context, after int64, fn func(rid, until int64) error) error
	// Postings calls fn with every row of a kind whose RID is above after and whose
	// search text holds term, with how often it does, by RID.
	Postings(ctx context.Context, kind store.Kind, term string, after int64, fn func(rid int64, tf int) error) error
	// Fetch calls fn with the rows of the given RIDs that exist, in no particular
	// order.
	Fetch(ctx context.Context, rids []int64, fn func(Row) error) error
	// Item returns an item, ok false when there is none.
	Item(ctx context.Context, coll, id string) (data []byte, ok bool, err error)
	// Items calls fn with every item of a collection whose ID sorts after after (""
	// for all), ordered by ID. data is valid only during the call: fn copies what it
	// keeps.
	Items(ctx context.Context, coll, after string, fn func(id string, data []byte) error) error
}

// Writer reads and writes in one commit. It sees what it has written.
type Writer interface {
	Reader
	// Pending is the commit the writes will make: Head().Seq+1, at an instant later
	// than Head().At (the driver's clock unless SetInstant chose it).
	Pending() Commit
	// SetInstant makes t the instant of the pending commit, or the nanosecond after
	// the last commit's when t is not later, and returns the pending commit: for a
	// store whose clock is not the system's (a test's).
	SetInstant(t time.Time) Commit
	// Put writes rows at the pending commit, each ending the live row of its record on
	// its branch (setting its Until). Seq and Until of the given rows are ignored.
	Put(ctx context.Context, rows ...Row) error
	// Drop deletes rows no read can see any more, that history let go of: each
	// named by its RID and Kind, with the Index.Terms it was written with, so that
	// its postings go too. A missing row is no error.
	Drop(ctx context.Context, rows ...Row) error
	// PutBranch adds or replaces a branch row; a new branch has ID 0 and is given the
	// next one, which PutBranch returns.
	PutBranch(ctx context.Context, b BranchRow) (int64, error)
	// DeleteBranch removes a branch row and every row of the branch.
	DeleteBranch(ctx context.Context, id int64) error
	// PutItem adds or replaces an item.
	PutItem(ctx context.Context, coll, id string, data []byte) error
	// DeleteItem removes an item; a missing one is no error.
	DeleteItem(ctx context.Context, coll, id string) error
}

// Folder is implemented by a driver whose memory is a folder of the file system:
// the portable store keeps files of its own there (its saved index), beside the
// driver's.
type Folder interface {
	// Folder returns the folder's path.
	Folder() string
}

// Driver is a storage backend.
type Driver interface {
	// Read calls fn with a reader of the latest state.
	Read(ctx context.Context, fn func(Reader) error) error
	// Update calls fn with a writer, one at a time across every user of the backend,
	// and commits what fn wrote when it returns nil: all of it or, on an error or a
	// crash, none of it. An Update that writes nothing makes no commit.
	Update(ctx context.Context, fn func(Writer) error) error
	// Close releases the backend.
	Close() error
}
