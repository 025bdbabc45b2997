package testkit

import (
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// EnvTestDSN names the MatrixOne server the tests that need one run against; they
// skip without it.
const EnvTestDSN = "DAY1_TEST_DSN"

// MatrixOneDatabase returns the DSN of a new MatrixOne database on the server of
// $DAY1_TEST_DSN, named from prefix and dropped when tb ends; it skips tb when
// DAY1_TEST_DSN is not set.
func MatrixOneDatabase(tb testing.TB, prefix string) string {
	tb.Helper()
	dsn := os.Getenv(EnvTestDSN)
	if dsn == "" {
		tb.Skip("DAY1_TEST_DSN is not set; start MatrixOne with scripts/matrixone.sh start (at the root of the day1 module) and set DAY1_TEST_DSN='root:111@tcp(127.0.0.1:6001)/'")
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.DBName = fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano())
	tb.Cleanup(func() { DropDatabases(tb, dsn, cfg.DBName) })
	return cfg.FormatDSN()
}

// DropDatabases drops every database whose name starts with prefix on the server of
// dsn, logging what fails.
func DropDatabases(tb testing.TB, dsn, prefix string) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		tb.Logf("dropping the test's databases: %v", err)
		return
	}
	defer db.Close()
	rows, err := db.Query("SHOW DATABASES")
	if err != nil {
		tb.Logf("dropping the test's databases: %v", err)
		return
	}
	var names []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil && strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	rows.Close()
	for _, n := range names {
		if _, err := db.Exec("DROP DATABASE IF EXISTS `" + n + "`"); err != nil {
			tb.Logf("dropping %s: %v", n, err)
		}
	}
}
