package memstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/day1ai/day1/store"
)

// validLog returns the log of a small durable store: a branch, facts with embeddings,
// an observation, a merge, a deletion and a snapshot.
var validLog = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "day1-fuzz")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s, err := New(Options{Path: dir, Sync: SyncNever})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	put := func(branch string, recs ...store.Record) {
		if err == nil {
			_, err = s.Put(ctx, branch, recs, store.PutOptions{})
		}
	}
	put(store.DefaultBranch, store.Fact{ID: "f1", Text: "the build uses go 1.25", Embedding: []float32{1, 0, 0}},
		store.Observation{ID: "o1", Type: store.ObsToolUse, Summary: "ran go test"})
	if err == nil {
		_, err = s.CreateBranch(ctx, store.BranchSpec{Name: "agent/a"})
	}
	put("agent/a", store.Fact{ID: "f2", Text: "tests need -race", Embedding: []float32{0, 1, 0}})
	if err == nil {
		var d *store.Diff
		if d, err = s.Diff(ctx, "agent/a", store.DefaultBranch); err == nil {
			_, err = s.ApplyMerge(ctx, store.MergePlan{Source: "agent/a", Target: store.DefaultBranch, ExpectHead: d.TargetHead,
				Puts: []store.Record{d.SourceChanges[0].After}, MarkMerged: true, SourceRev: d.SourceRev, Record: store.MergeRecord{Strategy: store.Native}})
		}
	}
	if err == nil {
		_, err = s.CreateSnapshot(ctx, store.DefaultBranch, "s1", "after the merge")
	}
	if err == nil {
		err = s.Delete(ctx, store.DefaultBranch, []store.Ref{{Kind: store.KindObservation, ID: "o1"}})
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, logName))
})

// FuzzReadLog replays a valid log followed by arbitrary bytes, or by an arbitrary
// payload in a frame with a good checksum: reading must never panic, must keep all of
// the valid prefix, and must never claim more than the bytes it was given.
func FuzzReadLog(f *testing.F) {
	valid, err := validLog()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{}, false)
	f.Add([]byte{9, 0, 0}, false)
	f.Add([]byte(`{"q":9,"a":"2025-01-01T00:00:00Z","o":[{"t":1,"n":"main","k":"fact","i":"x","r":{"id":"x","text":"t"},"e":"AAAA"}]}`), true)
	f.Add([]byte(`{"q":1,"a":"2025-01-01T00:00:00Z","o":[{"t":3,"b":{"name":"b2","parent":"main"},"f":99}]}`), true)
	f.Add([]byte(`{"q":1,"o":[{"t":5,"p":{"name":"s","branch":"nowhere"}},{"t":9,"m":{}},{"t":10,"d":{}}]}`), true)
	f.Add(valid, false)
	f.Fuzz(func(t *testing.T, tail []byte, framed bool) {
		if framed {
			tail = appendFrame(nil, tail)
		}
		data := append(append([]byte(nil), valid...), tail...)
		s := newStore(Options{})
		good, err := readFrames(bytes.NewReader(data), 0, s.replay)
		if good < int64(len(valid)) || good > int64(len(data)) {
			t.Fatalf("read %d bytes of %d, %d of them valid; err %v", good, len(data), len(valid), err)
		}
		ctx := context.Background()
		if _, gerr := s.Get(ctx, store.View{}, store.Ref{Kind: store.KindFact, ID: "f2"}); gerr != nil && err == nil && !errors.Is(gerr, store.ErrNotFound) {
			t.Fatalf("reading after replay: %v", gerr)
		}
		// Reading on from where the valid part ends, the way a reader catches up with a
		// writer, stops at the same place.
		if err == nil {
			rest, _ := readFrames(bytes.NewReader(data[len(valid):]), int64(len(valid)), func(*entry) error { return nil })
			if rest != good {
				t.Fatalf("reading from offset %d ends at %d; reading from 0 ended at %d", len(valid), rest, good)
			}
		}
	})
}

// FuzzSearchQuery runs arbitrary query text and filter values against a store with
// records: a typed error or hits, never a panic.
func FuzzSearchQuery(f *testing.F) {
	s, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Put(ctx, store.DefaultBranch, []store.Record{
		store.Fact{ID: "f1", Text: "the build uses Go 1.25 and tests run with -race", Category: "build", Embedding: []float32{1, 0, 0}},
		store.Fact{ID: "f2", Text: "naïve café façade — 東京 テスト", Embedding: []float32{0, 1, 0}},
		store.Observation{ID: "o1", Type: store.ObsDecision, Summary: "chose flock over fcntl", Embedding: []float32{0, 0, 1}},
	}, store.PutOptions{}); err != nil {
		f.Fatal(err)
	}
	f.Add("build", "keyword", "", "", "", 0, "")
	f.Add("\"quoted\" OR -neg* ~fuzzy", "hybrid", "build", "active", "decision", 5, "f1")
	f.Add("東京", "", "", "bogus", "x", -1, "../x")
	f.Fuzz(func(t *testing.T, text, mode, category, status, obsType string, limit int, id string) {
		q := store.SearchQuery{Text: text, Mode: store.SearchMode(mode), Limit: limit,
			Filter: store.Filter{Category: category, Status: store.FactStatus(status), ObsType: store.ObservationType(obsType), IDs: []string{id}}}
		if mode == "vector" || len(text)%2 == 1 {
			q.Vector = []float32{1, 1, 0}
		}
		hits, err := s.Search(ctx, store.View{}, q)
		if err != nil {
			if !errors.Is(err, store.ErrInvalidArgument) {
				t.Fatalf("Search(%+v) = %v; want a validation error", q, err)
			}
			return
		}
		for _, h := range hits {
			if h.Record == nil || h.Record.RecordID() != id {
				t.Fatalf("hit %+v outside the filter's ids [%q]", h, id)
			}
		}
	})
}

// TestHugeLengthInTornHeader reads a frame header claiming the largest payload with a
// few bytes after it: the reader stops there without allocating the claimed size.
func TestHugeLengthInTornHeader(t *testing.T) {
	valid, err := validLog()
	if err != nil {
		t.Fatal(err)
	}
	data := append(append([]byte(nil), valid...), 0, 0, 0, 0x40, 1, 2, 3, 4, '{', '}')
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	good, err := readFrames(bytes.NewReader(data), 0, func(*entry) error { return nil })
	runtime.ReadMemStats(&after)
	if err != nil || good != int64(len(valid)) {
		t.Fatalf("read %d bytes, %v; want the %d of the valid log", good, err, len(valid))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Fatalf("reading a torn header claiming 1 GiB allocated %d MiB", alloc>>20)
	}
}
