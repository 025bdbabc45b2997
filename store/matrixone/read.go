package matrixone

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	sq "github.com/Masterminds/squirrel"
	"golang.org/x/sync/errgroup"

	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/store"
)

// visible is the condition that selects the versions a read position sees.
func visible(cut int64) sq.Sqlizer {
	return sq.Expr("rev <= ? AND next_rev > ? AND deleted = 0", cut, cut)
}

// Get returns one record as the view sees it, or store.ErrNotFound.
func (s *Store) Get(ctx context.Context, v store.View, ref store.Ref) (store.Record, error) {
	if err := store.ValidateRef("ref", ref); err != nil {
		return nil, err
	}
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return retryIdempotent(ctx, s, "Get", func() (store.Record, error) {
		p, err := s.resolve(ctx, s.db, v)
		if err != nil {
			return nil, wrap(ctx, "Get", err)
		}
		// A fact id that is an alias reads as the fact it names, in the same view.
		return store.ResolveAlias(ctx, ref, func(ref store.Ref) (store.Record, error) {
			k := specs[ref.Kind]
			rows, err := queryRows(ctx, s.db, ref.Kind, "SELECT "+k.selectCols()+" FROM "+table(ref.Kind, p.tab.suffix)+
				" WHERE id = ? AND rev <= ? AND next_rev > ? AND deleted = 0", ref.ID, p.cut, p.cut)
			if err != nil {
				return nil, wrap(ctx, "Get", err)
			}
			if len(rows) == 0 {
				return nil, fmt.Errorf("%w: %s on branch %q", store.ErrNotFound, ref, p.name)
			}
			if err := withVectors(ctx, s.db, ref.Kind, rows[:1]); err != nil {
				return nil, wrap(ctx, "Get", err)
			}
			return store.WithBranch(rows[0].rec, p.name), nil
		})
	})
}

// filterSQL returns the conditions of f that apply to kind k, and false when f can
// match no record of that kind (a field of another kind is set). Metadata pairs are
// not pushed down: they are checked in Go (pushed reports whether every condition
// went to SQL).
func filterSQL(k store.Kind, f store.Filter) (conds sq.And, possible, pushed bool) {
	has := func(cond bool, kinds ...store.Kind) bool { return !cond || slices.Contains(kinds, k) }
	if !has(f.Category != "" || f.Status != "" || len(f.Statuses) > 0, store.KindFact) ||
		!has(f.ConversationID != "" || f.Role != "", store.KindMessage) ||
		!has(f.ObsType != "", store.KindObservation) ||
		!has(f.Entity != "" || f.RelationType != "", store.KindRelation) {
		return nil, false, false
	}
	eq := func(col, v string) {
		if v != "" {
			conds = append(conds, sq.Eq{col: v})
		}
	}
	eq("category", f.Category)
	eq("status", string(f.Status))
	if len(f.Statuses) > 0 {
		ss := make([]string, len(f.Statuses))
		for i, st := range f.Statuses {
			ss[i] = string(st)
		}
		conds = append(conds, sq.Eq{"status": ss})
	}
	if len(f.ExcludeStatuses) > 0 && k == store.KindFact {
		ss := make([]string, len(f.ExcludeStatuses))
		for i, st := range f.ExcludeStatuses {
			ss[i] = string(st)
		}
		conds = append(conds, sq.NotEq{"status": ss})
	}
	eq("session_id", f.SessionID)
	eq("task_id", f.TaskID)
	eq("agent_id", f.AgentID)
	eq("conversation_id", f.ConversationID)
	eq("msg_role", string(f.Role))
	eq("obs_type", string(f.ObsType))
	eq("rel_type", f.RelationType)
	if f.Entity != "" {
		conds = append(conds, sq.Or{sq.Eq{"src": f.Entity}, sq.Eq{"dst": f.Entity}})
	}
	if !f.Since.IsZero() {
		conds = append(conds, sq.GtOrEq{"created_at": micro(f.Since)})
	}
	if !f.Until.IsZero() {
		// Until is exclusive; a sub-microsecond Until still excludes its microsecond's
		// start only when it is exactly on it, so compare in Go as well.
		conds = append(conds, sq.Lt{"created_at": f.Until.UTC()})
	}
	if len(f.IDs) > 0 {
		conds = append(conds, sq.Eq{"id": f.IDs})
	}
	if !f.LiveAt.IsZero() && k == store.KindFact {
		// Expired at LiveAt: expires_at <= LiveAt. The column holds microseconds, so
		// LiveAt truncated to them compares exactly.
		conds = append(conds, sq.Or{sq.Eq{"expires_at": nil}, sq.Gt{"expires_at": micro(f.LiveAt)}})
	}
	return conds, true, len(f.Metadata) == 0
}

