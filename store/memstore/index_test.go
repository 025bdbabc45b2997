package memstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/internal/simhash"
	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/internal/vectest"
	"github.com/day1ai/day1/store"
)

// TestTextKeyMatchesNormText checks that textKey, which folds ASCII text without
// allocating, hashes every text as hashing store.NormText's folding does.
func TestTextKeyMatchesNormText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Word  ", maxFoldLen/5)
	for _, s := range []string{
		"", " ", "\t\n", "a", "Fix the AUTH bug", "  leading and trailing  ", "tabs\tand\nnew\r\nlines\v\f",
		"MiXeD   CaSe\t\tRuns", "punctuation, stays: (as is)!", "Ünïcode Straße", "non\u00a0breaking space",
		"ideographs 記憶 テスト", "next\u0085line", long, long + "É", strings.Repeat("x", maxFoldLen),
		strings.Repeat("y", maxFoldLen+1),
	} {
		if got, want := textKey(s), normKey(store.NormText(s)); got != want {
			t.Errorf("textKey(%q) = %x, want %x (the hash of %q)", s, got, want, store.NormText(s))
		}
	}
}

// TestAnalyzeCountsTokens checks analyze against counting textsearch.Terms,
// for short texts and for one with more distinct terms than its linear count holds.
func TestAnalyzeCountsTokens(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	for i := range 3 * maxLinearTerms {
		many.WriteString("term")
		many.WriteString(strings.Repeat("x", i%7))
		many.WriteByte(byte('a' + i%26))
		many.WriteString(" and Again ")
	}
	for _, text := range []string{
		"", "the", "Fix the auth bug: the AUTH token expires", "user_id maps to user and id",
		"記憶 記憶 テスト", many.String(),
	} {
		got := analyze(text)
		tokens := textsearch.Terms(text)
		want := map[string]int32{}
		for tok, n := range textsearch.TermFreqs(tokens) {
			want[tok] = int32(n)
		}
		counts := map[string]int32{}
		for _, tc := range got.terms {
			if _, dup := counts[tc.term]; dup {
				t.Errorf("analyze(%q) lists %q twice", text, tc.term)
			}
			counts[tc.term] = tc.n
		}
		if diff := cmp.Diff(want, counts); diff != "" {
			t.Errorf("analyze(%q) terms (-want +got):\n%s", text, diff)
		}
		if got.n != int32(len(tokens)) || got.text != text || got.tkey != textKey(text) {
			t.Errorf("analyze(%q) = n %d, text %q, tkey %x; want n %d, the text and its textKey", text, got.n, got.text, got.tkey, len(tokens))
		}
	}
}

// TestSketchBoundKeepsNearPairs checks the sketch test that near-duplicate candidates
// pass before their whole code is read: pairs at the threshold pass it but for a
// negligible share, and pairs at the threshold pass the sketch and code tests together
// but for a negligible share too, while most pairs of little likeness are turned away.
func TestSketchBoundKeepsNearPairs(t *testing.T) {
	t.Parallel()
	const dims, pairs, threshold = 384, 10_000, 0.92
	rng := rand.New(rand.NewPCG(7, 9))
	rot := vecmath.NewRotation(dims, rotationSeed)
	codeBound, bound := simhash.HammingBound(threshold, rot.Bits()), sketchBound(threshold)
	sketchDist := func(a, b []uint64) int {
		return vecmath.Hamming(a[len(a)-sketchWords:], b[len(b)-sketchWords:])
	}
	for _, nonzero := range [][]int{nil, {24}} {
		var over, eitherOver, far int
		for range pairs {
			v := vectest.Unit(rng, dims, nonzero...)
			a := rot.AppendCode(nil, v, nil)
			b := rot.AppendCode(nil, vectest.AtCosine(rng, v, threshold), nil)
			d := sketchDist(a, b)
			if d > bound {
				over++
			}
			if d > bound || vecmath.Hamming(a, b) > codeBound {
				eitherOver++
			}
			c := rot.AppendCode(nil, vectest.Unit(rng, dims), nil)
			if sketchDist(a, c) <= bound {
				far++
			}
		}
		t.Logf("nonzero %v: sketch bound %d of %d bits; of %d pairs at %.2f, %d over it, %d over it or the code's; %d at 0.30 within it",
			nonzero, bound, sketchWords*64, pairs, threshold, over, eitherOver, far)
		if over > 1 {
			t.Errorf("nonzero %v: %d of %d pairs at cosine %.2f differ in more than %d sketch bits, want at most 1", nonzero, over, pairs, threshold, bound)
		}
		if eitherOver > 2 {
			t.Errorf("nonzero %v: %d of %d pairs at cosine %.2f fail the sketch or the code test, want at most 2", nonzero, eitherOver, pairs, threshold)
		}
		if far > pairs/100 {
			t.Errorf("nonzero %v: %d of %d pairs at cosine 0.30 pass the sketch bound of %d bits, want under one in a hundred", nonzero, far, pairs, bound)
		}
	}
}

