package day1

import (
	"context"
	"fmt"

	"github.com/day1ai/day1/store"
)

// CompactStats reports a compaction of the durable embedded store: the generation of
// its new checkpoint, the retention horizon, the bytes on disk before and after, the
// versions kept and dropped, how long writers were held (Pause) and how long it took.
type CompactStats = store.CompactStats

// Compact compacts the durable embedded store. On a memory kept in SQLite
// (sqlite.Options, what Config.Path makes) it deletes the history it no longer
// keeps, a chunk of rows per commit, while other processes read and write, and the
// file shrinks (a file made by an older day1 keeps the pages for later writes). On
// the log store (memstore.Options) it writes a checkpoint of memory and starts a new
// log after it, so that the next Open loads the checkpoint instead of
// replaying every write ever made, and removes the files it replaces; writers are
// held only while a consistent view is taken, a few milliseconds at most, and the
// store also compacts by itself as its log grows (memstore.Options.CompactRatio).
// Either way, versions older than the store's Retention option are dropped unless a
// branch, a snapshot or a merge base still reads them; with the default Retention
// (0) all history is kept.
//
// A ctx made by WithProgress hears how far it has come: the versions written to the
// checkpoint of the log store, or the rows dropped from a SQLite memory.
//
// It fails with ErrNotSupported on an in-memory store or MatrixOne (whose server keeps
// its own files), ErrReadOnly on a read-only Client and ErrClosed after Close.
func (c *Client) Compact(ctx context.Context) (_ CompactStats, err error) {
	ctx, end := c.start(ctx, Operation{Name: OpCompact, Method: "Compact"})
	defer func() { end(OperationEnd{Err: err}) }()
	if err := c.use(ctx); err != nil {
		return CompactStats{}, err
	}
	cs, ok := c.st.(store.Compacter)
	if !ok {
		return CompactStats{}, fmt.Errorf("%w: Compact applies to the embedded store, not to %s", ErrNotSupported, c.name)
	}
	return cs.Compact(ctx)
}

// WithProgress returns a context whose long calls report how far they have come to
// fn: done steps of total, now and then, from the goroutine of the call and never
// after it returns. Compact reports the versions it writes or drops. (ImportBundle
// takes its own ImportBundleRequest.Progress.)
func WithProgress(ctx context.Context, fn func(done, total int)) context.Context {
	return store.WithProgress(ctx, fn)
}

// DiskSize returns the bytes the durable embedded store's files take on disk now:
// the SQLite file and its write-ahead log, or the log store's checkpoints and logs.
// It fails with ErrNotSupported on an in-memory store and on MatrixOne (whose server
// keeps its own files), and ErrClosed after Close.
func (c *Client) DiskSize(ctx context.Context) (int64, error) {
	if err := c.use(ctx); err != nil {
		return 0, err
	}
	ds, ok := c.st.(store.DiskSizer)
	if !ok {
		return 0, fmt.Errorf("%w: DiskSize applies to the durable embedded store, not to %s", ErrNotSupported, c.name)
	}
	return ds.DiskSize(ctx)
}
