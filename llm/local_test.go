package llm

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/internal/vecmath"
)

func mustEmbed(t testing.TB, e *LocalEmbedder, text string) []float32 {
	t.Helper()
	v, err := e.EmbedOne(text)
	if err != nil {
		t.Fatalf("EmbedOne(%q): %v", text, err)
	}
	return v
}

func sim(t testing.TB, e *LocalEmbedder, a, b string) float64 {
	t.Helper()
	return float64(vecmath.Dot(mustEmbed(t, e, a), mustEmbed(t, e, b)))
}

func TestNewLocalEmbedder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dims     int
		wantDims int
		wantName string
	}{
		{0, 384, "local-hash-384"},
		{-7, 384, "local-hash-384"},
		{DefaultDimensions, 384, "local-hash-384"},
		{64, 64, "local-hash-64"},
		{1536, 1536, "local-hash-1536"},
	}
	for _, tt := range tests {
		e := NewLocalEmbedder(tt.dims)
		if e.Dimensions() != tt.wantDims || e.Name() != tt.wantName {
			t.Errorf("NewLocalEmbedder(%d): Dimensions %d Name %q, want %d %q", tt.dims, e.Dimensions(), e.Name(), tt.wantDims, tt.wantName)
		}
		v := mustEmbed(t, e, "connection pool exhausted")
		if len(v) != tt.wantDims {
			t.Errorf("NewLocalEmbedder(%d): vector has %d components, want %d", tt.dims, len(v), tt.wantDims)
		}
	}
}

func TestLocalEmbedderUnitLengthAndDeterministic(t *testing.T) {
	t.Parallel()
	texts := []string{
		"connection pool exhausted",
		"Set MAX_RETRY_COUNT in auth_service.go",
		"数据库连接超时",
		"x 1",
		strings.Repeat("timeout ", 200),
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef deadline",
	}
	a, b := NewLocalEmbedder(0), NewLocalEmbedder(0)
	for _, text := range texts {
		v1, v2 := mustEmbed(t, a, text), mustEmbed(t, b, text)
		// Rounding every coordinate to 8 significant bits moves it, and the norm, by
		// at most 2⁻⁸ of its value.
		if n := vecmath.Norm(v1); math.Abs(float64(n)-1) > 1.0/256 {
			t.Errorf("%q: norm %v, want 1 to within 2⁻⁸", text, n)
		}
		for i, x := range v1 {
			if math.Float32bits(x)&0xffff != 0 {
				t.Fatalf("%q: coordinate %d = %v is not a bfloat16 value", text, i, x)
			}
		}
		for i := range v1 {
			if v1[i] != v2[i] {
				t.Fatalf("%q: two embedders disagree at %d: %v vs %v", text, i, v1[i], v2[i])
			}
		}
	}
}

func TestLocalEmbedderIgnoresCaseAndPunctuation(t *testing.T) {
	t.Parallel()
	e := NewLocalEmbedder(0)
	a, b := mustEmbed(t, e, "User-Authentication FAILED!"), mustEmbed(t, e, "user authentication failed")
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("vectors differ at %d", i)
		}
	}
}

func TestLocalEmbedderEmptyText(t *testing.T) {
	t.Parallel()
	e := NewLocalEmbedder(0)
	for _, text := range []string{"", "   \n\t", "the of and is", "!!! ... ???", "a b c", "🚀🔥"} {
		v, err := e.EmbedOne(text)
		if !errors.Is(err, ErrEmptyText) || v != nil {
			t.Errorf("EmbedOne(%q) = %v, %v; want nil, ErrEmptyText", text, v, err)
		}
	}
	// A batch fails as a whole and names the empty text.
	vs, err := e.Embed(context.Background(), []string{"valid text", "the", "more text"})
	if !errors.Is(err, ErrEmptyText) || vs != nil {
		t.Fatalf("Embed with an empty text = %v, %v; want nil, ErrEmptyText", vs, err)
	}
	if !strings.Contains(err.Error(), "texts[1]") || !strings.HasPrefix(err.Error(), "day1: ") {
		t.Errorf("error %q should start with day1: and name texts[1]", err)
	}
}

