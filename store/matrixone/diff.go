package matrixone

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/day1ai/day1/internal/ids"
	"github.com/day1ai/day1/store"
)

// link is one branch of a chain, cut at a revision.
type link struct {
	b   branchRow
	cut int64
}

// branchSet is every branch, read once for a diff by loadBranches.
type branchSet map[string]branchRow

// loadBranches reads every branch and the store's current revision, in one
// statement: the branches are those that revision holds.
func loadBranches(ctx context.Context, q queryer) (branchSet, int64, error) {
	rs, err := q.QueryContext(ctx, "SELECT "+prefixed("b.", branchCols)+", s.rev FROM day1_branches b JOIN day1_state s ON s.id = 1")
	if err != nil {
		return nil, 0, err
	}
	defer rs.Close()
	bs := branchSet{}
	var rev int64
	for rs.Next() {
		b, err := scanBranch(rs, &rev)
		if err != nil {
			return nil, 0, err
		}
		bs[b.info.Name] = b
	}
	return bs, rev, rs.Err()
}

func (bs branchSet) get(name string) (branchRow, error) {
	b, ok := bs[name]
	if !ok {
		return b, fmt.Errorf("%w: %q", store.ErrBranchNotFound, name)
	}
	return b, nil
}

// chain returns a branch and its ancestors, each cut where the one below forked.
func (bs branchSet) chain(b branchRow, cut int64) ([]link, error) {
	out := []link{{b, cut}}
	for b.info.Parent != "" {
		cut = min(cut, b.forkRev)
		p, err := bs.get(b.info.Parent)
		if err != nil {
			return nil, err
		}
		out = append(out, link{p, cut})
		b = p
	}
	return out, nil
}

// tablesAt is tablesAt over the set.
func (bs branchSet) tablesAt(p pos) (pos, error) { return tablesAtWith(p, bs.get) }

// asParent is asParent over the set.
func (bs branchSet) asParent(p pos) pos {
	return asParent(p, func(name string) (branchRow, bool) { b, ok := bs[name]; return b, ok })
}

// mergeBase finds the nearest common ancestor of two chains and its cut.
func mergeBase(sc, tc []link) (link, bool) {
	for _, sl := range sc {
		for _, tl := range tc {
			if sl.b.info.Name == tl.b.info.Name {
				return link{sl.b, min(sl.cut, tl.cut)}, true
			}
		}
	}
	return link{}, false
}

// Diff lists the changes of source and target since their merge base: the fork
// point, or the last merge between them (see store.History). A side's changes are the
// ids whose versions in its tables, or in the base's, were written where the two
// histories part (inherited rows keep their revisions), so the diff reads only what
// changed; the merge base's versions come from the base branch's version history at
// its revision.
func (s *Store) Diff(ctx context.Context, source, target string) (*store.Diff, error) {
	if err := store.ValidateBranchName("source", source); err != nil {
		return nil, err
	}
	if err := store.ValidateBranchName("target", target); err != nil {
		return nil, err
	}
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return retryIdempotent(ctx, s, "Diff", func() (*store.Diff, error) {
		d, err := s.diff(ctx, s.db, source, target, false)
		return d, wrap(ctx, "Diff", err)
	})
}

var _ store.LeanDiffer = (*Store)(nil)

// DiffLean is Diff without the embeddings of facts, observations and messages
// (store.LeanDiffer), which the merge engine uses. It reads the versions it compares
// without their embeddings, but for the few whose other content is the same on two
// sides: on a large table that saves a block read per version (see leanCols).
func (s *Store) DiffLean(ctx context.Context, source, target string) (*store.Diff, error) {
	if err := store.ValidateBranchName("source", source); err != nil {
		return nil, err
	}
	if err := store.ValidateBranchName("target", target); err != nil {
		return nil, err
	}
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return retryIdempotent(ctx, s, "Diff", func() (*store.Diff, error) {
		d, err := s.diff(ctx, s.db, source, target, true)
		return d, wrap(ctx, "Diff", err)
	})
}

