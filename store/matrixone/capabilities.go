package matrixone

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Capabilities says which MatrixOne features the server offers. Open finds them by
// running each statement once on scratch objects (a probe), not by parsing the version,
// and remembers the answer per server address for the life of the process.
type Capabilities struct {
	// Version is what select version() returns, e.g. "8.0.30-MatrixOne-v2.0.1".
	Version string
	// DataBranch: "data branch create table b from t" works (MatrixOne 3.x).
	DataBranch bool
	// DataBranchDiff: "data branch diff b against t" lists the rows that differ
	// between a table and its branch, each with the table it is in and a flag.
	DataBranchDiff bool
	// DataBranchMerge: "data branch merge b into t when conflict accept" applies a
	// branch's rows to the table it came from. The store does not merge through it:
	// see the package documentation, "Diff and merge".
	DataBranchMerge bool
	// DataBranchPick: "data branch pick b into t keys(...)" applies chosen rows of a
	// branch (3.0.10 and later). Not used by the store, like DataBranchMerge.
	DataBranchPick bool
	// Clone: "create table c clone t" works.
	Clone bool
	// DatabaseSnapshots: "create snapshot s for database d" works.
	DatabaseSnapshots bool
	// AccountSnapshots: "create snapshot s for account <current account>" works.
	AccountSnapshots bool
	// TimeTravelTimestamp: "select ... from t {timestamp='...'}" reads the past (with a
	// PITR covering it).
	TimeTravelTimestamp bool
	// AsOfTimestamp: "select ... from t {as of timestamp '...'}" works.
	AsOfTimestamp bool
	// PITR: "create pitr p for database d range 1 'h'" works.
	PITR bool
	// FullText: a FULLTEXT index can be built after "set experimental_fulltext_index=1"
	// and MATCH ... AGAINST finds exactly the row holding the word probed.
	FullText bool
	// IVFFlat: an IVFFLAT vector index can be built after "set experimental_ivf_index=1"
	// and a query ordered by l2_distance to a constant vector returns the nearest row
	// through it.
	IVFFlat bool
	// LoadData: LOAD DATA INLINE, in a transaction, writes rows with every escape the
	// store uses, and a rollback takes them back.
	LoadData bool
	// HNSW: an HNSW vector index can be built after "set experimental_hnsw_index=1".
	HNSW bool
	// ProbeVariable is the session variable that sets how many IVFFLAT lists a query
	// probes: "probe_limit" (3.x) or "@probe_limit" (the 2024-11 build, where the system
	// variable does not exist). Empty without IVFFlat.
	ProbeVariable string
	// BranchPath is how branches are created: "native" (DATA BRANCH CREATE, zero-copy)
	// when DataBranch is true, else "portable" (CREATE TABLE ... LIKE plus
	// INSERT ... SELECT, a copy whose cost grows with the branch's size).
	BranchPath string
	// DiffPath is how this store finds the records a diff compares:
	// DiffPathNative (DATA BRANCH DIFF between a branch and the parent it was forked
	// from with DATA BRANCH CREATE) when DataBranchDiff is true and Options.NativeDiff
	// is IndexOn, else DiffPathPortable (a range read of each side's rows by revision).
	// Other pairs of branches always take the portable path. Store.Capabilities sets
	// it; the server probe leaves it empty.
	DiffPath string
	// KeywordPath is how this store selects keyword search candidates:
	// KeywordPathFullText (a FULLTEXT index on each table's search tokens, queried
	// with MATCH ... AGAINST) when FullText is true and Options.FullText allows it, else
	// KeywordPathScan (the portable path: INSTR over the tokens of the visible rows).
	// BM25 scores are computed by the store either way. Store.Capabilities sets it;
	// the server probe leaves it empty.
	KeywordPath string
	// WritePath is how this store writes batches of rows: WritePathLoad (LOAD DATA
	// INLINE, for 128 rows of a table and more) when LoadData is true
	// and Options.LoadData allows it, else WritePathInsert (multi-row INSERTs).
	// Store.Capabilities sets it.
	WritePath string
	// VectorPath is how this store selects vector search candidates:
	// VectorPathIVFFlat when IVFFlat is true and Options.VectorIndex allows it (tables
	// with an IVFFLAT index give candidates by l2_distance, re-ranked by exact cosine
	// similarity; smaller tables are scanned), else VectorPathExact (the portable path:
	// cosine_similarity over every visible row). Store.Capabilities sets it.
	VectorPath string
}

// Search paths (Capabilities.KeywordPath, Capabilities.VectorPath).
const (
	KeywordPathFullText = "fulltext"
	KeywordPathScan     = "scan"
	VectorPathIVFFlat   = "ivfflat"
	VectorPathExact     = "exact"
)

// Write paths (Capabilities.WritePath).
const (
	WritePathLoad   = "load"
	WritePathInsert = "insert"
)

// Branch and diff paths (Capabilities.BranchPath, Capabilities.DiffPath).
const (
	BranchPathNative   = "native"
	BranchPathPortable = "portable"
	DiffPathNative     = "native"
	DiffPathPortable   = "portable"
)