// orderSQL returns the ORDER BY terms of a list order.
func orderSQL(k store.Kind, o store.Order, desc bool) []string {
	var cols []string
	switch {
	case o == store.OrderID:
		cols = []string{"id"}
	case o == store.OrderSeq && k == store.KindMessage:
		cols = []string{"conversation_id", "seq", "id"}
	case o == store.OrderUpdated && store.Updatable(k):
		// Rows of early versions may hold no updated_at: store.UpdateTime takes the
		// creation time for them.
		cols = []string{"COALESCE(updated_at, created_at)", "id"}
	case k == store.KindMessage:
		cols = []string{"created_at", "seq", "id"}
	default:
		cols = []string{"created_at", "id"}
	}
	if desc {
		for i := range cols {
			cols[i] += " DESC"
		}
	}
	return cols
}

var psql = sq.StatementBuilder.PlaceholderFormat(sq.Question)

// List returns the records of one kind the view sees that match the filter, in order.
// Filters, order, limit and offset run in SQL; metadata pairs are checked in Go, and
// then limit and offset too.
func (s *Store) List(ctx context.Context, v store.View, q store.ListQuery) ([]store.Record, error) {
	if err := store.ValidateListQuery(q); err != nil {
		return nil, err
	}
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if q.Filter.NotExpired {
		q.Filter = q.Filter.ResolveExpiry(s.holdsExpiring(ctx), s.opts.Now)
	}
	return retryIdempotent(ctx, s, "List", func() ([]store.Record, error) {
		p, err := s.resolve(ctx, s.db, v)
		if err != nil {
			return nil, wrap(ctx, "List", err)
		}
		query, args, pushed, possible := listSQL(p, q)
		if !possible {
			return nil, nil
		}
		rows, err := queryRows(ctx, s.db, q.Kind, query, args...)
		if err != nil {
			return nil, wrap(ctx, "List", err)
		}
		rows = slices.DeleteFunc(rows, func(r row) bool { return !q.Filter.Match(r.rec) })
		if err := withVectors(ctx, s.db, q.Kind, rows); err != nil {
			return nil, wrap(ctx, "List", err)
		}
		out := make([]store.Record, 0, len(rows))
		for _, r := range rows {
			out = append(out, store.WithBranch(r.rec, p.name))
		}
		store.SortRecords(out, q.Order, q.Desc)
		if !pushed {
			out = store.Page(out, q.Offset, q.Limit)
		}
		return out, nil
	})
}

// listSQL builds the query of a List at a read position.
func listSQL(p pos, q store.ListQuery) (query string, args []any, pushed, possible bool) {
	conds, possible, pushed := filterSQL(q.Kind, q.Filter)
	if !possible {
		return "", nil, false, false
	}
	b := psql.Select(specs[q.Kind].selectCols()).From(table(q.Kind, p.tab.suffix)).Where(visible(p.cut))
	if len(conds) > 0 {
		b = b.Where(conds)
	}
	b = b.OrderBy(orderSQL(q.Kind, q.Order, q.Desc)...)
	if pushed {
		if q.Limit > 0 {
			b = b.Limit(uint64(q.Limit))
		}
		if q.Offset > 0 {
			if q.Limit == 0 {
				b = b.Limit(math.MaxInt64)
			}
			b = b.Offset(uint64(q.Offset))
		}
	}
	query, args, err := b.ToSql()
	if err != nil {
		panic(err) // the builder is fed only well-formed parts
	}
	return query, args, pushed, true
}

// ranked is one retriever's result.
type ranked struct {
	rec   store.Record
	score float64
	vid   int64   // the version's primary key
	full  float64 // store.Ranked.Full
}

// topRanked sorts by score, best first, then kind and id, and keeps k.
func topRanked(rs []ranked, k int) []ranked {
	slices.SortFunc(rs, func(a, b ranked) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		if c := strings.Compare(string(a.rec.RecordKind()), string(b.rec.RecordKind())); c != 0 {
			return c
		}
		return strings.Compare(a.rec.RecordID(), b.rec.RecordID())
	})
	if len(rs) > k {
		rs = rs[:k]
	}
	return rs
}

