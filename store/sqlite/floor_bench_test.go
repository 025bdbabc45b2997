package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/day1ai/day1/store/storetest"
)

// BenchmarkFloor is what SQLite itself costs for the writes and reads of the store
// benchmarks (BenchmarkStore), without the driver or the portable store: 100 records
// of the bench's size (a JSON body of about 300 bytes and an embedding of
// storetest.BenchDims float32s) inserted and committed in one transaction, as a
// merge of 100 changes or a batch of 100 facts writes them, into a table that starts
// with 10,000 such records and an index on their ID; and 200 of them read back by row
// number, as a diff of 100 changes reads them. The connection is set as the driver
// sets its own (write-ahead log, synchronous=normal). A figure of BenchmarkStore
// divided by the one here is how far the store is above the file format's floor.
//
//	go test -run '^$' -bench Floor ./store/sqlite/
func BenchmarkFloor(b *testing.B) {
	const base, batch, reads = 10_000, 100, 200
	ctx := context.Background()
	dsn := "file:" + filepath.Join(b.TempDir(), "floor.db") +
		"?_pragma=journal_mode(wal)&_pragma=synchronous(normal)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE TABLE recs (rid INTEGER PRIMARY KEY, id TEXT NOT NULL, data BLOB, vec BLOB); CREATE INDEX recs_id ON recs (id)"); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	body := []byte(`{"id":"f000000","text":"` + strings.Repeat("x", 240) + `","session_id":"s1","created_at":"2026-12-07T00:00:00Z"}`)
	vec := make([]byte, 4*storetest.BenchDims)
	for i := range vec {
		vec[i] = byte(rng.Uint32())
	}
	next := 1
	insert := func(n int) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		args := make([]any, 0, 4*n)
		for range n {
			args = append(args, next, fmt.Sprintf("f%07d", next), body, vec)
			next++
		}
		q := "INSERT INTO recs VALUES (?, ?, ?, ?)" + strings.Repeat(", (?, ?, ?, ?)", n-1)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
		return tx.Commit()
	}
	for range base / batch {
		if err := insert(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.Run(fmt.Sprintf("insert/batch=%d/base=%d", batch, base), func(b *testing.B) {
		for b.Loop() {
			if err := insert(batch); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run(fmt.Sprintf("read/records=%d/base=%d", reads, base), func(b *testing.B) {
		q := "SELECT rid, data, vec FROM recs WHERE rid IN (?" + strings.Repeat(", ?", reads-1) + ")"
		args := make([]any, reads)
		for b.Loop() {
			for i := range args {
				args[i] = 1 + rng.IntN(base)
			}
			rows, err := db.QueryContext(ctx, q, args...)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for rows.Next() {
				var rid int64
				var data, v []byte
				if err := rows.Scan(&rid, &data, &v); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if err := rows.Close(); err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				b.Fatal("read no records")
			}
		}
	})
}
