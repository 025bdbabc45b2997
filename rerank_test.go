package day1

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1/llm/llmfake"
	"github.com/day1ai/day1/rerank"
	"github.com/day1ai/day1/store"
)

// byLength is a reranker that prefers the longest text: nothing keyword or vector
// search would do, so its hand is seen in the order.
var byLength = rerank.Func(func(_ string, h store.Hit) float64 { return float64(len(store.SearchText(h.Record))) })

func openReranked(t *testing.T, rr rerank.Reranker, pool int) *Client {
	t.Helper()
	c, err := Open(context.Background(), Config{Reranker: rr, RerankPool: pool})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var facts []Fact
	for i := range 30 {
		facts = append(facts, Fact{ID: fmt.Sprintf("f%02d", i), Text: "the cache service restarts" + strings.Repeat(" nightly", i%7) + fmt.Sprintf(" ticket %d", i)})
	}
	if _, err := c.WriteFacts(context.Background(), facts); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRerankerSeesThePool(t *testing.T) {
	ctx := context.Background()
	c := openReranked(t, byLength, 30)
	plain, err := c.Search(ctx, SearchQuery{Text: "cache restarts", Limit: 30, NoRerank: true, WindowWeight: -1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Search(ctx, SearchQuery{Text: "cache restarts", Limit: 3, WindowWeight: -1})
	if err != nil {
		t.Fatal(err)
	}
	// The longest texts of the whole pool, whatever their fused rank.
	want := slices.Clone(plain)
	slices.SortStableFunc(want, func(a, b Hit) int { return len(store.SearchText(b.Record)) - len(store.SearchText(a.Record)) })
	if !slices.Equal(hitIDs(got), hitIDs(want[:3])) {
		t.Errorf("reranked = %v; want the three longest of the pool %v", hitIDs(got), hitIDs(want[:3]))
	}
	for _, h := range got {
		if h.RerankScore != float64(len(store.SearchText(h.Record))) {
			t.Errorf("%s: RerankScore %v", h.Record.RecordID(), h.RerankScore)
		}
	}
	fusedTop := hitIDs(plain[:3])
	if slices.Equal(hitIDs(got), fusedTop) {
		t.Errorf("the reranker changed nothing: %v", fusedTop)
	}
	// NoRerank: the search's own order.
	own, err := c.Search(ctx, SearchQuery{Text: "cache restarts", Limit: 3, NoRerank: true, WindowWeight: -1})
	if err != nil || !slices.Equal(hitIDs(own), fusedTop) || own[0].RerankScore != 0 {
		t.Errorf("NoRerank = %v, %v; want %v", hitIDs(own), err, fusedTop)
	}
}

func TestRerankerFailureKeepsTheOrder(t *testing.T) {
	ctx := context.Background()
	m := llmfake.NewModel().Default("not json")
	c := openReranked(t, &rerank.Model{Model: m}, 0)
	own, err := c.Search(ctx, SearchQuery{Text: "cache restarts", Limit: 5, NoRerank: true, WindowWeight: -1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Search(ctx, SearchQuery{Text: "cache restarts", Limit: 5, WindowWeight: -1})
	if err != nil || !slices.Equal(hitIDs(got), hitIDs(own)) {
		t.Errorf("with a malformed reply = %v, %v; want the search's own order %v", hitIDs(got), err, hitIDs(own))
	}
	if len(m.Calls()) != 1 || !strings.Contains(m.Calls()[0].Messages[0].Content, "30. [fact]") {
		t.Errorf("the model was not asked about the whole pool (30 of the default 50): %d calls", len(m.Calls()))
	}
	m.FailNext(1, errors.New("quota"))
	if got, err := c.Search(ctx, SearchQuery{Text: "cache restarts", Limit: 5, WindowWeight: -1}); err != nil || !slices.Equal(hitIDs(got), hitIDs(own)) {
		t.Errorf("with a failing model = %v, %v; want the search's own order", hitIDs(got), err)
	}
	// A reply that grades: the grades order the hits.
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		grade := 1
		if i == 30 {
			grade = 9
		}
		fmt.Fprintf(&b, `{"n": %d, "grade": %d},`, i, grade)
	}
	m.Default(`{"grades": [` + strings.TrimSuffix(b.String(), ",") + `]}`)
	all, _ := c.Search(ctx, SearchQuery{Text: "cache restarts", Limit: 30, NoRerank: true, WindowWeight: -1})
	got, err = c.Search(ctx, SearchQuery{Text: "cache restarts", Limit: 2, WindowWeight: -1})
	if err != nil || len(got) != 2 || got[0].Record.RecordID() != all[29].Record.RecordID() || got[0].RerankScore != 9 {
		t.Errorf("graded = %v, %v; want the pool's last, graded 9, first", hitIDs(got), err)
	}
	// A cancelled search fails.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Search(cctx, SearchQuery{Text: "cache restarts", WindowWeight: -1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
}

func TestRerankPoolIsChecked(t *testing.T) {
	for _, n := range []int{-1, store.MaxLimit + 1} {
		_, err := Open(context.Background(), Config{Reranker: byLength, RerankPool: n})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "Config.RerankPool" {
			t.Errorf("RerankPool %d: %v; want a *ValidationError for Config.RerankPool", n, err)
		}
	}
}

// failing is a Reranker whose every ranking fails.
type failing struct{}

func (failing) Rerank(context.Context, string, []store.Hit) ([]float64, error) {
	return nil, errors.New("grader down")
}
func (failing) Name() string { return "failing" }

// TestUsageHearsOfReturnedHits checks that the Client tells a rerank.Usage the hits
// each search it ranked returned, after the Limit, and nothing for a search that
// skipped it or whose ranking failed.
func TestUsageHearsOfReturnedHits(t *testing.T) {
	ctx := context.Background()
	log := new(rerank.UsageLog)
	c := openReranked(t, &rerank.Usage{HalfLife: time.Hour, Log: log}, 30)
	hits, err := c.Search(ctx, SearchQuery{Text: "cache restarts", Limit: 2})
	if err != nil || len(hits) != 2 {
		t.Fatalf("search: %d hits, %v", len(hits), err)
	}
	for _, h := range hits {
		if _, ok := log.LastUsed(store.RefOf(h.Record)); !ok {
			t.Errorf("%s: returned, not recorded as used", h.Record.RecordID())
		}
	}
	if _, err := c.Search(ctx, SearchQuery{Text: "cache restarts", NoRerank: true}); err != nil || log.Len() != 2 {
		t.Errorf("after a search with NoRerank: %d uses, %v; want the 2 of before", log.Len(), err)
	}
	broken := new(rerank.UsageLog)
	c = openReranked(t, &rerank.Usage{HalfLife: time.Hour, Log: broken, Next: failing{}}, 30)
	if hits, err := c.Search(ctx, SearchQuery{Text: "cache restarts", Limit: 2}); err != nil || len(hits) != 2 || broken.Len() != 0 {
		t.Errorf("a failed ranking: %d hits, %v, %d uses; want 2 hits and no use", len(hits), err, broken.Len())
	}
}
