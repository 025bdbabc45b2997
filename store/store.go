// Package store holds day1's data model, the Store interface every storage backend
// implements, and the errors they return.
//
// A Store keeps branched records (facts, observations, relations, conversations,
// messages) and global records (branches, snapshots, sessions, merge history). The
// semantics every implementation must give are specified once, as tests, in
// store/storetest. Three implementations pass them: store/memstore (a memory in the
// process, or the log store in a folder), store/portable over a driver (package
// store/driver: store/sqlite, a file many processes share, and store/memdriver, the
// process's memory), and store/matrixone. The portable store does every rule once
// above its drivers, which keep only versioned rows, branches and items.
//
// The rules every implementation follows are written here once, for them to call: the
// validation of records and requests (ValidateRecord, NormalizeSearch,
// ValidateMergePlan, ValidateBranchSpec, ValidateDeletes), how a diff is assembled
// (ChangeOf, Diff.AddChanges, SupersedeConflicts), and how a search's rankings become
// its hits (Fuse: the fusion, the context the records of a conversation or a session
// lend each other, Hit.Relevance and SearchQuery.MinRelevance), so that a search
// ranks and scores alike on every store. A backend's options open it through Opener,
// which a day1.Config carries as its Backend.
package store

import (
	"cmp"
	"context"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/day1ai/day1/internal/ids"
)

// Store is the contract between day1 and a storage backend: each of its roles
// (Records, Branches, Merges, Snapshots, Sessions, Docs) and Close. The engines each
// name the roles they use (handoff.Store, bundle.Store, ...), so that a store made for
// one of them needs only those.
//
// Every method honours ctx. Errors wrap the sentinels of this package so callers can test
// them with errors.Is; bad input is a *ValidationError. Methods are safe for concurrent use.
type Store interface {
	Records
	Branches
	Merges
	Snapshots
	Sessions
	Docs
	// Close releases the store. Later calls fail with ErrClosed.
	Close() error
}

// Records is the role of a Store that keeps the branched records.
type Records interface {
	// Put writes records to a branch as one atomic batch: all or none. The branch must
	// exist and be writable (not archived). Each record's Branch field is ignored and set
	// to branch. Ids are the caller's; a record whose id exists with equal content is
	// reported Deduplicated and not written again; with other content it becomes a new
	// version, reported Updated. A new fact whose text equals a live fact's, or whose
	// embedding is a near-duplicate (opts.DedupeThreshold) of a live fact on the branch,
	// is not added beside it: an equal text is Deduplicated; otherwise the new fact is
	// stored with ParentID set to the old one, which becomes FactSuperseded (Superseded).
	// Zero CreatedAt/UpdatedAt are stamped; zero Status, Confidence and ValidFrom default to
	// active, 1 and CreatedAt. A batch holding the same ref twice is a *ValidationError.
	Put(ctx context.Context, branch string, recs []Record, opts PutOptions) ([]PutResult, error)
	// Delete removes records from a branch (a tombstone: the past still shows them).
	// Deleting a record that does not exist is ErrNotFound and nothing is deleted.
	Delete(ctx context.Context, branch string, refs []Ref) error

	// Get returns one record as the view sees it, or ErrNotFound.
	Get(ctx context.Context, v View, ref Ref) (Record, error)
	// List returns the records of one kind that match the filter, in the asked order.
	List(ctx context.Context, v View, q ListQuery) ([]Record, error)
	// Search ranks facts and observations by keyword, vector or both.
	Search(ctx context.Context, v View, q SearchQuery) ([]Hit, error)
}

// Branches is the role of a Store that keeps branches.
type Branches interface {
	// CreateBranch forks a branch from a parent's head, or from a point in its past.
	// A store says in its documentation what a fork costs: constant time for the
	// embedded store; for MatrixOne, constant time on the native path and a copy
	// otherwise. ErrBranchExists if the name is taken.
	CreateBranch(ctx context.Context, spec BranchSpec) (Branch, error)
	// GetBranch returns a branch or ErrBranchNotFound.
	GetBranch(ctx context.Context, name string) (Branch, error)
	// ListBranches returns branches sorted by name.
	ListBranches(ctx context.Context, f BranchFilter) ([]Branch, error)
	// SetBranchStatus archives, reactivates or marks a branch merged. Archived branches
	// refuse writes (ErrBranchArchived) and stay readable.
	SetBranchStatus(ctx context.Context, name string, status BranchStatus) (Branch, error)
	// DeleteBranch removes a branch and its records. The default branch, and a branch
	// with children, cannot be deleted (ErrInvalidArgument names the reason).
	DeleteBranch(ctx context.Context, name string) error
}