// Search ranks facts, observations, conversations and messages by keyword (BM25), vector (cosine similarity
// computed by the server) or both, fused like the embedded store fuses them.
//
// Keyword scores are BM25 computed in Go over candidates the server selects, through
// the table's FULLTEXT index or by scanning the visible rows' tokens (see the package
// documentation): MatrixOne's own full-text relevance is not BM25 over this tokenizer
// and cannot be read at a past revision, so it is not used for scoring. Vector
// candidates come from the table's IVFFLAT index when it has one.
func (s *Store) Search(ctx context.Context, v store.View, q store.SearchQuery) ([]store.Hit, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	q, err := store.NormalizeSearch(q, s.opts.Dimensions)
	if err != nil {
		return nil, err
	}
	if q.Filter.NotExpired {
		q.Filter = q.Filter.ResolveExpiry(s.holdsExpiring(ctx), s.opts.Now)
	}
	return retryIdempotent(ctx, s, "Search", func() ([]store.Hit, error) {
		p, err := s.resolve(ctx, s.db, v)
		if err != nil {
			return nil, wrap(ctx, "Search", err)
		}
		depth := store.SearchDepth(q)
		// Every retriever on every kind is its own query: they run at once. With Fill
		// fusion the vector queries run after the keyword ones, and only when they
		// can change the hits.
		after := q.Fusion == store.Fill && q.Mode == store.Hybrid
		kws, vecs := make([][]ranked, len(q.Kinds)), make([][]ranked, len(q.Kinds))
		vectors := func(g *errgroup.Group, gctx context.Context) {
			for i, kind := range q.Kinds {
				if q.Mode != store.Keyword && len(q.Vector) > 0 && hasEmbedding(kind) {
					g.Go(func() (err error) {
						vecs[i], err = s.vectorSearch(gctx, p, kind, q, depth)
						return err
					})
				}
			}
		}
		g, gctx := errgroup.WithContext(ctx)
		for i, kind := range q.Kinds {
			if q.Mode != store.Vector && strings.TrimSpace(q.Text) != "" {
				g.Go(func() (err error) {
					kws[i], err = s.keyword(gctx, p, kind, q, depth)
					return err
				})
			}
		}
		if !after {
			vectors(g, gctx)
		}
		if err := g.Wait(); err != nil {
			return nil, wrap(ctx, "Search", err)
		}
		keyword := conv(slices.Concat(kws...))
		if ranges := store.NeighbourRanges(q, keyword); len(ranges) > 0 {
			near, err := s.messagesIn(ctx, p, ranges)
			if err != nil {
				return nil, wrap(ctx, "Search", err)
			}
			keyword = store.AddNeighbours(q, keyword, near)
		}
		// near reads the neighbours of the facts' context by the vids given, without
		// their embeddings, as keyword candidates are read: those that become hits
		// get theirs below.
		near := func(vids map[string]int64) func(ids []string) ([]store.Fact, error) {
			return func(ids []string) ([]store.Fact, error) {
				rs, err := s.factsByVid(ctx, p, ids, vids)
				kws = append(kws, rs)
				facts := make([]store.Fact, len(rs))
				for i, r := range rs {
					facts[i] = r.rec.(store.Fact)
				}
				return facts, err
			}
		}
		if sessions := store.ContextSessions(q, keyword); len(sessions) > 0 {
			entries, vids, err := s.sessionEntries(ctx, p, sessions)
			if err != nil {
				return nil, wrap(ctx, "Search", err)
			}
			if keyword, err = store.AddSessionNeighbours(q, keyword, entries, near(vids)); err != nil {
				return nil, wrap(ctx, "Search", err)
			}
		}
		if seeds := store.LooseSeeds(q, keyword); len(seeds) > 0 {
			vids := map[string]int64{}
			for _, r := range slices.Concat(kws...) {
				if _, ok := r.rec.(store.Fact); ok {
					vids[r.rec.RecordID()] = r.vid
				}
			}
			runs, err := s.looseRuns(ctx, p, q, seeds, vids)
			if err != nil {
				return nil, wrap(ctx, "Search", err)
			}
			if keyword, err = store.AddLooseNeighbours(q, keyword, runs, near(vids)); err != nil {
				return nil, wrap(ctx, "Search", err)
			}
		}
		if after && store.NeedVector(q, len(keyword)) {
			g, gctx := errgroup.WithContext(ctx)
			vectors(g, gctx)
			if err := g.Wait(); err != nil {
				return nil, wrap(ctx, "Search", err)
			}
		}
		hits := fused(p, q, keyword, conv(slices.Concat(vecs...)))
		if err := s.hitVectors(ctx, hits, kws); err != nil {
			return nil, wrap(ctx, "Search", err)
		}
		if err := s.messageContext(ctx, p, q, hits); err != nil {
			return nil, wrap(ctx, "Search", err)
		}
		return hits, nil
	})
}

// hitVectors gives the hits that keyword search alone found their embeddings: the
// keyword retrievers read their candidates without them (kws, by kind, holds their
// vids), and the vector retrievers read them with theirs.
func (s *Store) hitVectors(ctx context.Context, hits []store.Hit, kws [][]ranked) error {
	vids := map[key]int64{}
	for _, list := range kws {
		for _, r := range list {
			vids[key{r.rec.RecordKind(), r.rec.RecordID()}] = r.vid
		}
	}
	byKind := map[store.Kind][]int64{}
	for _, h := range hits {
		k := key{h.Record.RecordKind(), h.Record.RecordID()}
		if vid, ok := vids[k]; ok && hasEmbedding(k.kind) && len(store.EmbeddingOf(h.Record)) == 0 {
			byKind[k.kind] = append(byKind[k.kind], vid)
		}
	}
	for kind, list := range byKind {
		vecs, err := loadVectors(ctx, s.db, kind, list)
		if err != nil {
			return err
		}
		for i, h := range hits {
			if h.Record.RecordKind() != kind {
				continue
			}
			if v, ok := vecs[vids[key{kind, h.Record.RecordID()}]]; ok {
				hits[i].Record = store.WithEmbedding(h.Record, v)
			}
		}
	}
	return nil
}

func conv(rs []ranked) []store.Ranked {
	out := make([]store.Ranked, len(rs))
	for i, r := range rs {
		out[i] = store.Ranked{Record: r.rec, Score: r.score, Full: r.full}
	}
	return out
}

