package llm

import "testing"

func TestQualityOf(t *testing.T) {
	local := NewLocalEmbedder(0)
	if q := QualityOf(local); q != QualityLexical {
		t.Errorf("QualityOf(LocalEmbedder) = %v, want lexical", q)
	}
	if q := QualityOf(NewCachedEmbedder(local, 0)); q != QualityLexical {
		t.Errorf("QualityOf(cached LocalEmbedder) = %v, want lexical", q)
	}
	if q := QualityOf(nil); q != QualityUnknown {
		t.Errorf("QualityOf(nil) = %v, want unknown", q)
	}
	if QualitySemantic.String() != "semantic" || QualityUnknown.String() != "unknown" {
		t.Error("Quality.String")
	}
}
