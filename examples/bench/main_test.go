package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain runs the children of the multi-process rows when the test binary is
// started as one.
func TestMain(m *testing.M) {
	if runChild() {
		return
	}
	os.Exit(m.Run())
}

// TestQuickRun runs the quick mode in-process on tiny stores and checks that the table
// has a row for every operation and size.
func TestQuickRun(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"-quick", "-sizes", "200,400", "-queries", "20"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, errs.String())
	}
	table := out.String()
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "| operation | size | measured | target | result |") {
		t.Fatalf("no markdown table header:\n%s", table)
	}
	ops := []string{
		"embed alone:", "write:", "memory:", "search: hybrid top-10", "search at a snapshot",
		"search quality:", "branch: create", "diff:", "merge:",
	}
	for _, size := range []string{"200", "400"} {
		for _, op := range ops {
			if !hasRow(lines, op, size) {
				t.Errorf("no row for %q at size %s in:\n%s", op, size, table)
			}
		}
	}
	if !hasRow(lines, "branch: creation time, largest vs smallest", "400 vs 200") {
		t.Errorf("no branch scaling row in:\n%s", table)
	}
	for _, l := range lines[2:] {
		if !strings.HasSuffix(l, "| pass |") && !strings.HasSuffix(l, "| FAIL |") && !strings.HasSuffix(l, "| info |") {
			t.Errorf("row without a result: %s", l)
		}
	}
}

// TestQuickRunSessions loads the facts in sessions: the write and search rows say so.
func TestQuickRunSessions(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"-quick", "-sizes", "200", "-queries", "10", "-session", "25"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, op := range []string{"write: WriteFacts, batches of 500, local embedder, memory, dedupe 0.92, facts in sessions of 25", "search: hybrid top-10 (query embedded), facts in sessions of 25"} {
		if !hasRow(lines, op, "200") {
			t.Errorf("no row %q in:\n%s", op, out.String())
		}
	}
}

// TestQuickRunDurable runs the quick mode on the durable store: each size ends with a
// reopen, whose search must find what it found before, and the scaling row compares
// stores made alternately.
func TestQuickRunDurable(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"-quick", "-store", "durable", "-sizes", "200,400", "-queries", "10"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, size := range []string{"200", "400"} {
		if !hasRow(lines, "reopen: Open replaying the log", size) {
			t.Errorf("no reopen row at size %s in:\n%s", size, out.String())
		}
	}
	if !hasRow(lines, "branch: creation time, largest vs smallest store (p50, created alternately)", "400 vs 200") {
		t.Errorf("no alternate branch scaling row in:\n%s", out.String())
	}
	for _, op := range []string{"compaction: files on disk", "compaction: Compact time", "compaction: Open before",
		"commits from 8 processes beside a holder", "new process: open + first hybrid search"} {
		if !hasRow(lines, op, "400") {
			t.Errorf("no row for %q in:\n%s", op, out.String())
		}
	}
}

// TestQuickRunSQLite runs the quick mode on a memory kept in SQLite: each size has
// the rows of many processes, a new process's open and first search (which writes a
// CPU profile of its own), and a reopen whose search finds what it found before;
// compaction is the log store's alone.
func TestQuickRunSQLite(t *testing.T) {
	// Not in parallel: a CPU profile is the whole process's.
	var out, errs bytes.Buffer
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	code := run(context.Background(), []string{"-quick", "-store", "sqlite", "-sizes", "200", "-queries", "10", "-cpuprofile", prof}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, op := range []string{"reopen: Open", "commits from 8 processes beside a holder", "new process: open + first hybrid search"} {
		if !hasRow(lines, op, "200") {
			t.Errorf("no row for %q in:\n%s", op, out.String())
		}
	}
	if strings.Contains(out.String(), "compaction:") {
		t.Errorf("compaction rows on the SQLite store:\n%s", out.String())
	}
	for _, p := range []string{prof, prof + ".open-search"} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("no CPU profile at %s: %v", p, err)
		}
	}
}

// TestCompactionOnly runs the compaction rows alone.
func TestCompactionOnly(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"-store", "durable", "-compaction", "-sizes", "300"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 {
		t.Errorf("want the header and three rows:\n%s", out.String())
	}
	for _, op := range []string{"compaction: files on disk", "compaction: Compact time", "compaction: Open before"} {
		if !hasRow(lines, op, "300") {
			t.Errorf("no row for %q in:\n%s", op, out.String())
		}
	}
	var none bytes.Buffer
	if code := run(context.Background(), []string{"-compaction"}, &none, &errs); code != 2 || none.Len() != 0 {
		t.Errorf("-compaction without -store durable: exit %d, table %q; want 2 and none", code, none.String())
	}
}

