package matrixone_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/internal/benchdata"
	"github.com/day1ai/day1/internal/vectest"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
	"github.com/day1ai/day1/store/storetest"
)

// openWith opens a store on dsn with the suite's 8-dimension embeddings and the
// options set changes.
func openWith(t testing.TB, dsn string, set func(*matrixone.Options)) *matrixone.Store {
	t.Helper()
	o := matrixone.Options{DSN: dsn, Dimensions: 8, MaxOpenConns: 8}
	if set != nil {
		set(&o)
	}
	s, err := matrixone.Open(context.Background(), o)
	if err != nil {
		t.Fatalf("matrixone.Open: %v", err)
	}
	return s
}

// searchOnly marks every area of the conformance suite but search and time travel as
// covered elsewhere, for the runs that check the search paths.
func searchOnly(reason string) map[string]string {
	out := map[string]string{}
	for _, a := range []string{"write", "branch", "diff", "merge", "snapshot", "sessions", "docs", "alias", "concurrency", "durability", "errors"} {
		out[a] = reason
	}
	return out
}

// TestConformancePortableSearch runs the search and time-travel areas of the suite on
// the portable paths (token scan, exact vector scan), which a server with FULLTEXT and
// IVFFLAT indexes would otherwise never take.
func TestConformancePortableSearch(t *testing.T) {
	testDSN(t)
	off := func(o *matrixone.Options) {
		o.FullText, o.VectorIndex, o.KeywordCache = matrixone.IndexOff, matrixone.IndexOff, matrixone.IndexOff
	}
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store {
			s := openWith(t, testDatabase(t), off)
			if c := s.Capabilities(); c.KeywordPath != matrixone.KeywordPathScan || c.VectorPath != matrixone.VectorPathExact {
				t.Fatalf("paths with the indexes off: %q, %q", c.KeywordPath, c.VectorPath)
			}
			return s
		},
		Unsupported: searchOnly("run by TestConformance; this run covers the portable search paths"),
	})
}

// TestConformanceFullTextSearch runs the search and time-travel areas with the term
// index off, so that keyword searches at a branch's head go through the FULLTEXT index
// (or the scan, on a server without one).
func TestConformanceFullTextSearch(t *testing.T) {
	testDSN(t)
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store {
			return openWith(t, testDatabase(t), func(o *matrixone.Options) { o.KeywordCache = matrixone.IndexOff })
		},
		Unsupported: searchOnly("run by TestConformance; this run covers keyword search without the term index"),
	})
}

// TestConformanceVectorIndex runs the search and time-travel areas with an IVFFLAT
// index built from the first row on, so that vector searches go through the index.
func TestConformanceVectorIndex(t *testing.T) {
	probe := openWith(t, testDatabase(t), nil)
	caps := probe.Capabilities()
	probe.Close()
	if caps.VectorPath != matrixone.VectorPathIVFFlat {
		t.Skipf("the store's vector path is %q on %s, not IVFFLAT (the server lacks it, or diffs natively)", caps.VectorPath, caps.Version)
	}
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store {
			return openWith(t, testDatabase(t), func(o *matrixone.Options) { o.VectorIndexRows, o.VectorCodes = 1, matrixone.IndexOff })
		},
		Unsupported: searchOnly("run by TestConformance; this run covers searches through IVFFLAT indexes"),
	})
}

// corpus returns n facts and observations with texts from the benchmark corpus, texts
// in several scripts, and unit embeddings of dims coordinates.
func corpus(n, dims int, seed uint64) []store.Record {
	r := rand.New(rand.NewPCG(seed, 7))
	texts := benchdata.Facts(n, seed)
	extra := []string{
		"user_id and x_1 and the_end in snake_case_identifier_with_many_parts",
		"café naïve İstanbul straße über Ärger", "日本語のテキスト 中文 한국어 텍스트", "नमस्ते दुनिया १२३",
		"ภาษาไทยไม่มีช่องว่าง", "Привет мир", "مرحبا بالعالم", "com www und de la en how what when where who will about",
		strings.Repeat("x", 90) + " " + strings.Repeat("ab", 40), "ipv6 x86_64 e2e k8s 3.14 0 1 2 99 2024",
	}
	texts = append(texts[:n-len(extra)], extra...)
	out := make([]store.Record, 0, n)
	for i, text := range texts {
		emb := vectest.Unit(r, dims)
		if i%3 == 2 {
			out = append(out, store.Observation{ID: fmt.Sprintf("o%04d", i), Summary: text, Embedding: emb, Type: store.ObsDiscovery,
				SessionID: fmt.Sprintf("s%d", i%4)})
			continue
		}
		out = append(out, store.Fact{ID: fmt.Sprintf("f%04d", i), Text: text, Embedding: emb, Category: []string{"auth", "db", "ops"}[i%3]})
	}
	return out
}

