package matrixone

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/day1ai/day1/store"
)

// CreateBranch forks a branch: a new table set (one table per record kind) holding the
// parent's records as of the fork. On servers with DATA BRANCH (Capabilities.BranchPath
// "native") a fork is a zero-copy DATA BRANCH CREATE TABLE per kind, from the parent's
// head, and a fork from the past (a snapshot or an instant) is one too when few versions
// were written or closed since, which are then taken out of the new tables
// (trimCheaper); otherwise it is CREATE TABLE ... LIKE plus an INSERT ... SELECT of the
// versions visible at the fork point, the kinds in parallel, a copy whose cost grows
// with the parent's size. Both run without the write locks, at
// the revision committed when they start: writes go on meanwhile, and the branch sees
// none of them (ForkedAt is the last instant of that revision). Only the branch's row
// is written under the lock, so no DDL ever waits on a lock its own caller holds.
func (s *Store) CreateBranch(ctx context.Context, spec store.BranchSpec) (store.Branch, error) {
	if err := store.ValidateBranchSpec(spec); err != nil {
		return store.Branch{}, err
	}
	if spec.At.Snapshot != "" {
		if err := store.ValidateID("BranchSpec.At.Snapshot", spec.At.Snapshot); err != nil {
			return store.Branch{}, err
		}
	}
	if err := s.usable(ctx); err != nil {
		return store.Branch{}, err
	}
	if _, err := loadBranch(ctx, s.db, spec.Name); err == nil {
		return store.Branch{}, fmt.Errorf("%w: %q", store.ErrBranchExists, spec.Name)
	} else if !errors.Is(err, store.ErrBranchNotFound) {
		return store.Branch{}, wrap(ctx, "CreateBranch", err)
	}
	from := spec.From
	var snap snapRow
	if spec.At.Snapshot != "" {
		var err error
		if snap, err = loadSnapshot(ctx, s.db, spec.At.Snapshot); err != nil {
			return store.Branch{}, wrap(ctx, "CreateBranch", err)
		}
		if from == "" {
			from = snap.info.Branch
		}
	}
	if from == "" {
		from = store.DefaultBranch
	}
	parent, err := loadBranch(ctx, s.db, from)
	if err != nil {
		return store.Branch{}, wrap(ctx, "CreateBranch", err)
	}
	suffix, err := s.allocSuffix(ctx)
	if err != nil {
		return store.Branch{}, err
	}
	drop := func() { s.dropTables(context.WithoutCancel(ctx), suffix) }
	// Both paths make the tables outside the write locks: the versions visible at a
	// revision never change (a write only adds versions above it and closes older ones
	// above it), so tables made from a committed revision are consistent while writers
	// go on.
	p, err := s.resolve(ctx, s.db, store.View{Branch: from, At: spec.At})
	if err != nil {
		return store.Branch{}, wrap(ctx, "CreateBranch", err)
	}
	native := s.caps.DataBranch
	if native && !spec.At.IsHead() {
		if native, err = s.trimCheaper(ctx, p); err != nil {
			return store.Branch{}, wrap(ctx, "CreateBranch", err)
		}
	}
	if s.beforeFork != nil {
		s.beforeFork()
	}
	if native {
		err = s.nativeTables(ctx, suffix, p)
	} else {
		err = s.copyTables(ctx, suffix, parent.suffix, p, spec.At.IsHead())
	}
	if err != nil {
		drop()
		return store.Branch{}, wrap(ctx, "CreateBranch", err)
	}
	var out store.Branch
	err = s.write(ctx, "CreateBranch", writeSpec{branches: []string{spec.Name, from}}, func(w *writeTx) error {
		if _, err := w.lockedBranch(ctx, spec.Name); err == nil {
			return fmt.Errorf("%w: %q", store.ErrBranchExists, spec.Name)
		}
		if _, err := w.lockedBranch(ctx, p.tab.info.Name); err != nil {
			return err // the parent was deleted meanwhile
		}
		rev, err := w.bump(ctx)
		if err != nil {
			return err
		}
		forkedAt := w.now
		switch {
		case spec.At.Snapshot != "":
			forkedAt = snap.info.At
		case !spec.At.Time.IsZero():
			forkedAt = micro(spec.At.Time)
		case p.cut < w.rev:
			// Commits came after the copied revision: the fork instant is the last one
			// that still names it.
			var next time.Time
			if err := w.QueryRowContext(ctx, "SELECT at FROM day1_commits WHERE rev = ?", p.cut+1).Scan(&next); err != nil {
				return err
			}
			forkedAt = next.UTC().Add(-time.Microsecond)
		}
		out = store.Branch{Name: spec.Name, Parent: from, ForkedAt: forkedAt, FromSnap: spec.At.Snapshot,
			Status: store.BranchActive, Description: spec.Description, Metadata: maps.Clone(spec.Metadata),
			CreatedAt: w.now, Head: uint64(rev)}
		path := BranchPathPortable
		if native {
			path = BranchPathNative
		}
		_, err = w.ExecContext(ctx, "INSERT INTO day1_branches (name, suffix, parent, forked_at, fork_rev, created_rev, from_snap, status, description, metadata, created_at, merged_at, merged_into, head, fork_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, '', ?, ?)",
			out.Name, suffix, out.Parent, out.ForkedAt, p.cut, rev, out.FromSnap, string(out.Status), out.Description,
			metaText(out.Metadata), out.CreatedAt, rev, path)
		if isDup(err) {
			return withSentinel("CreateBranch", store.ErrBranchExists, err)
		}
		return err
	})
	if err != nil {
		drop()
		return store.Branch{}, err
	}
	return out, nil
}

