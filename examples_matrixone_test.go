package day1_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/testkit"
	"github.com/day1ai/day1/store/sqlite"
)

// examplesDSN, when set, makes every example open a MatrixOne database of its own
// instead of the embedded store; TestExamplesOnMatrixOne sets it for a run of the
// examples, and examplesPrefix names their databases.
var (
	examplesDSN    = os.Getenv("DAY1_EXAMPLES_DSN")
	examplesPrefix = os.Getenv("DAY1_EXAMPLES_PREFIX")
	exampleDBs     atomic.Int64
	// examplesSQLite, when set, is the folder under which every example opens a
	// SQLite memory of its own (TestExamplesOnSQLite).
	examplesSQLite = os.Getenv("DAY1_EXAMPLES_SQLITE")
)

// exampleStore points cfg at a fresh MatrixOne database when the examples run on one,
// or at a fresh SQLite memory when they run on that.
func exampleStore(cfg day1.Config) day1.Config {
	if examplesSQLite != "" {
		cfg.Backend = sqlite.Options{Path: filepath.Join(examplesSQLite, fmt.Sprint(exampleDBs.Add(1)))}
		return cfg
	}
	if examplesDSN == "" {
		return cfg
	}
	c, err := mysql.ParseDSN(examplesDSN)
	if err != nil {
		panic(err)
	}
	c.DBName = fmt.Sprintf("%s_%d", examplesPrefix, exampleDBs.Add(1))
	cfg.DSN = c.FormatDSN()
	return cfg
}

// TestExamplesOnMatrixOne runs every example again with its client on MatrixOne: the
// same output, on the production store, through every engine.
func TestExamplesOnMatrixOne(t *testing.T) {
	dsn := os.Getenv("DAY1_TEST_DSN")
	if dsn == "" {
		t.Skip("DAY1_TEST_DSN is not set; start MatrixOne with scripts/matrixone.sh start and set DAY1_TEST_DSN='root:111@tcp(127.0.0.1:6001)/'")
	}
	if examplesDSN != "" {
		t.Skip("this process is the examples run")
	}
	prefix := fmt.Sprintf("day1_examples_%d", time.Now().UnixNano())
	t.Cleanup(func() { testkit.DropDatabases(t, dsn, prefix) })
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", "^Example", "-test.count=1")
	cmd.Env = append(os.Environ(), "DAY1_EXAMPLES_DSN="+dsn, "DAY1_EXAMPLES_PREFIX="+prefix)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the examples on MatrixOne failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("the examples run did not pass:\n%s", out)
	}
}

// TestExamplesOnSQLite runs every example again with its client on a memory of the
// SQLite driver: the same output through every engine on the portable store.
func TestExamplesOnSQLite(t *testing.T) {
	if examplesSQLite != "" || examplesDSN != "" {
		t.Skip("this process is an examples run")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", "^Example", "-test.count=1")
	cmd.Env = append(os.Environ(), "DAY1_EXAMPLES_SQLITE="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the examples on SQLite failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("the examples run did not pass:\n%s", out)
	}
}
