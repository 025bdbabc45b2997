package matrixone

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1/store"
)

// Search indexes. On the full-text path every facts, observations, conversations and
// messages table has a FULLTEXT index on its search tokens: Open makes the missing
// ones, CREATE TABLE ... LIKE copies it to each new branch, and ensureBranchIndexes
// checks a natively created branch. On the IVFFLAT path the vectors table of facts,
// observations or messages, which holds every branch's embeddings of the kind, gets an
// IVFFLAT index when a write brings it to Options.VectorIndexRows rows, and a rebuild
// with more lists at each fourfold growth after that. The store learns which tables have
// which index from the catalog, once per table, and remembers it (indexCatalog): the
// store never drops an index but with its table, and table names are never reused.

// searchKinds are the kinds with search indexes: a FULLTEXT index each, and an
// IVFFLAT index for those of vectorKinds.
var searchKinds = store.SearchKinds

// vectorKinds are the kinds whose records have embeddings, each with a vectors table.
var vectorKinds = []store.Kind{store.KindFact, store.KindObservation, store.KindMessage}

// ivfIndexName is the name of the store's IVFFLAT indexes.
const ivfIndexName = "ivf_embedding"

// ftIndexName is the name of the store's FULLTEXT indexes. (A table made with CREATE
// TABLE ... LIKE gets the index under no name on the 2024-11 build; the store finds
// indexes by column.)
const ftIndexName = "ft_tokens"

// tableIndexes is what a table has of the search indexes.
type tableIndexes struct {
	fullText bool   // a FULLTEXT index on tokens
	ivf      string // the name of the IVFFLAT index on embedding, "" when none
	ivfKnown bool   // an index on embedding exists (its name may be empty)
}

// indexCatalog remembers the search indexes of the tables the store has looked at.
type indexCatalog struct {
	mu   sync.Mutex
	tabs map[string]tableIndexes // by unquoted table name
}

func (c *indexCatalog) get(name string) (tableIndexes, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ix, ok := c.tabs[name]
	return ix, ok
}

func (c *indexCatalog) set(name string, ix tableIndexes) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tabs == nil {
		c.tabs = map[string]tableIndexes{}
	}
	c.tabs[name] = ix
}

// tableName is the unquoted name of a kind's table on a branch suffix.
func tableName(k store.Kind, suffix string) string { return specs[k].prefix + "_" + suffix }

// indexesOf returns the search indexes of one table, from the catalog the first time.
func (s *Store) indexesOf(ctx context.Context, q queryer, name string) (tableIndexes, error) {
	if ix, ok := s.indexes.get(name); ok {
		return ix, nil
	}
	all, err := s.loadIndexes(ctx, q, name)
	if err != nil {
		return tableIndexes{}, err
	}
	ix := all[name]
	s.indexes.set(name, ix)
	return ix, nil
}

// loadIndexes reads the search indexes of the named tables, or of every table of the
// database when none is named.
func (s *Store) loadIndexes(ctx context.Context, q queryer, names ...string) (map[string]tableIndexes, error) {
	query := "SELECT table_name, index_name, column_name FROM information_schema.statistics WHERE table_schema = ? AND column_name IN ('tokens', 'embedding')"
	args := []any{s.dbName}
	if len(names) > 0 {
		query += " AND table_name IN (" + placeholders(len(names)) + ")"
		for _, n := range names {
			args = append(args, n)
		}
	}
	rs, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string]tableIndexes{}
	for rs.Next() {
		var t, idx, col string
		if err := rs.Scan(&t, &idx, &col); err != nil {
			return nil, err
		}
		ix := out[t]
		if col == "tokens" {
			ix.fullText = true
		} else {
			ix.ivfKnown = true
			if idx != "" {
				ix.ivf = idx
			}
		}
		out[t] = ix
	}
	return out, rs.Err()
}

// ensureFullText makes the FULLTEXT index of every table of searchKinds of every
// branch that lacks one, when the store is on the full-text path.
func (s *Store) ensureFullText(ctx context.Context) error {
	if s.caps.KeywordPath != KeywordPathFullText {
		return nil
	}
	have, err := s.loadIndexes(ctx, s.db)
	if err != nil {
		return wrap(ctx, "Open", err)
	}
	suffixes, err := queryStrings(ctx, s.db, "SELECT suffix FROM day1_branches")
	if err != nil {
		return wrap(ctx, "Open", err)
	}
	for _, sfx := range suffixes {
		for _, k := range searchKinds {
			name := tableName(k, sfx)
			ix := have[name]
			if !ix.fullText {
				if _, err := s.db.ExecContext(ctx, "CREATE FULLTEXT INDEX "+ftIndexName+" ON "+table(k, sfx)+" (tokens)"); err != nil {
					if isNoTable(err) {
						continue // a branch deleted meanwhile
					}
					return wrap(ctx, "Open", err)
				}
				ix.fullText = true
			}
			s.indexes.set(name, ix)
		}
	}
	return nil
}