// nativeTables forks a branch's tables from p's with DATA BRANCH CREATE, in autocommit
// and without the write locks, one connection per table, the tables at once. The server
// copies the parent's tables as they are when each statement runs, which may hold
// commits after p.cut: trimRaced takes them out.
func (s *Store) nativeTables(ctx context.Context, suffix string, p pos) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, stmt := range nativeCreateSQL(suffix, p.tab.suffix) {
		g.Go(func() error {
			_, err := s.db.ExecContext(gctx, stmt)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := s.trimRaced(ctx, suffix, p); err != nil {
		return err
	}
	// A table made by DATA BRANCH may come without the FULLTEXT index; without it
	// keyword search on the branch takes the scan, so a failure here costs speed,
	// not the branch.
	s.ensureBranchIndexes(ctx, suffix)
	return nil
}

// trimShare is the largest share of the rows of a branch's tables that a fork from
// their past on a server with DATA BRANCH trims rather than copies (trimCheaper).
const trimShare = 20

// trimCheaper reports whether a fork from the past of p's tables (a snapshot or an
// instant) is cheaper as DATA BRANCH CREATE of the tables as they are now, then the
// versions written or closed after p.cut taken out (trimRaced), than as a copy of the
// versions visible at p.cut: when those versions number at most one in trimShare of
// the tables' rows. The trim costs a write per version, the copy a read and a write
// per visible one; a snapshot taken a little while ago trims a few rows. With the
// parent's head still at p.cut there is nothing to trim, and nothing is counted.
func (s *Store) trimCheaper(ctx context.Context, p pos) (bool, error) {
	moved, err := s.movedPast(ctx, p)
	if err != nil || !moved {
		return err == nil, err
	}
	parts := make([]string, 0, len(store.AllKinds))
	var args []any
	for _, k := range store.AllKinds {
		parts = append(parts, "SELECT COUNT(*) AS n, COALESCE(SUM(CASE WHEN rev > ? OR (next_rev > ? AND next_rev <> ?) THEN 1 ELSE 0 END), 0) AS later FROM "+
			table(k, p.tab.suffix))
		args = append(args, p.cut, p.cut, int64(never))
	}
	var rows, later int64
	err = s.db.QueryRowContext(ctx, "SELECT SUM(n), SUM(later) FROM ("+strings.Join(parts, " UNION ALL ")+") c", args...).Scan(&rows, &later)
	if err != nil {
		return false, err
	}
	return later*trimShare <= rows, nil
}

// trimRaced makes a branch's new tables, copied from p's tables as they were when the
// copy ran, hold what was visible at p.cut: when the parent's head moved past it, the
// versions written after it are deleted and those closed after it opened again
// (forkFixup). With the head at p.cut or below (movedPast), the tables hold what was
// visible at p.cut already. Only commits that raced the fork are touched, a handful of
// rows, and for a native fork from the past those trimCheaper counted.
func (s *Store) trimRaced(ctx context.Context, suffix string, p pos) error {
	if moved, err := s.movedPast(ctx, p); err != nil || !moved {
		return err
	}
	return s.forkFixup(ctx, suffix, p.cut)
}

// movedPast reports whether the head of the branch whose tables p reads has moved
// past p.cut: every commit to its tables moves it.
func (s *Store) movedPast(ctx context.Context, p pos) (bool, error) {
	var head int64
	if err := s.db.QueryRowContext(ctx, "SELECT head FROM day1_branches WHERE name = ?", p.tab.info.Name).Scan(&head); err != nil {
		return false, err
	}
	return head > p.cut, nil
}

// forkFixup deletes from a branch's new tables the versions written after cut and
// opens again those closed after it.
func (s *Store) forkFixup(ctx context.Context, suffix string, cut int64) error {
	return s.inTx(ctx, "CreateBranch", func(tx *sql.Tx) error {
		for _, k := range store.AllKinds {
			t := table(k, suffix)
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE rev > ?", cut); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "UPDATE "+t+" SET next_rev = ? WHERE next_rev > ? AND next_rev <> ?", int64(never), cut, int64(never)); err != nil {
				return err
			}
		}
		return nil
	})
}

// copyTables makes a branch's tables shaped like its parent's (templ, the parent's
// suffix) and copies into them the versions of p's tables visible at p.cut, one
// connection per kind, the kinds at once. A fork from the parent's head (atHead)
// copies the versions current then, as the copy finds them, and trims the commits
// that raced it (trimRaced); see copySQL.
func (s *Store) copyTables(ctx context.Context, suffix, templ string, p pos, atHead bool) error {
	creates := portableCreateSQL(suffix, templ)
	copies, args := copySQL(suffix, p.tab.suffix, p.cut, atHead)
	g, gctx := errgroup.WithContext(ctx)
	for i, k := range store.AllKinds {
		g.Go(func() error {
			if _, err := s.db.ExecContext(gctx, creates[i]); err != nil {
				return err
			}
			if slices.Contains(searchKinds, k) {
				if err := s.prepareCopy(gctx, k, suffix, templ); err != nil {
					return err
				}
			}
			_, err := s.db.ExecContext(gctx, copies[i], args...)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if !atHead {
		return nil
	}
	return s.trimRaced(ctx, suffix, p)
}

// allocSuffix takes the next table suffix, "b1", "b2", ...: short, safe identifiers,
// whatever the branch name (names like task/fix-auth/agent-a are not identifiers, and
// MatrixOne cuts identifiers over 64 characters silently).
func (s *Store) allocSuffix(ctx context.Context) (string, error) {
	var n int64
	err := s.inTx(ctx, "CreateBranch", func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "SELECT next_suffix FROM day1_state WHERE id = 1 FOR UPDATE").Scan(&n); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "UPDATE day1_state SET next_suffix = ? WHERE id = 1", n+1)
		return err
	})
	return suffixName(n), err
}

// suffixName is the table suffix of counter value n.
func suffixName(n int64) string { return fmt.Sprintf("b%d", n) }

// portableCreateSQL creates a branch's empty tables shaped like its parent's.
func portableCreateSQL(suffix, parentSuffix string) []string {
	out := make([]string, 0, len(store.AllKinds))
	for _, k := range store.AllKinds {
		out = append(out, "CREATE TABLE "+table(k, suffix)+" LIKE "+table(k, parentSuffix))
	}
	return out
}

// copySQL returns the statements that copy the versions visible at cut into a
// branch's tables, as current versions, and their arguments. Tombstones are copied
// too: diffs see them.
//
// With atHead, for a cut that was the last committed revision, they copy the versions
// not closed at the cut: those visible then, and any written since, which trimRaced
// deletes. A filter on any other column makes the
// 2024-11 server's INSERT ... SELECT of a 100k-row table take 5.5-6 s, against
// 2.4-2.5 s with next_rev's alone and 2.0-2.2 s with none.
func copySQL(suffix, fromSuffix string, cut int64, atHead bool) ([]string, []any) {
	where, args := " WHERE rev <= ? AND next_rev > ?", []any{cut, cut}
	if atHead {
		where, args = " WHERE next_rev > ?", []any{cut}
	}
	out := make([]string, 0, len(store.AllKinds))
	for _, k := range store.AllKinds {
		cols := specs[k].allCols()
		sel := slices.Clone(cols)
		sel[slices.Index(cols, "`next_rev`")] = fmt.Sprint(int64(never))
		out = append(out, "INSERT INTO "+table(k, suffix)+" ("+strings.Join(cols, ", ")+") SELECT "+
			strings.Join(sel, ", ")+" FROM "+table(k, fromSuffix)+where)
	}
	return out, args
}

// nativeCreateSQL forks a branch's tables with MatrixOne's DATA BRANCH (3.x): zero-copy,
// every version of the parent's tables included (versions replaced before the fork stay
// invisible to reads at or after it).
func nativeCreateSQL(suffix, fromSuffix string) []string {
	out := make([]string, 0, len(store.AllKinds))
	for _, k := range store.AllKinds {
		out = append(out, "DATA BRANCH CREATE TABLE "+table(k, suffix)+" FROM "+table(k, fromSuffix))
	}
	return out
}

// dropSQL drops a branch's tables.
func dropSQL(suffix string) []string {
	out := make([]string, 0, len(store.AllKinds))
	for _, k := range store.AllKinds {
		out = append(out, "DROP TABLE IF EXISTS "+table(k, suffix))
	}
	return out
}

func (s *Store) dropTables(ctx context.Context, suffix string) error {
	var first error
	for _, stmt := range dropSQL(suffix) {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil && first == nil {
			first = wrap(ctx, "DeleteBranch", err)
		}
	}
	return first
}

// GetBranch returns a branch or store.ErrBranchNotFound.
func (s *Store) GetBranch(ctx context.Context, name string) (store.Branch, error) {
	if err := s.usable(ctx); err != nil {
		return store.Branch{}, err
	}
	if err := store.ValidateBranchName("name", name); err != nil {
		return store.Branch{}, err
	}
	return retryIdempotent(ctx, s, "GetBranch", func() (store.Branch, error) {
		b, err := loadBranch(ctx, s.db, name)
		return b.info, wrap(ctx, "GetBranch", err)
	})
}

// ListBranches returns branches sorted by name.
func (s *Store) ListBranches(ctx context.Context, f store.BranchFilter) ([]store.Branch, error) {
	if f.Status != "" && !f.Status.Valid() {
		return nil, store.Invalid("BranchFilter.Status", "must be active, merged or archived", f.Status)
	}
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return retryIdempotent(ctx, s, "ListBranches", func() ([]store.Branch, error) {
		b := psql.Select(branchCols).From("day1_branches").OrderBy("name")
		if f.Status != "" {
			b = b.Where("status = ?", string(f.Status))
		}
		if f.Parent != "" {
			b = b.Where("parent = ?", f.Parent)
		}
		query, args, _ := b.ToSql()
		rs, err := s.db.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, wrap(ctx, "ListBranches", err)
		}
		defer rs.Close()
		var out []store.Branch
		for rs.Next() {
			br, err := scanBranch(rs)
			if err != nil {
				return nil, wrap(ctx, "ListBranches", err)
			}
			if strings.HasPrefix(br.info.Name, f.Prefix) {
				out = append(out, br.info)
			}
		}
		if err := rs.Err(); err != nil {
			return nil, wrap(ctx, "ListBranches", err)
		}
		slices.SortFunc(out, func(a, b store.Branch) int { return strings.Compare(a.Name, b.Name) })
		return out, nil
	})
}