// messagesIn reads the messages the position sees in the given ranges, in one query.
func (s *Store) messagesIn(ctx context.Context, p pos, ranges []store.SeqRange) ([]store.Message, error) {
	or := make(sq.Or, 0, len(ranges))
	for _, r := range ranges {
		or = append(or, sq.And{sq.Eq{"conversation_id": r.ConversationID}, sq.Expr("seq BETWEEN ? AND ?", r.Lo, r.Hi)})
	}
	query, args, err := psql.Select(specs[store.KindMessage].selectCols()).From(table(store.KindMessage, p.tab.suffix)).
		Where(visible(p.cut)).Where(or).ToSql()
	if err != nil {
		panic(err)
	}
	rows, err := queryRows(ctx, s.db, store.KindMessage, query, args...)
	if err != nil {
		return nil, err
	}
	if err := withVectors(ctx, s.db, store.KindMessage, rows); err != nil {
		return nil, err
	}
	out := make([]store.Message, 0, len(rows))
	for _, r := range rows {
		m := r.rec.(store.Message)
		m.Branch = p.name
		out = append(out, m)
	}
	return out, nil
}

// sessionEntries returns where the facts the position sees in the given sessions
// fall, and the vid of each: all of them, or store.MaxContextFacts+1 when there are
// more. The term index of the facts table holds them when keyword search ranks from
// memory; otherwise one query reads them.
func (s *Store) sessionEntries(ctx context.Context, p pos, sessions []string) ([]store.SessionEntry, map[string]int64, error) {
	if s.opts.KeywordCache != IndexOff && !s.wordsAsWritten {
		ix, err := s.termsAt(ctx, store.KindFact, p.tab.suffix, p.cut)
		if err != nil {
			return nil, nil, err
		}
		defer ix.mu.Unlock()
		entries, vids := ix.sessionEntries(sessions, p.cut)
		return entries, vids, nil
	}
	s.sessionQueries.Add(1)
	query, args, err := psql.Select("vid", "id", "session_id", "created_at").From(table(store.KindFact, p.tab.suffix)).
		Where(visible(p.cut)).Where(sq.Eq{"session_id": sessions}).Limit(store.MaxContextFacts + 1).ToSql()
	if err != nil {
		panic(err)
	}
	rs, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	var out []store.SessionEntry
	vids := map[string]int64{}
	for rs.Next() {
		var e store.SessionEntry
		var vid int64
		var at sql.NullTime
		if err := rs.Scan(&vid, &e.ID, &e.SessionID, &at); err != nil {
			return nil, nil, err
		}
		e.CreatedAt = at.Time
		out = append(out, e)
		vids[e.ID] = vid
	}
	return out, vids, rs.Err()
}