// diff computes a diff reading through q, which must be safe for concurrent use: the
// record kinds are read at once.
func (s *Store) diff(ctx context.Context, q queryer, source, target string, lean bool) (*store.Diff, error) {
	// Every branch once, with the revision both sides are read at: writes during the
	// diff do not show, and TargetHead matches what was compared. The history and the
	// chains of the diff come from the same branches.
	bs, head, err := loadBranches(ctx, q)
	if err != nil {
		return nil, err
	}
	sb, err := bs.get(source)
	if err != nil {
		return nil, err
	}
	tb, err := bs.get(target)
	if err != nil {
		return nil, err
	}
	hist, err := loadHistory(ctx, q, head, bs)
	if err != nil {
		return nil, err
	}
	base := hist.MergeBase(store.BranchRev{Branch: source, Rev: uint64(head)}, store.BranchRev{Branch: target, Rev: uint64(head)})
	d := &store.Diff{Source: source, Target: target, TargetHead: tb.info.Head, SourceRev: uint64(head)}
	scope := diffScope{bs: bs, sb: sb, tb: tb, head: head, base: base, points: map[store.BranchRev]pos{}, lean: lean}
	for b := base; b != nil; b = b.Below {
		for _, p := range b.Points {
			pb, err := bs.get(p.Branch)
			if err != nil {
				return nil, err
			}
			if scope.points[p], err = bs.tablesAt(pos{tab: pb, cut: int64(p.Rev)}); err != nil {
				return nil, err
			}
		}
	}
	if scope.ranges, err = changeRanges(bs, scope); err != nil {
		return nil, err
	}
	if len(base.Points) == 1 && s.caps.DiffPath == DiffPathNative {
		bp := scope.points[base.Points[0]]
		scope.child, scope.parent, scope.native = nativePair(sb, tb, link{bp.tab, bp.cut}, bp.cut)
	}
	// The time of the merge base and, on the portable path, the changed ids of every
	// kind, one query a range, all at once.
	g, gctx := errgroup.WithContext(ctx)
	if len(base.Points) > 0 {
		p := base.Points[0]
		d.Base = p.Branch
		if p.Rev == 0 {
			d.BaseAt = scope.points[p].tab.info.CreatedAt
		} else {
			g.Go(func() (err error) {
				d.BaseAt, err = timeOfRev(gctx, q, int64(p.Rev))
				return err
			})
		}
	}
	var ranged []map[store.Kind][]string
	if !scope.native {
		ranged = make([]map[store.Kind][]string, len(scope.ranges))
		for i, r := range scope.ranges {
			g.Go(func() (err error) {
				ranged[i], err = changedIDsAll(gctx, q, r.suffix, r.since, r.cut)
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// The kinds are read at once, each on connections of its own.
	found := make([]*diffSides, len(store.AllKinds))
	g, gctx = errgroup.WithContext(ctx)
	for i, k := range store.AllKinds {
		var changed map[string]bool
		if ranged != nil {
			changed = map[string]bool{}
			for _, byKind := range ranged {
				for _, id := range byKind[k] {
					changed[id] = true
				}
			}
			if len(changed) == 0 {
				continue
			}
		}
		g.Go(func() (err error) {
			found[i], err = s.diffKind(gctx, q, k, scope, changed)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var keys []key
	got := map[store.Kind]*diffSides{}
	for i, k := range store.AllKinds {
		if sd := found[i]; sd != nil {
			got[k] = sd
			for _, id := range sd.ids {
				keys = append(keys, key{k, id})
			}
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := slices.Index(store.AllKinds, a.kind) - slices.Index(store.AllKinds, b.kind); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	for _, k := range keys {
		sd := got[k.kind]
		after, theirs := sd.src[k.id].rec, sd.tgt[k.id].rec
		if store.Equivalent(after, theirs) {
			continue
		}
		before := store.ResolveBase(base, func(p store.BranchRev) store.Record { return sd.before[p][k.id].rec }, store.Equivalent)
		scg, sok := store.ChangeOf(store.Ref{Kind: k.kind, ID: k.id}, before, withBranch(after, source))
		tcg, tok := store.ChangeOf(store.Ref{Kind: k.kind, ID: k.id}, before, withBranch(theirs, target))
		if sok && tok && store.Agree(after, theirs) {
			continue
		}
		d.AddChanges(scg, sok, tcg, tok)
	}
	if lean {
		// The versions read whole to be compared leave their embeddings here.
		d.DropEmbeddings()
	}
	d.Conflicts = append(d.Conflicts, store.SupersedeConflicts(d)...)
	return d, nil
}

// loadHistory reads the forks of every branch and the merge points recorded up to
// head. A merge point is kept only when both its branches existed when it was made,
// so a branch deleted and made again under the same name starts afresh.
func loadHistory(ctx context.Context, q queryer, head int64, bs branchSet) (*store.History, error) {
	h := &store.History{}
	created := map[string]int64{}
	for name, b := range bs {
		created[name] = b.createdRev
		h.AddBranch(name, b.info.Parent, uint64(b.forkRev))
	}
	rs, err := q.QueryContext(ctx, "SELECT target, rev, source, source_rev FROM day1_merges WHERE source_rev > 0 AND rev <= ? ORDER BY rev", head)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	for rs.Next() {
		var m store.MergePoint
		var at, from int64
		if err := rs.Scan(&m.Target, &at, &m.Source, &from); err != nil {
			return nil, err
		}
		tc, tok := created[m.Target]
		sc, sok := created[m.Source]
		if !tok || !sok || at < tc || from < sc {
			continue
		}
		m.At, m.SourceAt = uint64(at), uint64(from)
		h.AddMerge(m)
	}
	return h, rs.Err()
}

// diffScope is what every kind of a diff is read with.
type diffScope struct {
	bs     branchSet // every branch
	sb, tb branchRow // source and target
	head   int64     // both sides are read at head
	base   *store.Base
	points map[store.BranchRev]pos // the tables and cut of every point of base
	ranges []idRange               // where changed ids are listed
	// native: the changed ids come from DATA BRANCH DIFF between the child's and the
	// parent's tables (nativePair).
	native        bool
	child, parent string
	// lean: the versions are read without their embeddings, but for the ids whose
	// versions on two sides differ at most in them (DiffLean).
	lean bool
}

// idRange is a table's rows whose versions were written in (since, cut] and are
// current at cut: where a side's history and the merge base's part.
type idRange struct {
	suffix     string
	since, cut int64
}

// changeRanges returns where the ids a diff compares are listed: for each side and
// each point of the merge base, the rows of the side's tables and of the base's
// written since the two histories parted. An id with no version there resolves the
// same on the side as at the base.
func changeRanges(bs branchSet, sc diffScope) ([]idRange, error) {
	var out []idRange
	for _, side := range []branchRow{sc.sb, sc.tb} {
		sideChain, err := bs.chain(side, sc.head)
		if err != nil {
			return nil, err
		}
		for _, p := range sc.base.Points {
			bp := sc.points[p]
			if bp.tab.suffix == side.suffix {
				out = append(out, idRange{side.suffix, bp.cut, sc.head})
				continue
			}
			baseChain, err := bs.chain(bp.tab, bp.cut)
			if err != nil {
				return nil, err
			}
			parted := int64(-1)
			if common, ok := mergeBase(sideChain, baseChain); ok {
				parted = common.cut
			}
			out = append(out, idRange{side.suffix, parted, sc.head})
			if parted < bp.cut {
				out = append(out, idRange{bp.tab.suffix, parted, bp.cut})
			}
		}
		if len(sc.base.Points) == 0 {
			out = append(out, idRange{side.suffix, -1, sc.head})
		}
	}
	return out, nil
}

// diffSides holds one kind's changed ids and their versions at each point of the
// merge base and on each side.
type diffSides struct {
	ids      []string
	before   map[store.BranchRev]map[string]row
	src, tgt map[string]row // by id; a missing id has the zero row, whose rec is nil
}

// diffKind reads one kind of a diff: nil when nothing of the kind changed. changed,
// when not nil, holds the kind's changed ids, listed already; else diffKind lists them.
// q must be safe for concurrent use (a pool, not a transaction).
func (s *Store) diffKind(ctx context.Context, q queryer, k store.Kind, sc diffScope, changed map[string]bool) (*diffSides, error) {
	portable := changed == nil
	if changed == nil {
		changed = map[string]bool{}
	}
	if portable && sc.native {
		bp := sc.points[sc.base.Points[0]]
		list, err := nativeChangedIDs(ctx, q, k, sc.child, sc.parent, bp.cut, sc.head)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil {
			s.nativeDiffs.Add(1)
			portable = false
			for _, id := range list {
				changed[id] = true
			}
		}
	}
	if portable {
		for _, r := range sc.ranges {
			list, err := changedIDs(ctx, q, k, r.suffix, r.since, r.cut)
			if err != nil {
				return nil, err
			}
			for _, id := range list {
				changed[id] = true
			}
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	sd := &diffSides{ids: make([]string, 0, len(changed)), before: map[store.BranchRev]map[string]row{}}
	for id := range changed {
		sd.ids = append(sd.ids, id)
	}
	slices.Sort(sd.ids)
	lean := sc.lean && hasEmbedding(k)
	if err := s.readSides(ctx, q, k, sc, sd, sd.ids, lean); err != nil {
		return nil, err
	}
	if !lean {
		return sd, nil
	}
	// Two lean versions that are equivalent may differ in their embeddings, unless
	// they are one version (an id and a revision name one): those ids are read
	// again, whole, on every side.
	var whole []string
	for _, id := range sd.ids {
		vs := []row{sd.src[id], sd.tgt[id]}
		for _, b := range sd.before {
			vs = append(vs, b[id])
		}
		if anyEquivalent(vs) {
			whole = append(whole, id)
		}
	}
	if len(whole) == 0 {
		return sd, nil
	}
	again := &diffSides{before: map[store.BranchRev]map[string]row{}}
	if err := s.readSides(ctx, q, k, sc, again, whole, false); err != nil {
		return nil, err
	}
	for _, id := range whole {
		replace(sd.src, again.src, id)
		replace(sd.tgt, again.tgt, id)
		for p, b := range sd.before {
			replace(b, again.before[p], id)
		}
	}
	return sd, nil
}

// anyEquivalent reports whether two of the versions of vs are equivalent records and
// not one version.
func anyEquivalent(vs []row) bool {
	for i, a := range vs {
		for _, b := range vs[i+1:] {
			if a.rec != nil && b.rec != nil && a.rev != b.rev && store.Equivalent(a.rec, b.rec) {
				return true
			}
		}
	}
	return false
}

// replace sets m[id] to from[id], or deletes it when from has none.
func replace(m, from map[string]row, id string) {
	if r, ok := from[id]; ok {
		m[id] = r
	} else {
		delete(m, id)
	}
}

// readSides reads the versions of ids that a diff compares into sd: the source's and
// the target's at the diff's revision, and each merge base point's, at once, an
// unwritten branch's from its parent's tables (asParent), each table and revision
// once (a fresh target and the base it was forked at are often one); lean ones
// without their embeddings.
func (s *Store) readSides(ctx context.Context, q queryer, k store.Kind, sc diffScope, sd *diffSides, ids []string, lean bool) error {
	type at struct {
		suffix string
		cut    int64
	}
	var order []store.BranchRev
	for p := range sc.points {
		order = append(order, p)
	}
	// The positions read: the source, the target, then the points in order.
	wanted := []pos{sc.bs.asParent(pos{tab: sc.sb, cut: sc.head}), sc.bs.asParent(pos{tab: sc.tb, cut: sc.head})}
	for _, p := range order {
		wanted = append(wanted, sc.bs.asParent(sc.points[p]))
	}
	index := map[at]int{} // a position's place in reads
	var reads []at
	for _, p := range wanted {
		a := at{p.tab.suffix, p.cut}
		if _, ok := index[a]; !ok {
			index[a] = len(reads)
			reads = append(reads, a)
		}
	}
	rows := make([]map[string]row, len(reads))
	g, gctx := errgroup.WithContext(ctx)
	for i, a := range reads {
		g.Go(func() (err error) {
			rows[i], err = visibleRecords(gctx, q, k, a.suffix, a.cut, ids, lean)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// Sides read at one position share its map. The lean diff's second read replaces
	// an id's entry on every side, each with the version read again at that side's
	// position: the same version for sides that share a map.
	got := make([]map[string]row, len(wanted))
	for i, p := range wanted {
		got[i] = rows[index[at{p.tab.suffix, p.cut}]]
	}
	sd.src, sd.tgt = got[0], got[1]
	for i, p := range order {
		sd.before[p] = got[2+i]
	}
	return nil
}

func withBranch(r store.Record, b string) store.Record {
	if r == nil {
		return nil
	}
	return store.WithBranch(r, b)
}

// changedSince selects the rows whose version is current at head (the second and
// third arguments) and was written after since (the first).
const changedSince = "rev > ? AND rev <= ? AND next_rev > ?"

// changedIDs returns the ids of a kind whose current version (at head) in a branch's
// tables was written after since.
func changedIDs(ctx context.Context, q queryer, k store.Kind, suffix string, since, head int64) ([]string, error) {
	return queryStrings(ctx, q, "SELECT id FROM "+table(k, suffix)+" WHERE "+changedSince, since, head, head)
}

// changedIDsAll is changedIDs for every kind at once, in one statement: the ids of
// each kind whose current version (at head) in a branch's tables was written after
// since.
func changedIDsAll(ctx context.Context, q queryer, suffix string, since, head int64) (map[store.Kind][]string, error) {
	var sb strings.Builder
	var args []any
	for i, k := range store.AllKinds {
		if i > 0 {
			sb.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&sb, "SELECT %d, id FROM %s WHERE %s", i, table(k, suffix), changedSince)
		args = append(args, since, head, head)
	}
	rs, err := q.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[store.Kind][]string{}
	for rs.Next() {
		var i int
		var id string
		if err := rs.Scan(&i, &id); err != nil {
			return nil, err
		}
		if i < 0 || i >= len(store.AllKinds) {
			return nil, fmt.Errorf("matrixone: changed ids: kind number %d out of range", i)
		}
		k := store.AllKinds[i]
		out[k] = append(out[k], id)
	}
	return out, rs.Err()
}

// queryStrings runs a query whose rows are one string each and returns them in order.
func queryStrings(ctx context.Context, q queryer, query string, args ...any) ([]string, error) {
	rs, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var v string
		if err := rs.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rs.Err()
}

// nativePair says whether a diff of sb and tb can ask the server: one of the two was
// forked from the other with DATA BRANCH CREATE, and the merge base is that fork (at
// revision since), the common ancestor the server diffs from. It returns the child's
// and the parent's table suffixes.
func nativePair(sb, tb branchRow, base link, since int64) (child, parent string, ok bool) {
	for _, p := range [][2]branchRow{{sb, tb}, {tb, sb}} {
		c, par := p[0], p[1]
		if c.forkPath == BranchPathNative && c.info.Parent == par.info.Name &&
			base.b.info.Name == par.info.Name && since == c.forkRev {
			return c.suffix, par.suffix, true
		}
	}
	return "", "", false
}

// nativeChangedIDs returns the ids of a kind whose current version (at head) in a
// child's or its parent's tables was written after since, from DATA BRANCH DIFF. The
// server lists every row that differs between the two tables since their common
// ancestor, the fork: the versions each side wrote since (new rows) and the versions
// each side closed (updated rows). Only rows are kept that pass the portable path's
// test, so a listing wider than the changes (for instance rows written after head)
// gives the same ids.
func nativeChangedIDs(ctx context.Context, q queryer, k store.Kind, child, parent string, since, head int64) ([]string, error) {
	rows, err := readBranchDiff(ctx, q, branchDiffSQL(table(k, child), table(k, parent)))
	if err != nil {
		return nil, err
	}
	var out []string // repeats are fine: the caller gathers ids in a set
	for _, r := range rows {
		if r.rev > since && r.rev <= head && r.nextRev > head {
			out = append(out, r.id)
		}
	}
	return out, nil
}

// branchDiffSQL lists the rows that differ between table a and table b.
func branchDiffSQL(a, b string) string { return "DATA BRANCH DIFF " + a + " AGAINST " + b }

// branchDiffRow is one row of DATA BRANCH DIFF's output, reduced to what a diff needs.
type branchDiffRow struct {
	table   string // the table the row is in
	flag    string // INSERT, UPDATE or DELETE
	id      string
	rev     int64 // 0 when the table has no rev column
	nextRev int64 // 0 when the table has no next_rev column
}

// branchDiffLayout places the columns of DATA BRANCH DIFF's output: first the table
// the row is in ("diff a against b"), then the flag, then the table's own columns, by
// name.
type branchDiffLayout struct {
	n, id, rev, nextRev int
}

func newBranchDiffLayout(cols []string) (branchDiffLayout, error) {
	l := branchDiffLayout{n: len(cols), id: -1, rev: -1, nextRev: -1}
	for i := 2; i < len(cols); i++ {
		switch strings.ToLower(cols[i]) {
		case "id":
			l.id = i
		case "rev":
			l.rev = i
		case "next_rev":
			l.nextRev = i
		}
	}
	if l.id < 0 {
		return l, fmt.Errorf("day1: matrixone: DATA BRANCH DIFF returned columns %q, without the table's id after the table name and flag", cols)
	}
	return l, nil
}

// row decodes one row scanned as raw bytes.
func (l branchDiffLayout) row(raw []sql.RawBytes) (branchDiffRow, error) {
	if len(raw) != l.n {
		return branchDiffRow{}, fmt.Errorf("day1: matrixone: DATA BRANCH DIFF row has %d values, want %d", len(raw), l.n)
	}
	r := branchDiffRow{table: string(raw[0]), flag: strings.ToUpper(string(raw[1])), id: string(raw[l.id])}
	for _, f := range []struct {
		i   int
		dst *int64
	}{{l.rev, &r.rev}, {l.nextRev, &r.nextRev}} {
		if f.i < 0 {
			continue
		}
		v, err := strconv.ParseInt(string(raw[f.i]), 10, 64)
		if err != nil {
			return branchDiffRow{}, fmt.Errorf("day1: matrixone: DATA BRANCH DIFF row: column %d: %w", f.i, err)
		}
		*f.dst = v
	}
	return r, nil
}

// readBranchDiff runs a DATA BRANCH DIFF statement (in autocommit: q is a pool or a
// connection, never a transaction) and decodes its rows.
func readBranchDiff(ctx context.Context, q queryer, query string) ([]branchDiffRow, error) {
	rs, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	l, err := newBranchDiffLayout(cols)
	if err != nil {
		return nil, err
	}
	raw := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range raw {
		dest[i] = &raw[i]
	}
	var out []branchDiffRow
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return nil, err
		}
		r, err := l.row(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// visibleRecords reads the live versions of ids visible at cut in a branch's tables,
// by id; lean ones without their embeddings.
func visibleRecords(ctx context.Context, q queryer, k store.Kind, suffix string, cut int64, list []string, lean bool) (map[string]row, error) {
	cols := specs[k].selectCols()
	out := map[string]row{}
	for _, chunk := range chunks(list, 500) {
		args := []any{cut, cut}
		for _, id := range chunk {
			args = append(args, id)
		}
		rows, err := queryRows(ctx, q, k, "SELECT "+cols+" FROM "+table(k, suffix)+
			" WHERE rev <= ? AND next_rev > ? AND deleted = 0 AND id IN ("+placeholders(len(chunk))+")", args...)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.id] = r
		}
	}
	if !lean {
		if err := withVectorsByID(ctx, q, k, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ApplyMerge applies a merge plan in one transaction: it checks the target's head
// against plan.ExpectHead (store.ErrStale when it moved), writes the puts and deletes,
// records the merge and marks the source merged.
func (s *Store) ApplyMerge(ctx context.Context, plan store.MergePlan) (store.MergeRecord, error) {
	if err := store.ValidateMergePlan(plan); err != nil {
		return store.MergeRecord{}, err
	}
	if err := s.usable(ctx); err != nil {
		return store.MergeRecord{}, err
	}
	puts := make([]store.Record, len(plan.Puts))
	for i, r := range plan.Puts {
		if err := store.ValidateRecord(r, s.opts.Dimensions); err != nil {
			return store.MergeRecord{}, store.AtIndex(err, "MergePlan.Puts", i)
		}
		// The plan's records are only read: their copies share its maps and slices.
		puts[i] = normalize(store.WithBranch(r, plan.Target))
	}
	var rec store.MergeRecord
	// The reads the merge decides on run under the two branches' locks alone; the
	// commit lock is taken after them, as a Put takes it (writeTx), so that writes to
	// other branches do not wait for those reads.
	err := s.write(ctx, "ApplyMerge", writeSpec{branches: []string{plan.Source, plan.Target}, late: true}, func(w *writeTx) error {
		sb, err := w.lockedBranch(ctx, plan.Source)
		if err != nil {
			return err
		}
		tb, err := writableBranch(ctx, w, plan.Target)
		if err != nil {
			return err
		}
		if tb.info.Head != plan.ExpectHead {
			return fmt.Errorf("%w: %q moved from head %d to %d", store.ErrStale, plan.Target, plan.ExpectHead, tb.info.Head)
		}
		idsByKind := map[store.Kind][]string{}
		for _, r := range puts {
			idsByKind[r.RecordKind()] = append(idsByKind[r.RecordKind()], r.RecordID())
		}
		for _, ref := range plan.Deletes {
			idsByKind[ref.Kind] = append(idsByKind[ref.Kind], ref.ID)
		}
		// The target's current versions; an unwritten target's from its parent's
		// tables at the fork (asParent), where they are the same versions.
		var lookup error
		at := asParent(pos{tab: tb, cut: w.rev}, func(name string) (branchRow, bool) {
			b, err := loadBranch(ctx, w, name)
			if err != nil && !errors.Is(err, store.ErrBranchNotFound) {
				lookup = err
			}
			return b, err == nil
		})
		if lookup != nil {
			return lookup
		}
		if at.tab.suffix == tb.suffix {
			at.cut = never
		}
		cur := map[key]store.Record{}
		vids := map[key]int64{} // the current version, perhaps a tombstone
		for k, list := range idsByKind {
			rows, err := rowsAt(ctx, w, k, at.tab.suffix, at.cut, list, true)
			if err != nil {
				return err
			}
			for _, r := range rows {
				vids[key{k, r.id}] = r.vid
				if !r.deleted {
					cur[key{k, r.id}] = r.rec
				}
			}
		}
		// The source as the plan's diff read it; its current versions when the plan
		// names no revision.
		readAt := int64(plan.SourceRev)
		if readAt == 0 {
			readAt = w.rev
		}
		// The puts are written a part at a time, each part read whole (its
		// embeddings), stamped and written before the next is read, so that a merge
		// of many records holds one part's embeddings and rows, not the plan's. The
		// first part is read before the commit lock is taken (w.seal), as a Put reads.
		// The parts are written from a copy: a part is let go once written, and a
		// retried attempt starts again from the plan.
		parts := chunks(slices.Clone(puts), mergePart)
		if len(parts) == 0 {
			parts = [][]store.Record{nil}
		}
		for i, part := range parts {
			if err := s.readMergePart(ctx, w, sb, tb, readAt, part, cur); err != nil {
				return err
			}
			if err := w.seal(ctx); err != nil { // once; later calls return at once
				return err
			}
			var vs []version
			for _, r := range part {
				r = store.WithDefaults(r, w.now)
				k := key{r.RecordKind(), r.RecordID()}
				if c := cur[k]; c != nil && store.SameContent(c, r) {
					continue
				}
				vid, ok := vids[k]
				vs = append(vs, version{ref: store.RefOf(r), rec: r, fresh: !ok, vid: vid})
			}
			if i == len(parts)-1 {
				for _, ref := range plan.Deletes {
					k := key{ref.Kind, ref.ID}
					if cur[k] == nil {
						continue
					}
					vs = append(vs, version{ref: ref, vid: vids[k]})
				}
			}
			if len(vs) > 0 {
				if err := s.commitWrites(ctx, w, tb, vs); err != nil {
					return err
				}
			}
			// What the part read whole is let go with it.
			for _, r := range part {
				delete(cur, key{r.RecordKind(), r.RecordID()})
			}
			clear(part)
		}
		rec = plan.Record
		rec.Source, rec.Target = plan.Source, plan.Target
		if rec.ID == "" {
			rec.ID = ids.New()
		}
		if rec.CreatedAt.IsZero() {
			rec.CreatedAt = w.now
		}
		rev, err := w.bump(ctx)
		if err != nil {
			return err
		}
		if plan.MarkMerged {
			if _, err := w.ExecContext(ctx, "UPDATE day1_branches SET status = ?, merged_into = ?, merged_at = ? WHERE name = ?",
				string(store.BranchMerged), plan.Target, w.now, plan.Source); err != nil {
				return err
			}
		}
		body, err := json.Marshal(rec)
		if err != nil {
			return store.Invalid("MergePlan.Record", err.Error(), nil)
		}
		var sourceRev uint64
		if rec.Strategy != store.CherryPick {
			sourceRev = plan.SourceRev
		}
		_, err = w.ExecContext(ctx, "INSERT INTO day1_merges (rev, id, source, target, created_at, body, source_rev) VALUES (?, ?, ?, ?, ?, ?, ?)",
			rev, rec.ID, rec.Source, rec.Target, micro(rec.CreatedAt), string(body), sourceRev)
		return err
	})
	if err != nil {
		return store.MergeRecord{}, err
	}
	return rec, nil
}

// mergePart is how many puts of a merge plan are read whole and written at a time.
const mergePart = 1000

// readMergePart gives the puts of a part of a merge plan their embeddings
// (embedLeanPuts) and reads again, with their embeddings, the target's current
// versions that a put may equal, compared as Put compares them (store.StampLike),
// unless embedLeanPuts read them whole already.
func (s *Store) readMergePart(ctx context.Context, w *writeTx, sb, tb branchRow, readAt int64, part []store.Record, cur map[key]store.Record) error {
	// The puts take their embeddings before they are stamped: which embedding a put
	// takes does not depend on the instants stamping fills.
	if err := embedLeanPuts(ctx, w, sb, tb, readAt, part, cur); err != nil {
		return err
	}
	var whole []key
	for _, r := range part {
		k := key{r.RecordKind(), r.RecordID()}
		if c := cur[k]; c != nil && len(store.EmbeddingOf(c)) == 0 && store.SameContentExceptEmbedding(c, store.StampLike(r, c)) {
			whole = append(whole, k)
		}
	}
	return readWhole(ctx, w, tb.suffix, cur, whole)
}

// embedLeanPuts gives the puts of a lean plan (store.LeanDiffer) their embeddings:
// a put without one, of a kind that has them, becomes the source's version when it
// equals it but for the embedding, or takes the embedding of the source's or else the
// target's current version when that has the same search text. The source's version
// is the one at sourceRev, the revision the plan's diff read, so that a plan applied
// after the source moved still finds the versions it was made from. cur holds the
// target's current versions, read lean; those whose embedding is taken are read again
// whole.
func embedLeanPuts(ctx context.Context, q queryer, sb, tb branchRow, sourceRev int64, puts []store.Record, cur map[key]store.Record) error {
	byKind := map[store.Kind][]string{}
	var lean []int
	for i, r := range puts {
		if k := r.RecordKind(); hasEmbedding(k) && len(store.EmbeddingOf(r)) == 0 {
			byKind[k] = append(byKind[k], r.RecordID())
			lean = append(lean, i)
		}
	}
	if len(lean) == 0 {
		return nil
	}
	src := map[key]store.Record{}
	for k, list := range byKind {
		rows, err := visibleRecords(ctx, q, k, sb.suffix, sourceRev, list, false)
		if err != nil {
			return err
		}
		for id, r := range rows {
			src[key{k, id}] = r.rec
		}
	}
	var fromTarget []int
	for _, i := range lean {
		r := puts[i]
		k := key{r.RecordKind(), r.RecordID()}
		from := src[k]
		switch {
		case from != nil && store.SameContentExceptEmbedding(from, r):
			puts[i] = store.WithEmbedding(r, store.EmbeddingOf(from))
		case from != nil && len(store.EmbeddingOf(from)) > 0 && store.SearchText(from) == store.SearchText(r):
			puts[i] = store.WithEmbedding(r, store.EmbeddingOf(from))
		case cur[k] != nil && store.SearchText(cur[k]) == store.SearchText(r):
			fromTarget = append(fromTarget, i)
		}
	}
	if len(fromTarget) == 0 {
		return nil
	}
	keys := make([]key, len(fromTarget))
	for j, i := range fromTarget {
		keys[j] = key{puts[i].RecordKind(), puts[i].RecordID()}
	}
	if err := readWhole(ctx, q, tb.suffix, cur, keys); err != nil {
		return err
	}
	for j, i := range fromTarget {
		if emb := store.EmbeddingOf(cur[keys[j]]); len(emb) > 0 {
			puts[i] = store.WithEmbedding(puts[i], emb)
		}
	}
	return nil
}

// ListMerges returns merge records, newest first.
func (s *Store) ListMerges(ctx context.Context, f store.MergeFilter) ([]store.MergeRecord, error) {
	if err := store.ValidateMergeFilter(f); err != nil {
		return nil, err
	}
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return retryIdempotent(ctx, s, "ListMerges", func() ([]store.MergeRecord, error) {
		b := psql.Select("body").From("day1_merges").OrderBy("rev DESC")
		if f.Source != "" {
			b = b.Where("source = ?", f.Source)
		}
		if f.Target != "" {
			b = b.Where("target = ?", f.Target)
		}
		if f.Branch != "" {
			b = b.Where("(source = ? OR target = ?)", f.Branch, f.Branch)
		}
		if f.Limit > 0 {
			b = b.Limit(uint64(f.Limit))
		}
		query, args, _ := b.ToSql()
		rs, err := s.db.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, wrap(ctx, "ListMerges", err)
		}
		defer rs.Close()
		var out []store.MergeRecord
		for rs.Next() {
			var body string
			if err := rs.Scan(&body); err != nil {
				return nil, wrap(ctx, "ListMerges", err)
			}
			var m store.MergeRecord
			if err := json.Unmarshal([]byte(body), &m); err != nil {
				return nil, fmt.Errorf("day1: matrixone: decoding a merge record: %w", err)
			}
			out = append(out, m)
		}
		return out, wrap(ctx, "ListMerges", rs.Err())
	})
}
