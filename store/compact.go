package store

import "time"

// CompactStats reports a compaction of a store that keeps its own files (see
// Compacter): the generation of its new checkpoint, the retention horizon, the bytes
// on disk before and after, the versions kept and dropped, how long writers were held
// and how long it took.
type CompactStats struct {
	// Generation is the generation of the new checkpoint and log.
	Generation uint64
	// Seq is the sequence number the checkpoint holds the store at.
	Seq uint64
	// Horizon is the oldest instant reads may ask for after it; zero when the store
	// keeps all history.
	Horizon time.Time
	// BytesBefore and BytesAfter are the sizes of the store's files before the
	// compaction and right after it (the checkpoint and the log written since).
	BytesBefore, BytesAfter int64
	// CheckpointBytes is the size of the checkpoint.
	CheckpointBytes int64
	// Versions is the number of record versions the checkpoint holds; Dropped the
	// number of versions of the store's branches left out: older than the horizon and
	// needed by no branch, snapshot or merge base. (The versions of deleted branches
	// are left out too, uncounted.)
	Versions, Dropped int
	// Pause is the longest time writers were held: the store's lock is taken to take
	// a consistent view of it and switch to the new log, and, when versions were
	// dropped, once more to swap in the memory rebuilt from the checkpoint (see
	// Reloaded).
	Pause time.Duration
	// Reloaded says the store's memory was rebuilt from the checkpoint and the log
	// after it, without the versions dropped: done when there were some, so that a
	// long-running process holds what a reopen would.
	Reloaded bool
	// Superseded says another store (in another process, on the same files)
	// finished a compaction of a later generation while this one wrote its
	// checkpoint, which was then left out: the files are as compact as that one left
	// them, and the memory of this store was not rebuilt.
	Superseded bool
	// Duration is the time the whole compaction took.
	Duration time.Duration
}
