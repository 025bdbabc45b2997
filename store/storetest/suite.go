package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/day1ai/day1/store"
)

// Harness makes stores for the suite.
type Harness struct {
	// New returns a new, empty store holding only the default branch "main". Called once
	// per subtest; the suite closes it.
	New func(t *testing.T) store.Store
	// Reopen closes s and opens the same data again; nil skips the durability subtests.
	Reopen func(t *testing.T, s store.Store) store.Store
	// Retained returns a new, empty store like New that keeps the history of the
	// last r only: reads at older instants fail with store.ErrTooOld. The store may
	// drop older history whenever it likes (compact), but never what a snapshot
	// reads. Its clock is now, which the test moves on past the retention. nil
	// skips the retention subtests.
	Retained func(t *testing.T, r time.Duration, now func() time.Time) store.Store
	// Unsupported lists features the store lacks, by subtest area name, with the
	// reason; those subtests t.Skip with the reason. A key is an area ("search") or an
	// area and a subtest ("search/hybrid weighted fusion").
	Unsupported map[string]string
}

// Run runs the conformance suite against the stores h makes. Each area is a subtest
// (write, search, messagesearch, branch, diff, merge, remerge, snapshot, timetravel, expiry, sessions, docs, alias, land,
// concurrency, durability, errors) whose own subtests each get a fresh store and run in parallel.
func Run(t *testing.T, h Harness) {
	if h.New == nil {
		t.Fatal("storetest: Harness.New is required")
	}
	areas := []struct {
		name string
		run  func(*testing.T, Harness)
	}{
		{"write", testWrite},
		{"search", testSearch},
		{"messagesearch", testMessageSearch},
		{"factcontext", testFactContext},
		{"branch", testBranch},
		{"diff", testDiff},
		{"merge", testMerge},
		{"remerge", testRemerge},
		{"snapshot", testSnapshot},
		{"timetravel", testTimeTravel},
		{"expiry", testExpiry},
		{"sessions", testSessions},
		{"docs", testDocs},
		{"alias", testAlias},
		{"land", testLand},
		{"concurrency", testConcurrency},
		{"durability", testDurability},
		{"errors", testErrors},
	}
	for _, a := range areas {
		t.Run(a.name, func(t *testing.T) {
			if reason, ok := h.Unsupported[a.name]; ok {
				t.Skip(reason)
			}
			a.run(t, h)
		})
	}
}

// env is one subtest's store and context.
type env struct {
	t   *testing.T
	h   Harness
	s   store.Store
	ctx context.Context
}

// subtest runs fn as a parallel subtest of an area with a fresh store, or skips it when
// the harness lists it as unsupported.
func subtest(t *testing.T, h Harness, area, name string, fn func(e *env)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		if reason, ok := h.Unsupported[area+"/"+name]; ok {
			t.Skip(reason)
		}
		t.Parallel()
		fn(newEnv(t, h))
	})
}