// TestSketchFilter checks that the filter keeps exactly the candidates within the
// bound, in order, for bounds from none to every bit.
func TestSketchFilter(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	const vectors = 500
	sketch := make([]uint64, vectors*sketchWords)
	for i := range sketch {
		sketch[i] = rng.Uint64()
	}
	var qs [sketchWords]uint64
	for i := range qs {
		qs[i] = rng.Uint64()
	}
	for _, bound := range []int{-1, 0, 20, 40, 64, 80, sketchWords * 64} {
		cands := make([]int32, 300)
		for i := range cands {
			cands[i] = int32(rng.IntN(vectors))
		}
		var want []int32
		for _, c := range cands {
			if vecmath.Hamming(sketch[int(c)*sketchWords:][:sketchWords], qs[:]) <= bound {
				want = append(want, c)
			}
		}
		if got, _ := sketchFilter(cands, sketch, qs, bound); !slices.Equal(got, want) {
			t.Errorf("bound %d: kept %d candidates %v, want %d %v", bound, len(got), got, len(want), want)
		}
	}
}

// TestMergedVersionsShareVectorSlots checks that a merge's copy of a record shares the
// source version's vector slot, and that both stay found by vector search and by the
// near-duplicate check on their own branch, whichever branch is deleted afterwards.
func TestMergedVersionsShareVectorSlots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, drop := range []string{"source", "target"} {
		t.Run("drop "+drop, func(t *testing.T) {
			s, err := New(Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rng := rand.New(rand.NewPCG(8, 8))
			vec := func() []float32 {
				v := make([]float32, 384)
				for i := range v {
					v[i] = float32(rng.NormFloat64())
				}
				return v
			}
			var filler []store.Record
			for i := range 50 {
				filler = append(filler, store.Fact{ID: fmt.Sprintf("f%02d", i), Text: fmt.Sprintf("filler %d", i), Embedding: vec()})
			}
			if _, err := s.Put(ctx, store.DefaultBranch, filler, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"target", "source"} {
				if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: name}); err != nil {
					t.Fatal(err)
				}
			}
			emb := vec()
			if _, err := s.Put(ctx, "source", []store.Record{store.Fact{ID: "m", Text: "merged fact", Embedding: emb}}, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			slots := len(s.index[store.KindFact].vecs)
			d, err := s.Diff(ctx, "source", "target")
			if err != nil {
				t.Fatal(err)
			}
			plan := store.MergePlan{Source: "source", Target: "target", ExpectHead: d.TargetHead,
				Puts: []store.Record{d.SourceChanges[0].After}, Record: store.MergeRecord{Strategy: store.Native}}
			if _, err := s.ApplyMerge(ctx, plan); err != nil {
				t.Fatal(err)
			}
			ix := s.index[store.KindFact]
			if len(ix.vecs) != slots {
				t.Fatalf("the merge added %d vector slots; want the source's shared", len(ix.vecs)-slots)
			}
			src := s.branches["source"].own.first[key{store.KindFact, "m"}]
			if v := ix.vecs[src.vi]; v != src || v.sameVec == nil || v.sameVec.br.info.Name != "target" || v.sameVec.sameVec != nil {
				t.Errorf("the shared slot's versions are not source's then target's")
			}
			keep := "target"
			if drop == "target" {
				keep = "source"
			}
			if err := s.DeleteBranch(ctx, drop); err != nil {
				t.Fatal(err)
			}
			hits, err := s.Search(ctx, store.View{Branch: keep}, store.SearchQuery{Mode: store.Vector, Vector: emb, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 1 || hits[0].Record.RecordID() != "m" {
				t.Fatalf("vector search on %s after deleting %s: %v; want fact m", keep, drop, hits)
			}
			near := append([]float32(nil), emb...)
			near[0] += 0.01
			res, err := s.Put(ctx, keep, []store.Record{store.Fact{ID: "n", Text: "merged fact, again", Embedding: near}}, store.PutOptions{DedupeThreshold: 0.95})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Outcome != store.Superseded || res[0].Replaced != "m" {
				t.Errorf("near-duplicate of m on %s: %s replacing %q; want superseded replacing m", keep, res[0].Outcome, res[0].Replaced)
			}
		})
	}
}

// TestFactDefaultsMatchWithDefaults checks that the defaults Put fills in place are
// store.WithDefaults's, for every combination of zero and set fields, of facts and
// of observations (through adopt).
func TestFactDefaultsMatchWithDefaults(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 3600))
	set := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	s := newMemStore(t)
	for mask := range 16 {
		f := store.Fact{ID: "f", Text: "t"}
		if mask&1 != 0 {
			f.CreatedAt = set
		}
		if mask&2 != 0 {
			f.UpdatedAt = set.Add(time.Hour)
		}
		if mask&4 != 0 {
			f.Status = store.FactVerified
		}
		if mask&8 != 0 {
			f.Confidence = 0.5
		}
		want := store.WithDefaults(f, now).(store.Fact)
		want.Branch = "main"
		got := s.adopt(f, true, "main", now)
		if diff := cmp.Diff(want, got.(store.Fact)); diff != "" {
			t.Errorf("fields set %04b: adopt (-WithDefaults +adopt):\n%s", mask, diff)
		}
	}
	for _, created := range []time.Time{{}, set} {
		o := store.Observation{ID: "o", Type: store.ObsDecision, Summary: "s", CreatedAt: created}
		want := store.WithDefaults(o, now).(store.Observation)
		want.Branch = "main"
		if diff := cmp.Diff(want, s.adopt(o, true, "main", now).(store.Observation)); diff != "" {
			t.Errorf("observation created %v: adopt (-WithDefaults +adopt):\n%s", created, diff)
		}
	}
}

