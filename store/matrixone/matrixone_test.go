package matrixone_test

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
	"github.com/day1ai/day1/store/storetest"
)

// testDSN returns the server to test against, or skips.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("DAY1_TEST_DSN")
	if dsn == "" {
		t.Skip("DAY1_TEST_DSN is not set: start MatrixOne with `scripts/matrixone.sh start` and run with " +
			"DAY1_TEST_DSN='root:111@tcp(127.0.0.1:6001)/'")
	}
	return dsn
}

var dbCounter atomic.Int64

// testDatabase returns a DSN naming a fresh database for t, dropped when t ends.
func testDatabase(t testing.TB) string {
	t.Helper()
	base := testDSN(t)
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("DAY1_TEST_DSN: %v", err)
	}
	h := fnv.New32a()
	h.Write([]byte(t.Name()))
	cfg.DBName = fmt.Sprintf("day1t_%08x_%d_%d", h.Sum32(), os.Getpid()%100000, dbCounter.Add(1))
	dsn := cfg.FormatDSN()
	t.Cleanup(func() {
		admin := cfg.Clone()
		name := admin.DBName
		admin.DBName = ""
		db, err := sql.Open("mysql", admin.FormatDSN())
		if err != nil {
			return
		}
		defer db.Close()
		if _, err := db.Exec("DROP DATABASE IF EXISTS `" + name + "`"); err != nil {
			t.Logf("dropping test database %s: %v", name, err)
		}
	})
	return dsn
}

// openTest opens a store on dsn with the suite's 8-dimension embeddings.
func openTest(t testing.TB, dsn string) *matrixone.Store {
	t.Helper()
	s, err := matrixone.Open(context.Background(), matrixone.Options{DSN: dsn, Dimensions: 8, MaxOpenConns: 8})
	if err != nil {
		t.Fatalf("matrixone.Open: %v", err)
	}
	return s
}

// TestConformance runs the store conformance suite against a MatrixOne server, each
// subtest in its own database; Reopen closes the store and opens its database again.
func TestConformance(t *testing.T) {
	testDSN(t)
	var (
		mu   sync.Mutex
		dsns = map[store.Store]string{}
	)
	open := func(t *testing.T, dsn string) store.Store {
		s := openTest(t, dsn)
		mu.Lock()
		defer mu.Unlock()
		dsns[s] = dsn
		return s
	}
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store { return open(t, testDatabase(t)) },
		Reopen: func(t *testing.T, s store.Store) store.Store {
			mu.Lock()
			dsn := dsns[s]
			mu.Unlock()
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return open(t, dsn)
		},
		Retained: func(t *testing.T, r time.Duration, now func() time.Time) store.Store {
			s, err := matrixone.Open(context.Background(), matrixone.Options{DSN: testDatabase(t), Dimensions: 8, MaxOpenConns: 8, Retention: r, Now: now})
			if err != nil {
				t.Fatalf("matrixone.Open: %v", err)
			}
			return s
		},
	})
}

// TestOpenLogsMigrations checks that the migrations a first open applies are logged,
// each with its version, and that a second open, with nothing left to apply, logs none.
func TestOpenLogsMigrations(t *testing.T) {
	dsn := testDatabase(t)
	for i, want := range []bool{true, false} {
		var logged strings.Builder
		s, err := matrixone.Open(context.Background(), matrixone.Options{DSN: dsn, Dimensions: 8,
			Logger: slog.New(slog.NewTextHandler(&logged, nil))})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		l := logged.String()
		if got := strings.Contains(l, "migration applied") && strings.Contains(l, "version=1 "); got != want {
			t.Errorf("open %d: logged migrations %v, want %v:\n%s", i+1, got, want, l)
		}
	}
}