// TestQuickRunOnMatrixOne runs the quick mode against the MatrixOne server at
// DAY1_TEST_DSN.
func TestQuickRunOnMatrixOne(t *testing.T) {
	dsn := os.Getenv("DAY1_TEST_DSN")
	if dsn == "" {
		t.Skip("DAY1_TEST_DSN is not set; start MatrixOne with scripts/matrixone.sh start and set DAY1_TEST_DSN='root:111@tcp(127.0.0.1:6001)/'")
	}
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"-quick", "-store", "matrixone", "-dsn", dsn, "-sizes", "200", "-queries", "10"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, op := range []string{"write:", "search: hybrid top-10", "branch: create", "diff:", "merge:"} {
		if !hasRow(lines, op, "200") {
			t.Errorf("no row for %q in:\n%s", op, out.String())
		}
	}
	// The day1 rows are held to MatrixOne's targets, not to the embedded store's.
	for op, want := range map[string]string{
		"write:":                "≥ 3,000 facts/s",
		"search: hybrid top-10": "p50 ≤ 60 ms, p95 ≤ 120 ms",
		"diff:":                 "p95 ≤ 100 ms",
		"merge:":                "p95 ≤ 250 ms",
		"branch: create from main": map[bool]string{
			true:  "p95 < 50 ms",
			false: "a copy: ≤ 2× the server's (next row)",
		}[strings.Contains(out.String(), "branches native")],
	} {
		if got := rowTarget(lines, op, "200"); got != want {
			t.Errorf("the target of %q is %q, want %q", op, got, want)
		}
	}
	// A server with DATA BRANCH times its forks again after a checkpoint.
	if strings.Contains(out.String(), "branches native") {
		for _, op := range []string{"branch: create from main, after a checkpoint", "server: DATA BRANCH CREATE of 6 tables, after a checkpoint"} {
			if !hasRow(lines, op, "200") {
				t.Errorf("no row for %q in:\n%s", op, out.String())
			}
		}
	}
}

// rowTarget returns the target cell of the first row of op at size, "" when none.
func rowTarget(lines []string, op, size string) string {
	for _, l := range lines {
		cells := strings.Split(l, "|")
		if len(cells) > 4 && strings.HasPrefix(strings.TrimSpace(cells[1]), op) && strings.TrimSpace(cells[2]) == size {
			return strings.TrimSpace(cells[4])
		}
	}
	return ""
}

func TestTargetsFor(t *testing.T) {
	for _, c := range []struct {
		store  string
		native bool
		want   targets
	}{
		{"memory", false, targets{write: 20_000, searchP50: 5 * time.Millisecond, searchP95: 10 * time.Millisecond,
			branch: 50 * time.Microsecond, scale: true, diff: time.Millisecond, merge: 2 * time.Millisecond}},
		{"durable", false, targets{write: 10_000, searchP50: 5 * time.Millisecond, searchP95: 10 * time.Millisecond,
			branch: 50 * time.Microsecond, scale: true, diff: time.Millisecond, merge: 2 * time.Millisecond}},
		{"matrixone", false, targets{write: 3_000, searchP50: 60 * time.Millisecond, searchP95: 120 * time.Millisecond,
			diff: 100 * time.Millisecond, merge: 250 * time.Millisecond}},
		{"matrixone", true, targets{write: 3_000, searchP50: 60 * time.Millisecond, searchP95: 120 * time.Millisecond,
			branch: 50 * time.Millisecond, scale: true, diff: 100 * time.Millisecond, merge: 250 * time.Millisecond}},
	} {
		if got := targetsFor(c.store, c.native); got != c.want {
			t.Errorf("targetsFor(%q, %v) = %+v, want %+v", c.store, c.native, got, c.want)
		}
	}
}

func hasRow(lines []string, op, size string) bool {
	for _, l := range lines {
		cells := strings.Split(l, "|")
		if len(cells) > 3 && strings.HasPrefix(strings.TrimSpace(cells[1]), op) && strings.TrimSpace(cells[2]) == size {
			return true
		}
	}
	return false
}

func TestFlags(t *testing.T) {
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"-store", "matrixone", "-dsn", "root@tcp(127.0.0.1:6001"}, 1},
		{[]string{"-store", "paper"}, 2},
		{[]string{"-sizes", "10"}, 2},
		{[]string{"-sizes", "abc"}, 2},
		{[]string{"-queries", "0"}, 2},
		{[]string{"-batch", "0"}, 2},
		{[]string{"-dedupe", "1.5"}, 2},
		{[]string{"-session", "-1"}, 2},
		{[]string{"extra"}, 2},
	}
	for _, tt := range tests {
		var out, errs bytes.Buffer
		if code := run(context.Background(), tt.args, &out, &errs); code != tt.code {
			t.Errorf("run(%q) = %d, want %d; stderr: %s", tt.args, code, tt.code, errs.String())
		}
		if out.Len() != 0 {
			t.Errorf("run(%q) printed a table: %s", tt.args, out.String())
		}
	}
}

// TestCPUProfile runs the quick mode with -cpuprofile, whose measured operations run
// under profile labels, and checks that the run succeeds and writes a profile.
func TestCPUProfile(t *testing.T) {
	// Not in parallel: a CPU profile is the whole process's.
	path := filepath.Join(t.TempDir(), "cpu.prof")
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-quick", "-sizes", "200", "-queries", "10", "-cpuprofile", path}, &out, &errs); code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, errs.String())
	}
	if !hasRow(strings.Split(out.String(), "\n"), "merge:", "200") {
		t.Errorf("no merge row in:\n%s", out.String())
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() == 0 {
		t.Errorf("%s is empty", path)
	}
}

// TestSamplesLabelOnlyWhenProfiling: measured operations carry the profile label op only
// when a CPU profile is written, and a labelled run still records its times.
func TestSamplesLabelOnlyWhenProfiling(t *testing.T) {
	plain := (&bench{}).samples("merge")
	profiled := (&bench{o: options{cpuprofile: "cpu.prof"}}).samples("merge")
	if plain.op != "" || profiled.op != "merge" {
		t.Fatalf("labels: %q without a profile, %q with one; want none and merge", plain.op, profiled.op)
	}
	ran := false
	if err := profiled.time(func() error { ran = true; return nil }); err != nil || !ran || len(profiled.wall) != 1 || len(profiled.cpu) != 1 {
		t.Fatalf("a labelled run: ran %v, err %v, %d wall and %d CPU times", ran, err, len(profiled.wall), len(profiled.cpu))
	}
}
