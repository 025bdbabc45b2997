package matrixone

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/day1ai/day1/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one embedded migration file, NNN_name.sql.
type migration struct {
	version int
	name    string
	stmts   []string
}

var migrationName = regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads the embedded migrations in version order.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("day1: matrixone: migration file %q is not named NNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		data, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: m[2], stmts: splitStatements(string(data))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("day1: matrixone: two migrations have version %03d", out[i].version)
		}
	}
	return out, nil
}

// splitStatements splits a migration into statements: each ends with a semicolon at
// the end of a line. Lines starting with -- are comments.
func splitStatements(sql string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// createIndex matches "CREATE INDEX name ON table (...)": MatrixOne rejects
// CREATE INDEX IF NOT EXISTS, so the migrator checks the catalog first.
var createIndex = regexp.MustCompile(`(?is)^CREATE\s+(?:UNIQUE\s+|FULLTEXT\s+)?INDEX\s+` + "`?" + `(\w+)` + "`?" + `\s+(?:USING\s+\w+\s+)?ON\s+` + "`?" + `(\w+)` + "`?")

// expand fills the placeholders of a migration statement: {{dims}} and {{now}}.
func expand(stmt string, dims int, now time.Time) string {
	stmt = strings.ReplaceAll(stmt, "{{dims}}", strconv.Itoa(dims))
	return strings.ReplaceAll(stmt, "{{now}}", "'"+now.Format("2006-01-02 15:04:05.000000")+"'")
}

// migrate applies the migrations not yet recorded in day1_migrations, in order. Every
// statement is idempotent (IF NOT EXISTS, INSERT IGNORE, catalog-checked indexes), so
// two processes migrating at once, or a migration cut short, leave a usable schema.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS day1_migrations (
		version    INT          NOT NULL,
		name       VARCHAR(255) NOT NULL,
		applied_at DATETIME(6)  NOT NULL,
		PRIMARY KEY (version))`); err != nil {
		return wrap(ctx, "migrate", err)
	}
	applied := map[int]bool{}
	rows, err := s.db.QueryContext(ctx, "SELECT version FROM day1_migrations")
	if err != nil {
		return wrap(ctx, "migrate", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return wrap(ctx, "migrate", err)
		}
		applied[v] = true
	}
	rows.Close()
	now := micro(s.opts.Now())
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		start := time.Now()
		for _, stmt := range m.stmts {
			if err := s.execMigration(ctx, expand(stmt, s.opts.Dimensions, now)); err != nil {
				return fmt.Errorf("day1: matrixone: migration %03d_%s: %w", m.version, m.name, err)
			}
		}
		if step := goSteps[m.version]; step != nil {
			if err := step(s, ctx, ms); err != nil {
				return fmt.Errorf("day1: matrixone: migration %03d_%s: %w", m.version, m.name, err)
			}
		}
		if _, err := s.db.ExecContext(ctx, "INSERT IGNORE INTO day1_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.version, m.name, now); err != nil {
			return wrap(ctx, "migrate", err)
		}
		store.Logger(s.opts.Logger).Info("day1: matrixone: migration applied", "database", s.dbName,
			"version", m.version, "name", m.name, "duration", time.Since(start))
	}
	return nil
}

// goSteps are the parts of migrations that SQL alone cannot do, run after the
// migration's statements. Each is idempotent.
var goSteps = map[int]func(s *Store, ctx context.Context, ms []migration) error{
	4:  (*Store).rekeyTables,
	5:  (*Store).widenDupCode,
	6:  (*Store).addForkPath,
	7:  (*Store).addMergeSourceRev,
	8:  (*Store).addAliasTables,
	10: (*Store).addSearchColumns,
	11: (*Store).stemTerms,
	12: (*Store).moveVectors,
	13: (*Store).addExpiry,
}

// addExpiry adds expires_at to every branch's facts table that lacks it (migration
// 013).
func (s *Store) addExpiry(ctx context.Context, _ []migration) error {
	return s.eachSearchTable(ctx, []store.Kind{store.KindFact}, func(_ store.Kind, name, _ string) error {
		return s.addColumn(ctx, name, "expires_at", "DATETIME(6) NULL")
	})
}

// moveVectors copies the embeddings of every branch's facts, observations and
// messages tables into the kind's vectors table and drops their embedding column
// (migration 012). Versions keyed by migration 004 (vids 1, 2, ... in each table,
// so two tables may give one vid to different versions) first get vids unique to
// their table: below zero, table by table. Each step is idempotent: the vids moved
// are below 2^24 no more, embeddings already copied are skipped, and a table without
// the column is done.
func (s *Store) moveVectors(ctx context.Context, _ []migration) error {
	var native int
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM day1_branches WHERE fork_path = ?", BranchPathNative).Scan(&native); err != nil {
		return wrap(ctx, "migrate", err)
	}
	return s.eachSearchTable(ctx, vectorKinds, func(kind store.Kind, name, _ string) error {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.columns
			WHERE table_schema = ? AND table_name = ? AND column_name = 'embedding'`, s.dbName, name).Scan(&n); err != nil {
			return wrap(ctx, "migrate", err)
		}
		if n == 0 {
			return nil
		}
		sfx, _ := strings.CutPrefix(name, specs[kind].prefix+"_b")
		num, err := strconv.ParseInt(sfx, 10, 64)
		if err != nil {
			return fmt.Errorf("day1: matrixone: table %s has no branch number", name)
		}
		t := "`" + name + "`"
		if _, err := s.db.ExecContext(ctx, "UPDATE "+t+" SET vid = vid - ? WHERE vid > 0 AND vid < ?", (num+1)<<vidShift, int64(1)<<vidShift); err != nil {
			return wrap(ctx, "migrate", err)
		}
		if _, err := s.db.ExecContext(ctx, "INSERT INTO "+vecTable(kind)+" (vid, embedding) SELECT vid, embedding FROM "+t+
			" WHERE embedding IS NOT NULL AND vid NOT IN (SELECT vid FROM "+vecTable(kind)+")"); err != nil {
			return wrap(ctx, "migrate", err)
		}
		if native > 0 {
			return nil
		}
		indexes, err := queryStrings(ctx, s.db, `SELECT DISTINCT index_name FROM information_schema.statistics
			WHERE table_schema = ? AND table_name = ? AND column_name = 'embedding'`, s.dbName, name)
		if err != nil {
			return wrap(ctx, "migrate", err)
		}
		for _, ix := range indexes {
			if _, err := s.db.ExecContext(ctx, "DROP INDEX `"+ix+"` ON "+t); err != nil {
				return wrap(ctx, "migrate", err)
			}
		}
		if _, err := s.db.ExecContext(ctx, "ALTER TABLE "+t+" DROP COLUMN embedding"); err != nil {
			return wrap(ctx, "migrate", err)
		}
		return nil
	})
}

