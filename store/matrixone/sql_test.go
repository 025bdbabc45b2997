package matrixone

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
)

func TestParseDSN(t *testing.T) {
	t.Parallel()
	cfg, err := ParseDSN("root:111@tcp(127.0.0.1:6001)/")
	if err != nil {
		t.Fatal(err)
	}
	got := []any{cfg.DBName, cfg.ParseTime, cfg.Loc, cfg.InterpolateParams, cfg.MultiStatements, cfg.Addr}
	want := []any{DefaultDatabase, true, time.UTC, true, false, "127.0.0.1:6001"}
	if d := cmp.Diff(fmt.Sprint(want), fmt.Sprint(got)); d != "" {
		t.Errorf("ParseDSN (-want +got):\n%s", d)
	}
	cfg, err = ParseDSN("u:p@tcp(h:1)/mem_1?multiStatements=true&parseTime=false")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DBName != "mem_1" || cfg.MultiStatements || !cfg.ParseTime {
		t.Errorf("ParseDSN kept %q, multiStatements %v, parseTime %v", cfg.DBName, cfg.MultiStatements, cfg.ParseTime)
	}
	for _, bad := range []string{"not a dsn", "u:p@tcp(h:1)/bad-name", "u:p@tcp(h:1)/a`b"} {
		var ve *store.ValidationError
		if _, err := ParseDSN(bad); !errors.As(err, &ve) {
			t.Errorf("ParseDSN(%q) = %v; want a *store.ValidationError", bad, err)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	o := Options{DSN: "x"}.withDefaults()
	if o.Dimensions != 384 || o.MaxOpenConns != 16 || o.MaxIdleConns != 8 || o.ConnMaxLifetime != 30*time.Minute ||
		o.Retention != 7*24*time.Hour || o.Now == nil {
		t.Errorf("defaults = %+v", o)
	}
	for _, bad := range []Options{{}, {DSN: "x", Dimensions: -1}, {DSN: "x", Dimensions: store.MaxEmbeddingDims + 1},
		{DSN: "x", FullText: IndexOn}, {DSN: "x", NativeDiff: "yes"}, {DSN: "x", LoadData: IndexOn}} {
		if err := bad.withDefaults().validate(); !errors.Is(err, store.ErrInvalidArgument) {
			t.Errorf("validate(%+v) = %v; want ErrInvalidArgument", bad, err)
		}
	}
	for _, mode := range []IndexMode{IndexAuto, IndexOff, IndexOn} {
		if err := (Options{DSN: "x", NativeDiff: mode}).withDefaults().validate(); err != nil {
			t.Errorf("validate with NativeDiff %q = %v", mode, err)
		}
	}
}

func TestIdentifiers(t *testing.T) {
	t.Parallel()
	if got := suffixName(42); got != "b42" {
		t.Errorf("suffixName(42) = %q", got)
	}
	// Table names come only from the kind prefix and the suffix counter, never from a
	// branch name, and stay far below MatrixOne's 64-character limit.
	for _, k := range store.AllKinds {
		name := table(k, suffixName(1<<62))
		if len(name) > 64 || strings.ContainsAny(name, "/ .-") {
			t.Errorf("table(%s) = %q", k, name)
		}
	}
	if got := table(store.KindFact, "b7"); got != "`facts_b7`" {
		t.Errorf("table = %q", got)
	}
}

func TestBranchSQL(t *testing.T) {
	t.Parallel()
	same := func(what string, want, got []string) {
		t.Helper()
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", what, d)
		}
	}
	same("portable create", []string{
		"CREATE TABLE `facts_b2` LIKE `facts_b1`",
		"CREATE TABLE `observations_b2` LIKE `observations_b1`",
		"CREATE TABLE `relations_b2` LIKE `relations_b1`",
		"CREATE TABLE `conversations_b2` LIKE `conversations_b1`",
		"CREATE TABLE `messages_b2` LIKE `messages_b1`",
		"CREATE TABLE `aliases_b2` LIKE `aliases_b1`",
	}, portableCreateSQL("b2", "b1"))
	same("native create", []string{
		"DATA BRANCH CREATE TABLE `facts_b2` FROM `facts_b1`",
		"DATA BRANCH CREATE TABLE `observations_b2` FROM `observations_b1`",
		"DATA BRANCH CREATE TABLE `relations_b2` FROM `relations_b1`",
		"DATA BRANCH CREATE TABLE `conversations_b2` FROM `conversations_b1`",
		"DATA BRANCH CREATE TABLE `messages_b2` FROM `messages_b1`",
		"DATA BRANCH CREATE TABLE `aliases_b2` FROM `aliases_b1`",
	}, nativeCreateSQL("b2", "b1"))
	same("drop", []string{
		"DROP TABLE IF EXISTS `facts_b2`", "DROP TABLE IF EXISTS `observations_b2`", "DROP TABLE IF EXISTS `relations_b2`",
		"DROP TABLE IF EXISTS `conversations_b2`", "DROP TABLE IF EXISTS `messages_b2`", "DROP TABLE IF EXISTS `aliases_b2`",
	}, dropSQL("b2"))
	copyOf := "INSERT INTO `relations_b2` (`vid`, `id`, `rev`, `next_rev`, `deleted`, `src`, `dst`, `rel_type`, `properties`, `confidence`, " +
		"`valid_from`, `valid_to`, `session_id`, `task_id`, `agent_id`, `created_at`) SELECT `vid`, `id`, `rev`, 9223372036854775807, `deleted`, " +
		"`src`, `dst`, `rel_type`, `properties`, `confidence`, `valid_from`, `valid_to`, `session_id`, `task_id`, `agent_id`, `created_at` " +
		"FROM `relations_b1` WHERE "
	for _, tc := range []struct {
		atHead bool
		where  string
		args   []any
	}{{false, "rev <= ? AND next_rev > ?", []any{int64(7), int64(7)}}, {true, "next_rev > ?", []any{int64(7)}}} {
		stmts, args := copySQL("b2", "b1", 7, tc.atHead)
		if cp, want := stmts[2], copyOf+tc.where; cp != want {
			t.Errorf("copySQL(atHead %v) =\n%s\nwant\n%s", tc.atHead, cp, want)
		}
		if !slices.Equal(args, tc.args) {
			t.Errorf("copySQL(atHead %v) arguments = %v, want %v", tc.atHead, args, tc.args)
		}
	}
}

func TestListSQL(t *testing.T) {
	t.Parallel()
	p := pos{tab: branchRow{suffix: "b3"}, cut: 17}
	q, args, pushed, possible := listSQL(p, store.ListQuery{Kind: store.KindFact, Filter: store.Filter{
		Category: "auth'; DROP TABLE x; --", Statuses: []store.FactStatus{store.FactActive, store.FactVerified},
		Since: time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)}, Desc: true, Limit: 5, Offset: 2})
	wantQ := "SELECT `id`, `rev`, `deleted`, `vid`, `txt`, `doc_len`, `category`, `confidence`, `status`, `source_type`, " +
		"`source_id`, `parent_id`, `session_id`, `task_id`, `agent_id`, `metadata`, `verification`, `created_at`, `updated_at`, `expires_at` " +
		"FROM `facts_b3` WHERE rev <= ? AND next_rev > ? AND deleted = 0 AND (category = ? AND status IN (?,?) AND created_at >= ?) " +
		"ORDER BY created_at DESC, id DESC LIMIT 5 OFFSET 2"
	if q != wantQ || !pushed || !possible {
		t.Errorf("listSQL =\n%s (pushed %v, possible %v)\nwant\n%s", q, pushed, possible, wantQ)
	}
	// User input travels only as bound parameters.
	if len(args) != 6 || args[2] != "auth'; DROP TABLE x; --" {
		t.Errorf("args = %v", args)
	}
	_, _, pushed, possible = listSQL(p, store.ListQuery{Kind: store.KindFact, Filter: store.Filter{Metadata: map[string]string{"k": "v"}}, Limit: 1})
	if pushed || !possible {
		t.Errorf("a metadata filter: pushed %v, possible %v; want false, true", pushed, possible)
	}
	_, _, _, possible = listSQL(p, store.ListQuery{Kind: store.KindObservation, Filter: store.Filter{Category: "auth"}})
	if possible {
		t.Errorf("a fact field on observations: possible = true")
	}
	q, _, _, _ = listSQL(p, store.ListQuery{Kind: store.KindMessage, Order: store.OrderSeq, Filter: store.Filter{ConversationID: "c"}})
	if !strings.HasSuffix(q, "ORDER BY conversation_id, seq, id") {
		t.Errorf("message seq order: %s", q)
	}
	q, _, _, _ = listSQL(p, store.ListQuery{Kind: store.KindRelation, Filter: store.Filter{Entity: "A"}})
	if !strings.Contains(q, "(src = ? OR dst = ?)") {
		t.Errorf("relation entity: %s", q)
	}
}