// newEnv opens a store for t and closes it when t ends.
func newEnv(t *testing.T, h Harness) *env {
	t.Helper()
	e := &env{t: t, h: h, s: h.New(t), ctx: t.Context()}
	if e.s == nil {
		t.Fatal("storetest: Harness.New returned a nil store")
	}
	t.Cleanup(func() {
		if err := e.s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// reopen replaces the store with a reopened one.
func (e *env) reopen() {
	e.t.Helper()
	s := e.h.Reopen(e.t, e.s)
	if s == nil {
		e.t.Fatal("storetest: Harness.Reopen returned a nil store")
	}
	e.s = s
}

// put writes recs to branch and fails the test on error.
func (e *env) put(branch string, opts store.PutOptions, recs ...store.Record) []store.PutResult {
	e.t.Helper()
	res, err := e.s.Put(e.ctx, branch, recs, opts)
	if err != nil {
		e.t.Fatalf("Put(%q, %d records): %v", branch, len(recs), err)
	}
	if len(res) != len(recs) {
		e.t.Fatalf("Put(%q) returned %d results for %d records", branch, len(res), len(recs))
	}
	return res
}

// put1 writes one record with default options.
func (e *env) put1(branch string, r store.Record) store.PutResult {
	e.t.Helper()
	return e.put(branch, store.PutOptions{}, r)[0]
}

// del deletes refs from branch and fails the test on error.
func (e *env) del(branch string, refs ...store.Ref) {
	e.t.Helper()
	if err := e.s.Delete(e.ctx, branch, refs); err != nil {
		e.t.Fatalf("Delete(%q, %v): %v", branch, refs, err)
	}
}

// get reads one record and fails the test on error.
func (e *env) get(v store.View, ref store.Ref) store.Record {
	e.t.Helper()
	r, err := e.s.Get(e.ctx, v, ref)
	if err != nil {
		e.t.Fatalf("Get(%+v, %v): %v", v, ref, err)
	}
	return r
}

// missing checks that ref is not visible in v.
func (e *env) missing(v store.View, ref store.Ref) {
	e.t.Helper()
	r, err := e.s.Get(e.ctx, v, ref)
	if !errors.Is(err, store.ErrNotFound) {
		e.t.Errorf("Get(%+v, %v) = %v, %v; want ErrNotFound", v, ref, r, err)
	}
}

// list runs a List and fails the test on error.
func (e *env) list(v store.View, q store.ListQuery) []store.Record {
	e.t.Helper()
	rs, err := e.s.List(e.ctx, v, q)
	if err != nil {
		e.t.Fatalf("List(%+v, %+v): %v", v, q, err)
	}
	return rs
}

// listIDs returns the ids a List returns, in order.
func (e *env) listIDs(v store.View, q store.ListQuery) []string {
	e.t.Helper()
	return recIDs(e.list(v, q))
}

// search runs a Search and fails the test on error.
func (e *env) search(v store.View, q store.SearchQuery) []store.Hit {
	e.t.Helper()
	hs, err := e.s.Search(e.ctx, v, q)
	if err != nil {
		e.t.Fatalf("Search(%+v, %+v): %v", v, q, err)
	}
	return hs
}

// branch creates a branch and fails the test on error.
func (e *env) branch(spec store.BranchSpec) store.Branch {
	e.t.Helper()
	b, err := e.s.CreateBranch(e.ctx, spec)
	if err != nil {
		e.t.Fatalf("CreateBranch(%+v): %v", spec, err)
	}
	return b
}

// fork creates branch name from parent's head.
func (e *env) fork(name, parent string) store.Branch {
	e.t.Helper()
	return e.branch(store.BranchSpec{Name: name, From: parent})
}

// getBranch reads a branch and fails the test on error.
func (e *env) getBranch(name string) store.Branch {
	e.t.Helper()
	b, err := e.s.GetBranch(e.ctx, name)
	if err != nil {
		e.t.Fatalf("GetBranch(%q): %v", name, err)
	}
	return b
}

// snapshot creates a snapshot and fails the test on error.
func (e *env) snapshot(branch, name string) store.Snapshot {
	e.t.Helper()
	s, err := e.s.CreateSnapshot(e.ctx, branch, name, "")
	if err != nil {
		e.t.Fatalf("CreateSnapshot(%q, %q): %v", branch, name, err)
	}
	return s
}

// state is everything a branch shows at a point, per kind, ordered by id.
func (e *env) state(v store.View) map[store.Kind][]store.Record {
	e.t.Helper()
	out := map[store.Kind][]store.Record{}
	for _, k := range store.Kinds {
		out[k] = e.list(v, store.ListQuery{Kind: k, Order: store.OrderID})
	}
	return out
}

// tick sleeps long enough that the next commit gets a later time than the last one,
// and returns an instant strictly between them.
// clock is a clock a test moves by hand.
type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

func tick() time.Time {
	time.Sleep(5 * time.Millisecond)
	now := time.Now()
	time.Sleep(5 * time.Millisecond)
	return now
}

// head is the zero-point view of a branch.
func head(branch string) store.View { return store.View{Branch: branch} }

// atSnap is the view of branch at a snapshot.
func atSnap(branch, snap string) store.View {
	return store.View{Branch: branch, At: store.Point{Snapshot: snap}}
}

// atTime is the view of branch at an instant.
func atTime(branch string, t time.Time) store.View {
	return store.View{Branch: branch, At: store.Point{Time: t}}
}

func factRef(id string) store.Ref { return store.Ref{Kind: store.KindFact, ID: id} }
func obsRef(id string) store.Ref  { return store.Ref{Kind: store.KindObservation, ID: id} }
func relRef(id string) store.Ref  { return store.Ref{Kind: store.KindRelation, ID: id} }
func convRef(id string) store.Ref { return store.Ref{Kind: store.KindConversation, ID: id} }
func msgRef(id string) store.Ref  { return store.Ref{Kind: store.KindMessage, ID: id} }

// recOf builds a record of kind k whose searchable text is text. Records of the same id
// and different text differ in content.
func recOf(k store.Kind, id, text string) store.Record {
	switch k {
	case store.KindFact:
		return store.Fact{ID: id, Text: text}
	case store.KindObservation:
		return store.Observation{ID: id, Type: store.ObsDiscovery, Summary: text}
	case store.KindRelation:
		return store.Relation{ID: id, Source: "svc", Target: text, Type: "depends_on"}
	case store.KindConversation:
		return store.Conversation{ID: id, Title: text}
	case store.KindMessage:
		return store.Message{ID: id, ConversationID: "conv", Seq: 1, Role: store.RoleUser, Content: text}
	}
	panic("storetest: unknown kind " + string(k))
}

// textOf is the text recOf put in a record.
func textOf(r store.Record) string {
	switch r := r.(type) {
	case store.Relation:
		return r.Target
	case store.Conversation:
		return r.Title
	}
	return store.SearchText(r)
}

// recIDs returns the ids of rs in order.
func recIDs(rs []store.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.RecordID()
	}
	return out
}

// hitIDs returns the ids of hs in order.
func hitIDs(hs []store.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Record.RecordID()
	}
	return out
}

// sorted returns a sorted copy of ids.
func sorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// cmpOpts compare records: times by instant, nil and empty maps and slices alike.
var cmpOpts = cmp.Options{
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
	cmpopts.EquateEmpty(),
}

// ignoreBranch also ignores the Branch field of every record kind.
var ignoreBranch = cmp.Options{
	cmpopts.IgnoreFields(store.Fact{}, "Branch"),
	cmpopts.IgnoreFields(store.Observation{}, "Branch"),
	cmpopts.IgnoreFields(store.Relation{}, "Branch"),
	cmpopts.IgnoreFields(store.Conversation{}, "Branch"),
	cmpopts.IgnoreFields(store.Message{}, "Branch"),
}

// same reports a difference between want and got.
func same(t *testing.T, what string, want, got any, opts ...cmp.Option) bool {
	t.Helper()
	if d := cmp.Diff(want, got, append(cmp.Options{cmpOpts}, opts...)); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
		return false
	}
	return true
}