var (
	capsMu    sync.Mutex
	capsCache = map[string]Capabilities{}
)

// detectCapabilities probes the server once per address and user.
func detectCapabilities(ctx context.Context, db *sql.DB, cfg *mysql.Config) (Capabilities, error) {
	key := cfg.Net + "|" + cfg.Addr + "|" + cfg.User
	capsMu.Lock()
	defer capsMu.Unlock()
	if c, ok := capsCache[key]; ok {
		return c, nil
	}
	c, err := probe(ctx, db)
	if err != nil {
		return c, err
	}
	capsCache[key] = c
	return c, nil
}

// probe runs the probing statements on one connection (session variables must stay
// set for the statements that need them) in the store's database, on tables named
// day1_probe_*, and drops what it made.
func probe(ctx context.Context, db *sql.DB) (Capabilities, error) {
	var c Capabilities
	conn, err := db.Conn(ctx)
	if err != nil {
		return c, wrap(ctx, "Open", err)
	}
	defer conn.Close()
	if err := conn.QueryRowContext(ctx, "SELECT version()").Scan(&c.Version); err != nil {
		return c, wrap(ctx, "Open", err)
	}
	tag := fmt.Sprintf("%x", time.Now().UnixNano())
	src, dst := "day1_probe_s_"+tag, "day1_probe_d_"+tag
	ok := func(q string, args ...any) bool {
		_, err := conn.ExecContext(ctx, q, args...)
		return err == nil
	}
	if !ok("CREATE TABLE " + src + " (id BIGINT NOT NULL, txt TEXT, emb vecf32(2), PRIMARY KEY (id))") {
		return c, wrap(ctx, "Open", fmt.Errorf("cannot create probe table %s", src))
	}
	defer dropProbeTable(ctx, conn, src)
	ok("INSERT INTO " + src + " VALUES (1, 'probe text', '[1,0]'), (2, 'other words', '[0,1]'), (3, 'more words', '[-1,0]')")
	branched := ok("DATA BRANCH CREATE TABLE " + dst + " FROM " + src)
	if branched {
		c.DataBranch = true
		c.DataBranchDiff = probeDataBranchDiff(ctx, conn, src, dst)
	}
	if ok("CREATE TABLE " + dst + " CLONE " + src) {
		c.Clone = true
		ok("DROP TABLE IF EXISTS " + dst)
	}
	var db0, account string
	conn.QueryRowContext(ctx, "SELECT database()").Scan(&db0)
	conn.QueryRowContext(ctx, "SELECT current_account_name()").Scan(&account)
	snap := "day1_probe_" + tag
	if ok("CREATE SNAPSHOT " + snap + " FOR DATABASE " + db0) {
		c.DatabaseSnapshots = true
		ok("DROP SNAPSHOT " + snap)
	}
	if account != "" && ok("CREATE SNAPSHOT "+snap+" FOR ACCOUNT "+account) {
		c.AccountSnapshots = true
		ok("DROP SNAPSHOT " + snap)
	}
	pitr := "day1_probe_p_" + tag
	if ok("CREATE PITR " + pitr + " FOR DATABASE " + db0 + " RANGE 1 'h'") {
		c.PITR = true
		var now string
		if conn.QueryRowContext(ctx, "SELECT DATE_FORMAT(NOW(6), '%Y-%m-%d %H:%i:%s.%f')").Scan(&now) == nil {
			var n int
			c.TimeTravelTimestamp = conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+src+" {timestamp='"+now+"'}").Scan(&n) == nil
			c.AsOfTimestamp = conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+src+" {as of timestamp '"+now+"'}").Scan(&n) == nil
		}
		ok("DROP PITR " + pitr)
	}
	c.LoadData = probeLoadData(ctx, conn, src)
	c.FullText = probeFullText(ctx, conn, src)
	c.IVFFlat, c.ProbeVariable = probeIVFFlat(ctx, conn, src)
	c.HNSW = ok("SET experimental_hnsw_index = 1") && ok("CREATE INDEX hn USING hnsw ON "+src+" (emb) op_type 'vector_l2_ops'")
	c.BranchPath = BranchPathPortable
	if c.DataBranch {
		c.BranchPath = BranchPathNative
	}
	if branched {
		// Last, since the store does not use them: a 3.0.15 server was seen to leave a
		// DATA BRANCH MERGE unanswered, holding the probe tables.
		c.DataBranchPick, c.DataBranchMerge = probeDataBranchApply(ctx, conn, src, dst)
		if !ok("DATA BRANCH DELETE TABLE " + dst) {
			dropProbeTable(ctx, conn, dst)
		}
	}
	return c, nil
}

// probeTimeout bounds each statement of the probes of what the store does not use,
// and the dropping of probe tables: Open must not wait on a server that never answers.
const probeTimeout = 20 * time.Second

// dropProbeTable drops a probe table, waiting probeTimeout at most.
func dropProbeTable(ctx context.Context, conn *sql.Conn, tab string) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	defer cancel()
	conn.ExecContext(dctx, "DROP TABLE IF EXISTS "+tab)
}