func TestSearchSQL(t *testing.T) {
	t.Parallel()
	p := pos{tab: branchRow{suffix: "b0"}, cut: 9}
	q, args, possible := vectorSQL(store.KindObservation, p, store.SearchQuery{Vector: []float32{1, 0.5}, Filter: store.Filter{SessionID: "s1"}}, 2, 10, nil)
	// The versions' columns, joined with their embeddings by vid.
	if !possible || !strings.HasPrefix(q, "SELECT t.`id`, t.`rev`, t.`deleted`, t.`vid`, t.`session_id`") ||
		!strings.Contains(q, ", hex(v.embedding), (cosine_similarity(v.embedding, cast(? AS vecf32(2)))) AS sim FROM `observations_b0` t JOIN `observations_vectors` v ON v.vid = t.vid WHERE rev <= ?") ||
		!strings.HasSuffix(q, "ORDER BY sim DESC, t.id LIMIT 10") || args[0] != "[1,0.5]" {
		t.Errorf("vectorSQL = %s %v", q, args)
	}
	q, args, _ = vectorSQL(store.KindFact, p, store.SearchQuery{Vector: []float32{1, 0.5}}, 2, 10, []int64{7, 9}, "f1")
	if !strings.Contains(q, "t.id IN (?) AND t.vid IN (?,?)") || len(args) != 6 || args[3] != "f1" || args[5] != int64(9) {
		t.Errorf("vectorSQL by id and vid = %s %v", q, args)
	}
	// The IVFFLAT path orders the vectors table by l2_distance to a constant vector,
	// the only order the index serves, and takes the candidates asked for.
	q, args = ivfSQL(store.KindFact, store.SearchQuery{Vector: []float32{1, 0.5}}, 2, 64)
	if q != "SELECT vid FROM `facts_vectors` ORDER BY l2_distance(embedding, cast(? AS vecf32(2))) LIMIT 64" || len(args) != 1 || args[0] != "[1,0.5]" {
		t.Errorf("ivfSQL = %s %v", q, args)
	}
	if got := vectorCandidates(10); got != 64 {
		t.Errorf("vectorCandidates(10) = %d", got)
	}
	q, args = keywordSQL(store.KindFact, p, []string{"auth", "user_id"}, false, nil)
	if !strings.HasPrefix(q, "SELECT vid, id, doc_len, tokens, 1 FROM `facts_b0`") ||
		!strings.Contains(q, "(INSTR(tokens, ?) > 0 OR INSTR(tokens, ?) > 0)") || args[2] != " auth " || args[3] != " user_id " {
		t.Errorf("keywordSQL = %s %v", q, args)
	}
	conds, _, _ := filterSQL(store.KindFact, store.Filter{Category: "auth'--"})
	q, args = keywordSQL(store.KindFact, p, []string{"auth", "user_id"}, true, conds)
	// One MATCH per term, joined by UNION: servers differ on what several words in one
	// AGAINST match.
	if !strings.Contains(q, "CASE WHEN (category = ?) THEN 1 ELSE 0 END") || strings.Count(q, "MATCH(tokens) AGAINST(? IN NATURAL LANGUAGE MODE)") != 2 ||
		strings.Count(q, " UNION SELECT ") != 1 || len(args) != 8 || args[0] != "auth'--" || args[3] != "auth" || args[4] != "auth'--" || args[7] != "user_id" {
		t.Errorf("keywordSQL full-text = %s %v", q, args)
	}
}

