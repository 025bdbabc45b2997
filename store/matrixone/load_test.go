package matrixone_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
)

// loadTexts are written into every text column of the records TestWritePaths writes:
// each character LOAD DATA gives a meaning to, at the start, middle and end of a field.
var loadTexts = []string{
	`back\slash`, `trailing\`, `\`, `say "hi"`, `"`, "new\nline", "cr\r\nlf", "tab\there",
	"a,b,,c", `\N`, "N", "", "'single'", "nul\x00byte", "ctrl\x1az", "日本語のテキスト",
	"emoji 🙂 text", `\\N\\`, "\"\\\n\r,", "   spaced   ",
}

// TestWritePaths writes the same batches through LOAD DATA and through INSERT
// statements, into two databases, and reads back the same records from both.
func TestWritePaths(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 5, 6, 7, 891234567, time.UTC)
	open := func(mode matrixone.IndexMode) *matrixone.Store {
		s := openWith(t, testDatabase(t), func(o *matrixone.Options) {
			o.LoadData = mode
			o.Now = func() time.Time { return now }
		})
		t.Cleanup(func() { s.Close() })
		return s
	}
	load, insert := open(matrixone.IndexAuto), open(matrixone.IndexOff)
	if got := insert.Capabilities().WritePath; got != matrixone.WritePathInsert {
		t.Errorf("WritePath = %q with LoadData off; want %q", got, matrixone.WritePathInsert)
	}
	// Both servers the store is built for load data inside a transaction; a probe that
	// says otherwise failed on its escapes.
	if c := load.Capabilities(); !c.LoadData || c.WritePath != matrixone.WritePathLoad {
		t.Errorf("LoadData %v, WritePath %q on %s; want true, %q", c.LoadData, c.WritePath, c.Version, matrixone.WritePathLoad)
	}
	matrixone.SetWritePath(load, matrixone.WritePathLoad)
	want := matrixone.WritePathLoad

	r := rand.New(rand.NewPCG(7, 11))
	emb := func() []float32 {
		v := make([]float32, 8)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	var recs []store.Record
	for i := range 7 * len(loadTexts) {
		x := loadTexts[i%len(loadTexts)]
		at := now.Add(-time.Duration(i) * time.Hour)
		recs = append(recs,
			store.Fact{ID: fmt.Sprintf("f%03d", i), Text: fmt.Sprintf("fact %d: %s", i, x), Embedding: emb(),
				Category: x, Confidence: 1 / float64(i+3), Status: store.FactActive, SourceType: "tool", SourceID: fmt.Sprintf("src-%d", i),
				SessionID: "s1", TaskID: "t1", AgentID: "a1", Metadata: map[string]string{"k" + x: x, "k": x},
				CreatedAt: at, UpdatedAt: at.Add(time.Nanosecond * 999)},
			store.Observation{ID: fmt.Sprintf("o%03d", i), Type: store.ObsToolUse, Tool: x,
				Summary: fmt.Sprintf("observation %d: %s", i, x), Embedding: emb(), RawInput: x, RawOutput: x + x,
				Metadata: map[string]string{"raw": x}, CreatedAt: at},
			store.Relation{ID: fmt.Sprintf("r%03d", i), Source: fmt.Sprintf("s%d", i), Target: "t", Type: "rel",
				Properties: map[string]string{"p": x}, Confidence: 0.5, ValidFrom: at, CreatedAt: at})
	}
	ctx := t.Context()
	for _, s := range []*matrixone.Store{load, insert} {
		if _, err := s.Put(ctx, store.DefaultBranch, recs, store.PutOptions{}); err != nil {
			t.Fatalf("Put with write path %s: %v", s.Capabilities().WritePath, err)
		}
	}
	// Facts, observations and relations; embeddings go in INSERTs.
	if n := matrixone.Loads(load); n != 3 {
		t.Errorf("the store with write path %s sent %d loads; want 3", want, n)
	}
	if n := matrixone.Loads(insert); n != 0 {
		t.Errorf("the store with LoadData off sent %d loads; want 0", n)
	}
	for _, k := range []store.Kind{store.KindFact, store.KindObservation, store.KindRelation} {
		var got [2][]store.Record
		for i, s := range []*matrixone.Store{load, insert} {
			list, err := s.List(ctx, store.View{}, store.ListQuery{Kind: k, Order: store.OrderID})
			if err != nil {
				t.Fatalf("List %s: %v", k, err)
			}
			got[i] = list
		}
		if len(got[0]) != 7*len(loadTexts) {
			t.Errorf("%s: listed %d records written by %s; want %d", k, len(got[0]), want, 7*len(loadTexts))
		}
		if d := cmp.Diff(got[1], got[0]); d != "" {
			t.Errorf("%s: records written by %s differ from those INSERT wrote (-insert +%s):\n%s", k, want, want, d)
		}
	}
	// The text itself came back, not only the same text from both paths.
	f, err := load.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: "f013"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.(store.Fact).Category; got != loadTexts[13] {
		t.Errorf("category of f013 = %q; want %q", got, loadTexts[13])
	}
}
