package portable_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/day1ai/day1/merge"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
	"github.com/day1ai/day1/store/memdriver"
	"github.com/day1ai/day1/store/portable"
)

// fetchCounter is a driver that counts the records its readers and writers fetch.
type fetchCounter struct {
	driver.Driver
	n atomic.Int64
}

func (d *fetchCounter) Read(ctx context.Context, fn func(driver.Reader) error) error {
	return d.Driver.Read(ctx, func(r driver.Reader) error { return fn(countingReader{r, &d.n}) })
}

func (d *fetchCounter) Update(ctx context.Context, fn func(driver.Writer) error) error {
	return d.Driver.Update(ctx, func(w driver.Writer) error { return fn(countingWriter{w, &d.n}) })
}

type countingReader struct {
	driver.Reader
	n *atomic.Int64
}

func (r countingReader) Fetch(ctx context.Context, rids []int64, fn func(driver.Row) error) error {
	r.n.Add(int64(len(rids)))
	return r.Reader.Fetch(ctx, rids, fn)
}

type countingWriter struct {
	driver.Writer
	n *atomic.Int64
}

// Fetch counts as countingReader does: a Writer is a Reader too.
func (w countingWriter) Fetch(ctx context.Context, rids []int64, fn func(driver.Row) error) error {
	return countingReader{w.Writer, w.n}.Fetch(ctx, rids, fn)
}

// TestSmallDiffsReadThroughTheCache checks what a diff keeps in the record cache: a
// diff of a few changes read again, and the merge after it, fetch no record; a diff of
// more than the cache keeps for one read fetches its records every time.
func TestSmallDiffsReadThroughTheCache(t *testing.T) {
	for _, tc := range []struct {
		changes int
		cached  bool
	}{{changes: 50, cached: true}, {changes: 600, cached: false}} {
		t.Run(fmt.Sprint(tc.changes), func(t *testing.T) {
			ctx := context.Background()
			d := &fetchCounter{Driver: memdriver.New()}
			s, err := portable.New(ctx, d, portable.Options{Dimensions: 4})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			facts := func(text string, from int) []store.Record {
				var out []store.Record
				for i := range tc.changes {
					out = append(out, store.Fact{ID: fmt.Sprintf("f%04d", i), Text: fmt.Sprintf("%s fact %d", text, i),
						Embedding: []float32{float32(i + from), 1, 0, 0}})
				}
				return out
			}
			if _, err := s.Put(ctx, store.DefaultBranch, facts("base", 0), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreateBranch(ctx, store.BranchSpec{Name: "b"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, "b", facts("changed", 1000), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			fetched := func(what string, fn func() error) int64 {
				t.Helper()
				before := d.n.Load()
				if err := fn(); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				return d.n.Load() - before
			}
			diff := func() error {
				got, err := s.Diff(ctx, "b", store.DefaultBranch)
				if err == nil && len(got.SourceChanges) != tc.changes {
					err = fmt.Errorf("%d source changes, want %d", len(got.SourceChanges), tc.changes)
				}
				return err
			}
			if n := fetched("the first diff", diff); n == 0 {
				t.Fatal("the first diff fetched no record")
			}
			again := fetched("the diff again", diff)
			merged := fetched("the merge", func() error {
				_, err := (&merge.Engine{Store: s}).Merge(ctx, merge.Request{Source: "b", Target: store.DefaultBranch})
				return err
			})
			if tc.cached && (again != 0 || merged != 0) {
				t.Errorf("after a diff of %d changes, the diff again fetched %d records and the merge %d; want none", tc.changes, again, merged)
			}
			if !tc.cached && again == 0 {
				t.Errorf("a diff of %d changes read again fetched nothing; want its records fetched again", tc.changes)
			}
		})
	}
}
