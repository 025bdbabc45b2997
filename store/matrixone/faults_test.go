package matrixone_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1/internal/faultproxy"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
)

// proxied opens a store on a fresh database of the test server, reached through a
// fault-injecting proxy.
func proxied(t *testing.T, opts matrixone.Options) (*matrixone.Store, *faultproxy.Proxy) {
	t.Helper()
	cfg, err := mysql.ParseDSN(testDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.Start(cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	cfg.Addr = p.Addr()
	opts.DSN = cfg.FormatDSN()
	if opts.Dimensions == 0 {
		opts.Dimensions = 8
	}
	s, err := matrixone.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("matrixone.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, p
}

// atCommitOf returns an OnQuery rule that applies act, once, to the COMMIT of the
// first transaction that sent a statement containing marker; fired reports whether it
// did.
func atCommitOf(marker string, act faultproxy.Action) (func(*faultproxy.Conn, string) faultproxy.Action, func() bool) {
	var mu sync.Mutex
	armed := map[int64]bool{}
	done := false
	rule := func(c *faultproxy.Conn, q string) faultproxy.Action {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return faultproxy.Forward
		}
		if strings.Contains(q, marker) {
			armed[c.ID()] = true
		}
		if armed[c.ID()] && strings.EqualFold(strings.TrimSpace(q), "commit") {
			done = true
			return act
		}
		return faultproxy.Forward
	}
	return rule, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return done
	}
}

// versions counts the stored versions of a fact on main, tombstones included.
func versions(t *testing.T, s *matrixone.Store, id string) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRow("SELECT COUNT(*) FROM facts_b0 WHERE id = ?", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLostCommitAckPut: the server commits a batch but the acknowledgement is lost.
// Put must learn that it committed and report what it did (created, not
// deduplicated by a blind retry), with one version per record.
func TestLostCommitAckPut(t *testing.T) {
	t.Parallel()
	s, p := proxied(t, matrixone.Options{})
	ctx := context.Background()
	rule, fired := atCommitOf("INSERT INTO `facts_b0`", faultproxy.DropReply)
	p.OnQuery(rule)
	recs := []store.Record{
		store.Fact{ID: "f1", Text: "the build uses go 1.25", Embedding: []float32{1, 0, 0, 0, 0, 0, 0, 0}},
		store.Fact{ID: "f2", Text: "tests run with the race detector", Embedding: []float32{0, 1, 0, 0, 0, 0, 0, 0}},
	}
	res, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{})
	if err != nil {
		t.Fatalf("Put after a lost commit acknowledgement: %v", err)
	}
	if !fired() {
		t.Fatal("the proxy never saw the batch's COMMIT")
	}
	for i, r := range res {
		if r.Outcome != store.Created {
			t.Errorf("record %d: outcome %s; want created (the first attempt committed)", i, r.Outcome)
		}
	}
	for _, id := range []string{"f1", "f2"} {
		if n := versions(t, s, id); n != 1 {
			t.Errorf("fact %s has %d versions; want 1", id, n)
		}
	}
}

// TestLostCommitAckDocs: a document created with DocCreate and then updated, each
// time losing the COMMIT's acknowledgement. A blind retry would fail the create's
// precondition, or bump the version twice.
func TestLostCommitAckDocs(t *testing.T) {
	t.Parallel()
	s, p := proxied(t, matrixone.Options{})
	ctx := context.Background()
	rule, fired := atCommitOf("INSERT INTO day1_docs", faultproxy.DropReply)
	p.OnQuery(rule)
	doc := store.Doc{Collection: "tasks", ID: "t1", Data: []byte(`{"n":1}`)}
	got, err := s.WriteDocs(ctx, []store.DocWrite{{Doc: doc, Cond: store.DocCreate}})
	if err != nil {
		t.Fatalf("WriteDocs(create) after a lost commit acknowledgement: %v", err)
	}
	if !fired() {
		t.Fatal("the proxy never saw the create's COMMIT")
	}
	if got[0].Version != 1 {
		t.Errorf("created version %d; want 1", got[0].Version)
	}
	rule, fired = atCommitOf("UPDATE day1_docs", faultproxy.DropReply)
	p.OnQuery(rule)
	doc.Data = []byte(`{"n":2}`)
	got, err = s.WriteDocs(ctx, []store.DocWrite{{Doc: doc}})
	if err != nil {
		t.Fatalf("WriteDocs(upsert) after a lost commit acknowledgement: %v", err)
	}
	if !fired() {
		t.Fatal("the proxy never saw the update's COMMIT")
	}
	d, err := s.GetDoc(ctx, "tasks", "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Version != 2 || d.Version != 2 {
		t.Errorf("after one update: returned version %d, stored %d; want 2 and 2", got[0].Version, d.Version)
	}
}

// TestLostCommitAckDelete: a delete whose acknowledgement is lost succeeds (a retry
// would find nothing to delete) and leaves one tombstone.
func TestLostCommitAckDelete(t *testing.T) {
	t.Parallel()
	s, p := proxied(t, matrixone.Options{})
	ctx := context.Background()
	if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "f1", Text: "gone soon"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	rule, fired := atCommitOf("INSERT INTO `facts_b0`", faultproxy.DropReply)
	p.OnQuery(rule)
	if err := s.Delete(ctx, store.DefaultBranch, []store.Ref{{Kind: store.KindFact, ID: "f1"}}); err != nil {
		t.Fatalf("Delete after a lost commit acknowledgement: %v", err)
	}
	if !fired() {
		t.Fatal("the proxy never saw the delete's COMMIT")
	}
	if _, err := s.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: "f1"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get after the delete: %v; want ErrNotFound", err)
	}
	if n := versions(t, s, "f1"); n != 2 {
		t.Errorf("fact f1 has %d versions; want 2 (the fact and one tombstone)", n)
	}
}