// TestHistoryOnly: the filter a search adds by default is told from every other, so
// that only it is decided by docMeta.history.
func TestHistoryOnly(t *testing.T) {
	tests := []struct {
		f    store.Filter
		want bool
	}{
		{store.Filter{ExcludeStatuses: store.HistoryStatuses}, true},
		{store.Filter{ExcludeStatuses: []store.FactStatus{store.FactInvalidated, store.FactSuperseded, store.FactInvalidated}}, true},
		{store.Filter{}, false},
		{store.Filter{ExcludeStatuses: []store.FactStatus{store.FactSuperseded}}, false},
		{store.Filter{ExcludeStatuses: append([]store.FactStatus{store.FactActive}, store.HistoryStatuses...)}, false},
		{store.Filter{ExcludeStatuses: store.HistoryStatuses, Category: "auth"}, false},
	}
	for _, tt := range tests {
		if got := store.HistoryOnly(tt.f); got != tt.want {
			t.Errorf("store.HistoryOnly(%+v) = %v; want %v", tt.f, got, tt.want)
		}
	}
	for _, st := range []store.FactStatus{store.FactActive, store.FactVerified, store.FactPromoted, store.FactSuperseded, store.FactInvalidated} {
		f := store.Fact{Status: st}
		if got, want := isHistory(&version{rec: keepFact(f)}), !(store.Filter{ExcludeStatuses: store.HistoryStatuses}).Match(f); got != want {
			t.Errorf("isHistory(%s) = %v; want %v, as Filter.Match decides", st, got, want)
		}
	}
}

