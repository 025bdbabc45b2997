package day1_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/faultproxy"
	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/store/matrixone"
)

// privateServer is a MatrixOne server of the test's own, started with
// scripts/matrixone.sh beside the shared one (other ports, its own data in a
// temporary folder), so that the test may kill it.
type privateServer struct {
	t    *testing.T
	port int
	run  string // run folder: config, data, log, pid
}

// faultBinary returns the cached mo-service binary that scripts/matrixone.sh built, or
// "".
func faultBinary() string {
	home := os.Getenv("MO_HOME")
	if home == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			cache = filepath.Join(h, ".cache")
		}
		home = filepath.Join(cache, "day1-matrixone")
	}
	bins, _ := filepath.Glob(filepath.Join(home, "bin", "mo-service-*"))
	for _, b := range bins {
		if st, err := os.Stat(b); err == nil && st.Mode().IsRegular() && !strings.HasSuffix(b, ".partial") {
			return b
		}
	}
	return ""
}

// startPrivateServer starts the test's own server, or skips saying what it needs.
func startPrivateServer(t *testing.T) *privateServer {
	t.Helper()
	if os.Getenv("DAY1_TEST_DSN") == "" {
		t.Skip("DAY1_TEST_DSN is not set; the fault tests run with MatrixOne: build and start it with scripts/matrixone.sh start and set DAY1_TEST_DSN='root:111@tcp(127.0.0.1:6001)/'")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the fault tests need bash to run scripts/matrixone.sh")
	}
	if _, err := os.Stat("scripts/matrixone.sh"); err != nil {
		t.Skip("the fault tests need scripts/matrixone.sh")
	}
	if faultBinary() == "" {
		t.Skip("the fault tests need the cached MatrixOne binary: run scripts/matrixone.sh build (several minutes, once)")
	}
	s := &privateServer{t: t, port: freeOffsetPort(t), run: t.TempDir()}
	t.Cleanup(s.kill) // before the temporary folder is removed
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// freeOffsetPort finds a SQL port whose whole port family (see scripts/matrixone.sh)
// is free: 6001 + an offset from 100 to 880, in steps of 20, starting at one derived
// from the process id, so that two test processes rarely try the same.
func freeOffsetPort(t *testing.T) int {
	t.Helper()
	first := os.Getpid() % 40
	for i := range 40 {
		off := 100 + 20*((first+i)%40)
		free := true
		for _, base := range []int{6001, 7001, 18000, 18001, 18002, 18003, 19000, 19001, 19002, 32000, 32001, 32002} {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+off))
			if err != nil {
				free = false
				break
			}
			ln.Close()
		}
		if free {
			return 6001 + off
		}
	}
	t.Skip("no free port family for a private MatrixOne server")
	return 0
}

func (s *privateServer) script(args ...string) ([]byte, error) {
	cmd := exec.Command("bash", append([]string{"scripts/matrixone.sh"}, args...)...)
	cmd.Env = append(os.Environ(), "MO_PORT="+strconv.Itoa(s.port), "MO_RUN="+s.run, "MO_WAIT=240")
	return cmd.CombinedOutput()
}

// start starts (or restarts) the server and waits until it runs statements.
func (s *privateServer) start() error {
	began := time.Now()
	if out, err := s.script("start"); err != nil {
		return fmt.Errorf("starting the private server: %v\n%s", err, out)
	}
	db, err := sql.Open("mysql", s.dsn(""))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		_, err := db.Exec("CREATE DATABASE IF NOT EXISTS day1_fault_probe")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the private server does not run statements: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Logf("private server on port %d ready in %s", s.port, time.Since(began).Round(time.Millisecond))
	return nil
}