// looseRuns returns the store.LooseRun of each seed, vids holding the seed's vid:
// the facts with no session that p sees among the store.LooseScan fact versions
// written just before and after it to its table, from the term index or, without one,
// in one query for all the seeds. It adds the vids of the facts of the runs to vids.
func (s *Store) looseRuns(ctx context.Context, p pos, q store.SearchQuery, seeds []store.Fact, vids map[string]int64) ([][]store.SessionEntry, error) {
	if s.opts.KeywordCache != IndexOff && !s.wordsAsWritten {
		ix, err := s.termsAt(ctx, store.KindFact, p.tab.suffix, p.cut)
		if err != nil {
			return nil, err
		}
		defer ix.mu.Unlock()
		return ix.looseRuns(q, seeds, vids, p.cut), nil
	}
	var parts []string
	var args []any
	var seen []store.Fact
	for _, f := range seeds {
		vid, ok := vids[f.ID]
		if !ok {
			continue
		}
		seen = append(seen, f)
		for _, side := range [2]string{"vid < ? ORDER BY vid DESC", "vid > ? ORDER BY vid"} {
			parts = append(parts, fmt.Sprintf("(SELECT %d AS seed, vid, id, created_at, session_id, rev, next_rev, deleted FROM %s WHERE %s LIMIT %d)",
				len(seen)-1, table(store.KindFact, p.tab.suffix), side, store.LooseScan))
			args = append(args, vid)
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	s.sessionQueries.Add(1)
	rs, err := s.db.QueryContext(ctx, strings.Join(parts, " UNION ALL "), args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	type near struct {
		vid int64
		e   store.SessionEntry
	}
	around := make([][]near, len(seen))
	for rs.Next() {
		var n near
		var seed int
		var at sql.NullTime
		var session string
		var e termEntry
		if err := rs.Scan(&seed, &n.vid, &n.e.ID, &at, &session, &e.rev, &e.next, &e.deleted); err != nil {
			return nil, err
		}
		n.e.CreatedAt = at.Time
		if session == "" && e.visible(p.cut) && seed >= 0 && seed < len(around) {
			around[seed] = append(around[seed], n)
		}
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	runs := make([][]store.SessionEntry, 0, len(seen))
	for i, f := range seen {
		sv := vids[f.ID]
		// Nearest first on each side: by distance in vid.
		slices.SortFunc(around[i], func(a, b near) int { return cmp.Compare(max(a.vid-sv, sv-a.vid), max(b.vid-sv, sv-b.vid)) })
		side := func(before bool) iter.Seq[store.SessionEntry] {
			return func(yield func(store.SessionEntry) bool) {
				for _, n := range around[i] {
					if (n.vid < sv) == before && !yield(n.e) {
						return
					}
				}
			}
		}
		for _, n := range around[i] {
			vids[n.e.ID] = n.vid
		}
		runs = append(runs, store.LooseRun(q, store.SessionEntry{ID: f.ID, CreatedAt: micro(f.CreatedAt)}, side(true), side(false)))
	}
	return runs, nil
}

// factsByVid reads the facts of the given ids, without their embeddings, by the vids
// sessionEntries gave them.
func (s *Store) factsByVid(ctx context.Context, p pos, ids []string, vids map[string]int64) ([]ranked, error) {
	var out []ranked
	for _, chunk := range chunks(ids, 500) {
		args := make([]any, 0, len(chunk))
		for _, id := range chunk {
			if vid, ok := vids[id]; ok {
				args = append(args, vid)
			}
		}
		if len(args) == 0 {
			continue
		}
		rows, err := queryRows(ctx, s.db, store.KindFact, "SELECT "+specs[store.KindFact].selectCols()+" FROM "+
			table(store.KindFact, p.tab.suffix)+" WHERE vid IN ("+placeholders(len(args))+")", args...)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			f, ok := r.rec.(store.Fact)
			if !ok {
				continue
			}
			f.Branch = p.name
			out = append(out, ranked{rec: f, vid: r.vid})
		}
	}
	return out, nil
}

// messageContext gives the message hits of a search their conversation's title and,
// with a window, their neighbours: one query for the titles and one for the
// neighbours of every hit.
func (s *Store) messageContext(ctx context.Context, p pos, q store.SearchQuery, hits []store.Hit) error {
	var convs []string
	var ranges []store.SeqRange
	for _, h := range hits {
		if m, ok := h.Message(); ok {
			if !slices.Contains(convs, m.ConversationID) {
				convs = append(convs, m.ConversationID)
			}
			lo, hi := store.WindowRange(m, q.Window)
			ranges = append(ranges, store.SeqRange{ConversationID: m.ConversationID, Lo: lo, Hi: hi})
		}
	}
	if len(convs) == 0 {
		return nil
	}
	titles := map[string]string{}
	query, args, err := psql.Select("id", "title").From(table(store.KindConversation, p.tab.suffix)).
		Where(visible(p.cut)).Where(sq.Eq{"id": convs}).ToSql()
	if err != nil {
		panic(err)
	}
	rs, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	for rs.Next() {
		var id, title string
		if err := rs.Scan(&id, &title); err != nil {
			rs.Close()
			return err
		}
		titles[id] = title
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return err
	}
	var near []store.Message
	if q.Window > 0 {
		if near, err = s.messagesIn(ctx, p, ranges); err != nil {
			return err
		}
	}
	for i := range hits {
		h := &hits[i]
		if m, ok := h.Message(); ok {
			h.ConversationTitle = titles[m.ConversationID]
			if q.Window > 0 {
				store.SetWindow(h, near, q.Window)
			}
		}
	}
	return nil
}

// keyword scores BM25 over the documents of a kind the position sees. Document count,
// average length and document frequencies are those of the position, unfiltered, so a
// read in the past scores as a read then did.
//
// It reads in two steps: the candidates' ids, lengths and tokens (and whether they pass
// the filter's SQL conditions), enough to score them all; then the whole records of
// the best ones only, by primary key, checked against the whole filter in Go, until k
// pass. A common word matches thousands of rows whose embeddings and texts would
// otherwise all cross the wire.
func (s *Store) keyword(ctx context.Context, p pos, kind store.Kind, q store.SearchQuery, k int) ([]ranked, error) {
	terms := textsearch.TermFreqs(textsearch.Terms(q.Text))
	if len(terms) == 0 {
		return nil, nil
	}
	conds, possible, _ := filterSQL(kind, q.Filter)
	if !possible {
		return nil, nil
	}
	if out, ok, err := s.termSearch(ctx, p, kind, q, terms, k); err != nil || ok {
		return out, err
	}
	// Rows written before migration 011 on natively forked branches hold their words
	// as written: they are matched by the query's words too, and counted as stems.
	written := map[string]string{}
	if s.wordsAsWritten {
		textsearch.Scan(q.Text, func(tok string, _ textsearch.Kind) {
			if st := textsearch.Stem(tok); st != tok {
				written[tok] = st
			}
		})
	}
	list := make([]string, 0, len(terms)+len(written))
	for term := range terms {
		list = append(list, term)
	}
	for tok := range written {
		if _, ok := terms[tok]; !ok {
			list = append(list, tok)
		}
	}
	slices.Sort(list)
	fullText := false
	if s.caps.KeywordPath == KeywordPathFullText {
		ix, err := s.indexesOf(ctx, s.db, tableName(kind, p.tab.suffix))
		if err != nil {
			return nil, err
		}
		fullText = ix.fullText
	}
	type cand struct {
		vid    int64
		id     string
		docLen int
		tf     map[string]int
		score  float64
	}
	var (
		n, sumLen int64
		cands     []cand
		df        = map[string]int{}
	)
	// The collection statistics and the candidates are two queries, run at once; the
	// statistics of a branch's head come from memory after the first search.
	cached, haveStats := s.stats.get(tableName(kind, p.tab.suffix), p)
	if haveStats && cached.n == 0 {
		return nil, nil
	}
	n, sumLen = cached.n, cached.sumLen
	g, gctx := errgroup.WithContext(ctx)
	if !haveStats {
		g.Go(func() error {
			err := s.db.QueryRowContext(gctx, "SELECT COUNT(*), COALESCE(SUM(doc_len), 0) FROM "+table(kind, p.tab.suffix)+
				" WHERE rev <= ? AND next_rev > ? AND deleted = 0", p.cut, p.cut).Scan(&n, &sumLen)
			if err == nil {
				s.statsQueries.Add(1)
				s.stats.set(tableName(kind, p.tab.suffix), p, tableStats{n: n, sumLen: sumLen})
			}
			return err
		})
	}
	g.Go(func() error {
		query, args := keywordSQL(kind, p, list, fullText, conds)
		if fullText {
			s.fullTextQueries.Add(1)
		}
		rs, err := s.db.QueryContext(gctx, query, args...)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var c cand
			var tokens string
			var pass bool
			if err := rs.Scan(&c.vid, &c.id, &c.docLen, &tokens, &pass); err != nil {
				return err
			}
			c.tf = map[string]int{}
			for _, tok := range strings.Fields(tokens) {
				tok = termOfColumn(tok)
				if _, ok := terms[tok]; ok {
					c.tf[tok]++
				} else if st, ok := written[tok]; ok {
					c.tf[st]++
				}
			}
			for term := range c.tf {
				df[term]++
			}
			if len(c.tf) > 0 && pass {
				cands = append(cands, c)
			}
		}
		return rs.Err()
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if n == 0 || len(cands) == 0 {
		return nil, nil
	}
	avg := float64(sumLen) / float64(n)
	// store.Ranked.Full: a term no row holds counts as the rarest, weighted by
	// textsearch.AbsentWeights.
	absent := textsearch.AbsentWeights(q.Text)
	idfs := make([]float64, 0, len(terms))
	for term := range terms {
		idfs = append(idfs, absent.Of(term, df[term], textsearch.DefaultBM25.IDF(df[term], int(n))))
	}
	full := textsearch.Full(idfs)
	for i := range cands {
		c := &cands[i]
		for _, term := range list {
			if tf := c.tf[term]; tf > 0 {
				c.score += textsearch.DefaultBM25.Score(tf, c.docLen, avg, textsearch.DefaultBM25.IDF(df[term], int(n)))
			}
		}
	}
	// Best first, ties by id, as topRanked orders hits of one kind.
	slices.SortFunc(cands, func(a, b cand) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	best := make([]termCand, len(cands))
	for i, c := range cands {
		best[i] = termCand{c.vid, c.id, c.score}
	}
	out, _, err := s.fetchBest(ctx, p, kind, q, best, k, 0)
	withFull(out, full)
	return out, err
}

// withFull sets the Full of a keyword ranking (store.Ranked.Full).
func withFull(rs []ranked, full float64) {
	for i := range rs {
		rs[i].full = full
	}
}

// fetchBest reads the records of ranked candidates, without their embeddings (Search
// reads those of its hits alone), best first, by primary key,
// a chunk at a time, and keeps those the filter accepts, until it has k. With
// maxChunks > 0 it reads at most that many chunks; complete reports that it read
// enough (k records, or every candidate).
func (s *Store) fetchBest(ctx context.Context, p pos, kind store.Kind, q store.SearchQuery, cands []termCand, k, maxChunks int) (out []ranked, complete bool, err error) {
	out = make([]ranked, 0, k)
	chunk := max(k, 32)
	for lo, n := 0, 0; lo < len(cands) && len(out) < k; lo, n = lo+chunk, n+1 {
		if maxChunks > 0 && n == maxChunks {
			return nil, false, nil
		}
		part := cands[lo:min(lo+chunk, len(cands))]
		args := make([]any, len(part))
		for i, c := range part {
			args[i] = c.vid
		}
		rows, err := queryRows(ctx, s.db, kind, "SELECT "+specs[kind].selectCols()+" FROM "+table(kind, p.tab.suffix)+
			" WHERE vid IN ("+placeholders(len(part))+")", args...)
		if err != nil {
			return nil, false, err
		}
		recs := make(map[int64]store.Record, len(part))
		for _, r := range rows {
			recs[r.vid] = r.rec
		}
		for _, c := range part {
			if r := recs[c.vid]; r != nil && q.Filter.Match(r) && len(out) < k {
				out = append(out, ranked{rec: r, score: c.score, vid: c.vid})
			}
		}
	}
	return out, true, nil
}

// keywordSQL selects, for every visible document holding any of the terms, its vid,
// id, length and tokens, and whether it passes conds (the filter's SQL part). With
// fullText, the table's FULLTEXT index finds the documents: one MATCH ... AGAINST per
// term, in natural language mode, the selections joined by UNION (servers differ on
// what several words in one AGAINST match: any of them on the 2024-11 build, all of
// them, as a phrase, on 3.x; a single word means the same everywhere, and a MATCH
// under OR cannot use the index). Otherwise INSTR scans the tokens column for
// " term ". The full-text candidates are a superset of the scan's (the server's parser
// splits the space-separated tokens back into the same words; TestKeywordPaths checks
// it on the server), and the scoring in Go reads the tokens, so both give the same hits
// and scores.
func keywordSQL(kind store.Kind, p pos, terms []string, fullText bool, conds sq.And) (string, []any) {
	var pass sq.Sqlizer = sq.Expr("1")
	if len(conds) > 0 {
		cq, cargs, err := conds.ToSql()
		if err != nil {
			panic(err)
		}
		pass = sq.Expr("CASE WHEN "+cq+" THEN 1 ELSE 0 END", cargs...)
	}
	sel := func(match sq.Sqlizer) (string, []any) {
		query, args, err := psql.Select("vid", "id", "doc_len", "tokens").Column(pass).From(table(kind, p.tab.suffix)).
			Where(visible(p.cut)).Where(match).ToSql()
		if err != nil {
			panic(err)
		}
		return query, args
	}
	if !fullText {
		or := sq.Or{}
		for _, term := range terms {
			c := columnTerm(term)
			or = append(or, sq.Expr("INSTR(tokens, ?) > 0", " "+c+" "))
			if c != term {
				// A row written as it is, on a server whose tokenizer takes the word.
				or = append(or, sq.Expr("INSTR(tokens, ?) > 0", " "+term+" "))
			}
		}
		return sel(or)
	}
	var parts []string
	var args []any
	for _, term := range terms {
		q, a := sel(sq.Expr("MATCH(tokens) AGAINST(? IN NATURAL LANGUAGE MODE)", columnTerm(term)))
		parts = append(parts, q)
		args = append(args, a...)
	}
	return strings.Join(parts, " UNION "), args
}

// vectorSearch ranks by the server's cosine_similarity, filters pushed into SQL. On a
// table with an IVFFLAT index (and no metadata filter, which runs in Go) the index
// gives the candidates; when it gives fewer than k, the exact scan runs instead.
func (s *Store) vectorSearch(ctx context.Context, p pos, kind store.Kind, q store.SearchQuery, k int) ([]ranked, error) {
	if st, ok := s.stats.get(tableName(kind, p.tab.suffix), p); ok && st.n == 0 {
		return nil, nil
	}
	if kind == store.KindFact && s.opts.VectorCodes != IndexOff {
		out, ok, err := s.codeSearch(ctx, p, q, k)
		if err != nil || ok {
			return out, err
		}
	}
	if s.caps.VectorPath == VectorPathIVFFlat && len(q.Filter.Metadata) == 0 {
		ix, err := s.indexesOf(ctx, s.db, vecTableName(kind))
		if err != nil {
			return nil, err
		}
		if ix.ivf != "" {
			out, err := s.ivfSearch(ctx, p, kind, q, k)
			if err != nil || len(out) >= k {
				s.ivfQueries.Add(1)
				return topRanked(out, k), err
			}
		}
	}
	query, args, possible := vectorSQL(kind, p, q, s.opts.Dimensions, k, nil)
	if !possible {
		return nil, nil
	}
	out, err := s.vectorRows(ctx, kind, q, query, args)
	return topRanked(out, k), err
}

// vectorCandidates is how many rows the IVFFLAT index gives for a search of k: the
// exact ranking then picks k of them.
func vectorCandidates(k int) int { return max(4*k, 64) }

// ivfSearch ranks the versions the kind's IVFFLAT index gives as nearest (of every
// branch, see ivfSQL) exactly, those the position sees and the filter keeps.
func (s *Store) ivfSearch(ctx context.Context, p pos, kind store.Kind, q store.SearchQuery, k int) ([]ranked, error) {
	query, args := ivfSQL(kind, q, s.opts.Dimensions, vectorCandidates(k))
	rs, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var vids []int64
	for rs.Next() {
		var vid int64
		if err := rs.Scan(&vid); err != nil {
			rs.Close()
			return nil, err
		}
		vids = append(vids, vid)
	}
	rs.Close()
	if err := rs.Err(); err != nil || len(vids) == 0 {
		return nil, err
	}
	query, args, possible := vectorSQL(kind, p, q, s.opts.Dimensions, k, vids)
	if !possible {
		return nil, nil
	}
	return s.vectorRows(ctx, kind, q, query, args)
}

// vectorRows runs a vector query and keeps the rows the filter matches.
func (s *Store) vectorRows(ctx context.Context, kind store.Kind, q store.SearchQuery, query string, args []any) ([]ranked, error) {
	rs, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []ranked
	for rs.Next() {
		var sim float64
		var emb sql.NullString
		r, err := scanRow(kind, rs, &emb, &sim)
		if err != nil {
			return nil, err
		}
		if emb.Valid {
			v, err := parseVec(emb.String)
			if err != nil {
				return nil, fmt.Errorf("decoding %s %q: %w", kind, r.id, err)
			}
			r.rec = store.WithEmbedding(r.rec, v)
		}
		if q.Filter.Match(r.rec) {
			out = append(out, ranked{rec: r.rec, score: sim, vid: r.vid})
		}
	}
	return out, rs.Err()
}

// vectorSQL builds the vector query: the visible versions' columns joined with their
// embeddings in the kind's vectors table, the filter's conditions, the embedding in
// hexadecimal and the similarity as the last two columns, best first, limited to k
// unless a metadata filter must run in Go. ids or vids, when given, name the only
// versions to rank (by record id, or by version).
func vectorSQL(kind store.Kind, p pos, q store.SearchQuery, dims, k int, vids []int64, ids ...string) (string, []any, bool) {
	conds, possible, pushed := filterSQL(kind, q.Filter)
	if !possible {
		return "", nil, false
	}
	vec := "cast(? AS vecf32(" + fmt.Sprint(dims) + "))"
	sim := sq.Expr("cosine_similarity(v.embedding, "+vec+")", vecLiteral(q.Vector))
	b := psql.Select(specs[kind].columns("t"), "hex(v.embedding)").Column(sq.Alias(sim, "sim")).
		From(table(kind, p.tab.suffix) + " t").Join(vecTable(kind) + " v ON v.vid = t.vid").
		Where(visible(p.cut))
	if len(conds) > 0 {
		b = b.Where(conds)
	}
	if len(ids) > 0 {
		b = b.Where(sq.Eq{"t.id": ids})
	}
	if len(vids) > 0 {
		b = b.Where(sq.Eq{"t.vid": vids})
	}
	b = b.OrderBy("sim DESC", "t.id")
	if pushed {
		b = b.Limit(uint64(k))
	}
	query, args, err := b.ToSql()
	if err != nil {
		panic(err)
	}
	return query, args, true
}

// ivfSQL asks a kind's IVFFLAT index for the n versions whose embeddings are nearest
// the query's, of any branch: ordered by l2_distance to a constant vector, the only
// order the index serves.
func ivfSQL(kind store.Kind, q store.SearchQuery, dims, n int) (string, []any) {
	vec := "cast(? AS vecf32(" + fmt.Sprint(dims) + "))"
	return "SELECT vid FROM " + vecTable(kind) + " ORDER BY l2_distance(embedding, " + vec + ") LIMIT " + fmt.Sprint(n),
		[]any{vecLiteral(q.Vector)}
}

// fused turns the retrievers' rankings into hits with store.Fuse, as every store does,
// naming the branch read.
func fused(p pos, q store.SearchQuery, kw, vec []store.Ranked) []store.Hit {
	hits := store.Fuse(q, kw, vec)
	for i := range hits {
		hits[i].Record = store.WithBranch(hits[i].Record, p.name)
	}
	return hits
}

// tableStats are the collection statistics of one table's visible documents: how many
// and their total length in tokens.
type tableStats struct {
	n, sumLen int64
}

// statsCache keeps the statistics of each table at its branch's head. A branch's head
// is the last revision that wrote to its tables, so a read at any revision from the
// head on sees the same rows: the statistics computed for one such read serve every
// other until the branch is written again.
type statsCache struct {
	mu   sync.Mutex
	tabs map[string]statsEntry
}

type statsEntry struct {
	head int64
	tableStats
}

// maxStatsTables bounds the tables whose statistics are kept.
const maxStatsTables = 4096

// get returns the statistics of table name as position p sees them, when known.
func (c *statsCache) get(name string, p pos) (tableStats, bool) {
	head := int64(p.tab.info.Head)
	if p.cut < head {
		return tableStats{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.tabs[name]
	if !ok || e.head != head {
		return tableStats{}, false
	}
	return e.tableStats, true
}

// set records the statistics of table name read at position p, when p reads the
// branch's head.
func (c *statsCache) set(name string, p pos, st tableStats) {
	head := int64(p.tab.info.Head)
	if p.cut < head {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tabs == nil || len(c.tabs) >= maxStatsTables {
		c.tabs = map[string]statsEntry{}
	}
	c.tabs[name] = statsEntry{head: head, tableStats: st}
}

// expiryRecheck is how often a read asks the database whether it holds a fact with an
// expiry, while the answer is no.
const expiryRecheck = time.Second

// holdsExpiring reports whether the database may hold a fact with an expiry. Once it
// does, it always will; until then a read asks the server at most once per
// expiryRecheck (a fact with an expiry written by another process is judged by its
// expiry within that time), and a write of this Store that holds one says so at once.
// A failed check answers yes.
func (s *Store) holdsExpiring(ctx context.Context) bool {
	if s.expiring.Load() {
		return true
	}
	now := time.Now().UnixNano()
	last := s.expiryChecked.Load()
	if now-last < int64(expiryRecheck) || !s.expiryChecked.CompareAndSwap(last, now) {
		return false
	}
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM day1_expiring").Scan(&n); err != nil {
		return true
	}
	if n > 0 {
		s.expiring.Store(true)
	}
	return n > 0
}