// TestCommitUnknown: when the acknowledgement is lost and the token cannot be looked
// up within RetryTimeout, the write fails with ErrCommitUnknown, not with a guess;
// the data is all there (the server did commit).
func TestCommitUnknown(t *testing.T) {
	t.Parallel()
	s, p := proxied(t, matrixone.Options{RetryTimeout: 500 * time.Millisecond})
	ctx := context.Background()
	rule, fired := atCommitOf("INSERT INTO `facts_b0`", faultproxy.DropReply)
	p.OnQuery(func(c *faultproxy.Conn, q string) faultproxy.Action {
		if strings.Contains(q, "FROM day1_txns WHERE token") {
			return faultproxy.Drop
		}
		return rule(c, q)
	})
	recs := []store.Record{store.Fact{ID: "a", Text: "one"}, store.Fact{ID: "b", Text: "two"}}
	_, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{})
	if !errors.Is(err, matrixone.ErrCommitUnknown) {
		t.Fatalf("Put whose commit cannot be checked: %v; want ErrCommitUnknown", err)
	}
	if store.IsRetryable(err) {
		t.Error("ErrCommitUnknown must not be reported retryable")
	}
	if !fired() {
		t.Fatal("the proxy never saw the COMMIT")
	}
	p.OnQuery(nil)
	for _, id := range []string{"a", "b"} {
		if n := versions(t, s, id); n != 1 {
			t.Errorf("fact %s has %d versions; want 1 (the commit went through)", id, n)
		}
	}
}

// TestDroppedMidTransaction: the connection drops at a statement inside the
// transaction, before the server sees it. The write is retried whole and applied once.
func TestDroppedMidTransaction(t *testing.T) {
	t.Parallel()
	for _, marker := range []string{"INSERT INTO day1_txns", "INSERT INTO `facts_b0`", "UPDATE day1_branches SET head"} {
		t.Run(marker, func(t *testing.T) {
			s, p := proxied(t, matrixone.Options{})
			var once sync.Once
			fired := false
			p.OnQuery(func(c *faultproxy.Conn, q string) faultproxy.Action {
				act := faultproxy.Forward
				if strings.Contains(q, marker) {
					once.Do(func() { act, fired = faultproxy.Drop, true })
				}
				return act
			})
			res, err := s.Put(context.Background(), store.DefaultBranch, []store.Record{store.Fact{ID: "x", Text: "once only"}}, store.PutOptions{})
			if err != nil {
				t.Fatalf("Put: %v", err)
			}
			if !fired {
				t.Fatalf("no statement contained %q", marker)
			}
			if res[0].Outcome != store.Created || versions(t, s, "x") != 1 {
				t.Errorf("outcome %s with %d versions; want created with 1", res[0].Outcome, versions(t, s, "x"))
			}
		})
	}
}