func put(t *testing.T, s store.Store, branch string, recs []store.Record) {
	t.Helper()
	for lo := 0; lo < len(recs); lo += 200 {
		if _, err := s.Put(t.Context(), branch, recs[lo:min(lo+200, len(recs))], store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// hitKeys reduces hits to what both paths must agree on.
type hitKey struct {
	Ref   string
	Score float64
	Kw    float64
	Vec   float64
}

func keys(hits []store.Hit) []hitKey {
	out := make([]hitKey, len(hits))
	for i, h := range hits {
		out[i] = hitKey{store.RefOf(h.Record).String(), h.Score, h.KeywordScore, h.VectorScore}
	}
	return out
}

// TestKeywordPaths searches one database through the in-memory term index, through the
// FULLTEXT index and through the portable token scan, at the head and at a snapshot,
// after writes by this store and by another: all must give the same hits with the same
// BM25 scores, and the same session context.
func TestKeywordPaths(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	cached := openWith(t, dsn, nil)
	defer cached.Close()
	ft := openWith(t, dsn, func(o *matrixone.Options) { o.KeywordCache = matrixone.IndexOff })
	defer ft.Close()
	fullText := ft.Capabilities().KeywordPath == matrixone.KeywordPathFullText
	scan := openWith(t, dsn, func(o *matrixone.Options) { o.FullText, o.KeywordCache = matrixone.IndexOff, matrixone.IndexOff })
	defer scan.Close()
	ctx := t.Context()
	recs := corpus(400, 8, 1)
	// Half the facts have sessions, which lend them context.
	for i, r := range recs {
		if f, ok := r.(store.Fact); ok && i%2 == 0 {
			f.SessionID = fmt.Sprintf("s%d", i%7)
			recs[i] = f
		}
	}
	put(t, cached, "main", recs)
	if _, err := cached.CreateSnapshot(ctx, "main", "before", ""); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, q := range benchdata.Queries(benchdata.Facts(390, 1), 40, 2) {
		texts = append(texts, q.Text)
	}
	texts = append(texts, "user_id", "x_1 the_end", "straße", "日本", "नमस्ते", "ภาษาไทยไม่มีช่องว่าง", "www und",
		strings.Repeat("x", 90), "kerberos tickets", "k8s e2e 2024", "nothing matches zzyzx")
	views := []store.View{{Branch: "main"}, {At: store.Point{Snapshot: "before"}}}
	filters := []store.Filter{{}, {Category: "auth"}, {SessionID: "s2"}}
	compare := func(stage string) {
		t.Helper()
		for _, v := range views {
			for _, text := range texts {
				for fi, f := range filters {
					q := store.SearchQuery{Text: text, Mode: store.Keyword, Limit: 20, Filter: f}
					want, err := scan.Search(ctx, v, q)
					if err != nil {
						t.Fatal(err)
					}
					for name, s := range map[string]*matrixone.Store{"full-text": ft, "term index": cached} {
						got, err := s.Search(ctx, v, q)
						if err != nil {
							t.Fatal(err)
						}
						if d := cmp.Diff(keys(want), keys(got)); d != "" {
							t.Errorf("%s: %+v %q filter %d: the %s path differs from the scan (-scan +%s):\n%s", stage, v.At, text, fi, name, name, d)
						}
					}
				}
			}
		}
	}
	compare("first")
	// New versions after the snapshot, written by this store and by another one: the
	// old ones must still be found at it, and the term index must follow both.
	var later, others []store.Record
	for i, r := range recs[:60] {
		if f, ok := r.(store.Fact); ok {
			f.Text = fmt.Sprintf("rewritten %d about kerberos tickets", i)
			if i%2 == 0 {
				later = append(later, f)
			} else {
				others = append(others, f)
			}
		}
	}
	put(t, cached, "main", later)
	put(t, scan, "main", others)
	if err := scan.Delete(ctx, "main", []store.Ref{store.RefOf(recs[3])}); err != nil {
		t.Fatal(err)
	}
	compare("after writes")
	if fullText {
		if n, _ := matrixone.SearchIndexQueries(ft); n == 0 {
			t.Errorf("no keyword query went through the FULLTEXT index")
		}
	}
	if n, _ := matrixone.SearchIndexQueries(scan); n != 0 {
		t.Errorf("the store with FullText off used the index %d times", n)
	}
	if n := matrixone.TermQueries(cached); n == 0 {
		t.Errorf("no keyword search went through the term index")
	}
	if n := matrixone.TermQueries(ft) + matrixone.TermQueries(scan); n != 0 {
		t.Errorf("the stores with KeywordCache off used the term index %d times", n)
	}
	// The corpus's facts have sessions, so the searches gave them context: from the
	// term index, or from one query each without it.
	if n := matrixone.SessionQueries(cached); n != 0 {
		t.Errorf("the store with the term index read sessions from the server %d times", n)
	}
	if n := matrixone.SessionQueries(ft); n == 0 {
		t.Errorf("the store without the term index never read sessions from the server")
	}
}

// TestVectorIndex builds an IVFFLAT index when a write crosses Options.VectorIndexRows
// and checks that searches through it, probing every list, rank like the exact scan;
// a branch copy starts without the index until BuildVectorIndexes.
func TestVectorIndex(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	const dims = 16
	opts := func(o *matrixone.Options) {
		o.Dimensions, o.VectorIndexRows, o.VectorProbes = dims, 200, 1024
		o.VectorCodes = matrixone.IndexOff
	}
	ivf := openWith(t, dsn, opts)
	defer ivf.Close()
	if ivf.Capabilities().VectorPath != matrixone.VectorPathIVFFlat {
		t.Skipf("the store's vector path is %q on %s, not IVFFLAT (the server lacks it, or diffs natively)", ivf.Capabilities().VectorPath, ivf.Capabilities().Version)
	}
	exact := openWith(t, dsn, func(o *matrixone.Options) { opts(o); o.VectorIndex = matrixone.IndexOff })
	defer exact.Close()
	ctx := t.Context()
	recs := corpus(450, dims, 3) // 300 facts: the facts table crosses 200 rows
	put(t, ivf, "main", recs)
	matrixone.WaitIndexBuilds(ivf) // the build runs after the write, in the background
	if _, err := ivf.CreateSnapshot(ctx, "main", "before", ""); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 9))
	var later []store.Record
	for _, rec := range recs[:90] {
		if f, ok := rec.(store.Fact); ok {
			f.Embedding = vectest.Unit(r, dims)
			later = append(later, f)
		}
	}
	put(t, ivf, "main", later)
	matrixone.WaitIndexBuilds(ivf)
	compare := func(s1, s2 *matrixone.Store, v store.View, what string) {
		t.Helper()
		for i := range 15 {
			for _, f := range []store.Filter{{}, {Category: "db"}} {
				q := store.SearchQuery{Vector: vectest.Unit(r, dims), Mode: store.Vector, Limit: 10, Kinds: []store.Kind{store.KindFact}, Filter: f}
				want, err := s2.Search(ctx, v, q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s1.Search(ctx, v, q)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(keys(want), keys(got)); d != "" {
					t.Errorf("%s query %d: the index path differs from the exact scan (-exact +ivf):\n%s", what, i, d)
				}
			}
		}
	}
	compare(ivf, exact, store.View{Branch: "main"}, "head")
	compare(ivf, exact, store.View{At: store.Point{Snapshot: "before"}}, "snapshot")
	_, used := matrixone.SearchIndexQueries(ivf)
	if used == 0 {
		t.Fatalf("no vector query went through the IVFFLAT index")
	}
	if _, n := matrixone.SearchIndexQueries(exact); n != 0 {
		t.Errorf("the store with VectorIndex off used the index %d times", n)
	}
	// The index is on the vectors table, which holds every branch's embeddings: a
	// branch copy's searches go through it too.
	if _, err := ivf.CreateBranch(ctx, store.BranchSpec{Name: "copy"}); err != nil {
		t.Fatal(err)
	}
	compare(ivf, exact, store.View{Branch: "copy"}, "copy")
	if _, n := matrixone.SearchIndexQueries(ivf); n == used {
		t.Errorf("no search on the copy went through the index")
	}
	if err := ivf.BuildVectorIndexes(ctx, "copy"); err != nil {
		t.Fatal(err)
	}
	compare(ivf, exact, store.View{Branch: "copy"}, "copy indexed")
	if _, n := matrixone.SearchIndexQueries(ivf); n == used {
		t.Errorf("searches on the indexed copy did not use the index")
	}
	if err := exact.BuildVectorIndexes(ctx, "main"); err == nil {
		t.Errorf("BuildVectorIndexes with VectorIndex off succeeded")
	}
}

// TestKeywordStatsCache checks that keyword searches at a branch's head read the
// table's statistics from the server once per write to the branch, that a write
// elsewhere keeps them, and that the scores after a write are those of a fresh store.
func TestKeywordStatsCache(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s := openWith(t, dsn, func(o *matrixone.Options) { o.Dimensions, o.KeywordCache = 8, matrixone.IndexOff })
	defer s.Close()
	ctx := t.Context()
	put(t, s, "main", corpus(120, 8, 5))
	q := store.SearchQuery{Text: "database connection", Mode: store.Keyword, Kinds: []store.Kind{store.KindFact}, Limit: 10}
	search := func() []store.Hit {
		t.Helper()
		hits, err := s.Search(ctx, store.View{}, q)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	search()
	before := matrixone.StatsQueries(s)
	search()
	search()
	if n := matrixone.StatsQueries(s) - before; n != 0 {
		t.Errorf("searches at an unchanged head read the statistics %d times, want 0", n)
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "other"}); err != nil {
		t.Fatal(err)
	}
	put(t, s, "other", []store.Record{store.Fact{ID: "elsewhere", Text: "database connection pool"}})
	search()
	if n := matrixone.StatsQueries(s) - before; n != 0 {
		t.Errorf("a write to another branch made main's searches read the statistics %d times, want 0", n)
	}
	put(t, s, "main", []store.Record{store.Fact{ID: "new", Text: "the database connection string moved"}})
	got := search()
	if n := matrixone.StatsQueries(s) - before; n != 1 {
		t.Errorf("after a write to main the statistics were read %d times, want 1", n)
	}
	fresh := openWith(t, dsn, func(o *matrixone.Options) { o.Dimensions, o.KeywordCache = 8, matrixone.IndexOff })
	defer fresh.Close()
	want, err := fresh.Search(ctx, store.View{}, q)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(keys(want), keys(got)); d != "" {
		t.Errorf("scores after a write differ from a fresh store's (-fresh +cached):\n%s", d)
	}
}

// TestCodeSearch checks the vector path through the near-duplicate codes: searches of
// facts at head take it and find what the exact scan finds (recall at 10 of at least
// 95% over all queries, on embeddings that cluster as real ones do: each query near
// some facts, far from most), before and after writes that replace, supersede and
// delete facts; reads of the past and searches with history included leave it.
func TestCodeSearch(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	const dims = 384
	codes := openWith(t, dsn, func(o *matrixone.Options) { o.Dimensions = dims })
	defer codes.Close()
	exact := openWith(t, dsn, func(o *matrixone.Options) {
		o.Dimensions, o.VectorCodes, o.VectorIndex = dims, matrixone.IndexOff, matrixone.IndexOff
	})
	defer exact.Close()
	ctx := t.Context()
	r := rand.New(rand.NewPCG(11, 11))
	centres := make([][]float32, 40)
	for i := range centres {
		centres[i] = vectest.Unit(r, dims)
	}
	near := func(c []float32) []float32 {
		v := vectest.Unit(r, dims)
		var n float64
		for i := range v {
			v[i] = c[i] + 0.8*v[i]
			n += float64(v[i]) * float64(v[i])
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(n))
		}
		return v
	}
	var recs []store.Record
	for i := range 1200 {
		recs = append(recs, store.Fact{ID: fmt.Sprintf("f%04d", i), Text: fmt.Sprintf("fact number %d", i),
			Embedding: near(centres[i%len(centres)]), Category: []string{"auth", "db"}[i%2]})
	}
	put(t, codes, "main", recs)
	var found, wanted int
	compare := func(v store.View, q store.SearchQuery, what string) {
		t.Helper()
		want, err := exact.Search(ctx, v, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := codes.Search(ctx, v, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d hits, the exact scan has %d", what, len(got), len(want))
		}
		exactScore := map[string]float64{}
		for _, h := range want {
			exactScore[store.RefOf(h.Record).String()] = h.Score
		}
		for i, h := range got {
			if i > 0 && h.Score > got[i-1].Score {
				t.Errorf("%s: hit %d scores above the one before it", what, i)
			}
			if sc, ok := exactScore[store.RefOf(h.Record).String()]; ok {
				found++
				if sc != h.Score {
					t.Errorf("%s: %s scores %v, the exact scan %v", what, store.RefOf(h.Record), h.Score, sc)
				}
			}
		}
		wanted += len(want)
	}
	search := func(f store.Filter) store.SearchQuery {
		return store.SearchQuery{Vector: near(centres[r.IntN(len(centres))]), Mode: store.Vector, Limit: 10,
			Kinds: []store.Kind{store.KindFact}, Filter: f}
	}
	recall := func(what string) {
		t.Helper()
		if wanted == 0 || float64(found)/float64(wanted) < 0.95 {
			t.Errorf("%s: the code path found %d of the exact scan's %d hits, want at least 95%%", what, found, wanted)
		}
		t.Logf("%s: recall at 10 %d/%d", what, found, wanted)
		found, wanted = 0, 0
	}
	for i := range 20 {
		compare(store.View{}, search(store.Filter{}), fmt.Sprintf("head query %d", i))
		compare(store.View{}, search(store.Filter{Category: "db"}), fmt.Sprintf("filtered query %d", i))
	}
	recall("head")
	if n := matrixone.CodeQueries(codes); n != 40 {
		t.Errorf("%d searches went through the codes, want 40", n)
	}
	if _, err := codes.CreateSnapshot(ctx, "main", "before", ""); err != nil {
		t.Fatal(err)
	}
	var later []store.Record
	for i := range 100 {
		later = append(later, store.Fact{ID: fmt.Sprintf("f%04d", i), Text: fmt.Sprintf("fact number %d, again", i),
			Embedding: near(centres[(i+7)%len(centres)]), Status: []store.FactStatus{store.FactActive, store.FactSuperseded}[i%2]})
	}
	put(t, codes, "main", later)
	var gone []store.Ref
	for i := 100; i < 150; i++ {
		gone = append(gone, store.Ref{Kind: store.KindFact, ID: fmt.Sprintf("f%04d", i)})
	}
	if err := codes.Delete(ctx, "main", gone); err != nil {
		t.Fatal(err)
	}
	before := matrixone.CodeQueries(codes)
	for i := range 20 {
		compare(store.View{}, search(store.Filter{}), fmt.Sprintf("head query %d after writes", i))
	}
	recall("after writes")
	if n := matrixone.CodeQueries(codes) - before; n != 20 {
		t.Errorf("%d searches after writes went through the codes, want 20", n)
	}
	before = matrixone.CodeQueries(codes)
	for i := range 5 {
		compare(store.View{At: store.Point{Snapshot: "before"}}, search(store.Filter{}), fmt.Sprintf("snapshot query %d", i))
		q := search(store.Filter{})
		q.IncludeHistory = true
		compare(store.View{}, q, fmt.Sprintf("history query %d", i))
	}
	if found != wanted {
		t.Errorf("searches of the past and of history found %d of the exact scan's %d hits", found, wanted)
	}
	if n := matrixone.CodeQueries(codes) - before; n != 0 {
		t.Errorf("%d searches of the past or of history went through the codes, want 0", n)
	}
}

// TestNearDuplicateCodes writes facts with 64-dimension embeddings, whose codes narrow
// the near-duplicate candidates down, and checks that a near-duplicate supersedes its
// fact, in another batch and in the same one, and that unknown codes (rows written
// before codes existed) are always candidates.
func TestNearDuplicateCodes(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s := openWith(t, dsn, func(o *matrixone.Options) { o.Dimensions = 64 })
	defer s.Close()
	ctx := t.Context()
	r := rand.New(rand.NewPCG(5, 5))
	var recs []store.Record
	embs := map[string][]float32{}
	for i := range 300 {
		id := fmt.Sprintf("f%03d", i)
		embs[id] = vectest.Unit(r, 64)
		recs = append(recs, store.Fact{ID: id, Text: "fact number " + id, Embedding: embs[id]})
	}
	put(t, s, "main", recs)
	nearTo := func(id string) []float32 {
		v := slices.Clone(embs[id])
		v[0] += 0.05
		return v
	}
	opts := store.PutOptions{DedupeThreshold: 0.95}
	res, err := s.Put(ctx, "main", []store.Record{store.Fact{ID: "n1", Text: "a close copy", Embedding: nearTo("f017")}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != store.Superseded || res[0].Replaced != "f017" {
		t.Errorf("near-duplicate of f017: %s replacing %q", res[0].Outcome, res[0].Replaced)
	}
	// Forget every code: every fact becomes a candidate, too many to fetch, and the
	// check must still find the near-duplicate by asking the server.
	if _, err := s.DB().ExecContext(ctx, "UPDATE facts_b0 SET dup_code = ''"); err != nil {
		t.Fatal(err)
	}
	s2 := openWith(t, dsn, func(o *matrixone.Options) { o.Dimensions = 64 })
	defer s2.Close()
	res, err = s2.Put(ctx, "main", []store.Record{
		store.Fact{ID: "n2", Text: "another close copy", Embedding: nearTo("f230")},
		store.Fact{ID: "n3", Text: "a copy of the batch's own fact", Embedding: func() []float32 { v := nearTo("f230"); v[1] += 0.05; return v }()},
		store.Fact{ID: "n4", Text: "far from everything", Embedding: vectest.Unit(r, 64)},
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{string(res[0].Outcome) + " " + res[0].Replaced, string(res[1].Outcome) + " " + res[1].Replaced, string(res[2].Outcome)}
	want := []string{"superseded f230", "superseded n2", "created"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
}

// TestMigrationRekeysOldTables turns a database back into the shape it had before
// migration 004 (record tables keyed by (id, rev), no dup_code, no FULLTEXT index) and
// opens it again: the migration rebuilds every table of every branch, the records and
// their history read as before, and writes work.
func TestMigrationRekeysOldTables(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	// Without FULLTEXT indexes, as the tables were: one would also forbid dropping the
	// primary key.
	s := openWith(t, dsn, func(o *matrixone.Options) { o.FullText = matrixone.IndexOff })
	ctx := t.Context()
	recs := corpus(60, 8, 4)
	put(t, s, "main", recs)
	if _, err := s.CreateSnapshot(ctx, "main", "snap", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "task/a"}); err != nil {
		t.Fatal(err)
	}
	put(t, s, "task/a", []store.Record{store.Fact{ID: "f0000", Text: "changed on the branch"}})
	read := func(s store.Store) map[string][]store.Record {
		return listViews(t, s, store.View{Branch: "main"}, store.View{Branch: "task/a"}, store.View{At: store.Point{Snapshot: "snap"}})
	}
	before := read(s)
	db := s.DB()
	exec := func(q string) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Before migration 012 the embeddings were in the record tables.
	embeddingsBack(t, db, "b0", "b1")
	for _, sfx := range []string{"b0", "b1"} {
		for _, prefix := range []string{"facts", "observations", "relations", "conversations", "messages"} {
			name := prefix + "_" + sfx
			exec("ALTER TABLE " + name + " DROP PRIMARY KEY")
			exec("ALTER TABLE " + name + " DROP COLUMN vid")
			exec("ALTER TABLE " + name + " ADD PRIMARY KEY (id, rev)")
			if prefix == "facts" {
				exec("ALTER TABLE " + name + " DROP COLUMN dup_code")
			}
			// Tables that old had no search columns either (migration 010).
			if prefix == "conversations" || prefix == "messages" {
				exec("ALTER TABLE " + name + " DROP COLUMN tokens")
				exec("ALTER TABLE " + name + " DROP COLUMN doc_len")
			}
			if prefix == "messages" {
				exec("ALTER TABLE " + name + " DROP COLUMN embedding")
			}
		}
	}
	exec("DELETE FROM day1_migrations WHERE version IN (4, 10, 12)")
	s.Close()
	s2 := openTest(t, dsn)
	defer s2.Close()
	if d := cmp.Diff(before, read(s2)); d != "" {
		t.Errorf("records after the migration (-before +after):\n%s", d)
	}
	var n int
	// The five record tables of each branch, rekeyed, its aliases table (made with vid
	// by migration 008), and the three vectors tables.
	if err := s2.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = database() AND column_name = 'vid'").Scan(&n); err != nil || n != 15 {
		t.Errorf("%d tables have vid (%v); want 15", n, err)
	}
	put(t, s2, "main", []store.Record{store.Fact{ID: "new", Text: "written after the zanzibar migration"}})
	// Without the term index, the search goes to the server.
	s3 := openWith(t, dsn, func(o *matrixone.Options) { o.KeywordCache = matrixone.IndexOff })
	defer s3.Close()
	hits, err := s3.Search(ctx, store.View{Branch: "main"}, store.SearchQuery{Text: "zanzibar", Mode: store.Keyword, WindowWeight: -1})
	if err != nil || len(hits) != 1 || hits[0].Record.RecordID() != "new" {
		t.Errorf("search after the migration: %v, %v", hits, err)
	}
	if s3.Capabilities().KeywordPath == matrixone.KeywordPathFullText {
		// Open made the FULLTEXT indexes the tables lacked, and the search used one.
		if n, _ := matrixone.SearchIndexQueries(s3); n == 0 {
			t.Errorf("the search after the migration did not use a FULLTEXT index")
		}
	}
}

// TestMigrationMovesVectors puts the embeddings of a database back into its record
// tables, as they were before migration 012, and opens it again: the migration copies
// them into the vectors tables and drops the column, and every record, its history and
// a vector search read as before.
func TestMigrationMovesVectors(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s := openTest(t, dsn)
	ctx := t.Context()
	recs := corpus(60, 8, 5)
	recs = append(recs,
		store.Message{ID: "m1", ConversationID: "c1", Seq: 1, Role: store.RoleUser, Content: "the zanzibar invoice", Embedding: []float32{1, 0, 0, 0, 0, 0, 0, 0}},
		store.Message{ID: "m2", ConversationID: "c1", Seq: 2, Role: store.RoleAssistant, Content: "no embedding here"})
	put(t, s, "main", recs)
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "task/a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSnapshot(ctx, "task/a", "snap", ""); err != nil {
		t.Fatal(err)
	}
	changed := recs[0].(store.Fact)
	changed.Text, changed.Embedding = "changed on the branch", []float32{0, 1, 0, 0, 0, 0, 0, 0}
	put(t, s, "task/a", []store.Record{changed})
	query := store.SearchQuery{Vector: []float32{0, 1, 0, 0, 0, 0, 0, 0}, Mode: store.Vector, Limit: 5}
	read := func(s store.Store) map[string]any {
		views := []store.View{{Branch: "main"}, {Branch: "task/a"}, {At: store.Point{Snapshot: "snap"}}}
		out := map[string]any{"records": listViews(t, s, views...)}
		for _, v := range views {
			hits, err := s.Search(ctx, v, query)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range hits {
				ids = append(ids, h.Record.RecordID())
			}
			out[fmt.Sprint(v, "search")] = ids
		}
		return out
	}
	before := read(s)
	db := s.DB()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	embeddingsBack(t, db, "b0", "b1")
	exec("DELETE FROM day1_migrations WHERE version = 12")
	s.Close()
	s2 := openTest(t, dsn)
	defer s2.Close()
	if d := cmp.Diff(before, read(s2)); d != "" {
		t.Errorf("records after the migration (-before +after):\n%s", d)
	}
	// On a database with a natively forked branch the column stays, unread: the
	// facts, observations and messages tables of both branches.
	keep := 0
	if s2.Capabilities().BranchPath == matrixone.BranchPathNative {
		keep = 6
	}
	var n int
	if err := s2.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = database() AND column_name = 'embedding' AND table_name NOT LIKE '%vectors'").Scan(&n); err != nil || n != keep {
		t.Errorf("%d record tables keep an embedding column (%v); want %d", n, err, keep)
	}
	// The embeddings of main's versions are shared by the branch's copies: one row each.
	if err := s2.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM facts_vectors").Scan(&n); err != nil || n != 41 {
		t.Errorf("facts_vectors holds %d rows (%v); want 41: 40 facts and the branch's change", n, err)
	}
}

// listViews lists every record of every kind each view sees, by id, keyed by view and
// kind.
func listViews(t *testing.T, s store.Store, views ...store.View) map[string][]store.Record {
	t.Helper()
	out := map[string][]store.Record{}
	for _, v := range views {
		for _, k := range store.Kinds {
			rs, err := s.List(t.Context(), v, store.ListQuery{Kind: k, Order: store.OrderID})
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprint(v, k)] = rs
		}
	}
	return out
}

// embeddingsBack puts the embeddings of the vectors tables back into the record tables
// of the branches of the given suffixes, as they were kept before migration 012, and
// empties the vectors tables.
func embeddingsBack(t *testing.T, db *sql.DB, suffixes ...string) {
	t.Helper()
	ctx := t.Context()
	for _, prefix := range []string{"facts", "observations", "messages"} {
		type vec struct {
			vid int64
			emb string
		}
		var vecs []vec
		rs, err := db.QueryContext(ctx, "SELECT vid, embedding FROM "+prefix+"_vectors")
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var v vec
			if err := rs.Scan(&v.vid, &v.emb); err != nil {
				t.Fatal(err)
			}
			vecs = append(vecs, v)
		}
		rs.Close()
		for _, sfx := range suffixes {
			name := prefix + "_" + sfx
			stmts := []string{"ALTER TABLE " + name + " ADD COLUMN embedding vecf32(8) NULL"}
			args := [][]any{nil}
			for _, v := range vecs {
				stmts, args = append(stmts, "UPDATE "+name+" SET embedding = ? WHERE vid = ?"), append(args, []any{v.emb, v.vid})
			}
			for i, q := range stmts {
				if _, err := db.ExecContext(ctx, q, args[i]...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
		if _, err := db.ExecContext(ctx, "DELETE FROM "+prefix+"_vectors"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeleteBranchDropsItsVectors deletes a branch: the embeddings of the versions it
// wrote go with its tables, and those it shared with its parent stay.
func TestDeleteBranchDropsItsVectors(t *testing.T) {
	t.Parallel()
	s := openTest(t, testDatabase(t))
	defer s.Close()
	ctx := t.Context()
	put(t, s, "main", corpus(30, 8, 6))
	count := func() int {
		t.Helper()
		var n int
		if err := s.DB().QueryRowContext(ctx, "SELECT (SELECT COUNT(*) FROM facts_vectors) + (SELECT COUNT(*) FROM observations_vectors)").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 30 {
		t.Fatalf("%d embeddings after 30 writes", n)
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "task/a"}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 9))
	put(t, s, "task/a", []store.Record{
		store.Fact{ID: "f0000", Text: "changed on the branch", Embedding: vectest.Unit(r, 8)},
		store.Fact{ID: "new", Text: "new on the branch", Embedding: vectest.Unit(r, 8)},
		store.Observation{ID: "o-new", Summary: "seen on the branch", Type: store.ObsDiscovery, Embedding: vectest.Unit(r, 8)},
	})
	if n := count(); n != 33 {
		t.Fatalf("%d embeddings after the branch's writes; want 33", n)
	}
	if err := s.DeleteBranch(ctx, "task/a"); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 30 {
		t.Errorf("%d embeddings after the branch was deleted; want main's 30", n)
	}
	got, err := s.Get(ctx, store.View{Branch: "main"}, store.FactRef("f0000"))
	if err != nil || len(store.EmbeddingOf(got)) != 8 {
		t.Errorf("main's f0000 after the delete: %v, %v", got, err)
	}
}

// TestMigrationWidensDupCode narrows dup_code back to the width 256-bit codes had and
// opens the database again: migration 005 widens it, and facts with 384-dimension
// embeddings (512-bit codes) can be written.
func TestMigrationWidensDupCode(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s := openWith(t, dsn, func(o *matrixone.Options) { o.Dimensions = 384 })
	ctx := t.Context()
	for _, q := range []string{
		"ALTER TABLE facts_b0 MODIFY COLUMN dup_code VARCHAR(80) NOT NULL DEFAULT ''",
		"DELETE FROM day1_migrations WHERE version = 5",
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s2 := openWith(t, dsn, func(o *matrixone.Options) { o.Dimensions = 384 })
	defer s2.Close()
	var width int
	if err := s2.DB().QueryRowContext(ctx, "SELECT character_maximum_length FROM information_schema.columns WHERE table_schema = database() AND table_name = 'facts_b0' AND column_name = 'dup_code'").Scan(&width); err != nil || width != 160 {
		t.Errorf("dup_code width %d (%v); want 160", width, err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	if _, err := s2.Put(ctx, "main", []store.Record{store.Fact{ID: "f", Text: "a fact with a code", Embedding: vectest.Unit(r, 384)}}, store.PutOptions{DedupeThreshold: 0.9}); err != nil {
		t.Errorf("Put after the migration: %v", err)
	}
}

// TestMigrationAddsMessageSearch removes the search columns of migration 010 from the
// conversations and messages tables, as databases made before it have them, and opens
// the database again: the migration adds them, fills the tokens of the rows there, and
// keyword search finds those messages and conversations.
func TestMigrationAddsMessageSearch(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s := openWith(t, dsn, func(o *matrixone.Options) { o.FullText = matrixone.IndexOff })
	ctx := t.Context()
	put(t, s, "main", []store.Record{
		store.Conversation{ID: "c1", Title: "quarterly zanzibar review"},
		store.Message{ID: "m1", ConversationID: "c1", Seq: 1, Role: store.RoleUser, Content: "the zanzibar invoice is late"},
		store.Message{ID: "m2", ConversationID: "c1", Seq: 2, Role: store.RoleAssistant, Content: "I will chase it"},
	})
	db := s.DB()
	for _, q := range []string{
		"ALTER TABLE conversations_b0 DROP COLUMN tokens", "ALTER TABLE conversations_b0 DROP COLUMN doc_len",
		"ALTER TABLE messages_b0 DROP COLUMN tokens", "ALTER TABLE messages_b0 DROP COLUMN doc_len",
		"DELETE FROM day1_migrations WHERE version = 10",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s2 := openTest(t, dsn)
	defer s2.Close()
	hits, err := s2.Search(ctx, store.View{Branch: "main"}, store.SearchQuery{Text: "zanzibar", Mode: store.Keyword, Window: 1,
		WindowWeight: -1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, store.RefOf(h.Record).String())
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"conversation/c1", "message/m1"}) {
		t.Fatalf("hits after the migration: %v", got)
	}
	for _, h := range hits {
		if m, ok := h.Message(); ok && (len(h.After) != 1 || h.After[0].ID != "m2" || h.ConversationTitle != "quarterly zanzibar review") {
			t.Errorf("hit %s: after %v, title %q", m.ID, h.After, h.ConversationTitle)
		}
	}
	// Messages written after it have embeddings.
	put(t, s2, "main", []store.Record{store.Message{ID: "m3", ConversationID: "c1", Seq: 3, Role: store.RoleUser,
		Content: "thanks", Embedding: []float32{1, 0, 0, 0, 0, 0, 0, 0}}})
	if got, err := s2.Get(ctx, store.View{Branch: "main"}, store.MessageRef("m3")); err != nil || len(store.EmbeddingOf(got)) == 0 {
		t.Errorf("m3 read back: %v, %v", got, err)
	}
}

// TestMigrationStemsTerms: migration 011 rewrites the tokens of rows written before
// keyword search stemmed its terms, so that another form of a word finds them; where
// it leaves rows as written (beside natively forked branches), they are matched by
// the query's words as written and scored by their stems.
func TestMigrationStemsTerms(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s := openWith(t, dsn, func(o *matrixone.Options) { o.FullText = matrixone.IndexOff })
	ctx := t.Context()
	put(t, s, "main", []store.Record{
		store.Fact{ID: "f1", Text: "She painted the harbour at sunrise", Status: store.FactActive},
		store.Conversation{ID: "c1", Title: "Weekend sketches"},
		store.Message{ID: "m1", ConversationID: "c1", Seq: 1, Role: store.RoleUser, Content: "I keep sketching boats"},
	})
	db := s.DB()
	for _, q := range []string{
		"UPDATE facts_b0 SET tokens = ' she painted harbour sunrise ' WHERE id = 'f1'",
		"UPDATE conversations_b0 SET tokens = ' weekend sketches ' WHERE id = 'c1'",
		"UPDATE messages_b0 SET tokens = ' keep sketching boats ' WHERE id = 'm1'",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	search := func(s *matrixone.Store, text string) []string {
		t.Helper()
		hits, err := s.Search(ctx, store.View{Branch: "main"}, store.SearchQuery{Text: text, Mode: store.Keyword, WindowWeight: -1})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, store.RefOf(h.Record).String())
		}
		slices.Sort(got)
		return got
	}
	// Rows as written: another form of the word misses them, unless the store knows.
	if got := search(s, "paint"); len(got) != 0 {
		t.Fatalf("unstemmed rows found by a stem: %v", got)
	}
	matrixone.SetWordsAsWritten(s, true)
	if got := search(s, "painted sketches"); !slices.Equal(got, []string{"conversation/c1", "fact/f1"}) {
		t.Errorf("words as written: hits %v, want the fact and the conversation", got)
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM day1_migrations WHERE version = 11"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := openTest(t, dsn)
	defer s2.Close()
	db = s2.DB()
	var tokens string
	if err := db.QueryRowContext(ctx, "SELECT tokens FROM facts_b0 WHERE id = 'f1'").Scan(&tokens); err != nil {
		t.Fatal(err)
	}
	if want := " paint harbour sunr "; tokens != want {
		t.Errorf("tokens after the migration %q, want %q", tokens, want)
	}
	for text, want := range map[string][]string{
		"paints":    {"fact/f1"},
		"sketch":    {"conversation/c1", "message/m1"},
		"sunrises":  {"fact/f1"},
		"boat ride": {"message/m1"},
	} {
		if got := search(s2, text); !slices.Equal(got, want) {
			t.Errorf("%q after the migration: hits %v, want %v", text, got, want)
		}
	}
}

// TestMigrationLeavesNativeRows: beside a natively forked branch, migration 011 leaves
// the rows' tokens as written, and the store reopened on them matches a query's words
// as written, scored by their stems.
func TestMigrationLeavesNativeRows(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s := openWith(t, dsn, func(o *matrixone.Options) { o.FullText = matrixone.IndexOff })
	ctx := t.Context()
	put(t, s, "main", []store.Record{store.Fact{ID: "f1", Text: "She painted the harbour at sunrise", Status: store.FactActive}})
	db := s.DB()
	for _, q := range []string{
		"UPDATE facts_b0 SET tokens = ' painted harbour sunrise ' WHERE id = 'f1'",
		// A branch forked natively, as on 3.x: main stands in for one.
		"UPDATE day1_branches SET fork_path = 'native' WHERE name = 'main'",
		"DELETE FROM day1_migrations WHERE version = 11",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s2 := openWith(t, dsn, func(o *matrixone.Options) { o.FullText = matrixone.IndexOff })
	defer s2.Close()
	var tokens string
	if err := s2.DB().QueryRowContext(ctx, "SELECT tokens FROM facts_b0 WHERE id = 'f1'").Scan(&tokens); err != nil {
		t.Fatal(err)
	}
	if tokens != " painted harbour sunrise " {
		t.Errorf("tokens after the migration %q, want them as written", tokens)
	}
	for _, text := range []string{"painted", "the harbour she painted"} {
		hits, err := s2.Search(ctx, store.View{Branch: "main"}, store.SearchQuery{Text: text, Mode: store.Keyword, WindowWeight: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0].Record.RecordID() != "f1" || !(hits[0].KeywordScore > 0) {
			t.Errorf("%q: hits %v, want f1 with a keyword score", text, keys(hits))
		}
	}
}

// TestMigrationAddsExpiry removes the expires_at column of migration 013 from a facts
// table, as databases made before it have it, and opens the database again: the
// migration adds it, the facts there never expire, and a fact written with an expiry
// leaves the searches of live facts once it expires.
func TestMigrationAddsExpiry(t *testing.T) {
	t.Parallel()
	dsn := testDatabase(t)
	s := openTest(t, dsn)
	ctx := t.Context()
	put(t, s, "main", []store.Record{store.Fact{ID: "f1", Text: "the zanzibar office opens at nine"}})
	for _, q := range []string{
		"ALTER TABLE facts_b0 DROP COLUMN expires_at",
		"DROP TABLE day1_expiring",
		"DELETE FROM day1_migrations WHERE version = 13",
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s2 := openTest(t, dsn)
	defer s2.Close()
	at := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	put(t, s2, "main", []store.Record{store.Fact{ID: "f2", Text: "the zanzibar office closes for the week", CreatedAt: at, ExpiresAt: at.Add(time.Hour)}})
	for _, c := range []struct {
		filter store.Filter
		want   []string
	}{
		{store.Filter{}, []string{"f1", "f2"}},
		{store.Filter{LiveAt: at.Add(2 * time.Hour)}, []string{"f1"}},
		{store.Filter{NotExpired: true}, []string{"f1"}},
	} {
		hits, err := s2.Search(ctx, store.View{Branch: "main"}, store.SearchQuery{Text: "zanzibar office", Mode: store.Keyword, Filter: c.filter})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.Record.RecordID())
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("search with %+v: %v; want %v", c.filter, got, c.want)
		}
	}
}