// pid returns the server's process id, or 0.
func (s *privateServer) pid() int {
	b, err := os.ReadFile(filepath.Join(s.run, "mo.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// kill sends SIGKILL and waits until the process is gone.
func (s *privateServer) kill() {
	pid := s.pid()
	if pid <= 0 {
		return
	}
	syscall.Kill(pid, syscall.SIGKILL)
	// A large process takes a while to die on a loaded machine. A dead one that is not
	// reaped yet is a zombie, which still answers signal 0, and its main thread is a
	// zombie before its other threads let go of its sockets: it is gone once it is a
	// zombie and its port refuses connections.
	for range 1500 {
		if syscall.Kill(pid, 0) != nil || zombie(pid) && !listening(s.port) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listening reports whether a server accepts connections on the local port.
func listening(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// zombie reports whether process pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] == 'Z'
	}
	return false
}

func (s *privateServer) dsn(db string) string {
	return fmt.Sprintf("root:111@tcp(127.0.0.1:%d)/%s", s.port, db)
}

// faultClient opens a Client on the private server through a proxy, with retries long
// enough to ride out a restart.
func faultClient(t *testing.T, addr, db string) *day1.Client {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "root", "111", "tcp", addr, db
	st, err := matrixone.Open(context.Background(), matrixone.Options{
		DSN: cfg.FormatDSN(), Dimensions: llm.DefaultDimensions, RetryTimeout: 3 * time.Minute,
	})
	if err != nil {
		t.Fatalf("matrixone.Open: %v", err)
	}
	c, err := day1.Open(context.Background(), day1.Config{Store: st})
	if err != nil {
		t.Fatalf("day1.Open: %v", err)
	}
	t.Cleanup(func() {
		c.Close()
		st.Close()
	})
	return c
}

// killRule arms a kill of the server at the COMMIT of the first transaction that sent
// a statement containing marker: before the COMMIT is forwarded (the transaction is
// complete but not committed), or right after it is forwarded (the kill races the
// commit). The server restarts in the background; the returned function waits for
// it and reports whether the kill happened.
func killRule(t *testing.T, srv *privateServer, p *faultproxy.Proxy, marker string, afterForward bool) func() bool {
	var mu sync.Mutex
	armed := map[int64]bool{}
	fired := false
	restarted := make(chan error, 1)
	restart := func() { restarted <- srv.start() }
	p.OnQuery(func(c *faultproxy.Conn, q string) faultproxy.Action {
		mu.Lock()
		defer mu.Unlock()
		if fired {
			return faultproxy.Forward
		}
		if strings.Contains(q, marker) {
			armed[c.ID()] = true
		}
		if !armed[c.ID()] || !strings.EqualFold(strings.TrimSpace(q), "commit") {
			return faultproxy.Forward
		}
		fired = true
		if afterForward {
			go func() {
				time.Sleep(time.Millisecond)
				srv.kill()
				restart()
			}()
			return faultproxy.Forward
		}
		srv.kill()
		go restart()
		return faultproxy.Drop
	})
	return func() bool {
		t.Helper()
		mu.Lock()
		f := fired
		mu.Unlock()
		p.OnQuery(nil)
		if f {
			if err := <-restarted; err != nil {
				t.Fatal(err)
			}
		}
		return f
	}
}

// faultCase is one operation killed at its commit, and what must hold afterwards.
type faultCase struct {
	name   string
	marker string // a statement of the operation's transaction contains it
	setup  func(t *testing.T) (op func() error, check func(t *testing.T))
}

// TestServerKilled kills the test's own MatrixOne server with SIGKILL at the commit of
// a batch write, a merge, a handoff accept and a bundle import, each twice: before
// the COMMIT reaches the server, and racing it. The server restarts at once; each
// operation must succeed (the store retries, or learns that the first attempt
// committed) and be applied exactly once; a writer running all along, on a branch of
// its own, must find every write it was told succeeded. Then the server restarts under
// an idle client, whose next reads must succeed.
//
// The writer's branch is not main, the merges' target. Its writes share the store's
// commit lock with every operation, so they still interleave with each one's commit;
// but a merge into a branch written every 50 ms fails once the target has moved
// during each of its attempts (merge.DefaultRetries), which a slow machine makes
// likely and which is not what this test is about.
func TestServerKilled(t *testing.T) {
	srv := startPrivateServer(t)
	p, err := faultproxy.Start(fmt.Sprintf("127.0.0.1:%d", srv.port))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const db = "day1_faults"
	c := faultClient(t, p.Addr(), db)
	ctx := context.Background()

	// A writer, one fact at a time, all along.
	const bgBranch = "background"
	if _, err := c.Branch(ctx, bgBranch, day1.BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	var (
		bgMu   sync.Mutex
		acked  []string
		failed []error
	)
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			text := fmt.Sprintf("background fact %d", i)
			_, err := c.WriteFact(ctx, day1.Fact{Branch: bgBranch, Text: text})
			bgMu.Lock()
			if err != nil {
				failed = append(failed, err)
			} else {
				acked = append(acked, text)
			}
			bgMu.Unlock()
		}
	}()

	var cases []faultCase
	for _, mode := range []string{"before commit", "at commit"} {
		tag := strings.ReplaceAll(mode, " ", "-")
		cases = append(cases,
			faultCase{name: "batch write " + mode, marker: "batch " + tag + " fact 0",
				setup: func(t *testing.T) (func() error, func(*testing.T)) {
					var facts []day1.Fact
					for i := range 20 {
						facts = append(facts, day1.Fact{Text: fmt.Sprintf("batch %s fact %d", tag, i)})
					}
					op := func() error {
						res, err := c.WriteFacts(ctx, facts)
						for i, r := range res {
							// A blind retry of a committed batch reports deduplicated.
							if r.Outcome == day1.Deduplicated {
								t.Errorf("fact %d: deduplicated; the batch was applied by this call", i)
							}
						}
						return err
					}
					return op, func(t *testing.T) { wantTexts(t, c, "main", "batch "+tag+" ", 20) }
				}},
			faultCase{name: "merge " + mode, marker: "INSERT INTO day1_merges",
				setup: func(t *testing.T) (func() error, func(*testing.T)) {
					src := "feature-" + tag
					if _, err := c.Branch(ctx, src, day1.BranchOptions{}); err != nil {
						t.Fatal(err)
					}
					var facts []day1.Fact
					for i := range 10 {
						facts = append(facts, day1.Fact{Branch: src, Text: fmt.Sprintf("merge %s fact %d", tag, i)})
					}
					if _, err := c.WriteFacts(ctx, facts); err != nil {
						t.Fatal(err)
					}
					op := func() error {
						_, err := c.Merge(ctx, day1.MergeRequest{Source: src, Target: "main", MarkMerged: true})
						return err
					}
					return op, func(t *testing.T) {
						wantTexts(t, c, "main", "merge "+tag+" ", 10)
						ms, err := c.Merges(ctx, day1.MergeFilter{Source: src})
						if err != nil || len(ms) != 1 {
							t.Errorf("merge records of %s: %d, %v; want 1", src, len(ms), err)
						}
						b, err := c.GetBranch(ctx, src)
						if err != nil || b.Status != day1.BranchMerged {
							t.Errorf("branch %s: %s, %v; want merged", src, b.Status, err)
						}
					}
				}},
			faultCase{name: "handoff accept " + mode, marker: "accepted",
				setup: func(t *testing.T) (func() error, func(*testing.T)) {
					task, from, to := "task-"+tag, "agent-a-"+tag, "agent-b-"+tag
					if _, err := c.CreateTask(ctx, day1.TaskSpec{Name: task, Objectives: []string{"find the cause", "fix it"}}); err != nil {
						t.Fatal(err)
					}
					m, err := c.JoinTask(ctx, day1.JoinRequest{Task: task, Agent: from})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := c.WriteFacts(ctx, []day1.Fact{{Branch: m.Branch, Text: "handoff " + tag + " finding", Status: day1.FactVerified}}); err != nil {
						t.Fatal(err)
					}
					h, err := c.Handoff(ctx, day1.HandoffRequest{Task: task, Type: day1.HandoffFull, FromAgent: from, ToAgent: to,
						Instructions: "carry on"})
					if err != nil {
						t.Fatal(err)
					}
					op := func() error {
						_, err := c.AcceptHandoff(ctx, day1.AcceptRequest{Handoff: h.ID, Agent: to})
						return err
					}
					return op, func(t *testing.T) {
						got, err := c.GetHandoff(ctx, h.ID)
						if err != nil || got.Status != day1.HandoffAccepted {
							t.Errorf("handoff: %s, %v; want accepted", got.Status, err)
						}
						tk, err := c.GetTask(ctx, task)
						if err != nil {
							t.Fatal(err)
						}
						active := 0
						for _, m := range tk.Members {
							if m.Agent == to && m.Status == "active" {
								active++
							}
						}
						if active != 1 || tk.Owner != to {
							t.Errorf("task after the accept: %d active membership(s) of %s, owner %q; want 1 and %s", active, to, tk.Owner, to)
						}
					}
				}},
			faultCase{name: "bundle import " + mode, marker: "bundle " + tag + " fact 0",
				setup: func(t *testing.T) (func() error, func(*testing.T)) {
					src, err := day1.Open(ctx, day1.Config{})
					if err != nil {
						t.Fatal(err)
					}
					defer src.Close()
					var facts []day1.Fact
					for i := range 10 {
						facts = append(facts, day1.Fact{Text: fmt.Sprintf("bundle %s fact %d", tag, i), Status: day1.FactVerified})
					}
					if _, err := src.WriteFacts(ctx, facts); err != nil {
						t.Fatal(err)
					}
					var file bytes.Buffer
					if _, err := src.WriteBundle(ctx, &file, day1.CreateBundleRequest{Name: "b " + tag, Branch: "main"}, false); err != nil {
						t.Fatal(err)
					}
					branch := "imported-" + tag
					op := func() error {
						res, err := c.ImportBundle(ctx, day1.ImportBundleRequest{From: &file, Branch: branch, CreateBranch: true})
						if err == nil && res.Created != 10 {
							t.Errorf("import: %d created; want 10", res.Created)
						}
						return err
					}
					return op, func(t *testing.T) { wantTexts(t, c, branch, "bundle "+tag+" ", 10) }
				}},
		)
	}
	for _, fc := range cases {
		t.Run(fc.name, func(t *testing.T) {
			op, check := fc.setup(t)
			wait := killRule(t, srv, p, fc.marker, strings.HasSuffix(fc.name, "at commit"))
			began := time.Now()
			err := op()
			fired := wait()
			if !fired {
				t.Fatalf("no transaction sent %q: the server was not killed (op error: %v)", fc.marker, err)
			}
			if err != nil {
				t.Fatalf("the operation failed across the kill (%s): %v", time.Since(began).Round(time.Millisecond), err)
			}
			t.Logf("done in %s across a kill and restart", time.Since(began).Round(time.Millisecond))
			check(t)
		})
	}

	close(stop)
	bg.Wait()
	t.Run("acknowledged writes", func(t *testing.T) {
		facts, err := c.ListFacts(ctx, day1.ListOptions{Branch: bgBranch})
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]int{}
		for _, f := range facts {
			have[f.Text]++
		}
		bgMu.Lock()
		defer bgMu.Unlock()
		for _, text := range acked {
			if have[text] != 1 {
				t.Errorf("%q was acknowledged and is stored %d times", text, have[text])
			}
		}
		for _, err := range failed {
			t.Errorf("a background write failed: %v", err)
		}
		t.Logf("%d background writes acknowledged, all there", len(acked))
	})

	t.Run("restart while idle", func(t *testing.T) {
		// A client on the server directly, with the default retry bound.
		idle, err := day1.Open(ctx, day1.Config{DSN: srv.dsn(db)})
		if err != nil {
			t.Fatal(err)
		}
		defer idle.Close()
		read := func() error {
			if _, err := idle.ListFacts(ctx, day1.ListOptions{Branch: "main"}); err != nil {
				return err
			}
			if _, err := idle.Search(ctx, day1.SearchQuery{Branch: bgBranch, Text: "background fact"}); err != nil {
				return err
			}
			if _, err := idle.GetTask(ctx, "task-at-commit"); err != nil {
				return err
			}
			_, err := idle.Branches(ctx, day1.BranchFilter{})
			return err
		}
		for range 4 { // several pooled connections
			if err := read(); err != nil {
				t.Fatal(err)
			}
		}
		for round := range 2 {
			srv.kill()
			if err := srv.start(); err != nil {
				t.Fatal(err)
			}
			if err := read(); err != nil {
				t.Fatalf("round %d: a read after the restart: %v", round, err)
			}
			if _, err := idle.WriteFact(ctx, day1.Fact{Text: fmt.Sprintf("written after restart %d", round)}); err != nil {
				t.Fatalf("round %d: a write after the restart: %v", round, err)
			}
		}
	})
}

// wantTexts checks that branch holds exactly n facts whose text starts with prefix,
// each once.
func wantTexts(t *testing.T, c *day1.Client, branch, prefix string, n int) {
	t.Helper()
	facts, err := c.ListFacts(context.Background(), day1.ListOptions{Branch: branch})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, f := range facts {
		if strings.HasPrefix(f.Text, prefix) {
			seen[f.Text]++
		}
	}
	if len(seen) != n {
		t.Errorf("branch %s holds %d facts %q...; want %d (all or nothing, and here all)", branch, len(seen), prefix, n)
	}
	for text, k := range seen {
		if k != 1 {
			t.Errorf("%q is stored %d times", text, k)
		}
	}
}