// SetBranchStatus archives, reactivates or marks a branch merged.
func (s *Store) SetBranchStatus(ctx context.Context, name string, status store.BranchStatus) (store.Branch, error) {
	if err := store.ValidateBranchStatus(name, status); err != nil {
		return store.Branch{}, err
	}
	if err := s.usable(ctx); err != nil {
		return store.Branch{}, err
	}
	if err := store.ValidateBranchName("name", name); err != nil {
		return store.Branch{}, err
	}
	var out store.Branch
	err := s.write(ctx, "SetBranchStatus", writeSpec{branches: []string{name}}, func(w *writeTx) error {
		b, err := w.lockedBranch(ctx, name)
		if err != nil {
			return err
		}
		out = b.info
		if b.info.Status == status {
			return nil
		}
		out.Status = status
		if status == store.BranchMerged {
			out.MergedInto, out.MergedAt = "", w.now
			_, err = w.ExecContext(ctx, "UPDATE day1_branches SET status = ?, merged_into = '', merged_at = ? WHERE name = ?", string(status), w.now, name)
			return err
		}
		_, err = w.ExecContext(ctx, "UPDATE day1_branches SET status = ? WHERE name = ?", string(status), name)
		return err
	})
	return out, err
}

// DeleteBranch removes a branch and drops its tables. The default branch, a branch
// with children and a branch with snapshots cannot be deleted (ErrInvalidArgument).
func (s *Store) DeleteBranch(ctx context.Context, name string) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	if err := store.ValidateBranchName("name", name); err != nil {
		return err
	}
	var suffix, landedIn string
	var forkRev int64
	err := s.write(ctx, "DeleteBranch", writeSpec{branches: []string{name}}, func(w *writeTx) error {
		b, err := w.lockedBranch(ctx, name)
		if err != nil {
			return err
		}
		if name == store.DefaultBranch {
			return store.Invalid("name", "the default branch cannot be deleted", name)
		}
		var other string
		err = w.QueryRowContext(ctx, "SELECT name FROM day1_branches WHERE parent = ? ORDER BY name LIMIT 1", name).Scan(&other)
		if err == nil {
			return store.Invalid("name", fmt.Sprintf("branch has child %q; delete or keep its children first", other), name)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		err = w.QueryRowContext(ctx, "SELECT name FROM day1_snapshots WHERE branch = ? ORDER BY name LIMIT 1", name).Scan(&other)
		if err == nil {
			return store.Invalid("name", fmt.Sprintf("branch has snapshot %q; delete it first", other), name)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		suffix, forkRev = b.suffix, b.forkRev
		// A branch merged into its parent may have landed there (Land): the parent's
		// copies share the vids, and so the embeddings, of what it wrote.
		err = w.QueryRowContext(ctx, "SELECT 1 FROM day1_merges WHERE source = ? AND target = ? LIMIT 1", name, b.info.Parent).Scan(new(int))
		switch {
		case err == nil:
			p, err := loadBranch(ctx, w, b.info.Parent)
			if err != nil {
				return err
			}
			landedIn = p.suffix
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		_, err = w.ExecContext(ctx, "DELETE FROM day1_branches WHERE name = ?", name)
		return err
	})
	if err != nil {
		return err
	}
	// DDL runs after the commit, outside the transaction; a failure leaves unreferenced
	// tables (or embeddings) behind, which no later branch reuses (suffixes are never
	// reused).
	ctx = context.WithoutCancel(ctx)
	err = s.dropVectors(ctx, suffix, forkRev, landedIn)
	return errors.Join(err, s.dropTables(ctx, suffix))
}

// dropVectors deletes the embeddings of the versions a branch's tables hold and no
// other branch's do: those the branch wrote after its fork (revisions above forkRev;
// its children, which would hold them too, are gone), and those migration 012 gave
// vids of this table (see moveVectors). With parent, the suffix of the parent it was
// merged into, those the parent's tables hold since the fork stay: a landing copied
// them there (Land).
func (s *Store) dropVectors(ctx context.Context, suffix string, forkRev int64, parent string) error {
	num, err := strconv.ParseInt(strings.TrimPrefix(suffix, "b"), 10, 64)
	if err != nil {
		return fmt.Errorf("day1: matrixone: branch suffix %q: %w", suffix, err)
	}
	lo, hi := -(num+1)<<vidShift, -num<<vidShift
	var first error
	for _, k := range vectorKinds {
		query := "DELETE FROM " + vecTable(k) + " WHERE vid IN (SELECT vid FROM " + table(k, suffix) + " WHERE rev > ? OR (vid >= ? AND vid < ?))"
		args := []any{forkRev, lo, hi}
		if parent != "" {
			query += " AND vid NOT IN (SELECT vid FROM " + table(k, parent) + " WHERE rev > ?)"
			args = append(args, forkRev)
		}
		_, err := s.db.ExecContext(ctx, query, args...)
		if err != nil && !isNoTable(err) && first == nil {
			first = wrap(ctx, "DeleteBranch", err)
		}
	}
	return first
}

// snapRow is a snapshot with the revision it names.
type snapRow struct {
	info store.Snapshot
	rev  int64
}

const snapCols = "name, branch, rev, at, description, created_at"

func scanSnap(sc scanner) (snapRow, error) {
	var sn snapRow
	err := sc.Scan(&sn.info.Name, &sn.info.Branch, &sn.rev, &sn.info.At, &sn.info.Description, &sn.info.CreatedAt)
	sn.info.At, sn.info.CreatedAt = sn.info.At.UTC(), sn.info.CreatedAt.UTC()
	return sn, err
}

func loadSnapshot(ctx context.Context, q queryer, name string) (snapRow, error) {
	sn, err := scanSnap(q.QueryRowContext(ctx, "SELECT "+snapCols+" FROM day1_snapshots WHERE name = ?", name))
	if errors.Is(err, sql.ErrNoRows) {
		return sn, fmt.Errorf("%w: %q", store.ErrSnapshotNotFound, name)
	}
	return sn, err
}

// CreateSnapshot names the current head of a branch: the store revision at that moment.
// Reads at the snapshot resolve to that revision in the branch's own version history,
// so they need no server snapshot and no retention window.
func (s *Store) CreateSnapshot(ctx context.Context, branch, name, description string) (store.Snapshot, error) {
	if err := store.ValidateID("name", name); err != nil {
		return store.Snapshot{}, err
	}
	if err := s.usable(ctx); err != nil {
		return store.Snapshot{}, err
	}
	if err := store.ValidateBranchName("branch", branch); err != nil {
		return store.Snapshot{}, err
	}
	var out store.Snapshot
	err := s.write(ctx, "CreateSnapshot", writeSpec{branches: []string{branch}}, func(w *writeTx) error {
		if _, err := w.lockedBranch(ctx, branch); err != nil {
			return err
		}
		if _, err := loadSnapshot(ctx, w, name); err == nil {
			return fmt.Errorf("%w: %q", store.ErrSnapshotExists, name)
		} else if !errors.Is(err, store.ErrSnapshotNotFound) {
			return err
		}
		rev, err := w.bump(ctx)
		if err != nil {
			return err
		}
		out = store.Snapshot{Name: name, Branch: branch, At: w.now, Description: description, CreatedAt: w.now}
		_, err = w.ExecContext(ctx, "INSERT INTO day1_snapshots ("+snapCols+") VALUES (?, ?, ?, ?, ?, ?)",
			name, branch, rev, w.now, description, w.now)
		if isDup(err) {
			return withSentinel("CreateSnapshot", store.ErrSnapshotExists, err)
		}
		return err
	})
	return out, err
}

// GetSnapshot returns a snapshot or store.ErrSnapshotNotFound.
func (s *Store) GetSnapshot(ctx context.Context, name string) (store.Snapshot, error) {
	if err := s.usable(ctx); err != nil {
		return store.Snapshot{}, err
	}
	return retryIdempotent(ctx, s, "GetSnapshot", func() (store.Snapshot, error) {
		sn, err := loadSnapshot(ctx, s.db, name)
		return sn.info, wrap(ctx, "GetSnapshot", err)
	})
}

// ListSnapshots returns the snapshots of a branch (all when branch is empty), oldest
// first.
func (s *Store) ListSnapshots(ctx context.Context, branch string) ([]store.Snapshot, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return retryIdempotent(ctx, s, "ListSnapshots", func() ([]store.Snapshot, error) {
		b := psql.Select(snapCols).From("day1_snapshots").OrderBy("at", "rev", "name")
		if branch != "" {
			b = b.Where("branch = ?", branch)
		}
		query, args, _ := b.ToSql()
		rs, err := s.db.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, wrap(ctx, "ListSnapshots", err)
		}
		defer rs.Close()
		var out []store.Snapshot
		for rs.Next() {
			sn, err := scanSnap(rs)
			if err != nil {
				return nil, wrap(ctx, "ListSnapshots", err)
			}
			out = append(out, sn.info)
		}
		return out, wrap(ctx, "ListSnapshots", rs.Err())
	})
}

// DeleteSnapshot removes a snapshot; branches forked from it are unaffected.
func (s *Store) DeleteSnapshot(ctx context.Context, name string) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	return s.write(ctx, "DeleteSnapshot", writeSpec{}, func(w *writeTx) error {
		res, err := w.ExecContext(ctx, "DELETE FROM day1_snapshots WHERE name = ?", name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return fmt.Errorf("%w: %q", store.ErrSnapshotNotFound, name)
		}
		return nil
	})
}

