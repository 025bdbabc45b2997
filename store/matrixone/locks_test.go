package matrixone_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/day1ai/day1/internal/faultproxy"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
)

// TestWritesToOtherBranchesGoOn holds a write to one branch after its reads, with its
// branch lock taken and the commit lock not yet: writes, deletes, forks and merges of
// other branches complete meanwhile, and a second write to the held branch waits for
// the first one and then sees it.
func TestWritesToOtherBranchesGoOn(t *testing.T) {
	s := openTest(t, testDatabase(t))
	defer s.Close()
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c"} {
		if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: name}); err != nil {
			t.Fatalf("CreateBranch(%s): %v", name, err)
		}
	}
	put := func(ctx context.Context, branch, id, text string) error {
		_, err := s.Put(ctx, branch, []store.Record{store.Fact{ID: id, Text: text, Confidence: 1}}, store.PutOptions{})
		return err
	}
	if err := put(ctx, "b", "old", "a fact to delete"); err != nil {
		t.Fatal(err)
	}
	if err := put(ctx, "c", "c1", "a fact to merge"); err != nil {
		t.Fatal(err)
	}

	var once sync.Once
	held, release := make(chan struct{}), make(chan struct{})
	matrixone.SetBeforeSeal(s, func(op string, branches []string) {
		if op == "Put" && slices.Equal(branches, []string{"a"}) {
			once.Do(func() {
				close(held)
				<-release
			})
		}
	})
	first := make(chan error, 1)
	go func() { first <- put(ctx, "a", "a1", "the first write to a") }()
	select {
	case <-held:
	case err := <-first:
		t.Fatalf("the first write to a returned before its hook: %v", err)
	}
	second := make(chan error, 1)
	go func() { second <- put(ctx, "a", "a2", "the second write to a") }()

	// The held write keeps a's lock only: all of these would wait for it if writes
	// were serialised store-wide.
	octx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := put(octx, "b", "b1", "a write to another branch"); err != nil {
		t.Fatalf("a write to b while a's write is held: %v", err)
	}
	if err := s.Delete(octx, "b", []store.Ref{{Kind: store.KindFact, ID: "old"}}); err != nil {
		t.Fatalf("a delete on b while a's write is held: %v", err)
	}
	if _, err := s.CreateBranch(octx, store.BranchSpec{Name: "d", From: "b"}); err != nil {
		t.Fatalf("a fork of b while a's write is held: %v", err)
	}
	cb, err := s.GetBranch(octx, "c")
	if err != nil {
		t.Fatal(err)
	}
	c1, err := s.Get(octx, store.View{Branch: "c"}, store.Ref{Kind: store.KindFact, ID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	mb, err := s.GetBranch(octx, store.DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyMerge(octx, store.MergePlan{Source: "c", Target: store.DefaultBranch, ExpectHead: mb.Head,
		SourceRev: cb.Head, Puts: []store.Record{c1}, Record: store.MergeRecord{Strategy: store.Native}}); err != nil {
		t.Fatalf("a merge of c into main while a's write is held: %v", err)
	}
	select {
	case err := <-second:
		t.Fatalf("the second write to a finished while the first held a's lock: %v", err)
	default:
	}

	close(release)
	for name, ch := range map[string]chan error{"first": first, "second": second} {
		if err := <-ch; err != nil {
			t.Fatalf("the %s write to a: %v", name, err)
		}
	}
	for _, c := range []struct {
		branch string
		ids    []string
	}{{"a", []string{"a1", "a2"}}, {"b", []string{"b1"}}, {"d", []string{"b1"}}, {store.DefaultBranch, []string{"c1"}}} {
		recs, err := s.List(ctx, store.View{Branch: c.branch}, store.ListQuery{Kind: store.KindFact})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.RecordID())
		}
		slices.Sort(got)
		if !slices.Equal(got, c.ids) {
			t.Errorf("facts on %s: got %v, want %v", c.branch, got, c.ids)
		}
	}
	// Revisions follow commit order: the writes that went on first have the lower ones.
	ab, err := s.GetBranch(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	bb, err := s.GetBranch(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if ab.Head <= bb.Head {
		t.Errorf("a's head %d is not after b's %d, though a committed last", ab.Head, bb.Head)
	}
}

// TestLockReadsTheCommittedBranch holds a write to main after it took main's lock,
// and starts a merge into main planned at main's head before that write: the merge
// waits for the lock, and the branch row its lock reads once the write has committed
// must carry the new head, so that the merge is refused as stale rather than applied
// over a write its plan never saw.
func TestLockReadsTheCommittedBranch(t *testing.T) {
	s := openTest(t, testDatabase(t))
	defer s.Close()
	ctx := context.Background()
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "side"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "side", []store.Record{store.Fact{ID: "s1", Text: "a fact from the side branch"}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	sb, err := s.GetBranch(ctx, "side")
	if err != nil {
		t.Fatal(err)
	}
	s1, err := s.Get(ctx, store.View{Branch: "side"}, store.FactRef("s1"))
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.GetBranch(ctx, store.DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}

	var once sync.Once
	held, release := make(chan struct{}), make(chan struct{})
	matrixone.SetBeforeSeal(s, func(op string, branches []string) {
		if op == "Put" && slices.Equal(branches, []string{store.DefaultBranch}) {
			once.Do(func() {
				close(held)
				<-release
			})
		}
	})
	write := make(chan error, 1)
	go func() {
		_, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "m1", Text: "a fact written to main meanwhile"}}, store.PutOptions{})
		write <- err
	}()
	select {
	case <-held:
	case err := <-write:
		t.Fatalf("the write to main returned before its hook: %v", err)
	}
	merged := make(chan error, 1)
	go func() {
		_, err := s.ApplyMerge(ctx, store.MergePlan{Source: "side", Target: store.DefaultBranch, ExpectHead: before.Head,
			SourceRev: sb.Head, Puts: []store.Record{s1}, Record: store.MergeRecord{Strategy: store.Native}})
		merged <- err
	}()
	// Give the merge time to reach main's lock; had it not, it reads the branch after
	// the write all the same, and must be refused either way.
	select {
	case err := <-merged:
		t.Fatalf("the merge into main returned while the write held main's lock: %v", err)
	case <-time.After(time.Second):
	}
	close(release)
	if err := <-write; err != nil {
		t.Fatalf("the write to main: %v", err)
	}
	if err := <-merged; !errors.Is(err, store.ErrStale) {
		t.Fatalf("the merge planned before the write: %v; want store.ErrStale", err)
	}
	after, err := s.GetBranch(ctx, store.DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}
	if after.Head <= before.Head {
		t.Errorf("main's head %d did not move past %d", after.Head, before.Head)
	}
	if _, err := s.Get(ctx, store.View{}, store.FactRef("s1")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(s1) on main after the refused merge: %v; want store.ErrNotFound", err)
	}
}