// addAliasTables gives every branch made before migration 008 its aliases table,
// parents before children: forked from the parent's with DATA BRANCH when the branch
// was forked so (its diffs then ask the server), else created like main's. Every
// table made is empty, as no alias existed before.
func (s *Store) addAliasTables(ctx context.Context, _ []migration) error {
	type br struct{ name, suffix, parent, path string }
	rs, err := s.db.QueryContext(ctx, "SELECT name, suffix, parent, fork_path FROM day1_branches")
	if err != nil {
		return wrap(ctx, "migrate", err)
	}
	byName := map[string]br{}
	for rs.Next() {
		var b br
		if err := rs.Scan(&b.name, &b.suffix, &b.parent, &b.path); err != nil {
			rs.Close()
			return wrap(ctx, "migrate", err)
		}
		byName[b.name] = b
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return wrap(ctx, "migrate", err)
	}
	have, err := queryStrings(ctx, s.db, "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_name LIKE 'aliases\\_%'", s.dbName)
	if err != nil {
		return wrap(ctx, "migrate", err)
	}
	made := map[string]bool{}
	for _, t := range have {
		made[t] = true
	}
	var ensure func(b br, depth int) error
	ensure = func(b br, depth int) error {
		name := specs[store.KindAlias].prefix + "_" + b.suffix
		if made[name] {
			return nil
		}
		p, hasParent := byName[b.parent]
		if depth > len(byName) {
			return fmt.Errorf("day1: matrixone: the parents of branch %q loop", b.name)
		}
		stmt := "CREATE TABLE IF NOT EXISTS " + table(store.KindAlias, b.suffix) + " LIKE " + table(store.KindAlias, "b0")
		if hasParent {
			if err := ensure(p, depth+1); err != nil {
				return err
			}
			if b.path == BranchPathNative {
				stmt = "DATA BRANCH CREATE TABLE " + table(store.KindAlias, b.suffix) + " FROM " + table(store.KindAlias, p.suffix)
			}
		}
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			return wrap(ctx, "migrate", err)
		}
		made[name] = true
		return nil
	}
	made[specs[store.KindAlias].prefix+"_b0"] = true
	for _, b := range byName {
		if err := ensure(b, 0); err != nil {
			return err
		}
	}
	return nil
}