// PutSession creates or replaces a session.
func (s *Store) PutSession(ctx context.Context, sess store.Session) (store.Session, error) {
	sess, err := store.NormalizeSession(sess)
	if err != nil {
		return store.Session{}, err
	}
	if err := s.usable(ctx); err != nil {
		return store.Session{}, err
	}
	if sess.StartedAt.IsZero() {
		sess.StartedAt = micro(s.opts.Now())
	}
	sess.StartedAt = sess.StartedAt.UTC()
	sess.EndedAt = sess.EndedAt.UTC()
	sess.Metadata = maps.Clone(sess.Metadata)
	body, err := json.Marshal(sess)
	if err != nil {
		return store.Session{}, store.Invalid("Session", err.Error(), nil)
	}
	return retryIdempotent(ctx, s, "PutSession", func() (store.Session, error) {
		_, err := s.db.ExecContext(ctx, `INSERT INTO day1_sessions (id, branch, agent_id, task_id, status, started_at, body)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE branch = VALUES(branch), agent_id = VALUES(agent_id),
			task_id = VALUES(task_id), status = VALUES(status), started_at = VALUES(started_at), body = VALUES(body)`,
			sess.ID, sess.Branch, sess.AgentID, sess.TaskID, string(sess.Status), sess.StartedAt, string(body))
		return sess, wrap(ctx, "PutSession", err)
	})
}