// probeDataBranchDiff adds two rows to dst, a DATA BRANCH of the probe table src (rows
// 1 to 3), and checks that DATA BRANCH DIFF lists exactly those.
func probeDataBranchDiff(ctx context.Context, conn *sql.Conn, src, dst string) bool {
	if _, err := conn.ExecContext(ctx, "INSERT INTO "+dst+" VALUES (4, 'branch words', '[0,-1]'), (5, 'picked words', '[1,1]')"); err != nil {
		return false
	}
	rows, err := readBranchDiff(ctx, conn, branchDiffSQL(dst, src))
	if err != nil {
		return false
	}
	var got []string
	for _, r := range rows {
		if r.flag == "INSERT" {
			got = append(got, r.id)
		}
	}
	slices.Sort(got)
	return len(rows) == 2 && slices.Equal(got, []string{"4", "5"})
}

// probeDataBranchApply checks DATA BRANCH PICK and MERGE from dst, the branch
// probeDataBranchDiff wrote to, into src: a pick by key must bring row 5 into src,
// and a merge row 4. Each statement waits probeTimeout at most; one that runs out
// counts as unsupported.
func probeDataBranchApply(ctx context.Context, conn *sql.Conn, src, dst string) (pick, merge bool) {
	exec := func(q string) bool {
		sctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		_, err := conn.ExecContext(sctx, q)
		return err == nil
	}
	has := func(id int) bool {
		sctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		var n int
		return conn.QueryRowContext(sctx, "SELECT COUNT(*) FROM "+src+" WHERE id = ?", id).Scan(&n) == nil && n == 1
	}
	if exec("DATA BRANCH PICK " + dst + " INTO " + src + " KEYS(5)") {
		pick = has(5) && !has(4)
	}
	if exec("DATA BRANCH MERGE " + dst + " INTO " + src + " WHEN CONFLICT ACCEPT") {
		merge = has(4)
	}
	return pick, merge
}

// probeLoadData loads two rows into the probe table in a transaction, one of them
// with every escape appendLoadString writes, checks that they read back as written,
// and rolls back, which must take them away again.
func probeLoadData(ctx context.Context, conn *sql.Conn, tab string) bool {
	const tricky = "a \\ b \" c\n d\r e\x00 f, 'g' \\N"
	rows := [][]any{{int64(10), tricky, "[0.5,-0.25]"}, {int64(11), nil, nil}}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false
	}
	defer tx.Rollback()
	if loadRows(ctx, tx, tab, []string{"id", "txt", "emb"}, rows) != nil {
		return false
	}
	var txt string
	var nulls int
	if tx.QueryRowContext(ctx, "SELECT txt FROM "+tab+" WHERE id = 10").Scan(&txt) != nil || txt != tricky ||
		tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tab+" WHERE id = 11 AND txt IS NULL AND emb IS NULL").Scan(&nulls) != nil || nulls != 1 {
		return false
	}
	if tx.Rollback() != nil {
		return false
	}
	var n int
	return conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tab+" WHERE id >= 10").Scan(&n) == nil && n == 0
}

// probeFullText builds a FULLTEXT index on the probe table and checks that MATCH ...
// AGAINST finds the one row holding a word and none for a word no row holds: on some
// servers MATCH on a table without a usable index returns no rows instead of an error.
func probeFullText(ctx context.Context, conn *sql.Conn, tab string) bool {
	if _, err := conn.ExecContext(ctx, "SET experimental_fulltext_index = 1"); err != nil {
		return false
	}
	if _, err := conn.ExecContext(ctx, "CREATE FULLTEXT INDEX ft ON "+tab+" (txt)"); err != nil {
		return false
	}
	count := func(word string) int {
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tab+" WHERE MATCH(txt) AGAINST(? IN NATURAL LANGUAGE MODE)", word).Scan(&n); err != nil {
			return -1
		}
		return n
	}
	return count("probe") == 1 && count("absent") == 0
}

// probeIVFFlat builds an IVFFLAT index on the probe table and checks that the nearest
// row to a constant vector comes back through it, with the variable that sets the
// lists probed.
func probeIVFFlat(ctx context.Context, conn *sql.Conn, tab string) (bool, string) {
	if _, err := conn.ExecContext(ctx, "SET experimental_ivf_index = 1"); err != nil {
		return false, ""
	}
	if _, err := conn.ExecContext(ctx, "CREATE INDEX iv USING ivfflat ON "+tab+" (emb) lists = 1 op_type 'vector_l2_ops'"); err != nil {
		return false, ""
	}
	variable := ""
	for _, v := range []string{"probe_limit", "@probe_limit"} {
		if _, err := conn.ExecContext(ctx, "SET "+v+" = 1"); err == nil {
			variable = v
			break
		}
	}
	var id int64
	err := conn.QueryRowContext(ctx, "SELECT id FROM "+tab+" ORDER BY l2_distance(emb, cast(? AS vecf32(2))) LIMIT 1", "[0.1,0.9]").Scan(&id)
	return err == nil && id == 2 && variable != "", variable
}
