package llm

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestWordCacheGivesTheSameVectors embeds texts with one featurizer, whose word cache
// fills, evicts (more distinct words than it holds) and meets vectors of two lengths,
// and compares every vector with the one a new featurizer, whose cache is empty,
// gives for the same text.
func TestWordCacheGivesTheSameVectors(t *testing.T) {
	t.Parallel()
	var texts []string
	for i := range 3 * wordCacheSize {
		texts = append(texts, fmt.Sprintf("word%d shared running runs café Ünïcödé %d-widgets deployments deployed", i%(2*wordCacheSize), i/7))
	}
	long := strings.Repeat("verylongword", 8)
	texts = append(texts, "日本語のテキスト mixed with english", "user_id and request_id in the logs",
		long+" and "+long+"s again "+long, "tokens "+strings.Repeat("ü", 40)+" and "+strings.Repeat("é", 50))
	embedders := []struct {
		name  string
		embed func(f *featurizer, text string, v []float32) bool
	}{{"local", (*featurizer).embed}, {"stem", (*featurizer).embedStem}}
	for _, e := range embedders {
		warm := &featurizer{}
		for i, text := range texts {
			dims := []int{384, 100}[i%2]
			got, want := make([]float32, dims), make([]float32, dims)
			if !e.embed(warm, text, got) || !e.embed(&featurizer{}, text, want) {
				t.Fatalf("%s: text %d has no features", e.name, i)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: text %d (%q) at %d dimensions: the warm cache gives another vector", e.name, i, text, dims)
			}
		}
	}
}
