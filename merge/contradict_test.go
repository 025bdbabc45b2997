package merge

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/day1ai/day1/store"
)

// ttlContradicts is a stand-in for the contradiction heuristics: two texts about the
// cache TTL that differ contradict each other. It counts its calls.
func ttlContradicts(calls *int) func(a, b string) bool {
	return func(a, b string) bool {
		*calls++
		return strings.Contains(a, "cache TTL") && strings.Contains(b, "cache TTL") && a != b
	}
}

// contradictionDiff is a diff where each side added a cache TTL fact, and the target
// an unrelated one and the source one more.
func contradictionDiff() (srcTTL, tgtTTL store.Fact, d *store.Diff) {
	srcTTL = fact("s-ttl", "The session cache TTL is 12 hours")
	srcTTL.Confidence = 0.9
	tgtTTL = fact("t-ttl", "The session cache TTL is 24 hours")
	other := fact("t-ci", "The deploy pipeline runs on GitHub Actions")
	more := fact("s-db", "Sessions are stored in Postgres")
	return srcTTL, tgtTTL, diffOf([]store.Change{added(more), added(srcTTL)}, []store.Change{added(other), added(tgtTTL)})
}

// TestAddContradictions checks the conflicts AddContradictions finds: one per source
// fact that contradicts a fact the target added, tested only against facts that share
// two search terms with it, and none for facts already in a conflict.
func TestAddContradictions(t *testing.T) {
	t.Parallel()
	srcTTL, tgtTTL, d := contradictionDiff()
	calls := 0
	AddContradictions(d, ttlContradicts(&calls))
	if len(d.Conflicts) != 1 {
		t.Fatalf("%d conflicts, want 1: %+v", len(d.Conflicts), d.Conflicts)
	}
	c := d.Conflicts[0]
	if c.Reason != store.Contradictory || c.Ref != ref(tgtTTL) || c.Source.Ref != ref(srcTTL) || c.Target.Ref != ref(tgtTTL) {
		t.Errorf("conflict = %+v; want the source's TTL fact against the target's", c)
	}
	if calls != 1 {
		t.Errorf("the test ran %d times; want once, for the one pair about the same thing", calls)
	}
	// A second run adds nothing: both facts are in a conflict now.
	AddContradictions(d, ttlContradicts(&calls))
	if len(d.Conflicts) != 1 || calls != 1 {
		t.Errorf("a second run: %d conflicts, %d tests; want 1 and no new test", len(d.Conflicts), calls)
	}
	// Nothing to test with: no conflict.
	_, _, d = contradictionDiff()
	AddContradictions(d, nil)
	if len(d.Conflicts) != 0 {
		t.Errorf("without a test: %d conflicts", len(d.Conflicts))
	}
}

// TestMergeContradictions checks that a contradiction is settled like the other
// conflicts: refused by the fail policy, the target's fact kept by skip, the source's
// taken by accept (the target's superseded), and decided by the resolver in an Auto
// merge; without Engine.Contradicts both facts merge.
func TestMergeContradictions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	puts := func(fs *fakeStore) []string {
		var out []string
		for _, r := range fs.applied[0].Puts {
			f := r.(store.Fact)
			out = append(out, f.ID+":"+string(f.Status))
		}
		slices.Sort(out)
		return out
	}
	srcTTL, _, d := contradictionDiff()
	fs := newFake(d)
	if _, err := testEngine(fs).Merge(ctx, Request{Source: src, Target: tgt}); err != nil {
		t.Fatalf("without a contradiction test: %v", err)
	}
	if got := puts(fs); !slices.Equal(got, []string{"s-db:active", "s-ttl:active"}) {
		t.Errorf("without a contradiction test the merge wrote %v; want both source facts", got)
	}
	for _, tc := range []struct {
		name string
		req  Request
		want []string
	}{
		{"skip", Request{Policy: store.ConflictSkip}, []string{"s-db:active"}},
		{"accept", Request{Policy: store.ConflictAccept}, []string{"s-db:active", "s-ttl:active", "t-ttl:superseded"}},
		{"auto", Request{Strategy: store.Auto}, []string{"s-db:active", "s-ttl:active", "t-ttl:superseded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, d := contradictionDiff()
			fs := newFake(d)
			e := testEngine(fs)
			calls := 0
			e.Contradicts = ttlContradicts(&calls)
			tc.req.Source, tc.req.Target = src, tgt
			res, err := e.Merge(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := puts(fs); !slices.Equal(got, tc.want) {
				t.Errorf("the merge wrote %v, want %v", got, tc.want)
			}
			if rs := res.Record.Resolutions; len(rs) != 1 || rs[0].Ref != factRef("t-ttl") {
				t.Errorf("resolutions = %+v; want one, of the target's TTL fact", rs)
			}
		})
	}
	_, _, d = contradictionDiff()
	e := testEngine(newFake(d))
	calls := 0
	e.Contradicts = ttlContradicts(&calls)
	_, err := e.Merge(ctx, Request{Source: src, Target: tgt})
	var ce *store.MergeConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Reason != store.Contradictory || ce.Conflicts[0].Source.Ref != ref(srcTTL) {
		t.Errorf("the fail policy: err = %v; want a *store.MergeConflictError with the contradiction", err)
	}
}