// prepareCopy readies the empty table of kind k of a branch about to be filled by a
// portable copy from a table like templ's. CREATE TABLE ... LIKE copies the template's
// indexes: the FULLTEXT index stays; an IVFFLAT index is dropped (its centroids were
// not computed on the copy's rows, and a search through it is slower than a scan).
func (s *Store) prepareCopy(ctx context.Context, k store.Kind, suffix, templ string) error {
	from, err := s.indexesOf(ctx, s.db, tableName(k, templ))
	if err != nil {
		return err
	}
	name := tableName(k, suffix)
	if from.ivfKnown {
		all, err := s.loadIndexes(ctx, s.db, name)
		if err != nil {
			return err
		}
		if t := all[name]; t.ivfKnown {
			if t.ivf == "" {
				return fmt.Errorf("day1: matrixone: the IVFFLAT index copied to %s has no name and cannot be dropped", name)
			}
			if _, err := s.db.ExecContext(ctx, "DROP INDEX `"+t.ivf+"` ON "+table(k, suffix)); err != nil {
				return err
			}
		}
	}
	s.indexes.set(name, tableIndexes{fullText: from.fullText})
	return nil
}

// ensureBranchIndexes readies the search indexes of a branch's tables made by DATA
// BRANCH CREATE: the FULLTEXT indexes are made when the store is on the full-text path
// and they were not carried; an IVFFLAT index carried from the parent is dropped, as a
// portable copy drops it (prepareCopy): on 3.0 a search through it ranks the branch's
// rows wrongly.
func (s *Store) ensureBranchIndexes(ctx context.Context, suffix string) error {
	names := make([]string, len(searchKinds))
	for i, k := range searchKinds {
		names[i] = tableName(k, suffix)
	}
	all, err := s.loadIndexes(ctx, s.db, names...)
	if err != nil {
		return err
	}
	for i, k := range searchKinds {
		name := names[i]
		ix := all[name]
		if ix.ivf != "" {
			if _, err := s.db.ExecContext(ctx, "DROP INDEX `"+ix.ivf+"` ON "+table(k, suffix)); err != nil {
				return err
			}
			ix.ivf, ix.ivfKnown = "", false
		}
		if s.caps.KeywordPath == KeywordPathFullText && !ix.fullText {
			if _, err := s.db.ExecContext(ctx, "CREATE FULLTEXT INDEX "+ftIndexName+" ON "+table(k, suffix)+" (tokens)"); err != nil {
				return err
			}
			ix.fullText = true
		}
		s.indexes.set(name, ix)
	}
	return nil
}

// vectorMarks reports whether growing a table from before to after rows crosses one
// of the marks at which its IVFFLAT index is built or rebuilt: VectorIndexRows, then
// four times as many, and so on.
func (s *Store) vectorMarks(before, after int64) bool {
	for mark := int64(s.opts.VectorIndexRows); mark <= after; mark *= 4 {
		if before < mark {
			return true
		}
		if mark > math.MaxInt64/4 {
			break
		}
	}
	return false
}

// indexer runs afterWrite for committed writes in one background goroutine at a time,
// so that no write waits for an index build: the tables' rows added since it last ran
// are summed per table. Searches take the exact scan until a table's index is built.
type indexer struct {
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	pending map[string]map[store.Kind]int // rows added, by table suffix
	running bool
	wg      sync.WaitGroup
}

// queue adds the rows a write added and starts the worker when it is idle.
func (ix *indexer) queue(s *Store, added map[string]map[store.Kind]int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ctx.Err() != nil {
		return
	}
	if ix.pending == nil {
		ix.pending = map[string]map[store.Kind]int{}
	}
	for suffix, kinds := range added {
		if ix.pending[suffix] == nil {
			ix.pending[suffix] = map[store.Kind]int{}
		}
		for k, n := range kinds {
			ix.pending[suffix][k] += n
		}
	}
	if ix.running {
		return
	}
	ix.running = true
	ix.wg.Add(1)
	go func() {
		defer ix.wg.Done()
		for {
			ix.mu.Lock()
			work := ix.pending
			ix.pending = nil
			if len(work) == 0 || ix.ctx.Err() != nil {
				ix.running = false
				ix.mu.Unlock()
				return
			}
			ix.mu.Unlock()
			for suffix, kinds := range work {
				s.afterWrite(ix.ctx, suffix, kinds)
			}
		}
	}()
}

