package adk_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1"
)

// storeCase names a store and the Config that opens it for one test. Opening the
// Config again opens the same memory, except for the embedded store in memory.
type storeCase struct {
	name    string
	durable bool
	config  func(t *testing.T) day1.Config
}

// stores lists the stores the tests run on: the embedded store, in memory and in a
// folder, always, and MatrixOne when DAY1_TEST_DSN names a server (each test in a
// database of its own).
func stores() []storeCase {
	return []storeCase{
		{"embedded", false, func(t *testing.T) day1.Config { return day1.Config{} }},
		{"durable", true, func(t *testing.T) day1.Config { return day1.Config{Path: t.TempDir()} }},
		{"matrixone", true, func(t *testing.T) day1.Config { return day1.Config{DSN: testDatabase(t, "day1_adk")} }},
	}
}

// forEachStore runs test once per store, as a subtest named after the store, with a
// Client open on it.
func forEachStore(t *testing.T, test func(t *testing.T, c *day1.Client)) {
	t.Helper()
	for _, s := range stores() {
		t.Run(s.name, func(t *testing.T) { test(t, openClient(t, s.config(t))) })
	}
}

func openClient(t *testing.T, cfg day1.Config) *day1.Client {
	t.Helper()
	c, err := day1.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("day1.Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testDatabase returns the DSN of a new MatrixOne database named from prefix, which
// the test's end drops; it skips the test without DAY1_TEST_DSN.
func testDatabase(t *testing.T, prefix string) string {
	t.Helper()
	dsn := os.Getenv("DAY1_TEST_DSN")
	if dsn == "" {
		t.Skip("DAY1_TEST_DSN is not set; start MatrixOne with scripts/matrixone.sh start (at the root of the day1 module) and set DAY1_TEST_DSN='root:111@tcp(127.0.0.1:6001)/'")
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano())
	t.Cleanup(func() { dropDatabases(t, dsn, cfg.DBName) })
	return cfg.FormatDSN()
}

func dropDatabases(t *testing.T, dsn, prefix string) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Logf("dropping the test's databases: %v", err)
		return
	}
	defer db.Close()
	rows, err := db.Query("SHOW DATABASES")
	if err != nil {
		t.Logf("dropping the test's databases: %v", err)
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
			t.Logf("dropping %s: %v", n, err)
		}
	}
}