// isErr checks that err matches target.
func isErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error = %v; want %v", what, err, target)
	}
}

// isInvalid checks that err is a *store.ValidationError matching ErrInvalidArgument
// whose Field contains field (any Field when field is empty).
func isInvalid(t *testing.T, what string, err error, field string) {
	t.Helper()
	var ve *store.ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("%s: error = %v; want a *store.ValidationError", what, err)
		return
	}
	if !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("%s: errors.Is(%v, ErrInvalidArgument) = false", what, err)
	}
	if ve.Field == "" {
		t.Errorf("%s: ValidationError.Field is empty; it must name the input", what)
	}
	if field != "" && !strings.Contains(ve.Field, field) {
		t.Errorf("%s: ValidationError.Field = %q; want it to name %q", what, ve.Field, field)
	}
}

// dims is the length of the suite's hand-made embeddings.
const dims = 8

// vec returns a dims-dimension vector whose leading components are xs. With integer
// Pythagorean pairs the cosines are exact: cos(vec(1), vec(4, 3)) = 0.8,
// cos(vec(1), vec(3, 4)) = 0.6, cos(vec(1), vec(24, 7)) = 0.96.
func vec(xs ...float32) []float32 {
	v := make([]float32, dims)
	copy(v, xs)
	return v
}

// near reports whether a and b differ by at most eps.
func near(a, b, eps float64) bool { return math.Abs(a-b) <= eps }

// micro returns a fixed UTC instant with microsecond precision, hours after a base,
// so explicit timestamps survive every backend's precision.
func micro(hours int) time.Time {
	return time.Date(2025, 3, 1, 9, 0, 0, 123456000, time.UTC).Add(time.Duration(hours) * time.Hour)
}

// describe is a short text for a record, for failure messages.
func describe(r store.Record) string {
	if r == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s %q", store.RefOf(r), textOf(r))
}
