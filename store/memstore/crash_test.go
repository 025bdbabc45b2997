package memstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
)

// The crash test runs this test binary again as a child that writes facts as fast as it
// can and prints the id of each acknowledged write. The parent kills it with SIGKILL in
// the middle of the stream, reopens the log and checks that every acknowledged write is
// there and that the store still accepts writes.
const crashChildEnv = "DAY1_MEMSTORE_CRASH_CHILD"

func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("helper process for TestCrashLosesNoAcknowledgedWrite; runs only as its child")
	}
	s, err := New(Options{Path: dir})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		id := fmt.Sprintf("f%06d", i)
		recs := []store.Record{store.Fact{ID: id, Text: fmt.Sprintf("fact number %d about subsystem %d", i, i%17),
			Embedding: []float32{1, float32(i%7) + 1, float32(i%5) + 1}}}
		if i%10 == 0 {
			recs = append(recs, store.Observation{ID: "o" + id, Type: store.ObsToolUse, Summary: "ran tool " + id})
		}
		if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
			fmt.Fprintln(out, "error:", err)
			out.Flush()
			os.Exit(3)
		}
		fmt.Fprintln(out, "ack", id)
		out.Flush()
	}
}

func TestCrashLosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process; skipped with -short")
	}
	for round := range 3 {
		t.Run(fmt.Sprint("round", round), func(t *testing.T) {
			dir := t.TempDir()
			var acked []string
			// Two crashes into the same directory: recovery must also survive a second one.
			for crash := range 2 {
				acked = append(acked, crashOnce(t, dir, 50+round*40+crash*25)...)
			}
			s, err := New(Options{Path: dir})
			if err != nil {
				t.Fatalf("reopen after crash: %v", err)
			}
			defer s.Close()
			ctx := context.Background()
			for _, id := range acked {
				if _, err := s.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: id}); err != nil {
					t.Fatalf("acknowledged write %s lost: %v", id, err)
				}
			}
			if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "after", Text: "written after recovery"}}, store.PutOptions{}); err != nil {
				t.Fatalf("write after recovery: %v", err)
			}
		})
	}
}

// crashOnce starts the child, kills it after it has acknowledged at least n writes, and
// returns the acknowledged ids.
func crashOnce(t *testing.T, dir string, n int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(stdout)
	deadline := time.Now().Add(2 * time.Minute)
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "ack "); ok {
			acked = append(acked, id)
		} else if strings.HasPrefix(line, "error:") || strings.HasPrefix(line, "open:") {
			t.Fatalf("child: %s", line)
		}
		if len(acked) >= n || time.Now().After(deadline) {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Whatever the child printed before it died was acknowledged too.
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
			acked = append(acked, id)
		}
	}
	cmd.Wait()
	if len(acked) < n {
		t.Fatalf("child acknowledged only %d writes", len(acked))
	}
	return acked
}

func TestTornTailIsDropped(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	writeLoggedFacts(t, dir, 5)
	path := filepath.Join(dir, logName)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mangle func(f *os.File, size int64) error
		want   int // facts that survive
	}{
		{"half a frame header", func(f *os.File, size int64) error { _, err := f.WriteAt([]byte{9, 0, 0}, size); return err }, 5},
		{"frame cut short", func(f *os.File, size int64) error {
			_, err := f.WriteAt([]byte{200, 0, 0, 0, 1, 2, 3, 4, '{', '"'}, size)
			return err
		}, 5},
		{"last frame corrupted", func(f *os.File, size int64) error { _, err := f.WriteAt([]byte{'X'}, size-2); return err }, 4},
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.mangle(f, info.Size()); err != nil {
				t.Fatal(err)
			}
			f.Close()
			var logged strings.Builder
			s, err := New(Options{Path: dir, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if err != nil {
				t.Fatalf("open with torn tail: %v", err)
			}
			defer s.Close()
			got, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != c.want {
				t.Fatalf("got %d facts after recovery, want %d", len(got), c.want)
			}
			if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "new", Text: "after repair"}}, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if l := logged.String(); !strings.Contains(l, "cut a torn log tail") || !strings.Contains(l, logName) {
				t.Errorf("the log does not say the tail was cut:\n%s", l)
			}
			// The tail was cut: what was written after it is read back.
			s.Close()
			s, err = New(Options{Path: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact}); err != nil || len(got) != c.want+1 {
				t.Fatalf("after a write and a reopen: %d facts, %v; want %d", len(got), err, c.want+1)
			}
		})
	}
}

// writeLoggedFacts writes n facts, one batch each, to a durable store in dir and
// closes it.
func writeLoggedFacts(t *testing.T, dir string, n int) {
	t.Helper()
	s, err := New(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := s.Put(context.Background(), store.DefaultBranch, []store.Record{store.Fact{ID: fmt.Sprint("f", i), Text: fmt.Sprint("text ", i, " words")}}, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestEntryThatCannotBeReplayedFailsOpen(t *testing.T) {
	dir := t.TempDir()
	// Enough entries that several are decoded ahead of the one that fails.
	writeLoggedFacts(t, dir, 50)
	path := filepath.Join(dir, logName)
	bad, err := json.Marshal(entry{Seq: 1000, Ops: []op{putOp(store.Fact{ID: "x", Text: "on a branch that never was"})}})
	if err != nil {
		t.Fatal(err)
	}
	bad = []byte(strings.Replace(string(bad), `"t":1,`, `"t":1,"n":"nowhere",`, 1))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(appendFrame(nil, bad)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(Options{Path: dir})
	if err == nil || !strings.Contains(err.Error(), "replaying log entry 52") || !strings.Contains(err.Error(), `unknown branch "nowhere"`) {
		t.Fatalf("New = %v; want an error replaying entry 52, a put on an unknown branch", err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("a failed open changed the log: %d bytes, then %d", len(before), len(after))
	}
}