func TestVectorText(t *testing.T) {
	t.Parallel()
	in := []float32{0.1, -2.5e-8, 3, 0.12345679, 1e30}
	lit := vecLiteral(in).(string)
	// MatrixOne prints vectors as "[a, b, c]" with the shortest float32 form.
	out, err := parseVec(strings.ReplaceAll(lit, ",", ", "))
	if err != nil || !cmp.Equal(in, out) {
		t.Errorf("round trip of %v via %q = %v, %v", in, lit, out, err)
	}
	// hex(embedding): the little-endian float32s.
	if out, err := parseVec("cdcccc3d0000803e000040C0"); err != nil || !cmp.Equal([]float32{0.1, 0.25, -3}, out) {
		t.Errorf("parseVec of hex = %v, %v; want [0.1 0.25 -3]", out, err)
	}
	for _, bad := range []string{"cdcccc3d00", "cdcccc3g"} {
		if _, err := parseVec(bad); err == nil {
			t.Errorf("parseVec(%q) did not fail", bad)
		}
	}
	if vecLiteral(nil) != nil {
		t.Errorf("an empty embedding must be NULL")
	}
}

func TestTokenColumn(t *testing.T) {
	t.Parallel()
	col, n := tokenColumn("The user_id of Kerberos tickets")
	if col != " user_id user id kerbero ticket " || n != 5 {
		t.Errorf("tokenColumn = %q, %d", col, n)
	}
	if normKey("Hello   World") != normKey("hello world") {
		t.Errorf("normKey must fold case and spaces")
	}
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 2 || ms[0].version != 1 || ms[1].version != 2 {
		t.Fatalf("migrations = %+v", ms)
	}
	var indexes int
	for _, m := range ms {
		for _, s := range m.stmts {
			if strings.Contains(s, ";") && !strings.Contains(s, "'") {
				t.Errorf("statement holds a semicolon: %s", s)
			}
			if strings.Contains(strings.ToUpper(s), "IF NOT EXISTS") && strings.HasPrefix(strings.ToUpper(s), "CREATE INDEX") {
				t.Errorf("MatrixOne rejects CREATE INDEX IF NOT EXISTS: %s", s)
			}
			if m := createIndex.FindStringSubmatch(s); m != nil {
				indexes++
			}
		}
	}
	if indexes == 0 {
		t.Errorf("no CREATE INDEX statement is guarded by the catalog check")
	}
	m := createIndex.FindStringSubmatch("CREATE INDEX day1_x ON `day1_y` (a)")
	if m == nil || m[1] != "day1_x" || m[2] != "day1_y" {
		t.Errorf("createIndex match = %v", m)
	}
	got := expand("vecf32({{dims}}) {{now}}", 8, time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC))
	if got != "vecf32(8) '2025-01-02 03:04:05.000006'" {
		t.Errorf("expand = %q", got)
	}
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	dup := &mysql.MySQLError{Number: 1062, Message: "Duplicate entry"}
	err := withSentinel("CreateBranch", store.ErrBranchExists, dup)
	var me *mysql.MySQLError
	if !errors.Is(err, store.ErrBranchExists) || !errors.As(err, &me) || me.Number != 1062 {
		t.Errorf("withSentinel: Is %v, As %v", errors.Is(err, store.ErrBranchExists), errors.As(err, &me))
	}
	if !strings.HasPrefix(err.Error(), "day1: ") || store.IsRetryable(err) {
		t.Errorf("dup error %q, retryable %v", err, store.IsRetryable(err))
	}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&mysql.MySQLError{Number: 1213, Message: "Deadlock"}, true},
		{&mysql.MySQLError{Number: 1205, Message: "Lock wait timeout"}, true},
		{&mysql.MySQLError{Number: 2013, Message: "Lost connection"}, true},
		{&mysql.MySQLError{Number: 2006, Message: "gone away"}, true},
		{&mysql.MySQLError{Number: 20101, Message: "internal error: txn need retry"}, true},
		{driver.ErrBadConn, true},
		{mysql.ErrInvalidConn, true},
		{fmt.Errorf("read: %w", errors.New("connection reset by peer")), true},
		{&mysql.MySQLError{Number: 1064, Message: "syntax error"}, false},
		{dup, false},
		{errors.New("boom"), false},
	} {
		e := wrap(context.Background(), "Get", c.err)
		if got := store.IsRetryable(e); got != c.want {
			t.Errorf("IsRetryable(%v) = %v; want %v", c.err, got, c.want)
		}
		if !errors.Is(e, c.err) {
			t.Errorf("wrap(%v) does not keep the driver error reachable", c.err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := wrap(ctx, "Get", mysql.ErrInvalidConn); !errors.Is(err, context.Canceled) {
		t.Errorf("wrap after cancel = %v; want context.Canceled", err)
	}
	if err := wrap(context.Background(), "Get", fmt.Errorf("%w: x", store.ErrBranchNotFound)); !errors.Is(err, store.ErrNotFound) || store.IsRetryable(err) {
		t.Errorf("a store sentinel must pass through unchanged: %v", err)
	}
}

func TestRetry(t *testing.T) {
	t.Parallel()
	s := &Store{opts: Options{DSN: "x", RetryTimeout: 300 * time.Millisecond}.withDefaults()}
	calls := 0
	v, err := retryIdempotent(context.Background(), s, "Get", func() (int, error) {
		calls++
		if calls < 3 {
			return 0, wrap(context.Background(), "Get", &mysql.MySQLError{Number: 1213})
		}
		return 7, nil
	})
	if v != 7 || err != nil || calls != 3 {
		t.Errorf("retry of a transient error: %v, %v after %d calls", v, err, calls)
	}
	calls = 0
	_, err = retryIdempotent(context.Background(), s, "Get", func() (int, error) {
		calls++
		return 0, store.ErrNotFound
	})
	if calls != 1 || !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a permanent error was retried %d times: %v", calls, err)
	}

	// A failure that stays transient is retried until Options.RetryTimeout, then
	// returned as it is.
	calls = 0
	start := time.Now()
	_, err = retryIdempotent(context.Background(), s, "Get", func() (int, error) {
		calls++
		return 0, wrap(context.Background(), "Get", mysql.ErrInvalidConn)
	})
	if !errors.Is(err, mysql.ErrInvalidConn) || !store.IsRetryable(err) || calls < 3 {
		t.Errorf("a lasting transient failure: %v after %d calls", err, calls)
	}
	if d := time.Since(start); d > 10*s.opts.RetryTimeout {
		t.Errorf("retries went on for %s with RetryTimeout %s", d, s.opts.RetryTimeout)
	}

	// The context stops the retries: its error is returned, naming the operation.
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	_, err = retryIdempotent(ctx, s, "Get", func() (int, error) {
		calls++
		cancel()
		return 0, wrap(context.Background(), "Get", mysql.ErrInvalidConn)
	})
	if !errors.Is(err, context.Canceled) || calls != 1 || !strings.Contains(err.Error(), "Get") {
		t.Errorf("retry after cancel: %v after %d calls", err, calls)
	}
}

// TestColumnTerm checks the column form of search terms: a term the server's
// tokenizer cuts inside a character is held as ASCII, every other term as it is, and
// the form is undone on reading.
func TestColumnTerm(t *testing.T) {
	for _, c := range []struct {
		term string
		kept bool // held as it is
	}{
		{"token", true},
		{strings.Repeat("a", 40), true},
		{"достопримечательность", false}, // 42 bytes, the 24th inside a letter
		{"αποκατάσταση", false},          // 24 bytes
		{strings.Repeat("é", 11), true},  // 22 bytes: no cut
		{"abcdefghijklmnopqrstuvé", false},
		{"abcdefghijklmnopqrstuvwé", true}, // the cut falls between letters
		{"user_id", true},
	} {
		col := columnTerm(c.term)
		if (col == c.term) != c.kept {
			t.Errorf("columnTerm(%q) = %q; kept %v, want %v", c.term, col, col == c.term, c.kept)
		}
		for i := 0; i < len(col); i++ {
			if !c.kept && (col[i] >= 0x80 || col[i] == ' ') {
				t.Errorf("columnTerm(%q) = %q holds byte %#x", c.term, col, col[i])
				break
			}
		}
		if back := termOfColumn(col); back != c.term {
			t.Errorf("termOfColumn(columnTerm(%q)) = %q", c.term, back)
		}
	}
	// Tokens that are no column form of a term read as they are.
	for _, tok := range []string{"_", "_zz", "__init", "_abc", "plain"} {
		if got := termOfColumn(tok); got != tok {
			t.Errorf("termOfColumn(%q) = %q; want it unchanged", tok, got)
		}
	}
}