func TestLocalEmbedderBatch(t *testing.T) {
	t.Parallel()
	e := NewLocalEmbedder(32)
	texts := make([]string, 300) // crosses the periodic context check and is split over processors
	for i := range texts {
		texts[i] = "note number " + string(rune('a'+i%26)) + strings.Repeat("x", i%7+2)
	}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) != 32 || cap(v) != 32 {
			t.Fatalf("vector %d has len %d cap %d, want 32 and 32", i, len(v), cap(v))
		}
		want := mustEmbed(t, e, texts[i])
		for j := range v {
			if v[j] != want[j] {
				t.Fatalf("vector %d differs from EmbedOne at %d", i, j)
			}
		}
	}
	// A batch split over processors still fails as a whole, naming the first empty text.
	bad := slices.Clone(texts)
	bad[100], bad[250] = "the", "a"
	if vs, err := e.Embed(context.Background(), bad); !errors.Is(err, ErrEmptyText) || vs != nil || !strings.Contains(err.Error(), "texts[100]") {
		t.Errorf("Embed with empty texts at 100 and 250 = %d vectors, %v; want nil and ErrEmptyText naming texts[100]", len(vs), err)
	}
	// Appending to one vector must not overwrite the next.
	next := vs[1][0]
	_ = append(vs[0], 42)
	if vs[1][0] != next {
		t.Error("append to one vector changed the next one")
	}
	if vs, err := e.Embed(context.Background(), nil); err != nil || len(vs) != 0 {
		t.Errorf("Embed(nil) = %v, %v; want empty, nil", vs, err)
	}
}