// dupDiff is a diff where each side added a fact about where token refresh happens,
// in other words, and one of the same text as the other side's.
func dupDiff() *store.Diff {
	return diffOf(
		[]store.Change{added(fact("s-gw", "Token refresh happens in the gateway")), added(fact("s-same", "Sessions are stored in Postgres"))},
		[]store.Change{added(fact("t-gw", "The gateway is where token refresh happens")), added(fact("t-same", "sessions are stored in postgres"))})
}

// sameSubject is a stand-in near-duplicate test: two texts about token refresh in
// the gateway say the same thing. It counts the pairs it is asked about.
func sameSubject(calls *int) func(ctx context.Context, pairs [][2]string) ([]bool, error) {
	return func(ctx context.Context, pairs [][2]string) ([]bool, error) {
		*calls += len(pairs)
		has := func(s string) bool { return strings.Contains(strings.ToLower(s), "token refresh") }
		out := make([]bool, len(pairs))
		for i, p := range pairs {
			out[i] = has(p[0]) && has(p[1])
		}
		return out, nil
	}
}

// TestAddDuplicates checks that AddDuplicates makes a Duplicate conflict of two facts
// the sides added that say the same thing in other words, never tests facts of the
// same text (a merge deduplicates those), runs after the contradictions, and returns
// its test's error.
func TestAddDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dupDiff()
	calls := 0
	if err := AddDuplicates(ctx, d, sameSubject(&calls)); err != nil {
		t.Fatal(err)
	}
	if len(d.Conflicts) != 1 || d.Conflicts[0].Reason != store.Duplicate || d.Conflicts[0].Ref != factRef("t-gw") ||
		d.Conflicts[0].Source.Ref != factRef("s-gw") {
		t.Fatalf("conflicts = %+v; want s-gw against t-gw as duplicates", d.Conflicts)
	}
	if calls != 1 {
		t.Errorf("the test ran %d times; want once: the facts of the same text are not tested", calls)
	}
	// A pair a contradiction took is not tested again.
	d = dupDiff()
	AddContradictions(d, func(a, b string) bool { return strings.Contains(a, "gateway") && strings.Contains(b, "gateway") })
	calls = 0
	if err := AddDuplicates(ctx, d, sameSubject(&calls)); err != nil || len(d.Conflicts) != 1 || d.Conflicts[0].Reason != store.Contradictory || calls != 0 {
		t.Errorf("after a contradiction: %v, conflicts %+v, %d tests; want the contradiction alone", err, d.Conflicts, calls)
	}
	boom := errors.New("embedder down")
	d = dupDiff()
	if err := AddDuplicates(ctx, d, func(context.Context, [][2]string) ([]bool, error) { return nil, boom }); !errors.Is(err, boom) || len(d.Conflicts) != 0 {
		t.Errorf("a failing test: %v, conflicts %+v; want its error and no conflict", err, d.Conflicts)
	}
}

// TestMergeDuplicates checks that a duplicate is settled like the other conflicts:
// refused by the fail policy, and taking the source's supersedes the target's.
func TestMergeDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fs := newFake(dupDiff())
	e := testEngine(fs)
	calls := 0
	e.Duplicates = sameSubject(&calls)
	var ce *store.MergeConflictError
	if _, err := e.Merge(ctx, Request{Source: src, Target: tgt}); !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Reason != store.Duplicate {
		t.Fatalf("the fail policy: %v; want a *store.MergeConflictError with the duplicate", err)
	}
	if _, err := e.Merge(ctx, Request{Source: src, Target: tgt, Policy: store.ConflictAccept}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range fs.applied[0].Puts {
		f := r.(store.Fact)
		got = append(got, f.ID+":"+string(f.Status))
	}
	slices.Sort(got)
	if want := []string{"s-gw:active", "t-gw:superseded"}; !slices.Equal(got, want) {
		t.Errorf("accepting the source wrote %v; want %v (s-same deduplicated)", got, want)
	}
}