// Merges is the role of a Store that diffs branches and merges them.
type Merges interface {
	// Diff lists the changes of source and target since their merge base.
	Diff(ctx context.Context, source, target string) (*Diff, error)
	// ApplyMerge applies a merge plan atomically and records it in the merge history.
	ApplyMerge(ctx context.Context, plan MergePlan) (MergeRecord, error)
	// ListMerges returns merge records, newest first.
	ListMerges(ctx context.Context, f MergeFilter) ([]MergeRecord, error)
}

// Snapshots is the role of a Store that names points of a branch's history.
type Snapshots interface {
	// CreateSnapshot names the current head of a branch. ErrSnapshotExists if taken.
	CreateSnapshot(ctx context.Context, branch, name, description string) (Snapshot, error)
	// GetSnapshot returns a snapshot or ErrSnapshotNotFound.
	GetSnapshot(ctx context.Context, name string) (Snapshot, error)
	// ListSnapshots returns the snapshots of a branch (all when branch is empty), oldest first.
	ListSnapshots(ctx context.Context, branch string) ([]Snapshot, error)
	// DeleteSnapshot removes a snapshot; branches forked from it are unaffected.
	DeleteSnapshot(ctx context.Context, name string) error
}

// Sessions is the role of a Store that keeps sessions.
type Sessions interface {
	// PutSession creates or replaces a session.
	PutSession(ctx context.Context, s Session) (Session, error)
	// GetSession returns a session or ErrNotFound.
	GetSession(ctx context.Context, id string) (Session, error)
	// ListSessions returns sessions, oldest first.
	ListSessions(ctx context.Context, f SessionFilter) ([]Session, error)
}

// Docs is the role of a Store that keeps the engines' documents.
type Docs interface {
	// WriteDocs applies document writes as one atomic batch: all or none. Each write's
	// precondition (DocWrite.Cond) is checked against the stored document; one that fails
	// fails the batch with a *DocConflictError (ErrStale), and a DocDelete of a missing
	// document with ErrNotFound. It returns the written documents, in order, with
	// Version, CreatedAt and UpdatedAt set (a deleted document as it was).
	WriteDocs(ctx context.Context, ws []DocWrite) ([]Doc, error)
	// GetDoc returns one document or ErrNotFound.
	GetDoc(ctx context.Context, collection, id string) (Doc, error)
	// ListDocs returns the documents of a collection that match the query, ordered by
	// CreatedAt then ID (reversed when q.Desc).
	ListDocs(ctx context.Context, q DocQuery) ([]Doc, error)
}

// LeanDiffer is an optional interface of a Store that can list a diff without copying
// embeddings. The merge engine uses it, when the store has it, for native and
// cherry-pick merges, whose plans write records as one side or the other holds them:
// a diff of a hundred facts then copies no vectors.
//
// DiffLean returns what Diff returns, except that the facts and observations in it
// carry no embeddings. In exchange, the store's ApplyMerge gives a fact or observation
// put without an embedding the embedding of the same record's version on the plan's
// source, as of MergePlan.SourceRev (the revision the diff read) or its current one,
// or of its current version on the target, when that version has the same search
// text; a put with another text keeps none. A plan applied after its source moved
// thus still finds the embeddings of the versions it was made from. Only records
// without an embedding are affected.
type LeanDiffer interface {
	DiffLean(ctx context.Context, source, target string) (*Diff, error)
}

