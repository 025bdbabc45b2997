package curation_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/curation"
	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
)

const agent = "task/auth/agent-a"

// gatedBranch forks agent from main and writes a verified, an unverified, a pending
// and an invalidated fact and an invalidated conversation on it.
func gatedBranch(t *testing.T, st store.Store) {
	t.Helper()
	put(t, st, "main", store.Fact{ID: "base", Text: "on main before the fork"})
	branch(t, st, agent, "main")
	put(t, st, agent,
		store.Fact{ID: "ok", Text: "verified fact", Status: store.FactVerified, Verify: store.Verification{Status: store.Verified, Score: 0.8, By: "heuristic"}},
		store.Fact{ID: "raw", Text: "unverified fact"},
		store.Fact{ID: "maybe", Text: "pending fact", Verify: store.Verification{Status: store.Pending, Score: 0.5, By: "heuristic"}},
		store.Fact{ID: "bad", Text: "invalidated fact", Status: store.FactInvalidated, Verify: store.Verification{Status: store.Invalidated, Score: 0.1, By: "heuristic"}},
		store.Conversation{ID: "conv", Title: "debug", Verify: store.Verification{Status: store.Invalidated, Score: 0.2, By: "heuristic"}},
	)
}

func offenseRefs(err error) []string {
	var be *store.MergeBlockedError
	if !errors.As(err, &be) {
		return nil
	}
	var out []string
	for _, o := range be.Offenses {
		out = append(out, o.Ref.String())
	}
	return out
}

func TestGate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		gate curation.Gate
		want []string
	}{
		{"require verified", curation.Gate{}, []string{"fact/bad", "fact/maybe", "fact/raw"}},
		{"allow unverified", curation.Gate{AllowUnverified: true}, []string{"fact/bad"}},
		{"conversations", curation.Gate{AllowUnverified: true, Conversations: true}, []string{"fact/bad", "conversation/conv"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, st := newEngine(t, nil)
			gatedBranch(t, st)
			eng := &merge.Engine{Store: st, Gate: c.gate}
			_, err := eng.Merge(ctx, merge.Request{Source: agent, Target: "main"})
			if !errors.Is(err, store.ErrMergeBlocked) {
				t.Fatalf("Merge = %v; want ErrMergeBlocked", err)
			}
			got := offenseRefs(err)
			if diff := cmp.Diff(c.want, got, sortStrings); diff != "" {
				t.Errorf("offenses (-want +got):\n%s", diff)
			}
			if facts := listFacts(t, st, "main"); len(facts) != 1 {
				t.Errorf("a blocked merge changed main: %d facts", len(facts))
			}
		})
	}
}

// A cherry-pick of verified records passes the gate, and a merge passes once the
// offending records are gone.
func TestGatePasses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, st := newEngine(t, nil)
	gatedBranch(t, st)
	eng := &merge.Engine{Store: st, Gate: curation.Gate{}}
	res, err := eng.Merge(ctx, merge.Request{Source: agent, Target: "main", Strategy: store.CherryPick,
		Pick: []store.Ref{{Kind: store.KindFact, ID: "ok"}}})
	if err != nil || !res.Applied {
		t.Fatalf("cherry-pick of a verified fact = %v", err)
	}
	if err := st.Delete(ctx, agent, []store.Ref{{Kind: store.KindFact, ID: "bad"}, {Kind: store.KindFact, ID: "raw"}, {Kind: store.KindFact, ID: "maybe"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Merge(ctx, merge.Request{Source: agent, Target: "main"}); err != nil {
		t.Fatalf("merge without offending facts = %v", err)
	}
	// A gated merge promotes the verified facts it brings.
	if got := getFact(t, st, "main", "ok").Status; got != store.FactPromoted {
		t.Errorf("merged fact status = %q", got)
	}
}

func TestGateMessageAndCancel(t *testing.T) {
	t.Parallel()
	plan := &store.MergePlan{Puts: []store.Record{
		store.Fact{ID: "bad", Text: "x", Status: store.FactInvalidated, Verify: store.Verification{Status: store.Invalidated, Score: 0.1, By: "model:m"}},
		store.Fact{ID: "old", Text: "x", Status: store.FactSuperseded},
		store.Message{ID: "m", ConversationID: "c", Role: store.RoleUser},
	}}
	off, err := curation.Gate{}.Check(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Offense{{Ref: store.Ref{Kind: store.KindFact, ID: "bad"}, Reason: "invalidated (score 0.10 by model:m)"}}
	if diff := cmp.Diff(want, off); diff != "" {
		t.Errorf("offenses (-want +got):\n%s", diff)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (curation.Gate{}).Check(ctx, plan); !errors.Is(err, context.Canceled) {
		t.Errorf("Check with a cancelled context = %v", err)
	}
	if curation.Gate.Name(curation.Gate{}) != "curation" {
		t.Error("the gate is not named curation")
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := newEngine(t, nil)
	gatedBranch(t, st)
	put(t, st, agent, store.Fact{ID: "gone", Text: "superseded", Status: store.FactSuperseded})
	s, err := e.Summarize(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	want := curation.Summary{
		Branch:        agent,
		Facts:         curation.Counts{Verified: 1, Pending: 1, Unverified: 2, Invalidated: 1},
		Conversations: curation.Counts{Invalidated: 1},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
	if s.Ready() || s.Facts.Total() != 5 {
		t.Errorf("Ready = %v, Total = %d", s.Ready(), s.Facts.Total())
	}
	if _, err := e.Summarize(ctx, "missing"); !errors.Is(err, store.ErrBranchNotFound) {
		t.Errorf("Summarize(missing) = %v", err)
	}
}
