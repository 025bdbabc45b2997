package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1/llm"
)

// The server's own primitives, measured in the same run as day1 on MatrixOne, on the
// same rows: what the store's figures are compared with. Each works on the tables day1
// wrote (main's are facts_b0, observations_b0, ...), in the bench's database.

// rawFacts is main's facts table, and rawVectors the embeddings of every branch's
// facts, keyed by version.
const (
	rawFacts   = "facts_b0"
	rawVectors = "facts_vectors"
)

// serverDB opens the bench database for the primitives.
func serverDB(dsn string) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.InterpolateParams = true
	cfg.Params = map[string]string{"experimental_fulltext_index": "1", "experimental_ivf_index": "1"}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}

// rawInsertRate copies every row of main's facts table, and the embeddings of those
// rows, into new tables shaped like them (CREATE TABLE ... LIKE: the same columns and
// indexes) with client-side multi-row INSERTs of batch rows, one transaction per
// batch, as day1 writes them; it returns the rows per second of the inserts alone.
func rawInsertRate(ctx context.Context, db *sql.DB, batch int) (float64, int, error) {
	for _, t := range []string{"raw_insert LIKE " + rawFacts, "raw_vectors LIKE " + rawVectors} {
		if _, err := db.ExecContext(ctx, "CREATE TABLE "+t); err != nil {
			return 0, 0, err
		}
	}
	defer db.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS raw_insert")
	defer db.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS raw_vectors")
	rows, cols, err := readRaw(ctx, db, "SELECT * FROM "+rawFacts)
	if err != nil {
		return 0, 0, err
	}
	vecs, _, err := readRaw(ctx, db, "SELECT v.vid, v.embedding FROM "+rawVectors+" v JOIN "+rawFacts+" t ON t.vid = v.vid")
	if err != nil {
		return 0, 0, err
	}
	vecOf := make(map[any][]any, len(vecs))
	for _, v := range vecs {
		vecOf[v[0]] = v
	}
	vid := slices.Index(cols, "vid")
	if vid < 0 {
		return 0, 0, fmt.Errorf("%s has no vid column: %q", rawFacts, cols)
	}
	ph := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	start := time.Now()
	for lo := 0; lo < len(rows); lo += batch {
		chunk := rows[lo:min(lo+batch, len(rows))]
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, 0, err
		}
		// Statements of at most 100 rows, as day1 sends them.
		for c := 0; c < len(chunk); c += 100 {
			part := chunk[c:min(c+100, len(chunk))]
			var args, vargs []any
			phs := make([]string, len(part))
			var vphs []string
			for i, r := range part {
				phs[i] = ph
				args = append(args, r...)
				if v, ok := vecOf[r[vid]]; ok {
					vphs, vargs = append(vphs, "(?, ?)"), append(vargs, v...)
				}
			}
			stmts := []string{"INSERT INTO raw_insert VALUES " + strings.Join(phs, ", ")}
			all := [][]any{args}
			if len(vphs) > 0 {
				stmts, all = append(stmts, "INSERT INTO raw_vectors VALUES "+strings.Join(vphs, ", ")), append(all, vargs)
			}
			for i, q := range stmts {
				if _, err := tx.ExecContext(ctx, q, all[i]...); err != nil {
					tx.Rollback()
					return 0, 0, err
				}
			}
		}
		if err := tx.Commit(); err != nil {
			return 0, 0, err
		}
	}
	return float64(len(rows)) / time.Since(start).Seconds(), len(rows), nil
}

// readRaw reads every row of a query as strings (nil for NULL), with the column names.
func readRaw(ctx context.Context, db *sql.DB, query string) ([][]any, []string, error) {
	rs, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, nil, err
	}
	var rows [][]any
	for rs.Next() {
		raw := make([]sql.RawBytes, len(cols))
		dest := make([]any, len(cols))
		for i := range raw {
			dest[i] = &raw[i]
		}
		if err := rs.Scan(dest...); err != nil {
			return nil, nil, err
		}
		row := make([]any, len(cols))
		for i, b := range raw {
			if b != nil {
				row[i] = string(b)
			}
		}
		rows = append(rows, row)
	}
	return rows, cols, rs.Err()
}

// rawSearch is the server's own hybrid retrieval on facts: main's full-text top 10 and
// the vector top 10 of the facts' embeddings (through the table's IVFFLAT index when
// it has one), for a query's words and embedding.
func rawSearch(ctx context.Context, db *sql.DB, text string, vec []float32) error {
	if err := drain(db.QueryContext(ctx, "SELECT id FROM "+rawFacts+" WHERE MATCH(tokens) AGAINST(?) LIMIT 10", text)); err != nil {
		return err
	}
	return drain(db.QueryContext(ctx, "SELECT vid FROM "+rawVectors+" ORDER BY l2_distance(embedding, ?) LIMIT 10", vecText(vec)))
}

// drain reads a query's rows to the end and closes them.
func drain(rs *sql.Rows, err error) error {
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
	}
	return rs.Err()
}

// rawTables are the tables a branch has on the server: one per record kind, and its
// aliases.
var rawTables = []string{"facts", "observations", "relations", "conversations", "messages", "aliases"}

