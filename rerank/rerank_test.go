package rerank_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1/llm"
	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/rerank"
	"github.com/day1ai/day1/store"
)

func hits(texts ...string) []store.Hit {
	out := make([]store.Hit, len(texts))
	for i, t := range texts {
		out[i] = store.Hit{Record: store.Fact{ID: fmt.Sprintf("f%d", i+1), Text: t}}
	}
	return out
}

func TestModelGradesEveryCandidate(t *testing.T) {
	m := llmfake.NewModel().On(`Query: how are tokens signed`, `{"grades": [{"n": 2, "grade": 9}, {"n": 1, "grade": 1.5}]}`)
	r := &rerank.Model{Model: m, MaxText: 12}
	got, err := r.Rerank(context.Background(), "how are tokens signed", hits("the cache holds sessions for an hour", "tokens are signed with RS256"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != 1.5 || got[1] != 9 {
		t.Errorf("grades = %v; want [1.5 9]", got)
	}
	prompt := m.Calls()[0].Messages[0].Content
	if !strings.Contains(prompt, "1. [fact] the cache ho…") || strings.Contains(prompt, "an hour") {
		t.Errorf("the prompt does not clip each record to MaxText: %q", prompt)
	}
	if r.Name() != "model:"+m.Name() {
		t.Errorf("Name = %q", r.Name())
	}
}

func TestModelRefusesMalformedReplies(t *testing.T) {
	for _, reply := range []string{
		`not json`,
		`{"grades": [{"n": 1, "grade": 3}]}`, // one missing
		`{"grades": [{"n": 1, "grade": 3}, {"n": 1, "grade": 4}]}`,  // twice
		`{"grades": [{"n": 1, "grade": 3}, {"n": 2, "grade": 11}]}`, // out of range
		`{"grades": [{"n": 1, "grade": 3}, {"n": 3, "grade": 4}]}`,  // no such record
		`{"grades": [{"n": 1, "grade": 3}, {"n": 2}]}`,              // no grade
	} {
		r := &rerank.Model{Model: llmfake.NewModel().Default(reply)}
		_, err := r.Rerank(context.Background(), "q", hits("a", "b"))
		if !errors.Is(err, rerank.ErrMalformedReply) {
			t.Errorf("reply %s: %v; want ErrMalformedReply", reply, err)
		}
	}
	var mo *llm.MalformedOutputError
	_, err := (&rerank.Model{Model: llmfake.NewModel().Default("not json")}).Rerank(context.Background(), "q", hits("a"))
	if !errors.As(err, &mo) {
		t.Errorf("bad JSON: %v; want it to wrap the *llm.MalformedOutputError", err)
	}
	// The model's own failure is returned as it is.
	boom := errors.New("quota")
	_, err = (&rerank.Model{Model: llmfake.NewModel().FailNext(1, boom)}).Rerank(context.Background(), "q", hits("a"))
	if !errors.Is(err, boom) || errors.Is(err, rerank.ErrMalformedReply) {
		t.Errorf("model failure: %v; want the model's error", err)
	}
	if _, err := (&rerank.Model{}).Rerank(context.Background(), "q", hits("a")); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("no model: %v; want ErrInvalidArgument", err)
	}
}

func TestFunc(t *testing.T) {
	f := rerank.Func(func(q string, h store.Hit) float64 { return float64(len(store.SearchText(h.Record))) })
	got, err := f.Rerank(context.Background(), "q", hits("ab", "abcd"))
	if err != nil || len(got) != 2 || got[0] != 2 || got[1] != 4 {
		t.Errorf("Func = %v, %v", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Rerank(ctx, "q", hits("a")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestRecency checks that Recency halves a score at each HalfLife of age, ranks the
// newer of two equal candidates first, decays Next's scores when it has one, leaves a
// candidate from the future as it is, and refuses a HalfLife that is not positive.
func TestRecency(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	hit := func(id string, age time.Duration, relevance float64) store.Hit {
		return store.Hit{Record: store.Fact{ID: id, Text: id, CreatedAt: now.Add(-age)}, Relevance: relevance}
	}
	cands := []store.Hit{hit("old", 48*time.Hour, 0.8), hit("new", time.Hour, 0.8), hit("future", -time.Hour, 0.5)}
	r := &rerank.Recency{HalfLife: 24 * time.Hour, Now: func() time.Time { return now }}
	got, err := r.Rerank(context.Background(), "q", cands)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.2, 0.8 * math.Exp2(-1.0/24), 0.5}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("score of %s = %v; want %v", cands[i].Record.RecordID(), got[i], want[i])
		}
	}
	graded := &rerank.Recency{HalfLife: 24 * time.Hour, Now: func() time.Time { return now },
		Next: rerank.Func(func(_ string, h store.Hit) float64 { return 10 })}
	got, err = graded.Rerank(context.Background(), "q", cands[:1])
	if err != nil || math.Abs(got[0]-2.5) > 1e-12 || graded.Name() != "func+recency" {
		t.Errorf("Next's grade decayed: %v, %v, name %q; want 2.5 and func+recency", got, err, graded.Name())
	}
	if _, err := (&rerank.Recency{}).Rerank(context.Background(), "q", cands); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("a zero HalfLife: %v; want ErrInvalidArgument", err)
	}
}

// TestUsage checks that Usage decays a memory never used by its age, one used by the
// time since its last use, keeps the latest of two uses, decays Next's scores, and
// refuses a HalfLife that is not positive.
func TestUsage(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	clock := now
	hit := func(id string, age time.Duration) store.Hit {
		return store.Hit{Record: store.Fact{ID: id, Text: id, CreatedAt: now.Add(-age)}, Relevance: 0.8}
	}
	cands := []store.Hit{hit("used", 96*time.Hour), hit("unused", 48*time.Hour)}
	log := new(rerank.UsageLog)
	u := &rerank.Usage{HalfLife: 24 * time.Hour, Now: func() time.Time { return clock }, Log: log}
	ctx := context.Background()
	scores := func() []float64 {
		t.Helper()
		got, err := u.Rerank(ctx, "q", cands)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	check := func(name string, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Errorf("%s: score of %s = %v; want %v", name, cands[i].Record.RecordID(), got[i], want[i])
			}
		}
	}
	check("never used", scores(), []float64{0.8 / 16, 0.8 / 4})
	// Used an hour ago: "used" is idle for an hour, "unused" still ages.
	clock = now.Add(-time.Hour)
	u.Used(ctx, cands[:1])
	clock = now
	check("used an hour ago", scores(), []float64{0.8 * math.Exp2(-1.0/24), 0.8 / 4})
	// An older use recorded later changes nothing.
	log.Use(now.Add(-72*time.Hour), store.RefOf(cands[0].Record))
	if at, ok := log.LastUsed(store.RefOf(cands[0].Record)); !ok || !at.Equal(now.Add(-time.Hour)) || log.Len() != 1 {
		t.Errorf("last use = %v, %v (%d in the log); want an hour ago", at, ok, log.Len())
	}
	// A day later, unused since: half.
	clock = now.Add(23 * time.Hour)
	check("a day after its use", scores()[:1], []float64{0.4})

	graded := &rerank.Usage{HalfLife: 24 * time.Hour, Now: func() time.Time { return now },
		Next: rerank.Func(func(_ string, h store.Hit) float64 { return 10 })}
	got, err := graded.Rerank(ctx, "q", cands[1:])
	if err != nil || math.Abs(got[0]-2.5) > 1e-12 || graded.Name() != "func+usage" {
		t.Errorf("Next's grade decayed: %v, %v, name %q; want 2.5 and func+usage", got, err, graded.Name())
	}
	if _, err := (&rerank.Usage{}).Rerank(ctx, "q", cands); !errors.Is(err, store.ErrInvalidArgument) {
		t.Errorf("a zero HalfLife: %v; want ErrInvalidArgument", err)
	}
}