// addSearchColumns adds the search columns of migration 010 to the conversations and
// messages tables of every branch that lack them, and fills the tokens and lengths
// of their rows from the text they search (title, content).
func (s *Store) addSearchColumns(ctx context.Context, _ []migration) error {
	return s.eachSearchTable(ctx, []store.Kind{store.KindConversation, store.KindMessage}, func(_ store.Kind, name, text string) error {
		if err := s.addColumn(ctx, name, "tokens", "TEXT NULL"); err != nil {
			return err
		}
		if err := s.addColumn(ctx, name, "doc_len", "INT NOT NULL DEFAULT 0"); err != nil {
			return err
		}
		return s.fillTokens(ctx, name, text)
	})
}

// searchText names the column each searched kind's terms come from.
var searchText = map[store.Kind]string{
	store.KindFact: "txt", store.KindObservation: "summary", store.KindConversation: "title", store.KindMessage: "content",
}

// eachSearchTable calls fn with the name of every branch's table of each kind that
// exists (a branch's tables are made at its first write) and the column of its text.
func (s *Store) eachSearchTable(ctx context.Context, kinds []store.Kind, fn func(kind store.Kind, name, text string) error) error {
	suffixes, err := queryStrings(ctx, s.db, "SELECT suffix FROM day1_branches")
	if err != nil {
		return wrap(ctx, "migrate", err)
	}
	for _, sfx := range suffixes {
		for _, k := range kinds {
			name := tableName(k, sfx)
			var n int
			if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.tables
				WHERE table_schema = ? AND table_name = ?`, s.dbName, name).Scan(&n); err != nil {
				return wrap(ctx, "migrate", err)
			}
			if n == 0 {
				continue
			}
			if err := fn(k, name, searchText[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillTokens sets the tokens and doc_len of the rows of a table whose tokens are NULL
// from their text column, in one transaction.
func (s *Store) fillTokens(ctx context.Context, name, text string) error {
	type fill struct {
		vid    int64
		tokens string
		n      int
	}
	rs, err := s.db.QueryContext(ctx, "SELECT vid, "+text+" FROM `"+name+"` WHERE tokens IS NULL")
	if err != nil {
		return wrap(ctx, "migrate", err)
	}
	var fills []fill
	for rs.Next() {
		var f fill
		var body string
		if err := rs.Scan(&f.vid, &body); err != nil {
			rs.Close()
			return wrap(ctx, "migrate", err)
		}
		f.tokens, f.n = tokenColumn(body)
		fills = append(fills, f)
	}
	rs.Close()
	if err := rs.Err(); err != nil || len(fills) == 0 {
		return wrap(ctx, "migrate", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return wrap(ctx, "migrate", err)
	}
	defer tx.Rollback()
	for _, f := range fills {
		if _, err := tx.ExecContext(ctx, "UPDATE `"+name+"` SET tokens = ?, doc_len = ? WHERE vid = ?", f.tokens, f.n, f.vid); err != nil {
			return wrap(ctx, "migrate", err)
		}
	}
	return wrap(ctx, "migrate", tx.Commit())
}

// stemTerms rewrites the tokens of every row of every branch's search tables as
// textsearch.Terms gives them (see migration 011), unless a branch was forked natively.
func (s *Store) stemTerms(ctx context.Context, _ []migration) error {
	var native int
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM day1_branches WHERE fork_path = ?", BranchPathNative).Scan(&native); err != nil {
		return wrap(ctx, "migrate", err)
	}
	if native > 0 {
		return nil
	}
	return s.eachSearchTable(ctx, store.SearchKinds, func(_ store.Kind, name, text string) error {
		return s.restem(ctx, name, text)
	})
}

// unstemmedRows reports whether migration 011 left rows with their search tokens as
// written: it does where a branch forked natively before it ran. (Two queries: the
// 2024-11 server fails on the join of the two tables.)
func (s *Store) unstemmedRows(ctx context.Context) (bool, error) {
	var applied time.Time
	err := s.db.QueryRowContext(ctx, "SELECT applied_at FROM day1_migrations WHERE version = 11").Scan(&applied)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var n int
	err = s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM day1_branches WHERE fork_path = ? AND created_at <= ?",
		BranchPathNative, applied).Scan(&n)
	return n > 0, err
}

// tokenFill is the new tokens of one row.
type tokenFill struct {
	vid    int64
	tokens string
}

// writeTokens sets the tokens of the given rows of a table in one transaction.
func (s *Store) writeTokens(ctx context.Context, name string, fills []tokenFill) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return wrap(ctx, "migrate", err)
	}
	defer tx.Rollback()
	for _, f := range fills {
		if _, err := tx.ExecContext(ctx, "UPDATE `"+name+"` SET tokens = ? WHERE vid = ?", f.tokens, f.vid); err != nil {
			return wrap(ctx, "migrate", err)
		}
	}
	return wrap(ctx, "migrate", tx.Commit())
}

// restemBatch is how many rows one transaction of restem rewrites.
const restemBatch = 500

// restem rewrites the tokens of a table's rows whose stored tokens differ from the
// terms of their text, restemBatch rows a transaction, in vid order.
func (s *Store) restem(ctx context.Context, name, text string) error {
	for after := int64(-1); ; {
		rs, err := s.db.QueryContext(ctx, "SELECT vid, "+text+", COALESCE(tokens, '') FROM `"+name+"` WHERE vid > ? ORDER BY vid LIMIT ?", after, restemBatch)
		if err != nil {
			return wrap(ctx, "migrate", err)
		}
		var fills []tokenFill
		rows := 0
		for rs.Next() {
			var vid int64
			var body, old string
			if err := rs.Scan(&vid, &body, &old); err != nil {
				rs.Close()
				return wrap(ctx, "migrate", err)
			}
			rows++
			after = vid
			if tokens, _ := tokenColumn(body); tokens != old {
				fills = append(fills, tokenFill{vid, tokens})
			}
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return wrap(ctx, "migrate", err)
		}
		if len(fills) > 0 {
			if err := s.writeTokens(ctx, name, fills); err != nil {
				return err
			}
		}
		if rows < restemBatch {
			return nil
		}
	}
}

// addForkPath adds day1_branches.fork_path when it is missing (see migration 006).
func (s *Store) addForkPath(ctx context.Context, _ []migration) error {
	return s.addColumn(ctx, "day1_branches", "fork_path", "VARCHAR(16) NOT NULL DEFAULT ''")
}

// addMergeSourceRev adds day1_merges.source_rev when it is missing (see migration 007).
func (s *Store) addMergeSourceRev(ctx context.Context, _ []migration) error {
	return s.addColumn(ctx, "day1_merges", "source_rev", "BIGINT NOT NULL DEFAULT 0")
}

// addColumn adds a column to a table unless the catalog lists it already.
func (s *Store) addColumn(ctx context.Context, table, column, def string) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.columns
		WHERE table_schema = ? AND table_name = ? AND column_name = ?`, s.dbName, table, column).Scan(&n); err != nil {
		return wrap(ctx, "migrate", err)
	}
	if n > 0 {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, "ALTER TABLE "+table+" ADD COLUMN "+column+" "+def); err != nil {
		return wrap(ctx, "migrate", err)
	}
	return nil
}

// dupCodeWidth is the width of the dup_code column (see migration 002).
const dupCodeWidth = 160

// widenDupCode widens the dup_code column of every facts table narrower than
// dupCodeWidth.
func (s *Store) widenDupCode(ctx context.Context, _ []migration) error {
	tables, err := queryStrings(ctx, s.db, `SELECT table_name FROM information_schema.columns
		WHERE table_schema = ? AND column_name = 'dup_code' AND character_maximum_length < ?`, s.dbName, dupCodeWidth)
	if err != nil {
		return wrap(ctx, "migrate", err)
	}
	for _, t := range tables {
		if _, err := s.db.ExecContext(ctx, fmt.Sprintf("ALTER TABLE `%s` MODIFY COLUMN dup_code VARCHAR(%d) NOT NULL DEFAULT ''", t, dupCodeWidth)); err != nil {
			return wrap(ctx, "migrate", err)
		}
	}
	return nil
}

// rekeyTables rebuilds the record tables made before migration 004 (primary key
// (id, rev), no dup_code) in the shape of migration 002 (primary key vid). Existing
// versions get vids 1, 2, ... in revision order, below every vid written later
// (rev<<vidShift with a larger revision). Each table is rebuilt as <table>_rk, then
// swapped in by renaming, so an interrupted run leaves either table whole; a later run
// finishes the swap.
func (s *Store) rekeyTables(ctx context.Context, ms []migration) error {
	// The database's own width: Open checks Options.Dimensions against it afterwards.
	var dims int
	if err := s.db.QueryRowContext(ctx, "SELECT dims FROM day1_state WHERE id = 1").Scan(&dims); err != nil {
		return wrap(ctx, "migrate", err)
	}
	ddl := map[store.Kind]string{}
	for _, m := range ms {
		if m.version != 2 {
			continue
		}
		for _, stmt := range m.stmts {
			for _, k := range store.Kinds {
				if strings.HasPrefix(stmt, "CREATE TABLE IF NOT EXISTS "+specs[k].prefix+"_b0 (") {
					ddl[k] = expand(stmt, dims, time.Time{})
				}
			}
		}
	}
	suffixes, err := queryStrings(ctx, s.db, "SELECT suffix FROM day1_branches")
	if err != nil {
		return wrap(ctx, "migrate", err)
	}
	tables := map[string]bool{}             // every table of the database
	withVid := map[string]bool{}            // tables that have the vid column
	columns := map[string]map[string]bool{} // the columns of each table
	rs, err := s.db.QueryContext(ctx, "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = ?", s.dbName)
	if err != nil {
		return wrap(ctx, "migrate", err)
	}
	for rs.Next() {
		var t, c string
		if err := rs.Scan(&t, &c); err != nil {
			rs.Close()
			return wrap(ctx, "migrate", err)
		}
		if columns[t] == nil {
			columns[t] = map[string]bool{}
		}
		columns[t][c] = true
		if c == "id" {
			tables[t] = true
		}
		if c == "vid" {
			withVid[t] = true
		}
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return wrap(ctx, "migrate", err)
	}
	exec := func(q string) error {
		_, err := s.db.ExecContext(ctx, q)
		return wrap(ctx, "migrate", err)
	}
	for _, sfx := range suffixes {
		for _, k := range store.Kinds {
			name := specs[k].prefix + "_" + sfx
			rk, old := name+"_rk", name+"_old"
			switch {
			case withVid[name]:
				// Done, perhaps by an interrupted run: drop what it left.
				if err := exec("DROP TABLE IF EXISTS `" + old + "`"); err != nil {
					return err
				}
				if err := exec("DROP TABLE IF EXISTS `" + rk + "`"); err != nil {
					return err
				}
				continue
			case !tables[name] && withVid[rk]:
				// Interrupted between the two renames.
				if err := exec("RENAME TABLE `" + rk + "` TO `" + name + "`"); err != nil {
					return err
				}
				if err := exec("DROP TABLE IF EXISTS `" + old + "`"); err != nil {
					return err
				}
				continue
			case !tables[name]:
				continue // a branch whose tables were never made
			}
			// The columns the old table has (not vid nor dup_code, nor those later
			// migrations added); the new one gives the others their defaults.
			cols := specs[k].allCols()[1:]
			if hasEmbedding(k) {
				// Tables this old keep their embeddings: migration 012 moves them.
				cols = append(cols, "`embedding`")
			}
			cols = slices.DeleteFunc(cols, func(c string) bool { return !columns[name][strings.Trim(c, "`")] })
			list := strings.Join(cols, ", ")
			steps := []string{
				"DROP TABLE IF EXISTS `" + rk + "`",
				strings.Replace(ddl[k], specs[k].prefix+"_b0", rk, 1),
				"INSERT INTO `" + rk + "` (`vid`, " + list + ") SELECT ROW_NUMBER() OVER (ORDER BY `rev`), " + list + " FROM `" + name + "`",
				"RENAME TABLE `" + name + "` TO `" + old + "`",
				"RENAME TABLE `" + rk + "` TO `" + name + "`",
				"DROP TABLE `" + old + "`",
			}
			for _, q := range steps {
				if err := exec(q); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// execMigration runs one statement, skipping a CREATE INDEX whose index exists.
func (s *Store) execMigration(ctx context.Context, stmt string) error {
	if m := createIndex.FindStringSubmatch(stmt); m != nil {
		exists, err := s.indexExists(ctx, m[2], m[1])
		if err != nil {
			return wrap(ctx, "migrate", err)
		}
		if exists {
			return nil
		}
	}
	_, err := s.db.ExecContext(ctx, stmt)
	return wrap(ctx, "migrate", err)
}

// indexExists looks an index up in the catalog.
func (s *Store) indexExists(ctx context.Context, table, index string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.statistics
		WHERE table_schema = ? AND table_name = ? AND index_name = ?`, s.dbName, table, index).Scan(&n)
	return n > 0, err
}