// TestKeywordAtHeadMatchesChain: a keyword search at the head of main, which reads
// docFast alone, ranks as the same search on a fork of main taken at its head, which
// reads the chain: after updates, supersedes, invalidations and deletes.
func TestKeywordAtHeadMatchesChain(t *testing.T) {
	ctx := context.Background()
	s := newMemStore(t)
	var recs []store.Record
	for i := range 300 {
		recs = append(recs, store.Fact{ID: fmt.Sprintf("f%d", i), Text: fmt.Sprintf("service %d talks to queue %d over grpc %d", i%7, i%11, i%13)})
	}
	if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var changes []store.Record
	for i := 0; i < 300; i += 10 {
		changes = append(changes, store.Fact{ID: fmt.Sprintf("f%d", i), Text: fmt.Sprintf("service %d moved to queue %d", i%5, i%3)})
	}
	for i := 5; i < 300; i += 20 {
		changes = append(changes, store.Fact{ID: fmt.Sprintf("f%d", i), Text: fmt.Sprintf("service %d talks to queue %d over grpc %d", i%7, i%11, i%13), Status: store.FactInvalidated})
	}
	if _, err := s.Put(ctx, store.DefaultBranch, changes, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, store.DefaultBranch, []store.Ref{store.FactRef("f1"), store.FactRef("f2")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "fork"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []store.SearchQuery{
		{Text: "service queue grpc", Mode: store.Keyword, Limit: 1000, WindowWeight: -1},
		{Text: "queue moved", Mode: store.Keyword, Limit: 1000, IncludeHistory: true, WindowWeight: -1},
		{Text: "service 3", Mode: store.Keyword, Limit: 1000, Filter: store.Filter{Status: store.FactInvalidated}, WindowWeight: -1},
	} {
		main, err := s.Search(ctx, store.View{}, q)
		if err != nil {
			t.Fatal(err)
		}
		fork, err := s.Search(ctx, store.View{Branch: "fork"}, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(main) == 0 || len(main) != len(fork) {
			t.Fatalf("%q: %d hits on main, %d on the fork", q.Text, len(main), len(fork))
		}
		// The terms' scores add up in map order, so their last bits, and the order of
		// equal scores, may differ: compare every hit's score by id.
		onFork := map[string]float64{}
		for _, h := range fork {
			onFork[h.Record.RecordID()] = h.Score
		}
		for _, h := range main {
			id := h.Record.RecordID()
			if sc, ok := onFork[id]; !ok || math.Abs(sc-h.Score) > 1e-9 {
				t.Errorf("%q: %s scores %.6f on main, %.6f (found %v) on the fork", q.Text, id, h.Score, sc, ok)
			}
		}
	}
}

// TestKeywordInThePast checks that keyword search at a snapshot of a branch without
// ancestors, which reads the dense tags of the versions still current, finds what the
// reading of every version's metadata finds: over updates, deletes, a branch's own
// writes and snapshots taken along the way.
func TestKeywordInThePast(t *testing.T) {
	ctx := context.Background()
	s := newMemStore(t)
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	text := func() string {
		return words[r.IntN(len(words))] + " " + words[r.IntN(len(words))] + " note " + fmt.Sprint(r.IntN(5))
	}
	var snaps []string
	for round := range 12 {
		var recs []store.Record
		for range 20 {
			recs = append(recs, store.Fact{ID: fmt.Sprint("f", r.IntN(60)), Text: text()})
		}
		if _, err := s.Put(ctx, store.DefaultBranch, dedupeRecords(recs), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if round == 3 {
			if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "side"}); err != nil {
				t.Fatal(err)
			}
		}
		if round > 3 {
			if _, err := s.Put(ctx, "side", []store.Record{store.Fact{ID: fmt.Sprint("s", round), Text: text()}}, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if round%3 == 2 {
			if err := s.Delete(ctx, store.DefaultBranch, []store.Ref{{Kind: store.KindFact, ID: fmt.Sprint("f", r.IntN(60))}}); err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
		}
		name := fmt.Sprint("snap", round)
		if _, err := s.CreateSnapshot(ctx, store.DefaultBranch, name, ""); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, name)
	}
	search := func() [][]string {
		var out [][]string
		for _, name := range snaps {
			for _, w := range words {
				hits, err := s.Search(ctx, store.View{Branch: store.DefaultBranch, At: store.Point{Snapshot: name}},
					store.SearchQuery{Text: w + " note", Mode: store.Keyword, Limit: 100, WindowWeight: -1})
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, h := range hits {
					ids = append(ids, fmt.Sprintf("%s %.6f", h.Record.RecordID(), h.Score))
				}
				out = append(out, ids)
			}
		}
		return out
	}
	fast := search()
	ix := s.index[store.KindFact]
	if ix.unordered {
		t.Fatal("the versions were indexed out of commit order")
	}
	ix.unordered = true // every version's metadata read
	if d := cmp.Diff(search(), fast); d != "" {
		t.Errorf("search in the past (-metadata +tags):\n%s", d)
	}
}

// dedupeRecords keeps the last record of each id.
func dedupeRecords(recs []store.Record) []store.Record {
	seen := map[string]int{}
	var out []store.Record
	for _, r := range recs {
		if i, ok := seen[r.RecordID()]; ok {
			out[i] = r
			continue
		}
		seen[r.RecordID()] = len(out)
		out = append(out, r)
	}
	return out
}

// TestStatsAtSnapshotsMatchAFreshStore checks the document statistics that keyword
// scores rest on, at every point a view can be cut: a search at each snapshot, taken
// between batches that add, update and delete facts, scores every hit as a store
// holding only the facts live at that snapshot does.
func TestStatsAtSnapshotsMatchAFreshStore(t *testing.T) {
	ctx := context.Background()
	s := newMemStore(t)
	r := rand.New(rand.NewPCG(5, 6))
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}
	written := 0
	text := func() string { // unique, so that no write is deduplicated
		written++
		n := 1 + r.IntN(4)
		var ws []string
		for range n {
			ws = append(ws, words[r.IntN(len(words))])
		}
		return strings.Join(ws, " ") + fmt.Sprintf(" note%d", written)
	}
	var snaps []string
	for round := range 8 {
		var recs []store.Record
		for range 30 {
			recs = append(recs, store.Fact{ID: fmt.Sprint("f", r.IntN(80)), Text: text()})
		}
		if _, err := s.Put(ctx, store.DefaultBranch, dedupeRecords(recs), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if round%2 == 1 {
			if err := s.Delete(ctx, store.DefaultBranch, []store.Ref{{Kind: store.KindFact, ID: fmt.Sprint("f", r.IntN(80))}}); err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
		}
		name := fmt.Sprint("snap", round)
		if _, err := s.CreateSnapshot(ctx, store.DefaultBranch, name, ""); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, name)
	}
	scores := func(s *Store, v store.View, q string) map[string]string {
		t.Helper()
		hits, err := s.Search(ctx, v, store.SearchQuery{Text: q, Mode: store.Keyword, Limit: 200, WindowWeight: -1})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, h := range hits {
			out[h.Record.RecordID()] = fmt.Sprintf("%.9f", h.Score)
		}
		return out
	}
	for _, name := range append([]string{""}, snaps...) {
		at := store.View{Branch: store.DefaultBranch, At: store.Point{Snapshot: name}}
		if name == "" {
			at = store.View{Branch: store.DefaultBranch}
		}
		live, err := s.List(ctx, at, store.ListQuery{Kind: store.KindFact})
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		var recs []store.Record
		for _, f := range live {
			recs = append(recs, store.Fact{ID: f.RecordID(), Text: f.(store.Fact).Text})
		}
		if _, err := fresh.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, w := range words {
			if d := cmp.Diff(scores(fresh, store.View{Branch: store.DefaultBranch}, w), scores(s, at, w)); d != "" {
				t.Errorf("%s: scores for %q (-fresh store +at the snapshot):\n%s", name, w, d)
			}
		}
		fresh.Close()
	}
}

// TestExactTextDedupeAfterBranchDelete checks the index of texts when the first fact
// written with a text goes with its branch: the same text written since on another
// branch is still found, on that branch and on branches forked from it, and the texts
// of the deleted branch are found nowhere.
func TestExactTextDedupeAfterBranchDelete(t *testing.T) {
	ctx := context.Background()
	s := newMemStore(t)
	put := func(branch, id, text string) store.PutResult {
		t.Helper()
		res, err := s.Put(ctx, branch, []store.Record{store.Fact{ID: id, Text: text}}, store.PutOptions{DedupeThreshold: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	for _, name := range []string{"x", "z"} {
		if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	put("x", "x1", "the cache expires hourly")
	put("z", "z1", "the cache expires hourly")
	put(store.DefaultBranch, "m1", "the cache expires hourly")
	put("x", "x2", "only on x")
	if err := s.DeleteBranch(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if res := put(store.DefaultBranch, "m2", "The cache expires HOURLY"); res.Outcome != store.Deduplicated || res.Record.RecordID() != "m1" {
		t.Errorf("main: the same text again came back %s %s, want deduplicated to m1", res.Outcome, res.Record.RecordID())
	}
	if res := put("z", "z2", "the cache expires hourly"); res.Outcome != store.Deduplicated || res.Record.RecordID() != "z1" {
		t.Errorf("z: the same text again came back %s %s, want deduplicated to z1", res.Outcome, res.Record.RecordID())
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "y"}); err != nil {
		t.Fatal(err)
	}
	if res := put("y", "y1", "the cache expires hourly"); res.Outcome != store.Deduplicated || res.Record.RecordID() != "m1" {
		t.Errorf("y: the same text came back %s %s, want deduplicated to m1", res.Outcome, res.Record.RecordID())
	}
	if res := put("y", "y2", "only on x"); res.Outcome != store.Created {
		t.Errorf("y: the deleted branch's text came back %s %s, want created", res.Outcome, res.Record.RecordID())
	}
}

// TestKeywordMatchesExhaustiveScoring checks keyword search, which skips the documents
// that cannot reach the top k, against BM25 computed here over every fact a view
// lists: at a branch's head, at a snapshot, on a fork with writes of its own, with and
// without a filter and history. The corpus mixes terms found in most facts with rare
// ones, and repeats some terms within a fact, so that the bounds the search skips by
// are tight for some terms and loose for others. It runs again with every branch in the
// slot that branches share once the others are taken.
func TestKeywordMatchesExhaustiveScoring(t *testing.T) {
	t.Parallel()
	t.Run("own slots", func(t *testing.T) { testKeywordMatchesExhaustiveScoring(t, false) })
	t.Run("shared slot", func(t *testing.T) { testKeywordMatchesExhaustiveScoring(t, true) })
}

func testKeywordMatchesExhaustiveScoring(t *testing.T, shared bool) {
	ctx := context.Background()
	s := newMemStore(t)
	if shared {
		s.branches[store.DefaultBranch].slot = overflowSlot
		s.slots.next = overflowSlot - 1
	}
	r := rand.New(rand.NewPCG(11, 12))
	common := []string{"service", "queue", "deploy", "cache", "token", "region"}
	var rare []string
	for i := range 400 {
		rare = append(rare, fmt.Sprintf("w%dx", i))
	}
	text := func() string {
		var ws []string
		for range 1 + r.IntN(24) {
			switch x := r.Float64(); {
			case x < 0.5:
				ws = append(ws, common[r.IntN(len(common))])
			default:
				ws = append(ws, rare[int(float64(len(rare))*x*x)%len(rare)])
			}
		}
		return strings.Join(ws, " ")
	}
	statuses := []store.FactStatus{store.FactActive, store.FactActive, store.FactActive, store.FactInvalidated}
	fact := func(id string) store.Fact {
		return store.Fact{ID: id, Text: text(), Category: fmt.Sprint("c", r.IntN(3)), Status: statuses[r.IntN(len(statuses))]}
	}
	put := func(branch string, n, ids int) {
		t.Helper()
		var recs []store.Record
		for range n {
			recs = append(recs, fact(fmt.Sprint("f", r.IntN(ids))))
		}
		if _, err := s.Put(ctx, branch, dedupeRecords(recs), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put(store.DefaultBranch, 3000, 2500)
	if _, err := s.CreateSnapshot(ctx, store.DefaultBranch, "then", ""); err != nil {
		t.Fatal(err)
	}
	put(store.DefaultBranch, 800, 3000)
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "fork"}); err != nil {
		t.Fatal(err)
	}
	if got := s.branches["fork"].slot; shared != (got == overflowSlot) {
		t.Fatalf("the fork's slot is %d", got)
	}
	put("fork", 400, 3200)
	put(store.DefaultBranch, 200, 3000)
	onFork, err := s.List(ctx, store.View{Branch: "fork"}, store.ListQuery{Kind: store.KindFact})
	if err != nil {
		t.Fatal(err)
	}
	var gone []store.Ref
	for i := 0; i < len(onFork); i += 50 {
		gone = append(gone, store.FactRef(onFork[i].RecordID()))
	}
	if err := s.Delete(ctx, "fork", gone); err != nil {
		t.Fatal(err)
	}

	views := map[string]store.View{
		"head":     {},
		"snapshot": {At: store.Point{Snapshot: "then"}},
		"fork":     {Branch: "fork"},
	}
	for name, v := range views {
		facts, err := s.List(ctx, v, store.ListQuery{Kind: store.KindFact})
		if err != nil {
			t.Fatal(err)
		}
		for qi := range 40 {
			var qs []string
			for range 1 + r.IntN(7) {
				if r.IntN(2) == 0 {
					qs = append(qs, common[r.IntN(len(common))])
				} else {
					qs = append(qs, rare[r.IntN(len(rare))])
				}
			}
			q := store.SearchQuery{Text: strings.Join(qs, " "), Mode: store.Keyword, Kinds: []store.Kind{store.KindFact}, Limit: []int{1, 10, 50}[qi%3], WindowWeight: -1}
			switch qi % 4 {
			case 1:
				q.IncludeHistory = true
			case 2:
				q.Filter.Category = "c1"
			}
			hits, err := s.Search(ctx, v, q)
			if err != nil {
				t.Fatal(err)
			}
			want := exhaustiveBM25(facts, q)
			if len(hits) != len(want) {
				t.Fatalf("%s, %q: %d hits, want %d", name, q.Text, len(hits), len(want))
			}
			byID := map[string]float64{}
			for _, w := range want {
				byID[w.id] = w.score
			}
			for i, h := range hits {
				id := h.Record.RecordID()
				sc, ok := byID[id]
				if math.Abs(h.Score-want[i].score) > 1e-9 || !ok && math.Abs(h.Score-want[len(want)-1].score) > 1e-9 || ok && math.Abs(sc-h.Score) > 1e-9 {
					t.Errorf("%s, %q, limit %d: hit %d is %s at %.9f; want %s at %.9f", name, q.Text, q.Limit, i, id, h.Score, want[i].id, want[i].score)
				}
			}
		}
	}
}

// TestKeywordAfterOldVersionsAreReplaced updates facts indexed so long ago that the
// index no longer keeps their analysis (more than recentTerms versions before): the
// postings of the versions replaced must stop counting at the head, as they do for
// versions replaced soon after their writing.
func TestKeywordAfterOldVersionsAreReplaced(t *testing.T) {
	ctx := context.Background()
	s := newMemStore(t)
	var recs []store.Record
	for i := range recentTerms + 500 {
		recs = append(recs, store.Fact{ID: fmt.Sprint("f", i), Text: fmt.Sprintf("alpha w%dx filler number %d", i%50, i)})
	}
	for lo := 0; lo < len(recs); lo += store.MaxBatch {
		if _, err := s.Put(ctx, store.DefaultBranch, recs[lo:min(lo+store.MaxBatch, len(recs))], store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var updates []store.Record
	for i := range 200 {
		updates = append(updates, store.Fact{ID: fmt.Sprint("f", i), Text: fmt.Sprintf("beta w%dx rewritten %d", i%7, i)})
	}
	if _, err := s.Put(ctx, store.DefaultBranch, updates, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	checkKeywordAtHead(t, s, "after the updates", "alpha w3x", "beta w3x", "filler number 17", "alpha beta rewritten")
}

// checkKeywordAtHead searches each text by keyword at the head of the default branch,
// 50 hits, and checks the scores against BM25 computed over every fact listed there.
func checkKeywordAtHead(t *testing.T, s *Store, when string, texts ...string) {
	t.Helper()
	ctx := context.Background()
	facts, err := s.List(ctx, store.View{}, store.ListQuery{Kind: store.KindFact})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range texts {
		q := store.SearchQuery{Text: text, Mode: store.Keyword, Kinds: []store.Kind{store.KindFact}, Limit: 50, WindowWeight: -1}
		hits, err := s.Search(ctx, store.View{}, q)
		if err != nil {
			t.Fatal(err)
		}
		want := exhaustiveBM25(facts, q)
		if len(hits) != len(want) {
			t.Fatalf("%s, %q: %d hits, want %d", when, text, len(hits), len(want))
		}
		for i, h := range hits {
			if math.Abs(h.Score-want[i].score) > 1e-9 {
				t.Errorf("%s, %q: hit %d is %s at %.9f; want %s at %.9f", when, text, i, h.Record.RecordID(), h.Score, want[i].id, want[i].score)
			}
		}
	}
}

type scoredID struct {
	id    string
	score float64
}

// exhaustiveBM25 scores every fact against q's terms, with the document frequencies,
// count and mean length of all of facts, and returns the best q.Limit of those the
// query accepts.
func exhaustiveBM25(facts []store.Record, q store.SearchQuery) []scoredID {
	bm := textsearch.DefaultBM25
	df := map[string]int{}
	tfs := make([]map[string]int, len(facts))
	lens := make([]int, len(facts))
	total := 0
	for i, r := range facts {
		terms := textsearch.Terms(r.(store.Fact).Text)
		tfs[i], lens[i] = textsearch.TermFreqs(terms), len(terms)
		total += len(terms)
		for t := range tfs[i] {
			df[t]++
		}
	}
	avg := float64(total) / float64(len(facts))
	var out []scoredID
	for i, r := range facts {
		f := r.(store.Fact)
		if !q.IncludeHistory && f.Status == store.FactInvalidated || q.Filter.Category != "" && f.Category != q.Filter.Category {
			continue
		}
		score := 0.0
		for t := range textsearch.TermFreqs(textsearch.Terms(q.Text)) {
			if tf := tfs[i][t]; tf > 0 {
				score += bm.Score(tf, lens[i], avg, bm.IDF(df[t], len(facts)))
			}
		}
		if score > 0 {
			out = append(out, scoredID{f.ID, score})
		}
	}
	slices.SortStableFunc(out, func(a, b scoredID) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	return out[:min(len(out), q.Limit)]
}

// TestKeywordScoresLongTexts checks the scores of texts longer than a posting's fields
// hold, and of a term repeated more often: before and after the index drops a deleted
// branch's versions, which moves every later posting.
func TestKeywordScoresLongTexts(t *testing.T) {
	ctx := context.Background()
	s := newMemStore(t)
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "gone"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "gone", []store.Record{store.Fact{ID: "g", Text: "alpha beta " + strings.Repeat("alpha ", 70_000)}}, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	recs := []store.Record{
		store.Fact{ID: "long", Text: strings.Repeat("alpha ", 70_000) + "beta"},
		store.Fact{ID: "longer", Text: strings.Repeat("gamma ", 80_000) + "alpha beta beta"},
	}
	for i := range 40 {
		recs = append(recs, store.Fact{ID: fmt.Sprint("f", i), Text: strings.Repeat("alpha ", 1+i%3) + fmt.Sprint("beta gamma note ", i)})
	}
	if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	checkKeywordAtHead(t, s, "before", "alpha", "beta", "alpha beta gamma")
	if err := s.DeleteBranch(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	checkKeywordAtHead(t, s, "after the branch is deleted", "alpha", "beta", "alpha beta gamma")
}

// TestSlotsRecycleAndOverflow checks the slots of branches: each live branch has its
// own until they run out, then they share overflowSlot, and a deleted branch's slot is
// handed out again.
func TestSlotsRecycleAndOverflow(t *testing.T) {
	var a slots
	seen := map[uint16]bool{}
	for range overflowSlot - 1 {
		slot := a.take()
		if slot == 0 || slot == overflowSlot || seen[slot] {
			t.Fatalf("slot %d handed out (seen before: %v)", slot, seen[slot])
		}
		seen[slot] = true
	}
	if got := a.take(); got != overflowSlot {
		t.Fatalf("slot %d after all were taken, want %d", got, overflowSlot)
	}
	a.give(overflowSlot)
	a.give(7)
	if got := a.take(); got != 7 {
		t.Errorf("slot %d after 7 was given back", got)
	}
	if got := a.take(); got != overflowSlot {
		t.Errorf("slot %d once 7 was taken again, want %d", got, overflowSlot)
	}

	ctx := context.Background()
	s := newMemStore(t)
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	slot := s.branches["a"].slot
	if slot == s.branches[store.DefaultBranch].slot {
		t.Fatalf("branch a shares slot %d with main", slot)
	}
	if err := s.DeleteBranch(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	if got := s.branches["b"].slot; got != slot {
		t.Errorf("branch b has slot %d, want the deleted branch's %d", got, slot)
	}
}

// newMemStore opens an in-memory store, closed when the test ends.
func newMemStore(t *testing.T) *Store {
	t.Helper()
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSketchAfterBranchDelete deletes a branch whose facts hold vector slots among
// main's: every slot left keeps the sketch of its own code, and a near-duplicate of a
// main fact written afterwards is still found through the sketch test.
func TestSketchAfterBranchDelete(t *testing.T) {
	ctx := context.Background()
	const dims = 384
	rng := rand.New(rand.NewPCG(21, 22))
	random := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "side"}); err != nil {
		t.Fatal(err)
	}
	var mainEmbs [][]float32
	for round := range 4 {
		for _, br := range []string{store.DefaultBranch, "side"} {
			var recs []store.Record
			for i := range 100 {
				e := random()
				if br == store.DefaultBranch {
					mainEmbs = append(mainEmbs, e)
				}
				recs = append(recs, store.Fact{ID: fmt.Sprintf("%s-%d-%d", br, round, i), Text: fmt.Sprintf("fact %s %d %d", br, round, i), Embedding: e})
			}
			if _, err := s.Put(ctx, br, recs, store.PutOptions{DedupeThreshold: 0.92}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.DeleteBranch(ctx, "side"); err != nil {
		t.Fatal(err)
	}
	ix := s.index[store.KindFact]
	if len(ix.sketch) != len(ix.vecs)*sketchWords || len(ix.vecs) != len(mainEmbs) {
		t.Fatalf("%d sketch words for %d vector slots after the delete; want %d slots of %d words", len(ix.sketch), len(ix.vecs), len(mainEmbs), sketchWords)
	}
	for i := range ix.vecs {
		got, c := ix.sketch[i*sketchWords:(i+1)*sketchWords], ix.code(i)
		if want := c[len(c)-sketchWords:]; !slices.Equal(got, want) {
			t.Fatalf("slot %d: sketch %x, want its code's last words %x", i, got, want)
		}
	}
	var recs []store.Record
	for i := range 80 {
		e := slices.Clone(mainEmbs[i*5])
		e[i%dims] += 0.05
		recs = append(recs, store.Fact{ID: fmt.Sprint("again-", i), Text: fmt.Sprint("another wording ", i), Embedding: e})
	}
	res, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{DedupeThreshold: 0.92})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if want := fmt.Sprintf("main-%d-%d", i*5/100, i*5%100); r.Outcome != store.Superseded || r.Replaced != want {
			t.Errorf("fact %d: %s replacing %q, want superseded replacing %q", i, r.Outcome, r.Replaced, want)
		}
	}
}

// TestBatchFindsItsOwnPairsAtTheThreshold writes one batch whose second half holds, for
// each fact of the first, a fact at cosine 0.93, just above the threshold, where a
// band index misses about one pair in thirty: the batch's own vectors are scanned, so
// every pair is found but for the sketch and code tests' chance of under 1e-4.
func TestBatchFindsItsOwnPairsAtTheThreshold(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const dims, pairs = 384, 400
	rng := rand.New(rand.NewPCG(41, 43))
	recs := make([]store.Record, 2*pairs)
	for i := range pairs {
		v := vectest.Unit(rng, dims)
		recs[i] = store.Fact{ID: fmt.Sprintf("f%03d", i), Text: fmt.Sprintf("fact %d", i), Embedding: v}
		recs[pairs+i] = store.Fact{ID: fmt.Sprintf("r%03d", i), Text: fmt.Sprintf("fact %d near", i), Embedding: vectest.AtCosine(rng, v, 0.93)}
	}
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Put(context.Background(), store.DefaultBranch, recs, store.PutOptions{DedupeThreshold: 0.92})
	if err != nil {
		t.Fatal(err)
	}
	missed := 0
	for i, r := range res[pairs:] {
		if want := fmt.Sprintf("f%03d", i); r.Outcome != store.Superseded || r.Replaced != want {
			missed++
		}
	}
	if missed > 1 {
		t.Errorf("%d of %d pairs at cosine 0.93 in one batch not found, want at most 1", missed, pairs)
	}
}
