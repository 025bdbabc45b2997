package matrixone_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
)

// serverConn opens one connection to a fresh test database, so session state (USE,
// SET) holds for every statement of the test.
func serverConn(t *testing.T, params ...func(*mysql.Config)) *sql.Conn {
	t.Helper()
	s := openTest(t, testDatabase(t))
	t.Cleanup(func() { s.Close() })
	cfg, err := matrixone.ParseDSN(testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = s.Database()
	for _, p := range params {
		p(cfg)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func mustExec(t *testing.T, c *sql.Conn, q string, args ...any) {
	t.Helper()
	if _, err := c.ExecContext(t.Context(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func mysqlErr(err error) int {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return int(me.Number)
	}
	return 0
}

// TestCapabilities reports what the server supports and checks the branch path
// follows it.
func TestCapabilities(t *testing.T) {
	t.Parallel()
	s := openTest(t, testDatabase(t))
	defer s.Close()
	c := s.Capabilities()
	t.Logf("server capabilities: %+v", c)
	if c.Version == "" {
		t.Errorf("Version is empty")
	}
	want := matrixone.BranchPathPortable
	if c.DataBranch {
		want = matrixone.BranchPathNative
	}
	if c.BranchPath != want {
		t.Errorf("BranchPath = %q with DataBranch %v; want %q", c.BranchPath, c.DataBranch, want)
	}
	if (c.DataBranchDiff || c.DataBranchMerge || c.DataBranchPick) && !c.DataBranch {
		t.Errorf("DATA BRANCH DIFF, MERGE or PICK reported without DATA BRANCH CREATE: %+v", c)
	}
	// Diffs take the portable path unless NativeDiff asks for the server's.
	if c.DiffPath != matrixone.DiffPathPortable {
		t.Errorf("DiffPath = %q by default; want %q", c.DiffPath, matrixone.DiffPathPortable)
	}
	on := openWith(t, testDatabase(t), func(o *matrixone.Options) { o.NativeDiff = matrixone.IndexOn })
	defer on.Close()
	want = matrixone.DiffPathPortable
	if c.DataBranchDiff {
		want = matrixone.DiffPathNative
	}
	if got := on.Capabilities().DiffPath; got != want {
		t.Errorf("DiffPath = %q with NativeDiff on and DataBranchDiff %v; want %q", got, c.DataBranchDiff, want)
	}
	// IVFFLAT indexes where the server has them, but not beside native diffs.
	wantVec := matrixone.VectorPathExact
	if c.IVFFlat && !c.DataBranchDiff {
		wantVec = matrixone.VectorPathIVFFlat
	}
	if c.VectorPath != wantVec {
		t.Errorf("VectorPath = %q with IVFFlat %v and DataBranchDiff %v; want %q", c.VectorPath, c.IVFFlat, c.DataBranchDiff, wantVec)
	}
}

// nativeStore opens a store on a fresh database, and skips the test, saying why, when
// the server has no DATA BRANCH.
func nativeStore(t *testing.T, why string) *matrixone.Store {
	t.Helper()
	s := openTest(t, testDatabase(t))
	t.Cleanup(func() { s.Close() })
	if !s.Capabilities().DataBranch {
		t.Skipf("capability DataBranch is missing on %s: %s", s.Capabilities().Version, why)
	}
	return s
}

// TestNativeBranch forks through DATA BRANCH when the server has it.
func TestNativeBranch(t *testing.T) {
	t.Parallel()
	s := nativeStore(t, "branches use the portable copy")
	ctx := t.Context()
	if _, err := s.Put(ctx, "main", []store.Record{store.Fact{ID: "f1", Text: "before the fork"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "main", []store.Record{store.Fact{ID: "f1", Text: "after the fork"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, store.View{Branch: "b"}, store.Ref{Kind: store.KindFact, ID: "f1"})
	if err != nil || r.(store.Fact).Text != "before the fork" {
		t.Errorf("b sees %v, %v; want the version at the fork", r, err)
	}
}

// TestNativeForkFromThePast forks from a snapshot through DATA BRANCH when few
// versions were written or closed since it, and by a copy when many were: either way
// the branch holds what the snapshot saw.
func TestNativeForkFromThePast(t *testing.T) {
	t.Parallel()
	s := nativeStore(t, "every fork is a copy")
	ctx := t.Context()
	put := func(from, to int, text string) {
		t.Helper()
		var recs []store.Record
		for i := from; i < to; i++ {
			recs = append(recs, store.Fact{ID: fmt.Sprintf("f%03d", i), Text: fmt.Sprintf("%s number %d", text, i)})
		}
		if _, err := s.Put(ctx, "main", recs, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put(0, 100, "first note")
	if _, err := s.CreateSnapshot(ctx, "main", "s1", ""); err != nil {
		t.Fatal(err)
	}
	check := func(name, wantPath string) {
		t.Helper()
		if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: name, At: store.Point{Snapshot: "s1"}}); err != nil {
			t.Fatal(err)
		}
		if path := forkPath(t, s, name); path != wantPath {
			t.Errorf("%s: fork path %q, want %q", name, path, wantPath)
		}
		got, err := s.List(ctx, store.View{Branch: name}, store.ListQuery{Kind: store.KindFact, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 100 {
			t.Errorf("%s holds %d facts, want the snapshot's 100", name, len(got))
		}
		r, err := s.Get(ctx, store.View{Branch: name}, store.Ref{Kind: store.KindFact, ID: "f001"})
		if err != nil || r.(store.Fact).Text != "first note number 1" {
			t.Errorf("%s: f001 = %v, %v; want the snapshot's version", name, r, err)
		}
	}
	// Two versions later (one new, one closed) against 102 rows: trimmed.
	put(1, 2, "second note")
	check("near", matrixone.BranchPathNative)
	// Hundreds later: copied.
	put(100, 400, "third note")
	put(0, 50, "fourth note")
	check("far", matrixone.BranchPathPortable)
}

// TestMigrationsIdempotent opens one database twice: the second Open applies nothing
// and a wrong dimension is refused.
func TestMigrationsIdempotent(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s1 := openTest(t, dsn)
	s1.Close()
	s2 := openTest(t, dsn)
	defer s2.Close()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migration files: %v, %v", files, err)
	}
	var n int
	if err := s2.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM day1_migrations").Scan(&n); err != nil || n != len(files) {
		t.Errorf("day1_migrations holds %d rows (%v); want one per migration file, %d", n, err, len(files))
	}
	_, err = matrixone.Open(t.Context(), matrixone.Options{DSN: dsn, Dimensions: 16})
	if !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("Open with another dimension = %v; want ErrInvalidArgument", err)
	}
}

// TestTooOld reads before the retention window.
func TestTooOld(t *testing.T) {
	t.Parallel()
	s := openTest(t, testDatabase(t))
	defer s.Close()
	_, err := s.List(t.Context(), store.View{At: store.Point{Time: time.Now().Add(-30 * 24 * time.Hour)}}, store.ListQuery{Kind: store.KindFact})
	if !errors.Is(err, store.ErrTooOld) {
		t.Errorf("List 30 days ago = %v; want ErrTooOld", err)
	}
}

// TestDuplicateKeyKeepsDriverError checks that a duplicate-key error from the server
// is reachable as *mysql.MySQLError behind the store sentinel.
func TestDuplicateKeyKeepsDriverError(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	_, err := c.ExecContext(t.Context(), "INSERT INTO day1_snapshots (name, branch, rev, at, description, created_at) VALUES ('s', 'main', 0, NOW(), '', NOW()), ('s', 'main', 0, NOW(), '', NOW())")
	if mysqlErr(err) != 1062 {
		t.Fatalf("duplicate insert: %v; want error 1062", err)
	}
}

// Quirks of the server, one test each. Each checks the workaround the store uses.

// TestQuirkCreateIndexIfNotExists: MatrixOne rejects CREATE INDEX IF NOT EXISTS (a
// syntax error), so migrations check information_schema.statistics first.
func TestQuirkCreateIndexIfNotExists(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	mustExec(t, c, "CREATE TABLE q (id INT PRIMARY KEY, v INT)")
	_, err := c.ExecContext(t.Context(), "CREATE INDEX IF NOT EXISTS q_v ON q (v)")
	if err == nil {
		t.Logf("this server accepts CREATE INDEX IF NOT EXISTS")
	} else if mysqlErr(err) != 1064 {
		t.Errorf("CREATE INDEX IF NOT EXISTS: %v; want a syntax error (1064)", err)
	}
	var n int
	if err := c.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = database() AND table_name = 'day1_sessions' AND index_name = 'day1_sessions_started'").Scan(&n); err != nil || n == 0 {
		t.Errorf("the catalog does not list the migration's index: %d, %v", n, err)
	}
}

// TestQuirkVectorParameter: a vector bound as a server-side prepared statement
// parameter is stored into a vecf32 column, but refused inside an expression
// ("function cosine_similarity, bad value [VECF32 TEXT]") unless the SQL casts it; the
// store interpolates parameters and casts query vectors.
func TestQuirkVectorParameter(t *testing.T) {
	t.Parallel()
	c := serverConn(t, func(cfg *mysql.Config) { cfg.InterpolateParams = false })
	mustExec(t, c, "CREATE TABLE v (id INT PRIMARY KEY, e vecf32(2))")
	if _, err := c.ExecContext(t.Context(), "INSERT INTO v VALUES (?, ?)", 1, "[1,0]"); err == nil {
		t.Logf("this server accepts an uncast vector parameter")
	} else {
		t.Logf("uncast vector parameter: %v", err)
	}
	mustExec(t, c, "INSERT INTO v VALUES (?, cast(? AS vecf32(2)))", 2, "[0,1]")
	var sim float64
	if err := c.QueryRowContext(t.Context(), "SELECT cosine_similarity(e, ?) FROM v WHERE id = 2", "[0,1]").Scan(&sim); err == nil {
		t.Logf("this server accepts an uncast vector parameter in an expression")
	} else {
		t.Logf("uncast vector parameter in an expression: %v", err)
	}
	if err := c.QueryRowContext(t.Context(), "SELECT cosine_similarity(e, cast(? AS vecf32(2))) FROM v WHERE id = 2", "[0,1]").Scan(&sim); err != nil || sim < 0.999 {
		t.Errorf("cast vector parameter: %v, %v", sim, err)
	}
}

// TestQuirkVectorText: vectors come back as text "[a, b]" with the shortest float32
// form, which parses back to the same float32s.
func TestQuirkVectorText(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	mustExec(t, c, "CREATE TABLE v (id INT PRIMARY KEY, e vecf32(3))")
	mustExec(t, c, "INSERT INTO v VALUES (1, ?)", "[0.1,0.123456789,1e-7]")
	var txt string
	if err := c.QueryRowContext(t.Context(), "SELECT e FROM v").Scan(&txt); err != nil {
		t.Fatal(err)
	}
	if txt != "[0.1, 0.12345679, 1e-07]" {
		t.Logf("vector text form: %q", txt)
	}
	if !strings.HasPrefix(txt, "[") || !strings.HasSuffix(txt, "]") {
		t.Errorf("vector text form %q", txt)
	}
}

// TestQuirkGreatest: GREATEST is not a supported function; the store takes maxima in Go.
func TestQuirkGreatest(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	var n int
	err := c.QueryRowContext(t.Context(), "SELECT GREATEST(1, 2)").Scan(&n)
	if err == nil {
		t.Logf("this server supports GREATEST")
	} else if mysqlErr(err) != 20105 {
		t.Errorf("GREATEST: %v; want not supported (20105)", err)
	}
}

// TestQuirkLongNames: on this build a 74-character table name is kept whole and a
// 74-character snapshot name is refused (other builds cut names at 64 silently); the
// store's table names are short suffixes ("facts_b12") and it needs no server snapshot
// names at all.
func TestQuirkLongNames(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	long := strings.Repeat("x", 74)
	mustExec(t, c, "CREATE TABLE "+long+" (id INT PRIMARY KEY)")
	var name string
	if err := c.QueryRowContext(t.Context(), "SELECT table_name FROM information_schema.tables WHERE table_schema = database() AND table_name LIKE 'xxx%'").Scan(&name); err != nil {
		t.Fatal(err)
	}
	t.Logf("a 74-character table name is stored with %d characters", len(name))
	_, err := c.ExecContext(t.Context(), "CREATE SNAPSHOT "+strings.Repeat("s", 74)+" FOR ACCOUNT sys")
	if err == nil {
		c.ExecContext(context.WithoutCancel(t.Context()), "DROP SNAPSHOT "+strings.Repeat("s", 74))
		t.Logf("this server accepts a 74-character snapshot name")
	} else {
		t.Logf("74-character snapshot name: %v", err)
	}
}

// TestQuirkTimeTravelNeedsRetention: {timestamp='...'} reads need a snapshot or PITR
// covering the instant ("no corresponding snapshot" otherwise, also for instants in
// the future); the store resolves instants in its own version history instead.
func TestQuirkTimeTravelNeedsRetention(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	mustExec(t, c, "CREATE TABLE tt (id INT PRIMARY KEY)")
	mustExec(t, c, "INSERT INTO tt VALUES (1)")
	var n int
	future := time.Now().UTC().Add(time.Hour).Format("2006-01-02 15:04:05.000000")
	err := c.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM tt {timestamp='"+future+"'}").Scan(&n)
	t.Logf("{timestamp} an hour ahead: %v", err)
	time.Sleep(400 * time.Millisecond)
	recent := time.Now().UTC().Add(-100 * time.Millisecond).Format("2006-01-02 15:04:05.000000")
	err = c.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM tt {timestamp='"+recent+"'}").Scan(&n)
	t.Logf("{timestamp} 100 ms ago without a PITR: count %d, %v", n, err)
	early := time.Now().UTC().Add(-time.Hour).Format("2006-01-02 15:04:05.000000")
	err = c.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM tt {timestamp='"+early+"'}").Scan(&n)
	t.Logf("{timestamp} before the table existed: %v", err)
}

// TestQuirkIndexesNeedSimpleKey: on the 2024-11 build a FULLTEXT index returns no
// rows, and no error, from a table whose primary key is composite once the table holds
// enough rows (between 10,000 and 11,000 here), while the same table with a BIGINT
// primary key answers. IVFFLAT did the same with the benchmark corpus's embeddings
// (384 dimensions, composite key (id, rev), 1,000 to 13,500 rows: no rows through the
// index); the generated vectors below do not reproduce it, so that half is logged. The
// store's record tables are keyed by a BIGINT version id (vid), with id an ordinary
// key.
func TestQuirkIndexesNeedSimpleKey(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	mustExec(t, c, "SET experimental_fulltext_index = 1")
	mustExec(t, c, "SET experimental_ivf_index = 1")
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		rs, err := c.QueryContext(t.Context(), q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rs.Close()
		for rs.Next() {
			n++
		}
		return n
	}
	type shape struct{ name, cols, key, idExpr string }
	shapes := []shape{
		{"composite", "id VARCHAR(20) NOT NULL, rev BIGINT NOT NULL", "PRIMARY KEY (id, rev)", "concat('r', result), 1"},
		{"bigint", "vid BIGINT NOT NULL, rev BIGINT NOT NULL", "PRIMARY KEY (vid)", "result, 1"},
	}
	got := map[string]int{}
	for _, sh := range shapes {
		ft, iv := "ft_"+sh.name, "iv_"+sh.name
		mustExec(t, c, "CREATE TABLE "+ft+" ("+sh.cols+", tokens TEXT NOT NULL, "+sh.key+")")
		mustExec(t, c, "INSERT INTO "+ft+" SELECT "+sh.idExpr+", if(result % 7 = 0, ' alpha beta ', ' gamma ') FROM generate_series(1, 11000) g")
		mustExec(t, c, "CREATE FULLTEXT INDEX ft ON "+ft+" (tokens)")
		got["fulltext "+sh.name] = count("SELECT 1 FROM " + ft + " WHERE MATCH(tokens) AGAINST('alpha' IN NATURAL LANGUAGE MODE)")
		mustExec(t, c, "CREATE TABLE "+iv+" ("+sh.cols+", emb vecf32(384), "+sh.key+")")
		mustExec(t, c, "INSERT INTO "+iv+" SELECT "+sh.idExpr+", concat('[', repeat('0,', result % 300), cos(result), ',', repeat('0,', 382 - result % 300), sin(result), ']') FROM generate_series(1, 2000) g")
		mustExec(t, c, "CREATE INDEX iv USING ivfflat ON "+iv+" (emb) lists = 4 op_type 'vector_l2_ops'")
		mustExec(t, c, "SET @probe_limit = 4")
		got["ivfflat "+sh.name] = count("SELECT 1 FROM "+iv+" ORDER BY l2_distance(emb, cast(? AS vecf32(384))) LIMIT 5", "["+strings.Repeat("1,", 383)+"0]")
	}
	want := map[string]int{"fulltext composite": 0, "fulltext bigint": 11000 / 7, "ivfflat composite": 0, "ivfflat bigint": 5}
	if d := cmp.Diff(want, got); d != "" {
		t.Logf("index results by primary key shape (-2024-11 build +this server):\n%s", d)
		if got["fulltext bigint"] != want["fulltext bigint"] || got["ivfflat bigint"] != want["ivfflat bigint"] {
			t.Errorf("indexes on a table with a BIGINT primary key must answer: %v", got)
		}
	}
}

// TestQuirkMatchNeedsIndex: MATCH ... AGAINST on a column without a FULLTEXT index is
// an error (20105, "full table scan with fulltext search is not supported"), so the
// store uses MATCH only on tables the catalog shows indexed (and the capability probe
// checks what MATCH finds, not only that it runs).
func TestQuirkMatchNeedsIndex(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	mustExec(t, c, "CREATE TABLE nm (id BIGINT PRIMARY KEY, tokens TEXT)")
	mustExec(t, c, "INSERT INTO nm VALUES (1, ' alpha ')")
	var n int
	err := c.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM nm WHERE MATCH(tokens) AGAINST('alpha' IN NATURAL LANGUAGE MODE)").Scan(&n)
	switch {
	case err == nil:
		t.Logf("this server runs MATCH without a FULLTEXT index: %d rows", n)
	case mysqlErr(err) != 20105:
		t.Errorf("MATCH without a FULLTEXT index: %v; want not supported (20105)", err)
	}
}

// TestQuirkLikeCopiesIndexes: CREATE TABLE ... LIKE copies a FULLTEXT index (under no
// name in the catalog, so it cannot be dropped by name) and an IVFFLAT index (by
// name, with centroids that do not fit the copy's rows: searches through it are
// correct but slower than a scan), so the portable branch path drops the copied
// IVFFLAT index and keeps the FULLTEXT one.
func TestQuirkLikeCopiesIndexes(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	mustExec(t, c, "SET experimental_fulltext_index = 1")
	mustExec(t, c, "SET experimental_ivf_index = 1")
	mustExec(t, c, "CREATE TABLE lk (id BIGINT PRIMARY KEY, tokens TEXT, emb vecf32(2))")
	mustExec(t, c, "CREATE FULLTEXT INDEX ft_tokens ON lk (tokens)")
	mustExec(t, c, "INSERT INTO lk VALUES (1, ' alpha ', '[1,0]'), (2, ' beta ', '[0,1]')")
	mustExec(t, c, "CREATE INDEX ivf_embedding USING ivfflat ON lk (emb) lists = 1 op_type 'vector_l2_ops'")
	mustExec(t, c, "CREATE TABLE lk2 LIKE lk")
	mustExec(t, c, "INSERT INTO lk2 SELECT * FROM lk")
	rs, err := c.QueryContext(t.Context(), "SELECT column_name, index_name FROM information_schema.statistics WHERE table_schema = database() AND table_name = 'lk2' AND column_name <> 'id' ORDER BY column_name")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rs.Next() {
		var col, name string
		rs.Scan(&col, &name)
		got[col] = name
	}
	rs.Close()
	t.Logf("indexes of the copy by column: %q", got)
	if _, ok := got["tokens"]; !ok {
		t.Errorf("the copy has no FULLTEXT index: %q", got)
	}
	if got["emb"] != "ivf_embedding" {
		t.Errorf("the copy's IVFFLAT index is %q; the store drops it by the name ivf_embedding", got["emb"])
	}
	var n int
	if err := c.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM lk2 WHERE MATCH(tokens) AGAINST('beta' IN NATURAL LANGUAGE MODE)").Scan(&n); err != nil || n != 1 {
		t.Errorf("MATCH on the copy: %d, %v; want 1", n, err)
	}
	mustExec(t, c, "DROP INDEX ivf_embedding ON lk2")
}

// TestQuirkIVFFlatOrder: the IVFFLAT index serves only ORDER BY l2_distance(col,
// <constant vector>) LIMIT n; the same order by l2_distance_sq, cosine_distance or a
// vector from a subquery scans the table. The store orders its index candidates by
// l2_distance and re-ranks them by cosine similarity.
func TestQuirkIVFFlatOrder(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	mustExec(t, c, "SET experimental_ivf_index = 1")
	mustExec(t, c, "CREATE TABLE io (id BIGINT PRIMARY KEY, rev BIGINT, emb vecf32(2))")
	mustExec(t, c, "INSERT INTO io SELECT result, 1, concat('[', cos(result), ',', sin(result), ']') FROM generate_series(1, 100) g")
	mustExec(t, c, "CREATE INDEX ivf_embedding USING ivfflat ON io (emb) lists = 4 op_type 'vector_l2_ops'")
	usesIndex := func(order string) bool {
		t.Helper()
		rs, err := c.QueryContext(t.Context(), "EXPLAIN SELECT id FROM io WHERE rev <= 5 ORDER BY "+order+" LIMIT 5")
		if err != nil {
			t.Fatalf("%s: %v", order, err)
		}
		defer rs.Close()
		plan := ""
		for rs.Next() {
			var line string
			rs.Scan(&line)
			plan += line + "\n"
		}
		// The 2024-11 build joins the index's hidden tables; 3.x calls its ivf_search
		// table function.
		return strings.Contains(plan, "__mo_index_secondary") || strings.Contains(plan, "ivf_search")
	}
	got := map[string]bool{}
	for _, o := range []string{
		"l2_distance(emb, cast('[1,0]' AS vecf32(2)))",
		"l2_distance_sq(emb, cast('[1,0]' AS vecf32(2)))",
		"cosine_distance(emb, cast('[1,0]' AS vecf32(2)))",
		"l2_distance(emb, (SELECT emb FROM io WHERE id = 1))",
	} {
		got[o] = usesIndex(o)
	}
	t.Logf("orders served by the index: %v", got)
	if !got["l2_distance(emb, cast('[1,0]' AS vecf32(2)))"] {
		t.Errorf("the IVFFLAT index does not serve the order the store uses")
	}
}

// TestQuirkDiffAfterIndex records why a store that diffs with DATA BRANCH DIFF builds
// no IVFFLAT index (Options.VectorIndex): on 3.0.15, an index created on a branched
// table after rows were written to it makes DATA BRANCH DIFF forget those rows. The
// test fails when a server keeps them, so that the rule can be revisited.
func TestQuirkDiffAfterIndex(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	mustExec(t, c, "SET experimental_ivf_index = 1")
	mustExec(t, c, "CREATE TABLE qa (id BIGINT PRIMARY KEY, emb vecf32(2))")
	mustExec(t, c, "INSERT INTO qa SELECT result, concat('[', cos(result), ',', sin(result), ']') FROM generate_series(1, 10) g")
	if _, err := c.ExecContext(t.Context(), "DATA BRANCH CREATE TABLE qb FROM qa"); err != nil {
		t.Skipf("DATA BRANCH is missing: %v", err)
	}
	mustExec(t, c, "INSERT INTO qb VALUES (500, '[0.5,0.5]')")
	mustExec(t, c, "CREATE INDEX ivf_embedding USING ivfflat ON qb (emb) lists = 2 op_type 'vector_l2_ops'")
	mustExec(t, c, "INSERT INTO qb VALUES (501, '[0.5,0.5]')")
	rs, err := c.QueryContext(t.Context(), "DATA BRANCH DIFF qb AGAINST qa")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	seen := map[string]bool{}
	for rs.Next() {
		vals := make([]sql.RawBytes, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rs.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		seen[string(vals[2])] = true
	}
	t.Logf("ids in the diff: %v", seen)
	if !seen["501"] {
		t.Fatalf("the diff lacks the row written after the index")
	}
	if seen["500"] {
		t.Errorf("the diff keeps the row written before the index: a store on this server could build IVFFLAT indexes beside native diffs")
	}
}

// TestQuirkPITRTimeTravel records what a database-level PITR gives {timestamp='...'}
// reads of the store's tables, and why reads at an instant use the store's own version
// history instead:
//
//   - under the PITR, reads at instants after a table was created return that
//     instant's rows, also for instants before the PITR was created (recent enough
//     that nothing was collected) and across tables in one query;
//   - at an instant before a table was created the read fails ("table ... does not
//     exist", 1064) even under the PITR: branch tables are created all the time, and a
//     branch read before its creation must read its parent instead;
//   - outside the PITR's range the read fails ("no corresponding snapshot");
//   - DROP DATABASE leaves the database's PITR in mo_catalog.mo_pitr: a store that made
//     one would have to drop it itself;
//   - a transaction's rows appear at its commit timestamp, taken by the server at
//     COMMIT: an instant after the transaction's statements ran but before it committed
//     reads without them. The store stamps a commit with its own clock (Options.Now)
//     when it takes the write lock, so server instants and store instants name
//     different states around every commit.
//
// So a PITR would not make instant reads exact for the store; the store's own history
// (rev, next_rev, day1_commits) does, and needs no retention window.
func TestQuirkPITRTimeTravel(t *testing.T) {
	t.Parallel()
	c := serverConn(t)
	ctx := t.Context()
	var db string
	if err := c.QueryRowContext(ctx, "SELECT database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	now := func() string {
		t.Helper()
		time.Sleep(300 * time.Millisecond)
		var s string
		if err := c.QueryRowContext(ctx, "SELECT DATE_FORMAT(NOW(6), '%Y-%m-%d %H:%i:%s.%f')").Scan(&s); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		return s
	}
	read := func(q string) string {
		var n int
		if err := c.QueryRowContext(ctx, q).Scan(&n); err != nil {
			if mysqlErr(err) != 0 {
				return fmt.Sprintf("error %d", mysqlErr(err))
			}
			return "error"
		}
		return fmt.Sprint(n)
	}
	beforeTable := now()
	mustExec(t, c, "CREATE TABLE pa (id INT PRIMARY KEY)")
	mustExec(t, c, "INSERT INTO pa VALUES (1)")
	beforePITR := now()
	pitr := "day1_pitr_" + db
	if _, err := c.ExecContext(ctx, "CREATE PITR "+pitr+" FOR DATABASE "+db+" RANGE 1 'h'"); err != nil {
		t.Skipf("capability PITR is missing: %v", err)
	}
	t.Cleanup(func() { c.ExecContext(context.WithoutCancel(ctx), "DROP PITR "+pitr) })
	mustExec(t, c, "INSERT INTO pa VALUES (2)")
	afterSecond := now()
	mustExec(t, c, "CREATE TABLE pb (id INT PRIMARY KEY)")
	mustExec(t, c, "INSERT INTO pb VALUES (2)")
	afterPB := now()
	mustExec(t, c, "DELETE FROM pa")
	// A transaction whose statements run well before its commit.
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO pa VALUES (3)"); err != nil {
		t.Fatal(err)
	}
	var inTx string
	if err := tx.QueryRowContext(ctx, "SELECT DATE_FORMAT(NOW(6), '%Y-%m-%d %H:%i:%s.%f')").Scan(&inTx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	beforeCommit := now()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	afterCommit := now()
	var longAgo string
	c.QueryRowContext(ctx, "SELECT DATE_FORMAT(DATE_SUB(NOW(6), INTERVAL 2 HOUR), '%Y-%m-%d %H:%i:%s.%f')").Scan(&longAgo)
	at := func(table, ts string) string { return "SELECT COUNT(*) FROM " + table + " {timestamp='" + ts + "'}" }
	got := map[string]string{
		"pa before it existed":      read(at("pa", beforeTable)),
		"pa before the PITR":        read(at("pa", beforePITR)),
		"pa after the second row":   read(at("pa", afterSecond)),
		"pb before it existed":      read(at("pb", afterSecond)),
		"pa join pb":                read("SELECT COUNT(*) FROM pa {timestamp='" + afterPB + "'} JOIN pb {timestamp='" + afterPB + "'} ON pa.id = pb.id"),
		"pa two hours ago":          read(at("pa", longAgo)),
		"pa inside the transaction": read(at("pa", inTx)),
		"pa after the statements":   read(at("pa", beforeCommit)),
		"pa after the commit":       read(at("pa", afterCommit)),
	}
	want := map[string]string{
		"pa before it existed":      "error 1064",
		"pa before the PITR":        "1",
		"pa after the second row":   "2",
		"pb before it existed":      "error 1064",
		"pa join pb":                "1",
		"pa two hours ago":          "error 20203",
		"pa inside the transaction": "0",
		"pa after the statements":   "0",
		"pa after the commit":       "1",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("{timestamp} reads under a database PITR (-2024-11 build +this server):\n%s", d)
	}
	// DROP DATABASE keeps the PITR.
	other := "day1_pitr_drop_" + db
	mustExec(t, c, "CREATE DATABASE "+other)
	mustExec(t, c, "CREATE PITR "+pitr+"_d FOR DATABASE "+other+" RANGE 1 'h'")
	t.Cleanup(func() { c.ExecContext(context.WithoutCancel(ctx), "DROP PITR "+pitr+"_d") })
	mustExec(t, c, "DROP DATABASE "+other)
	var n int
	if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM mo_catalog.mo_pitr WHERE pitr_name = ?", pitr+"_d").Scan(&n); err != nil {
		t.Logf("reading mo_catalog.mo_pitr: %v", err)
	} else if n != 1 {
		t.Logf("this server dropped the PITR with its database (%d rows)", n)
	}
}
