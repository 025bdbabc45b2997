package textsearch

import (
	"math"
	"testing"
)

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestBM25IDF(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		df, n int
		want  float64
	}{
		{"rare term", 1, 100, math.Log(1 + 99.5/1.5)},
		{"half the documents", 50, 100, math.Log(2)}, // (100-50+0.5)/(50+0.5) is 1
		{"every document stays positive", 100, 100, math.Log(1 + 0.5/100.5)},
		{"unseen term", 0, 10, math.Log(1 + 10.5/0.5)},
		{"df above n is clamped", 20, 10, math.Log(1 + 0.5/10.5)},
		{"negative df is clamped", -3, 10, math.Log(1 + 10.5/0.5)},
		{"empty collection", 0, 0, math.Log(2)},
		{"negative n", 5, -1, math.Log(2)},
	}
	for _, tt := range tests {
		got := DefaultBM25.IDF(tt.df, tt.n)
		if !approx(got, tt.want) {
			t.Errorf("%s: IDF(%d, %d) = %v, want %v", tt.name, tt.df, tt.n, got, tt.want)
		}
		if got < 0 || math.IsNaN(got) {
			t.Errorf("%s: IDF(%d, %d) = %v, want a non-negative number", tt.name, tt.df, tt.n, got)
		}
	}
	// Rarer terms weigh more.
	for df := 1; df < 100; df++ {
		if DefaultBM25.IDF(df, 100) >= DefaultBM25.IDF(df-1, 100) {
			t.Fatalf("IDF not decreasing at df=%d", df)
		}
	}
}

func TestBM25Score(t *testing.T) {
	t.Parallel()
	idf := 2.0
	tests := []struct {
		name   string
		p      BM25
		tf     int
		docLen int
		avg    float64
		want   float64
	}{
		{"average length, tf 1", DefaultBM25, 1, 10, 10, idf * 1 * 2.2 / (1 + 1.2)},
		{"average length, tf 3", DefaultBM25, 3, 10, 10, idf * 3 * 2.2 / (3 + 1.2)},
		{"long document", DefaultBM25, 1, 20, 10, idf * 2.2 / (1 + 1.2*(0.5+0.5*2))},
		{"short document", DefaultBM25, 1, 5, 10, idf * 2.2 / (1 + 1.2*(0.5+0.5*0.5))},
		{"zero tf", DefaultBM25, 0, 10, 10, 0},
		{"negative tf", DefaultBM25, -2, 10, 10, 0},
		{"no average skips normalisation", DefaultBM25, 1, 50, 0, idf * 2.2 / (1 + 1.2)},
		{"b=0 ignores length", BM25{K1: 1.2, B: 0}, 2, 1000, 10, idf * 2 * 2.2 / (2 + 1.2)},
		{"k1=0 ignores frequency", BM25{K1: 0, B: 0.75}, 7, 10, 10, idf},
	}
	for _, tt := range tests {
		got := tt.p.Score(tt.tf, tt.docLen, tt.avg, idf)
		if !approx(got, tt.want) {
			t.Errorf("%s: Score(%d, %d, %v, %v) = %v, want %v", tt.name, tt.tf, tt.docLen, tt.avg, idf, got, tt.want)
		}
	}
}

func TestBM25ScoreSaturates(t *testing.T) {
	t.Parallel()
	prev := 0.0
	for tf := 1; tf <= 1000; tf++ {
		s := DefaultBM25.Score(tf, 10, 10, 1)
		if s <= prev {
			t.Fatalf("Score not increasing at tf=%d: %v <= %v", tf, s, prev)
		}
		if s >= DefaultBM25.K1+1 {
			t.Fatalf("Score(tf=%d) = %v, above the k1+1 bound", tf, s)
		}
		prev = s
	}
}

var sinkFloat float64

func BenchmarkBM25Score(b *testing.B) {
	idf := DefaultBM25.IDF(12, 10000)
	for i := 0; b.Loop(); i++ {
		sinkFloat += DefaultBM25.Score(i&7+1, 40+i&63, 52.5, idf)
	}
}

func TestFullIsTheSameInAnyOrder(t *testing.T) {
	a := []float64{0.1, 1e-17, 3.3, 0.7, 1e-17}
	b := []float64{1e-17, 0.7, 1e-17, 3.3, 0.1}
	if Full(a) != Full(b) {
		t.Errorf("Full differs with the order: %v, %v", Full(a), Full(b))
	}
	if got := Full([]float64{1, 2}); got != 3 {
		t.Errorf("Full(1, 2) = %v; want 3", got)
	}
}
