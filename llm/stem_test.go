package llm

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/day1ai/day1/internal/vectest"
)

func TestStem(t *testing.T) {
	// Forms of one word share a stem.
	for _, group := range [][]string{
		{"fail", "fails", "failed", "failing"},
		{"authenticate", "authenticated", "authenticating", "authentication"},
		{"run", "running"},
		{"happy", "happiness"},
		{"migrate", "migrated", "migration", "migrations"},
		{"organize", "organized", "organization"},
		{"deploy", "deploys", "deployed", "deploying", "deployment"},
		{"query", "queries"},
	} {
		want := Stem(group[0])
		for _, w := range group[1:] {
			if got := Stem(w); got != want {
				t.Errorf("Stem(%q) = %q, want %q as for %q", w, got, want, group[0])
			}
		}
	}
	// Short words, words with digits or non-ASCII letters stay as they are.
	for _, w := range []string{"db", "api", "oauth2", "café", "k8s"} {
		if got := Stem(w); got != w {
			t.Errorf("Stem(%q) = %q, want it unchanged", w, got)
		}
	}
	// Unrelated words keep distinct stems.
	if Stem("falling") == Stem("fail") || Stem("status") == Stem("state") {
		t.Error("unrelated words share a stem")
	}
}

func TestStemEmbedder(t *testing.T) {
	e := NewStemEmbedder(0)
	if e.Dimensions() != DefaultDimensions || e.Name() != "local-stem-384" {
		t.Fatalf("dims %d, name %q", e.Dimensions(), e.Name())
	}
	if e.Name() == NewLocalEmbedder(0).Name() {
		t.Fatal("the stem and hashing embedders share a name")
	}
	if QualityOf(e) != QualityLexical {
		t.Errorf("quality %v", QualityOf(e))
	}
	vec := func(s string) []float32 {
		t.Helper()
		v, err := e.EmbedOne(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := vec("The deployment failed twice")
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 2.0/256 {
		t.Errorf("norm² = %v, want 1 to within 2⁻⁷", norm)
	}
	for i, x := range v {
		if math.Float32bits(x)&0xffff != 0 {
			t.Fatalf("coordinate %d = %v is not a bfloat16 value", i, x)
		}
	}
	// Deterministic: equal texts, equal vectors, through either entry point.
	vs, err := e.Embed(context.Background(), []string{"The deployment failed twice", "x"})
	if err == nil {
		t.Fatal("a text without words embedded")
	}
	if !errors.Is(err, ErrEmptyText) || vs != nil {
		t.Fatalf("Embed = %v, %v; want nil and ErrEmptyText", vs, err)
	}
	vs, err = e.Embed(context.Background(), []string{"The deployment failed twice"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if v[i] != vs[0][i] {
			t.Fatal("Embed and EmbedOne differ")
		}
	}

	// Word forms match through the stem better than with the hashing embedder.
	h := NewLocalEmbedder(0)
	hvec := func(s string) []float32 {
		v, err := h.EmbedOne(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, b := "deployments failing after migrations", "the deploy fails once we migrate"
	if cs, ch := vectest.Cosine(vec(a), vec(b)), vectest.Cosine(hvec(a), hvec(b)); cs <= ch || cs < 0.5 {
		t.Errorf("cosine of word forms: stem %.3f, hash %.3f; want stem above hash and 0.5", cs, ch)
	}
	// Common words weigh less than content words: a text sharing only "really
	// think" with the query ranks below one sharing "kubernetes".
	q := vec("I really think the kubernetes cluster")
	if c1, c2 := vectest.Cosine(q, vec("really think so")), vectest.Cosine(q, vec("kubernetes upgrade")); c1 >= c2 {
		t.Errorf("common words %.3f >= content word %.3f", c1, c2)
	}
	if _, err := e.EmbedOne("the of and"); !errors.Is(err, ErrEmptyText) {
		t.Errorf("stopwords only: %v", err)
	}
}

func TestStemEmbedderCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewStemEmbedder(8).Embed(ctx, []string{"a b"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkStemEmbedderEmbedOne reports texts/s of 100-character notes on one core.
func BenchmarkStemEmbedderEmbedOne(b *testing.B) {
	e := NewStemEmbedder(0)
	b.SetBytes(int64(len(sentence100)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		v, err := e.EmbedOne(sentence100)
		if err != nil {
			b.Fatal(err)
		}
		sinkVec = v
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "texts/s")
}

// BenchmarkLocalEmbedderTexts reports the hashing embedder's texts/s, to compare.
func BenchmarkLocalEmbedderTexts(b *testing.B) {
	e := NewLocalEmbedder(0)
	n := 0
	for b.Loop() {
		v, err := e.EmbedOne(sentence100)
		if err != nil {
			b.Fatal(err)
		}
		sinkVec = v
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "texts/s")
}