// TestWritesReadBeforeTheCommitLock follows the statements of one Put, one Delete and
// one ApplyMerge through a proxy: the branch locks come first, the reads the write
// decides on (for a Put the current versions, the facts with the same text and the
// near-duplicate candidates; for a Delete the current versions; for a merge the
// target's current versions and the source's embeddings of a lean plan) come next, and
// only then the commit lock, followed by the writes.
func TestWritesReadBeforeTheCommitLock(t *testing.T) {
	s, p := proxied(t, matrixone.Options{})
	ctx := context.Background()
	emb := []float32{1, 0, 0, 0, 0, 0, 0, 0}
	if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{store.Fact{ID: "old", Text: "an older fact", Embedding: emb}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// statementsOf runs op and returns the statements of the transaction that took
	// main's branch lock.
	statementsOf := func(op func() error) []string {
		var (
			mu    sync.Mutex
			conn  int64 = -1
			stmts []string
		)
		p.OnQuery(func(c *faultproxy.Conn, q string) faultproxy.Action {
			mu.Lock()
			defer mu.Unlock()
			if conn < 0 && strings.Contains(q, "FROM day1_branches WHERE name = 'main' FOR UPDATE") {
				conn = c.ID()
			}
			if c.ID() == conn {
				stmts = append(stmts, q)
			}
			return faultproxy.Forward
		})
		err := op()
		p.OnQuery(nil)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return stmts
	}
	// inOrder checks that every read comes before the commit lock and the write after it.
	inOrder := func(name string, stmts []string, reads []string, write string) {
		t.Helper()
		at := func(marker string) int {
			for i, q := range stmts {
				if strings.Contains(q, marker) {
					return i
				}
			}
			t.Fatalf("%s: no statement contains %q; it sent:\n%s", name, marker, strings.Join(stmts, "\n"))
			return -1
		}
		lock := at("FROM day1_state WHERE id = 1 FOR UPDATE")
		for _, read := range append([]string{"FROM day1_branches WHERE name = 'main' FOR UPDATE"}, reads...) {
			if i := at(read); i > lock {
				t.Errorf("%s: %q came after the commit lock (statement %d, lock at %d)", name, read, i, lock)
			}
		}
		if i := at(write); i < lock {
			t.Errorf("%s: %q (statement %d) came before the commit lock (%d)", name, write, i, lock)
		}
	}

	recs := []store.Record{
		store.Fact{ID: "old", Text: "an older fact, changed", Embedding: emb},
		store.Fact{ID: "new", Text: "a newer fact", Embedding: []float32{0.99, 0.1, 0, 0, 0, 0, 0, 0}},
	}
	put := statementsOf(func() error {
		_, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{DedupeThreshold: 0.9})
		return err
	})
	inOrder("Put", put, []string{"FROM `facts_b0` WHERE", "norm_key IN"}, "INSERT INTO `facts_b0`")
	del := statementsOf(func() error {
		return s.Delete(ctx, store.DefaultBranch, []store.Ref{{Kind: store.KindFact, ID: "old"}})
	})
	inOrder("Delete", del, []string{"FROM `facts_b0` WHERE"}, "INSERT INTO `facts_b0`")

	// A merge of a lean plan reads the target's current versions, the source's
	// embeddings and the target's whole versions of the facts it may equal (twin: the
	// same on both branches but for the embedding) before the commit lock.
	twin := store.Fact{ID: "twin", Text: "a fact on both branches", Embedding: []float32{0, 0, 1, 0, 0, 0, 0, 0}}
	if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{twin}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "side"}); err != nil {
		t.Fatal(err)
	}
	onMain, err := s.Get(ctx, store.View{}, store.FactRef("twin"))
	if err != nil {
		t.Fatal(err)
	}
	twinB := store.WithEmbedding(onMain, []float32{0, 0, 0, 1, 0, 0, 0, 0})
	sideFact := store.Fact{ID: "side", Text: "a fact from the side branch", Embedding: []float32{0, 1, 0, 0, 0, 0, 0, 0}}
	if _, err := s.Put(ctx, "side", []store.Record{sideFact, twinB}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	sb, err := s.GetBranch(ctx, "side")
	if err != nil {
		t.Fatal(err)
	}
	mb, err := s.GetBranch(ctx, store.DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}
	var plan []store.Record
	for _, id := range []string{"side", "twin"} {
		r, err := s.Get(ctx, store.View{Branch: "side"}, store.FactRef(id))
		if err != nil {
			t.Fatal(err)
		}
		plan = append(plan, store.WithEmbedding(r, nil))
	}
	merge := statementsOf(func() error {
		_, err := s.ApplyMerge(ctx, store.MergePlan{Source: "side", Target: store.DefaultBranch, ExpectHead: mb.Head,
			SourceRev: sb.Head, Puts: plan, Record: store.MergeRecord{Strategy: store.Native}})
		return err
	})
	source := regexp.MustCompile("FROM (`facts_b[1-9][0-9]*`)").FindStringSubmatch(strings.Join(merge, "\n"))
	if source == nil {
		t.Fatalf("the merge read no facts of the source; it sent:\n%s", strings.Join(merge, "\n"))
	}
	inOrder("ApplyMerge", merge, []string{"FROM `facts_b0` WHERE", "FROM " + source[1]}, "INSERT INTO `facts_b0`")
	lock := slices.IndexFunc(merge, func(q string) bool { return strings.Contains(q, "FROM day1_state WHERE id = 1 FOR UPDATE") })
	for i, q := range merge[lock:] {
		if strings.HasPrefix(q, "SELECT") && strings.Contains(q, "FROM `facts_") {
			t.Errorf("ApplyMerge read facts after the commit lock (statement %d): %s", lock+i, q)
		}
	}
	for _, want := range []store.Record{sideFact, twinB} {
		got, err := s.Get(ctx, store.View{}, store.RefOf(want))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(store.EmbeddingOf(got), store.EmbeddingOf(want)) {
			t.Errorf("the merged %s's embedding is %v, want the source's %v", want.RecordID(), store.EmbeddingOf(got), store.EmbeddingOf(want))
		}
	}
}