// GetSession returns a session or store.ErrNotFound.
func (s *Store) GetSession(ctx context.Context, id string) (store.Session, error) {
	if err := s.usable(ctx); err != nil {
		return store.Session{}, err
	}
	return retryIdempotent(ctx, s, "GetSession", func() (store.Session, error) {
		var body string
		err := s.db.QueryRowContext(ctx, "SELECT body FROM day1_sessions WHERE id = ?", id).Scan(&body)
		if errors.Is(err, sql.ErrNoRows) {
			return store.Session{}, fmt.Errorf("%w: session %q", store.ErrNotFound, id)
		}
		if err != nil {
			return store.Session{}, wrap(ctx, "GetSession", err)
		}
		return decodeSession(body)
	})
}

func decodeSession(body string) (store.Session, error) {
	var sess store.Session
	if err := json.Unmarshal([]byte(body), &sess); err != nil {
		return sess, fmt.Errorf("day1: matrixone: decoding a session: %w", err)
	}
	sess.StartedAt, sess.EndedAt = sess.StartedAt.UTC(), sess.EndedAt.UTC()
	if sess.EndedAt.Equal(time.Time{}) {
		sess.EndedAt = time.Time{}
	}
	return sess, nil
}

// ListSessions returns sessions, oldest first.
func (s *Store) ListSessions(ctx context.Context, f store.SessionFilter) ([]store.Session, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return retryIdempotent(ctx, s, "ListSessions", func() ([]store.Session, error) {
		b := psql.Select("body").From("day1_sessions").OrderBy("started_at", "id")
		for col, v := range map[string]string{"branch": f.Branch, "agent_id": f.AgentID, "task_id": f.TaskID, "status": string(f.Status)} {
			if v != "" {
				b = b.Where(col+" = ?", v)
			}
		}
		query, args, _ := b.ToSql()
		rs, err := s.db.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, wrap(ctx, "ListSessions", err)
		}
		defer rs.Close()
		var out []store.Session
		for rs.Next() {
			var body string
			if err := rs.Scan(&body); err != nil {
				return nil, wrap(ctx, "ListSessions", err)
			}
			sess, err := decodeSession(body)
			if err != nil {
				return nil, err
			}
			out = append(out, sess)
		}
		if err := rs.Err(); err != nil {
			return nil, wrap(ctx, "ListSessions", err)
		}
		slices.SortStableFunc(out, func(a, b store.Session) int {
			if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		return out, nil
	})
}
