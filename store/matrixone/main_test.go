package matrixone_test

import (
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/ory/dockertest/v3"
	"github.com/ory/dockertest/v3/docker"
)

// TestMain starts MatrixOne in Docker when DAY1_TEST_DSN is not set and a Docker
// engine answers; without either, the integration tests skip with instructions.
func TestMain(m *testing.M) {
	if os.Getenv("DAY1_TEST_DSN") != "" || os.Getenv("DAY1_TEST_NO_DOCKER") != "" {
		os.Exit(m.Run())
	}
	cleanup, err := startDocker()
	if err != nil {
		fmt.Fprintln(os.Stderr, "matrixone tests: no Docker engine for MatrixOne ("+err.Error()+"); integration tests will skip")
	}
	code := m.Run()
	if cleanup != nil {
		cleanup()
	}
	os.Exit(code)
}

// startDocker runs matrixorigin/matrixone and sets DAY1_TEST_DSN once it answers.
func startDocker() (func(), error) {
	pool, err := dockertest.NewPool("")
	if err != nil {
		return nil, err
	}
	if err := pool.Client.Ping(); err != nil {
		return nil, err
	}
	pool.MaxWait = 3 * time.Minute
	res, err := pool.RunWithOptions(&dockertest.RunOptions{Repository: "matrixorigin/matrixone", Tag: "latest"},
		func(hc *docker.HostConfig) { hc.AutoRemove = true })
	if err != nil {
		return nil, err
	}
	cleanup := func() { pool.Purge(res) }
	dsn := fmt.Sprintf("root:111@tcp(%s)/", res.GetHostPort("6001/tcp"))
	if err := pool.Retry(func() error {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.Ping()
	}); err != nil {
		cleanup()
		return nil, err
	}
	os.Setenv("DAY1_TEST_DSN", dsn)
	return cleanup, nil
}