// TestCutAfterBytes cuts the connection in the middle of a packet, at several points
// of a batch write: every batch ends applied exactly once.
func TestCutAfterBytes(t *testing.T) {
	t.Parallel()
	s, p := proxied(t, matrixone.Options{})
	ctx := context.Background()
	for i, n := range []int64{0, 40, 200, 700, 1500, 3000, 6000} {
		var recs []store.Record
		for j := range 20 {
			recs = append(recs, store.Fact{ID: fmt.Sprintf("c%d_%d", i, j), Text: fmt.Sprintf("fact %d of batch %d", j, i)})
		}
		p.CutAfter(n)
		res, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{})
		p.CutAfter(-1)
		if err != nil {
			t.Fatalf("Put with a cut after %d bytes: %v", n, err)
		}
		for j, r := range res {
			if r.Outcome != store.Created {
				t.Errorf("cut after %d: record %d %s; want created", n, j, r.Outcome)
			}
			if v := versions(t, s, r.Record.RecordID()); v != 1 {
				t.Errorf("cut after %d: %s has %d versions", n, r.Record.RecordID(), v)
			}
		}
	}
	if p.Cuts() == 0 {
		t.Error("the proxy cut no connection")
	}
}

// TestIdleConnectionsClosed: every pooled connection is closed under an idle
// client; the next reads and writes succeed on fresh connections.
func TestIdleConnectionsClosed(t *testing.T) {
	t.Parallel()
	s, p := proxied(t, matrixone.Options{})
	ctx := context.Background()
	if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "k", Text: "kept across reconnects"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// Several connections in the pool.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
		}()
	}
	wg.Wait()
	for round := range 3 {
		if n := p.CloseAll(); n == 0 {
			t.Fatalf("round %d: no connection to close", round)
		}
		if _, err := s.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: "k"}); err != nil {
			t.Fatalf("round %d: Get after the connections closed: %v", round, err)
		}
		if _, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact}); err != nil {
			t.Fatalf("round %d: List: %v", round, err)
		}
		if _, err := s.Search(ctx, store.View{}, store.SearchQuery{Text: "kept"}); err != nil {
			t.Fatalf("round %d: Search: %v", round, err)
		}
		if _, err := s.ListBranches(ctx, store.BranchFilter{}); err != nil {
			t.Fatalf("round %d: ListBranches: %v", round, err)
		}
		p.CloseAll()
		if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: fmt.Sprintf("w%d", round), Text: "a write after"}}, store.PutOptions{}); err != nil {
			t.Fatalf("round %d: Put: %v", round, err)
		}
	}
}

// BenchmarkPutOne is one write transaction of a single new fact: what the commit
// token's insert adds to.
func BenchmarkPutOne(b *testing.B) {
	s := openTest(b, testDatabase(b))
	defer s.Close()
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		rec := store.Fact{ID: fmt.Sprintf("b%d", i), Text: fmt.Sprintf("benchmark fact number %d", i)}
		if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{rec}, store.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRetriesAreLogged checks that a read retried after a lost connection is logged
// with the operation and the attempt, and answers.
func TestRetriesAreLogged(t *testing.T) {
	t.Parallel()
	var logged strings.Builder
	var mu sync.Mutex
	s, p := proxied(t, matrixone.Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil))})
	var once sync.Once
	fired := false
	p.OnQuery(func(c *faultproxy.Conn, q string) faultproxy.Action {
		act := faultproxy.Forward
		if strings.Contains(q, "FROM day1_snapshots WHERE name") {
			once.Do(func() { act, fired = faultproxy.Drop, true })
		}
		return act
	})
	if _, err := s.GetSnapshot(context.Background(), "none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetSnapshot after a lost connection: %v; want store.ErrNotFound", err)
	}
	mu.Lock()
	l := logged.String()
	mu.Unlock()
	if !fired || !strings.Contains(l, "retrying after a transient failure") || !strings.Contains(l, "op=GetSnapshot") || !strings.Contains(l, "attempt=1") {
		t.Errorf("fired %v; the log:\n%s", fired, l)
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