func TestLocalEmbedderContext(t *testing.T) {
	t.Parallel()
	e := NewLocalEmbedder(0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if vs, err := e.Embed(ctx, []string{"hello world"}); !errors.Is(err, context.Canceled) || vs != nil {
		t.Errorf("Embed with a cancelled context = %v, %v; want nil, context.Canceled", vs, err)
	}
}

func TestLocalEmbedderConcurrent(t *testing.T) {
	t.Parallel()
	e := NewLocalEmbedder(0)
	texts := []string{"alpha beta gamma", "user_id lookup failed", "数据库连接超时", "retry retry retry"}
	want, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				got, err := e.Embed(context.Background(), texts)
				if err != nil {
					t.Error(err)
					return
				}
				for i := range got {
					for j := range got[i] {
						if got[i][j] != want[i][j] {
							t.Errorf("concurrent Embed differs for %q", texts[i])
							return
						}
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestLocalEmbedderQuality(t *testing.T) {
	t.Parallel()
	e := NewLocalEmbedder(0)
	const query = "authentication fails for users logging in"
	related := sim(t, e, query, "user authentication failure at login")
	unrelated := sim(t, e, query, "the database migration added an index on orders")
	if related-unrelated < 0.2 {
		t.Errorf("cosine related %.3f, unrelated %.3f: want related higher by at least 0.2", related, unrelated)
	}

	// Morphological variants share n-grams, unrelated words do not.
	variants := [][2]string{
		{"authenticate", "authentication"},
		{"fail", "failure"},
		{"fail", "failing"},
		{"failure", "failing"},
		{"user", "users"},
		{"login", "logging"},
	}
	unrelatedWords := [][2]string{
		{"fail", "database"},
		{"authenticate", "index"},
		{"login", "orders"},
		{"user", "migration"},
	}
	maxUnrelated := 0.0
	for _, p := range unrelatedWords {
		maxUnrelated = max(maxUnrelated, sim(t, e, p[0], p[1]))
	}
	for _, p := range variants {
		if s := sim(t, e, p[0], p[1]); s < 0.1 || s < maxUnrelated+0.1 {
			t.Errorf("cosine(%q, %q) = %.3f; want at least 0.1 and 0.1 above unrelated words (%.3f)", p[0], p[1], s, maxUnrelated)
		}
	}
}

func TestLocalEmbedderWordOrderAndRepetition(t *testing.T) {
	t.Parallel()
	e := NewLocalEmbedder(0)
	// Pairs of neighbouring words make order matter, a little.
	if s := sim(t, e, "cache invalidates session", "session invalidates cache"); s > 0.95 || s < 0.5 {
		t.Errorf("reordered words: cosine %.3f, want between 0.5 and 0.95", s)
	}
	// Sublinear term frequency: four repeats do not drown the other word. With linear
	// counts the cosine would be about 0.24.
	if s := sim(t, e, "timeout timeout timeout timeout database", "database"); s < 0.3 {
		t.Errorf("repeated word dominates: cosine with the other word %.3f, want >= 0.3", s)
	}
	// Han text is embedded character by character, with character pairs.
	if s := sim(t, e, "数据库连接超时", "数据库超时"); s < 0.5 {
		t.Errorf("similar Chinese texts: cosine %.3f, want >= 0.5", s)
	}
}

func TestCountTokensMapMatchesQuadratic(t *testing.T) {
	t.Parallel()
	words := strings.Fields("alpha beta gamma alpha delta beta alpha epsilon zeta eta theta alpha")
	var long []string
	for len(long) <= quadraticCountLimit*2 {
		long = append(long, words...)
	}
	for _, ws := range [][]string{words, long} {
		f := new(featurizer)
		for _, w := range ws {
			f.tokens = append(f.tokens, token{s: w, kind: textsearch.Word})
		}
		f.countTokens()
		want := map[string]int32{}
		for _, w := range ws {
			want[w]++
		}
		for _, tk := range f.tokens {
			if tk.count != want[tk.s] {
				t.Fatalf("%d tokens: count(%q) = %d, want %d", len(ws), tk.s, tk.count, want[tk.s])
			}
		}
	}
}

func TestNGramCount(t *testing.T) {
	t.Parallel()
	// Count the n-gram features of one word in a vector so wide that collisions are
	// practically impossible.
	tests := []struct {
		word string
		want int
	}{
		{"ab", 2 + 1},                // "<ab>": 3-grams <ab, ab>; 4-gram <ab>
		{"fail", 4 + 3 + 2},          // "<fail>"
		{"café", 4 + 3 + 2},          // runes, not bytes
		{"x", 0},                     // single runes get none
		{strings.Repeat("z", 41), 0}, // too long
		// Repeated letters repeat grams: only <zz, zzz, zz>, <zzz, zzzz, zzz>,
		// <zzzz, zzzzz, zzzz> are distinct.
		{strings.Repeat("z", 40), 9},
	}
	for _, tt := range tests {
		f := &featurizer{v: make([]float32, 1<<20)}
		f.word(tt.word, hashString(saltWord, tt.word)).addGrams(f, 1)
		nonzero := 0
		for _, x := range f.v {
			if x != 0 {
				nonzero++
			}
		}
		if nonzero != tt.want {
			t.Errorf("the n-grams of %q set %d dimensions, want %d", tt.word, nonzero, tt.want)
		}
	}
}

func TestShorten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel"},
		{"héllo", 2, "h"}, // é is two bytes: do not split it
		{"日本", 4, "日"},
		{"日本", 2, ""},
	}
	for _, tt := range tests {
		if got := shorten(tt.s, tt.n); got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

var sinkVec []float32

// sentence100 is a typical 100-character memory note.
const sentence100 = "Authentication fails for users logging in via the OAuth2 proxy after the session cache was flushed!!"

func BenchmarkLocalEmbedderEmbedOne(b *testing.B) {
	for _, dims := range []int{384, 1024} {
		e := NewLocalEmbedder(dims)
		b.Run("dims="+itoa(dims), func(b *testing.B) {
			b.SetBytes(int64(len(sentence100)))
			b.ReportAllocs()
			for b.Loop() {
				v, err := e.EmbedOne(sentence100)
				if err != nil {
					b.Fatal(err)
				}
				sinkVec = v
			}
		})
	}
}

func BenchmarkLocalEmbedderEmbedBatch32(b *testing.B) {
	e := NewLocalEmbedder(0)
	texts := make([]string, 32)
	for i := range texts {
		texts[i] = sentence100
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
