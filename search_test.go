package day1

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/llm/llmfake"
)

// paraphraseCorpus is a small memory of engineering notes. The first three are the
// relevant answers to the paraphrased queries of TestHybridBeatsKeywordOnParaphrase:
// they say the same with other forms of the words (authentication for authenticating,
// deploys for deployment, times for timing), which keyword search does not match
// because tokens are not stemmed. Other notes share the queries' exact words in other
// senses, so keyword search ranks them first.
var paraphraseCorpus = []string{
	"user authentication failure after token expiry",
	"Staging deploys fail when the database migrations time out",
	"The payment gateway times out after 30 seconds",
	"The billing service failed to send invoices to new users on Monday",
	"The nightly backup job failed twice last week because the disk was full",
	"The search index is rebuilt every night at 2am",
	"Rate limiting allows 100 requests per minute per API key",
	"Deployment to production needs a second reviewer",
	"The mobile app caches images for 24 hours",
	"Postgres holds orders; Redis holds sessions",
	"The CI pipeline runs unit tests before integration tests",
	"Feature flags are stored in LaunchDarkly",
	"Admin users see the audit log in the settings page",
	"The email worker retries deliveries with exponential backoff",
	"Kafka topics are partitioned by customer id",
	"Grafana dashboards show p99 latency per endpoint",
	"Payments in EUR settle the next business day",
	"Logs are shipped to Loki and kept for 14 days",
	"The staging cluster has three nodes",
	"TLS certificates renew automatically through cert-manager",
}

// paraphraseFacts returns paraphraseCorpus as facts to write.
func paraphraseFacts() []Fact {
	facts := make([]Fact, len(paraphraseCorpus))
	for i, text := range paraphraseCorpus {
		facts[i] = Fact{Text: text}
	}
	return facts
}

func rankOf(hits []Hit, id string) int {
	i := slices.IndexFunc(hits, func(h Hit) bool { return h.Record.RecordID() == id })
	if i < 0 {
		return 0
	}
	return i + 1
}