// A Lander lands a branch on the branch it was forked from when that branch has not
// changed since the fork, a fast-forward: every record the source wrote is written to
// the target as it stands on the source (a deletion deletes), and rec is recorded as
// a merge of the two with a merge point, its Merged listing each record adopted or
// deleted, all in one commit. It reads and writes a
// chunk of records at a time, so its memory does not grow with the branch: what a
// bundle import lands its staging branch with. A target that changed since the fork,
// or a source that is not its child, is ErrStale, and nothing is written; the caller
// then merges as usual.
type Lander interface {
	Land(ctx context.Context, source, target string, rec MergeRecord) (MergeRecord, error)
}

// Landed completes the record of a landing (Lander.Land): its source and target, the
// items it merged after those rec lists, ordered by kind and id, and an id and a
// creation time (now) when rec has none.
func Landed(rec MergeRecord, source, target string, merged []MergeItem, now time.Time) MergeRecord {
	rec.Source, rec.Target = source, target
	slices.SortFunc(merged, func(a, b MergeItem) int {
		return cmp.Or(slices.Index(Kinds, a.Ref.Kind)-slices.Index(Kinds, b.Ref.Kind), strings.Compare(a.Ref.ID, b.Ref.ID))
	})
	rec.Merged = append(rec.Merged, merged...)
	if rec.ID == "" {
		rec.ID = ids.New()
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = now
	}
	return rec
}

// DiffLean lists the diff of source and target with no embeddings in its records: the
// store's DiffLean when it has one, else its Diff with the embeddings left out. A diff
// says what changed; on a store that keeps embeddings apart from the other columns
// (MatrixOne), reading them is most of a diff's cost, so callers that do not need them
// ask for this one.
func DiffLean(ctx context.Context, s Merges, source, target string) (*Diff, error) {
	var d *Diff
	var err error
	if ld, ok := s.(LeanDiffer); ok {
		d, err = ld.DiffLean(ctx, source, target)
	} else {
		d, err = s.Diff(ctx, source, target)
	}
	if err != nil {
		return nil, err
	}
	d.DropEmbeddings()
	return d, nil
}

// Durabler is the optional capability of a store that says whether what it
// acknowledges survives a restart of the process (Client.Capabilities reports it).
type Durabler interface {
	Durable() bool
}

// DiskSizer is the optional capability of a store that keeps its memory in files and
// says how many bytes they take on disk now (Client.DiskSize reports it).
type DiskSizer interface {
	DiskSize(ctx context.Context) (int64, error)
}

// ReadOnlyReporter is the optional capability of a store that may be open for
// reading only (refusing writes with ErrReadOnly) and says so.
type ReadOnlyReporter interface {
	ReadOnly() bool
}

// Namer is the optional capability of a store that names itself, such as "memstore"
// or "matrixone" (Client.Capabilities reports it).
type Namer interface {
	Name() string
}

// Aser is the optional capability of a store that exposes what lies beneath it (a
// connection pool, a wrapped store) to As. As sets target, a non-nil pointer, and
// reports whether it did.
type Aser interface {
	As(target any) bool
}

// As sets target, a non-nil pointer, to s when s is of the pointed-to type (or
// implements it, for an interface), or lets s's own As (Aser) set it, and reports
// whether either did. It is the escape hatch to what a backend offers beyond Store,
// in the shape of gocloud.dev's As: callers name the backend's type instead of
// asserting on it.
func As(s Store, target any) bool {
	if s == nil || target == nil {
		return false
	}
	p := reflect.ValueOf(target)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return false
	}
	if v := reflect.ValueOf(s); v.Type().AssignableTo(p.Elem().Type()) {
		p.Elem().Set(v)
		return true
	}
	if a, ok := s.(Aser); ok {
		return a.As(target)
	}
	return false
}

// Refresher is the optional capability of a store whose view can fall behind what
// another process committed (a read-only embedded store): Refresh brings it up to
// date. Client.Refresh calls it.
type Refresher interface {
	Refresh(ctx context.Context) error
}

// Compacter is the optional capability of a store that keeps its own files and can
// rewrite them smaller (the durable embedded store). Client.Compact calls it; a store
// that cannot compact in its present configuration returns an error matching
// ErrNotSupported.
type Compacter interface {
	Compact(ctx context.Context) (CompactStats, error)
}