// rawBranch copies main's tables as a branch would: DATA BRANCH CREATE when the server
// has it (native), else CREATE TABLE ... LIKE and INSERT ... SELECT of every row. The
// caller drops the copies (dropRawBranch).
func rawBranch(ctx context.Context, db *sql.DB, native bool, i int) error {
	for _, t := range rawTables {
		from, to := t+"_b0", rawBranchTable(t, i)
		var stmts []string
		if native {
			stmts = []string{"DATA BRANCH CREATE TABLE " + to + " FROM " + from}
		} else {
			stmts = []string{"CREATE TABLE " + to + " LIKE " + from, "INSERT INTO " + to + " SELECT * FROM " + from}
		}
		for _, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// rawBranchTable names table t of rawBranch i.
func rawBranchTable(t string, i int) string { return fmt.Sprintf("raw_%s_%d", t, i) }

// dropRawBranch drops the tables of rawBranch i.
func dropRawBranch(ctx context.Context, db *sql.DB, i int) {
	for _, t := range rawTables {
		db.ExecContext(ctx, "DROP TABLE IF EXISTS "+rawBranchTable(t, i))
	}
}

// vecText formats an embedding as MatrixOne reads a vector literal.
func vecText(v []float32) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "%g", x)
	}
	sb.WriteByte(']')
	return sb.String()
}

// ratio formats day1's figure against the server's: how many times slower day1 is
// (for times) or what share of the server's rate it reaches (for rates).
func ratio(day1, server float64) string {
	if server == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", day1/server)
}

// rawWrites adds the row of the server's multi-row INSERT of the rows day1 wrote,
// beside day1's write rate.
func (b *bench) rawWrites(ctx context.Context, db *sql.DB, n int, day1Rate float64) error {
	rate, rows, err := rawInsertRate(ctx, db, b.o.batch)
	if err != nil {
		return fmt.Errorf("server primitive, multi-row INSERT: %w", err)
	}
	r := day1Rate / rate
	b.add(fmt.Sprintf("server: multi-row INSERT of the same %d rows, same indexes, batches of %d", rows, b.o.batch), n,
		fmt.Sprintf("%s rows/s; day1 at %s of it", thousands(rate), ratio(day1Rate, rate)),
		"day1 ≥ 0.5×", ok(r >= 0.5))
	return nil
}

// rawSearches adds the row of the server's own full-text and vector top 10 for the
// bench's queries, beside day1's hybrid search.
func (b *bench) rawSearches(ctx context.Context, db *sql.DB, n int, queries []string, day1P50, day1P95 time.Duration) error {
	e := llm.NewLocalEmbedder(llm.DefaultDimensions)
	s := b.samples("server-search")
	for _, q := range queries {
		vs, err := e.Embed(ctx, []string{q})
		if err != nil {
			return err
		}
		if err := s.time(func() error { return rawSearch(ctx, db, q, vs[0]) }); err != nil {
			return fmt.Errorf("server primitive, search: %w", err)
		}
	}
	p50, p95 := s.percentiles()
	b.add("server: full-text top 10 + vector top 10, same queries", n,
		fmt.Sprintf("%s; day1 p50 %.1fx, p95 %.1fx", s.String(), float64(day1P50)/float64(p50), float64(day1P95)/float64(p95)),
		"—", nil)
	return nil
}

// rawBranchCopies is how many of the server's own copies of main's tables are timed,
// one after each of day1's first forks.
const rawBranchCopies = 5

// rawBranchTimed times copy i of main's tables (rawBranch) into s, then drops it.
func rawBranchTimed(ctx context.Context, db *sql.DB, native bool, i int, s *samples) error {
	err := s.time(func() error { return rawBranch(ctx, db, native, i) })
	dropRawBranch(context.WithoutCancel(ctx), db, i)
	if err != nil {
		return fmt.Errorf("server primitive, branch: %w", err)
	}
	return nil
}

// addRawBranches adds the row of the server's own copy of main's tables (DATA BRANCH
// CREATE on a server that has it, else CREATE TABLE ... LIKE and INSERT ... SELECT),
// timed in s, beside day1's branch creation.
func (b *bench) addRawBranches(n int, native bool, s *samples, day1P50 time.Duration, when string) {
	p50, _ := s.percentiles()
	how := fmt.Sprintf("CREATE TABLE ... LIKE + INSERT ... SELECT of %d tables", len(rawTables))
	target, pass := "day1 ≤ 2×", ok(float64(day1P50) <= 2*float64(p50))
	if native {
		// A native fork is held to its own target on day1's row.
		how = fmt.Sprintf("DATA BRANCH CREATE of %d tables", len(rawTables))
		target, pass = "—", nil
	}
	b.add("server: "+how+when, n, fmt.Sprintf("%s; day1 p50 %.1fx", s.String(), float64(day1P50)/float64(p50)), target, pass)
}

// checkpoint asks the server to checkpoint: to write what its TN holds in memory to
// objects. It needs the sys account's privileges.
func checkpoint(ctx context.Context, db *sql.DB) error {
	var out string
	if err := db.QueryRowContext(ctx, "SELECT mo_ctl('dn', 'checkpoint', '')").Scan(&out); err != nil {
		return fmt.Errorf("mo_ctl checkpoint: %w", err)
	}
	// The server answers in JSON, with "returnStr": "OK" when the checkpoint was made.
	if !strings.Contains(out, `"OK"`) {
		return fmt.Errorf("mo_ctl checkpoint: %s", strings.Join(strings.Fields(out), " "))
	}
	return nil
}
