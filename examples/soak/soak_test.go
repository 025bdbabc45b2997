package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

// TestMain runs the children of the multi-process soak when the test binary is
// started as one.
func TestMain(m *testing.M) {
	if runProcessChild() {
		return
	}
	os.Exit(m.Run())
}

// TestProcesses runs the multi-process soak briefly: every acknowledged write is in
// memory, nothing else is, and nothing failed.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes; skipped with -short")
	}
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"-store", "durable", "-processes", "6", "-duration", "1500ms"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit status %d\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	if !strings.Contains(out.String(), "lost 0, phantom 0, failed 0, shared text held by 1 facts") {
		t.Errorf("no clean summary in:\n%s", out.String())
	}
	t.Log(out.String())
}

// soakRun runs a short soak in-process and checks that it passes and that its table
// has a row, with calls, for every operation.
func soakRun(t *testing.T, args ...string) string {
	t.Helper()
	var out, errs bytes.Buffer
	code := run(context.Background(), append([]string{"-agents", "3", "-duration", "1500ms"}, args...), &out, &errs)
	table := out.String()
	if code != 0 {
		t.Fatalf("exit status %d\n%s\nstderr:\n%s", code, table, errs.String())
	}
	for _, op := range operations {
		row := rowOf(table, op)
		if row == nil {
			t.Errorf("no row for %q in:\n%s", op, table)
			continue
		}
		if row[1] == "0" {
			t.Errorf("%q never ran:\n%s", op, table)
		}
	}
	for _, check := range []string{"memory equals the model", "faults (unexpected errors)", "goroutines after the run", "heap in use after the run"} {
		if !strings.Contains(table, "| "+check) {
			t.Errorf("no %q check in:\n%s", check, table)
		}
	}
	return table
}

// rowOf returns the cells of the table row of op, or nil.
func rowOf(table, op string) []string {
	for _, l := range strings.Split(table, "\n") {
		cells := strings.Split(l, "|")
		if len(cells) > 3 && strings.TrimSpace(cells[1]) == op {
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells[1:]
		}
	}
	return nil
}

func TestSoakMemory(t *testing.T) {
	soakRun(t, "-store", "mem")
}

func TestSoakDurable(t *testing.T) {
	table := soakRun(t, "-store", "durable", "-path", filepath.Join(t.TempDir(), "memory"))
	if !strings.Contains(table, "(before and after a reopen)") {
		t.Errorf("the durable store was not compared again after a reopen:\n%s", table)
	}
}

func TestSoakMatrixOne(t *testing.T) {
	dsn := os.Getenv("DAY1_TEST_DSN")
	if dsn == "" {
		t.Skip("DAY1_TEST_DSN is not set; start MatrixOne with scripts/matrixone.sh start and set DAY1_TEST_DSN='root:111@tcp(127.0.0.1:6001)/'")
	}
	soakRun(t, "-store", "matrixone", "-dsn", dsn, "-agents", "2", "-duration", "2s")
}

// TestModelCatchesDifferences checks that the model's comparisons can fail: a merge
// that misses a change or carries a record the target took in already, a diff that
// lists too little, and a branch that lost a record, holds one never written there or
// holds another content.
func TestModelCatchesDifferences(t *testing.T) {
	ctx := context.Background()
	fact := func(id, text string) day1.Fact {
		return day1.Fact{ID: id, Text: text, Status: day1.FactActive}
	}
	ref := func(id string) day1.Ref { return day1.Ref{Kind: day1.KindFact, ID: id} }
	expect := func(m *model, what string, n int) {
		t.Helper()
		if m.nmismatch != n {
			t.Errorf("%s: %d differences, want %d: %q", what, m.nmismatch, n, m.mismatches)
		}
	}

	m := newModel()
	m.seed([]day1.Record{fact("f1", "one")})
	m.fork("b", "main")
	m.wrote("b", fact("f2", "two"))
	want := m.expectedChanges("b", "main", true)
	if len(want) != 1 || want[ref("f2")] == "" {
		t.Fatalf("expected changes of b: %v, want f2 alone", want)
	}
	m.merged("b", "main", want, nil, day1.MergeResult{})
	expect(m, "a merge that misses f2", 1)
	m.merged("b", "main", want, nil, day1.MergeResult{Plan: store.MergePlan{Puts: []day1.Record{fact("f2", "two"), fact("f1", "one")}}})
	expect(m, "a merge that carries f1, which main holds", 2)
	if got := m.expectedChanges("b", "main", true); len(got) != 0 {
		t.Errorf("after the merge b still has changes for main: %v", got)
	}
	// A write racing a merge that missed it is expected in the next one.
	raced := map[day1.Ref]string{ref("f3"): content(fact("f3", "three"))}
	m.wrote("b", fact("f3", "three"))
	m.merged("b", "main", map[day1.Ref]string{}, raced, day1.MergeResult{})
	expect(m, "a merge that missed a racing write", 2)
	if got := m.expectedChanges("b", "main", true); len(got) != 1 || got[ref("f3")] == "" {
		t.Errorf("after a merge that missed f3, b's changes for main are %v, want f3", got)
	}
	m.checkDiff("b", "main", m.expectedChanges("b", "main", true), &day1.Diff{})
	expect(m, "a diff that does not list f3", 3)

	c, err := day1.Open(ctx, day1.Config{DedupeThreshold: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, f := range []day1.Fact{fact("f2", "changed"), fact("f9", "never in the model")} {
		if _, err := c.WriteFact(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	// Memory's main lacks f1, holds f2 with another text and f9, never written there.
	if err := m.verifyBranch(ctx, c, "main", "test"); err != nil {
		t.Fatal(err)
	}
	expect(m, "memory that lost f1, changed f2 and holds f9", 6)
}

// TestWatchFindsAHang: when no operation ends for the stall time, watch says so.
func TestWatchFindsAHang(t *testing.T) {
	s := &soak{st: newStats(), m: newModel()}
	err := watch(s, io.Discard, time.Now(), make(chan struct{}), 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "deadlock") {
		t.Fatalf("watch with no operation ending = %v, want a deadlock error", err)
	}
	done := make(chan struct{})
	close(done)
	if err := watch(s, io.Discard, time.Now(), done, 200*time.Millisecond); err != nil {
		t.Fatalf("watch of finished agents = %v", err)
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-agents", "0"},
		{"-agents", "65"},
		{"-duration", "0s"},
		{"-store", "sqlite"},
		{"-path", "x"},
		{"-op-timeout", "-1s"},
		{"-heap-slack", "-1"},
		{"extra"},
	} {
		var out, errs bytes.Buffer
		if code := run(context.Background(), args, &out, &errs); code != 2 {
			t.Errorf("run(%q) = %d, want 2; stderr: %s", args, code, errs.String())
		}
		if out.Len() != 0 {
			t.Errorf("run(%q) printed a report: %s", args, out.String())
		}
	}
}

// TestDurablePathMustBeEmpty: the model starts from an empty memory, so a folder that
// holds one is refused.
func TestDurablePathMustBeEmpty(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-store", "durable", "-path", dir, "-duration", "1s"}, &out, &errs); code != 2 {
		t.Fatalf("exit status %d, want 2; stderr: %s", code, errs.String())
	}
}
