package matrixone

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
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
		for _, stmt := range m.stmts {
			if err := s.execMigration(ctx, expand(stmt, s.opts.Dimensions, now)); err != nil {
				return fmt.Errorf("day1: matrixone: migration %03d_%s: %w", m.version, m.name, err)
			}
		}
		if _, err := s.db.ExecContext(ctx, "INSERT IGNORE INTO day1_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.version, m.name, now); err != nil {
			return wrap(ctx, "migrate", err)
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