// wait returns when no build is running or queued.
func (ix *indexer) wait() { ix.wg.Wait() }

// stop cancels the running build and waits for the worker to return.
func (ix *indexer) stop() {
	ix.mu.Lock()
	ix.cancel()
	ix.mu.Unlock()
	ix.wg.Wait()
}

// afterWrite builds or rebuilds the IVFFLAT index of the tables a committed write added
// rows to, when the write brought them across a mark (see Options.VectorIndex): the
// observations and messages tables, and the facts tables when Options.VectorCodes is
// off. It runs in the indexer's goroutine. A failed build leaves the table searched by
// the exact scan, and is not the write's failure: the records are committed.
func (s *Store) afterWrite(ctx context.Context, suffix string, added map[store.Kind]int) {
	if s.caps.VectorPath != VectorPathIVFFlat {
		return
	}
	for _, k := range vectorKinds {
		n := added[k]
		if n == 0 || k == store.KindFact && s.opts.VectorCodes != IndexOff {
			continue // facts rank by their codes (codeSearch): no build to wait for
		}
		var rows int64
		if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+vecTable(k)).Scan(&rows); err != nil {
			continue
		}
		if s.vectorMarks(rows-int64(n), rows) {
			_ = s.buildVectorIndex(ctx, k, rows)
		}
	}
}

// BuildVectorIndexes builds, or rebuilds with √rows lists, the IVFFLAT indexes of the
// facts, observations and messages vectors tables, whatever their size (kinds with no
// embedding yet are skipped). Every branch's embeddings are in one vectors table per
// kind, so the indexes serve every branch; branch names the branch whose write asks
// for them. Writes of embeddings wait while an index builds: seconds for 10,000 rows.
// Errors: store.ErrNotSupported when the store is not on the IVFFLAT path
// (Capabilities.VectorPath), store.ErrBranchNotFound, an *Error from the server.
func (s *Store) BuildVectorIndexes(ctx context.Context, branch string) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	if err := store.ValidateBranchName("branch", branch); err != nil {
		return err
	}
	if s.caps.VectorPath != VectorPathIVFFlat {
		return fmt.Errorf("%w: vector indexes need IVFFLAT on the server and Options.VectorIndex on (the server %s; path %q)",
			store.ErrNotSupported, s.caps.Version, s.caps.VectorPath)
	}
	if _, err := loadBranch(ctx, s.db, branch); err != nil {
		return wrap(ctx, "BuildVectorIndexes", err)
	}
	for _, k := range vectorKinds {
		var rows int64
		if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+vecTable(k)).Scan(&rows); err != nil {
			return wrap(ctx, "BuildVectorIndexes", err)
		}
		if rows == 0 {
			continue
		}
		if err := s.buildVectorIndex(ctx, k, rows); err != nil {
			return wrap(ctx, "BuildVectorIndexes", err)
		}
	}
	return nil
}

// buildVectorIndex creates the IVFFLAT index of a kind's vectors table with √rows
// lists, or rebuilds the existing one with that many.
func (s *Store) buildVectorIndex(ctx context.Context, k store.Kind, rows int64) error {
	name := vecTableName(k)
	ix, err := s.indexesOf(ctx, s.db, name)
	if err != nil {
		return err
	}
	lists := max(1, int64(math.Sqrt(float64(rows))))
	switch {
	case ix.ivf != "":
		_, err = s.db.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s ALTER REINDEX `%s` IVFFLAT LISTS = %d", vecTable(k), ix.ivf, lists))
	case ix.ivfKnown:
		return fmt.Errorf("day1: matrixone: the IVFFLAT index of %s has no name and cannot be rebuilt", name)
	default:
		_, err = s.db.ExecContext(ctx, fmt.Sprintf("CREATE INDEX %s USING ivfflat ON %s (embedding) lists = %d op_type 'vector_l2_ops'",
			ivfIndexName, vecTable(k), lists))
		if err == nil {
			ix.ivf, ix.ivfKnown = ivfIndexName, true
			s.indexes.set(name, ix)
		}
	}
	return err
}

// isNoTable reports a missing table.
func isNoTable(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == errNoSuchTable {
		return true
	}
	return err != nil && strings.Contains(err.Error(), "no such table")
}