// TestHybridOnParaphrase: keyword search finds paraphrases that share stems with the
// answer ("authenticating" and "authentication"); with equal RRF weights the vector
// ranking, which found it too, keeps it at the top; with the default fusion of a
// lexical embedder the answer is never ranked below keyword search's rank.
func TestHybridOnParaphrase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	ws, err := c.WriteFacts(ctx, paraphraseFacts())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query    string
		relevant int // index in paraphraseCorpus
	}{
		{"authenticating users failed", 0},
		{"deployment to staging failing", 1},
		{"payments timing out", 2},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			id := ws[tt.relevant].Record.ID
			kw, err := c.Search(ctx, SearchQuery{Text: tt.query, Mode: Keyword, Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			// Equal weights, what an embedder that reports semantic quality gets: the
			// vector ranking may overrule keyword ranking.
			hy, err := c.Search(ctx, SearchQuery{Text: tt.query, Mode: Hybrid, Limit: 20, VectorWeight: 1})
			if err != nil {
				t.Fatal(err)
			}
			// The default for the local embedder, a lexical one: never below keyword.
			def, err := c.Search(ctx, SearchQuery{Text: tt.query, Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			if d, k := rankOf(def, ws[tt.relevant].Record.ID), rankOf(kw, ws[tt.relevant].Record.ID); d == 0 || k != 0 && d > k {
				t.Errorf("default hybrid rank %d, keyword rank %d; want no worse than keyword", d, k)
			}
			if len(kw) == 0 {
				t.Fatal("keyword search found nothing; the corpus should share words with the query")
			}
			kwRank, hyRank := rankOf(kw, id), rankOf(hy, id)
			t.Logf("rank of %q: keyword %d, hybrid %d (0 = not found)", paraphraseCorpus[tt.relevant], kwRank, hyRank)
			if hyRank == 0 {
				t.Fatalf("hybrid search missed the relevant fact; hits: %v", hitIDs(hy))
			}
			if kwRank == 0 || hyRank > kwRank {
				t.Errorf("hybrid rank %d, keyword rank %d; want keyword search to find the stems and hybrid no worse", hyRank, kwRank)
			}
			if hyRank > 5 {
				t.Errorf("hybrid rank %d, want the relevant fact in the top 5", hyRank)
			}
			if h := hy[hyRank-1]; !slices.Contains(h.FoundBy, RetrieverVector) || h.VectorRank == 0 {
				t.Errorf("relevant hit FoundBy %v, VectorRank %d; want the vector retriever", h.FoundBy, h.VectorRank)
			}
		})
	}
}

func TestSearchModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emb := llmfake.NewEmbedder(384)
	c, _ := open(t, func(cfg *Config) { cfg.Embedder = emb })
	if _, err := c.WriteFacts(ctx, []Fact{
		{ID: "jwt", Text: "The auth service signs JWT tokens with RS256"},
		{ID: "redis", Text: "Sessions are kept in Redis for 30 minutes"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteObservation(ctx, Observation{ID: "obs", Type: ObsDiscovery, Summary: "JWT signing keys rotate monthly"}); err != nil {
		t.Fatal(err)
	}

	hits, err := c.Search(ctx, SearchQuery{Text: "JWT signing", Kinds: []Kind{KindFact}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Record.RecordID() != "jwt" {
		t.Errorf("facts only: hits %v, want jwt first", hitIDs(hits))
	}
	for _, h := range hits {
		if h.Record.RecordKind() != KindFact {
			t.Errorf("facts-only search returned a %s", h.Record.RecordKind())
		}
	}

	// A Vector search embeds the text; its failure is returned.
	boom := errors.New("embedder down")
	emb.FailNext(1, boom)
	if _, err := c.Search(ctx, SearchQuery{Text: "JWT", Mode: Vector}); !errors.Is(err, boom) {
		t.Errorf("Vector search with a failing embedder: err = %v, want %v", err, boom)
	}
	// A Hybrid search falls back to keyword ranking.
	emb.FailNext(1, boom)
	hits, err = c.Search(ctx, SearchQuery{Text: "Redis sessions", WindowWeight: -1})
	if err != nil {
		t.Fatalf("Hybrid search with a failing embedder: %v", err)
	}
	if diff := cmp.Diff([]string{"redis"}, hitIDs(hits)); diff != "" {
		t.Errorf("hybrid fallback hits mismatch (-want +got):\n%s", diff)
	}
	if len(hits) == 1 && !slices.Equal(hits[0].FoundBy, []Retriever{RetrieverKeyword}) {
		t.Errorf("fallback hit FoundBy = %v, want keyword only", hits[0].FoundBy)
	}
	// A caller's vector is used as is: no Embed call.
	calls := emb.Calls()
	vec, err := emb.Embed(ctx, []string{"Redis sessions"})
	if err != nil {
		t.Fatal(err)
	}
	hits, err = c.Search(ctx, SearchQuery{Vector: vec[0], Mode: Vector, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if emb.Calls() != calls+1 || len(hits) != 1 || hits[0].Record.RecordID() != "redis" {
		t.Errorf("search by vector: hits %v, %d Embed calls; want redis and no extra call", hitIDs(hits), emb.Calls()-calls-1)
	}

	if _, err := c.Search(ctx, SearchQuery{Text: " ", Mode: Keyword}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("empty keyword query: err = %v, want ErrInvalidArgument", err)
	}
	if _, err := c.Search(ctx, SearchQuery{Text: "x", Branch: "nope"}); !errors.Is(err, ErrBranchNotFound) {
		t.Errorf("search of a missing branch: err = %v, want ErrBranchNotFound", err)
	}
}

func TestNoEmbeddings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, func(cfg *Config) { cfg.NoEmbeddings = true })
	w, err := c.WriteFact(ctx, Fact{Text: "The queue is drained before shutdown"})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Record.Embedding) != 0 || w.EmbedErr != nil {
		t.Errorf("NoEmbeddings write: %d dims, EmbedErr %v; want no embedding, no error", len(w.Record.Embedding), w.EmbedErr)
	}
	hits, err := c.Search(ctx, SearchQuery{Text: "queue drained"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 {
		t.Errorf("hybrid without embeddings: %d hits, want 1", len(hits))
	}
	if _, err := c.Search(ctx, SearchQuery{Text: "queue", Mode: Vector}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("vector search without embeddings: err = %v, want ErrNotSupported", err)
	}
}

func TestSearchLeavesHistoryOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	if _, err := c.WriteFact(ctx, Fact{ID: "old", Text: "The deploy window is Tuesday at 10:00"}); err != nil {
		t.Fatal(err)
	}
	w, err := c.WriteFact(ctx, Fact{ID: "new", Text: "the deploy window is Tuesday, at 10:00!"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Outcome != Superseded {
		t.Fatalf("second write: %s; want superseded (the test needs a superseded fact)", w.Outcome)
	}
	for _, tt := range []struct {
		q    SearchQuery
		want []string
	}{
		{SearchQuery{Text: "deploy window"}, []string{"new"}},
		{SearchQuery{Text: "deploy window", Mode: Keyword}, []string{"new"}},
		{SearchQuery{Text: "deploy window", IncludeHistory: true}, []string{"new", "old"}},
		{SearchQuery{Text: "deploy window", Filter: Filter{Status: FactSuperseded}}, []string{"old"}},
	} {
		hits, err := c.Search(ctx, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		got := hitIDs(hits)
		slices.Sort(got)
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%+v: hits (-want +got):\n%s", tt.q, d)
		}
	}
}

// TestDefaultFusionFollowsKeyword: with the local embedder, a lexical one, the default
// Hybrid search keeps keyword search's ranking and adds the vector retriever's other
// hits after it, so it is never worse than keyword search at any cut-off.
func TestDefaultFusionFollowsKeyword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	if _, err := c.WriteFacts(ctx, paraphraseFacts()); err != nil {
		t.Fatal(err)
	}
	for _, query := range []string{"authentication token", "database migrations time out", "payment gateway", "certificates renew"} {
		kw, err := c.Search(ctx, SearchQuery{Text: query, Mode: Keyword, Limit: 8})
		if err != nil {
			t.Fatal(err)
		}
		def, err := c.Search(ctx, SearchQuery{Text: query, Limit: 8})
		if err != nil {
			t.Fatal(err)
		}
		if len(kw) == 0 || len(def) < len(kw) {
			t.Fatalf("%q: keyword %d hits, default %d", query, len(kw), len(def))
		}
		if d := cmp.Diff(hitIDs(kw), hitIDs(def[:len(kw)])); d != "" {
			t.Errorf("%q: default search reorders keyword hits (-keyword +default):\n%s", query, d)
		}
		for _, h := range def[len(kw):] {
			if h.KeywordRank != 0 || h.VectorRank == 0 {
				t.Errorf("%q: hit after the keyword hits %s: keyword rank %d, vector rank %d", query, h.Record.RecordID(), h.KeywordRank, h.VectorRank)
			}
		}
	}
}

// TestSessionContextFollowsTheBatch: facts written in one batch at one caller-given
// time, with generated ids, lend their keyword scores to the facts within two places
// of them in the order of the batch.
func TestSessionContextFollowsTheBatch(t *testing.T) {
	// Near-duplicate detection off: the texts differ in one short word.
	c, _ := open(t, func(cfg *Config) { cfg.Test.NewID, cfg.DedupeThreshold = nil, -1 })
	ctx := context.Background()
	at := t0.Add(-time.Hour)
	// Words the stemmer leaves as they are, each in one fact.
	const letters = "bcdfgkmnpqtvwxz"
	word := func(i int) string { return "qx" + string(letters[i/len(letters)]) + string(letters[i%len(letters)]) }
	var facts []Fact
	for i := range 60 {
		facts = append(facts, Fact{Text: word(i) + " filler", SessionID: "s", CreatedAt: at})
	}
	ws, err := c.WriteFacts(ctx, facts)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range ws {
		if w.Outcome != Created {
			t.Fatalf("fact %d: %s", i, w.Outcome)
		}
	}
	for i := range facts {
		hits, err := c.Search(ctx, SearchQuery{Text: word(i), Mode: Keyword, Kinds: []Kind{KindFact}})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for j := max(i-2, 0); j <= min(i+2, len(ws)-1); j++ {
			want = append(want, ws[j].Record.ID)
		}
		got := hitIDs(hits)
		slices.Sort(got)
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (fact %d): hits (-want +got):\n%s", word(i), i, diff)
		}
	}
}
