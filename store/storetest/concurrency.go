package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/day1ai/day1/store"
)

// Concurrency sizes: writers goroutines each writing perWriter records.
const (
	writers   = 8
	perWriter = 50
	forks     = 10
)

// testConcurrency checks that concurrent writers on one branch and on many branches,
// with concurrent readers and branch creation, lose nothing and see no errors, and that
// a branch forked during the writes sees a consistent prefix of every writer.
func testConcurrency(t *testing.T, h Harness) {
	const area = "concurrency"
	main := store.DefaultBranch

	subtest(t, h, area, "writers on one branch, readers and forks", func(e *env) {
		var wg sync.WaitGroup
		done := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWriter {
					f := store.Fact{ID: writerID(w, i), Text: fmt.Sprintf("writer %d item %d", w, i)}
					if _, err := e.s.Put(e.ctx, main, []store.Record{f}, store.PutOptions{}); err != nil {
						e.t.Errorf("Put(%s): %v", f.ID, err)
						return
					}
				}
			}()
		}
		var readers sync.WaitGroup
		for r := range 2 {
			readers.Add(1)
			go func() {
				defer readers.Done()
				e.readUntil(done, head(main), r)
			}()
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := range forks {
				if _, err := e.s.CreateBranch(e.ctx, store.BranchSpec{Name: "fork-" + strconv.Itoa(i), From: main}); err != nil {
					e.t.Errorf("CreateBranch: %v", err)
				}
			}
		}()
		wg.Wait()
		close(done)
		readers.Wait()

		got := e.listIDs(head(main), store.ListQuery{Kind: store.KindFact, Order: store.OrderID})
		var want []string
		for w := range writers {
			for i := range perWriter {
				want = append(want, writerID(w, i))
			}
		}
		slices.Sort(want)
		same(e.t, "facts on main", want, got)
		for i := range forks {
			e.checkPrefix(head("fork-"+strconv.Itoa(i)), 1)
		}
	})

	subtest(t, h, area, "writers on separate branches", func(e *env) {
		e.put1(main, store.Fact{ID: "base", Text: "shared base fact"})
		for w := range writers {
			e.fork("w"+strconv.Itoa(w), main)
		}
		var wg sync.WaitGroup
		done := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b := "w" + strconv.Itoa(w)
				for i := 0; i < perWriter; i += 2 {
					// Batches of two, so batch writes interleave too.
					recs := []store.Record{
						store.Fact{ID: writerID(w, i), Text: fmt.Sprintf("writer %d item %d", w, i)},
						store.Observation{ID: writerID(w, i+1), Type: store.ObsToolUse, Summary: fmt.Sprintf("writer %d item %d", w, i+1)},
					}
					if _, err := e.s.Put(e.ctx, b, recs, store.PutOptions{}); err != nil {
						e.t.Errorf("Put(%s): %v", b, err)
						return
					}
				}
			}()
		}
		var readers sync.WaitGroup
		for r := range 2 {
			readers.Add(1)
			go func() {
				defer readers.Done()
				e.readUntil(done, head("w"+strconv.Itoa(r)), r)
			}()
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := range forks {
				if _, err := e.s.CreateBranch(e.ctx, store.BranchSpec{Name: "w0/fork-" + strconv.Itoa(i), From: "w0"}); err != nil {
					e.t.Errorf("CreateBranch: %v", err)
				}
			}
		}()
		wg.Wait()
		close(done)
		readers.Wait()

		for w := range writers {
			b := head("w" + strconv.Itoa(w))
			var facts, obs []string
			for i := 0; i < perWriter; i += 2 {
				facts = append(facts, writerID(w, i))
				obs = append(obs, writerID(w, i+1))
			}
			same(e.t, "facts on "+b.Branch, append([]string{"base"}, facts...), e.listIDs(b, store.ListQuery{Kind: store.KindFact, Order: store.OrderID}))
			same(e.t, "observations on "+b.Branch, obs, e.listIDs(b, store.ListQuery{Kind: store.KindObservation, Order: store.OrderID}))
		}
		same(e.t, "facts on main", []string{"base"}, e.listIDs(head(main), store.ListQuery{Kind: store.KindFact}))
		for i := range forks {
			e.checkPrefix(head("w0/fork-"+strconv.Itoa(i)), 2)
		}
	})

	subtest(t, h, area, "concurrent updates of the same records", func(e *env) {
		const keys = 5
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for round := range 10 {
					for k := range keys {
						f := store.Fact{ID: "k" + strconv.Itoa(k), Text: fmt.Sprintf("key %d by writer %d round %d", k, w, round)}
						res, err := e.s.Put(e.ctx, main, []store.Record{f}, store.PutOptions{})
						if err != nil {
							e.t.Errorf("Put(%s): %v", f.ID, err)
							return
						}
						if o := res[0].Outcome; o != store.Created && o != store.Updated {
							e.t.Errorf("Put(%s): Outcome %q; want created or updated", f.ID, o)
						}
					}
				}
			}()
		}
		wg.Wait()
		rs := e.list(head(main), store.ListQuery{Kind: store.KindFact, Order: store.OrderID})
		same(e.t, "ids", []string{"k0", "k1", "k2", "k3", "k4"}, recIDs(rs))
		for _, r := range rs {
			if !strings.Contains(textOf(r), "round 9") {
				e.t.Errorf("%s = %q; want some writer's last round", r.RecordID(), textOf(r))
			}
		}
	})
}

// writerID names item i of writer w.
func writerID(w, i int) string { return fmt.Sprintf("w%d-%03d", w, i) }

// readUntil reads v in a loop until done is closed, reporting errors.
func (e *env) readUntil(done <-chan struct{}, v store.View, seed int) {
	for n := 0; ; n++ {
		select {
		case <-done:
			return
		default:
		}
		ctx := e.ctx
		var err error
		switch (n + seed) % 4 {
		case 0:
			_, err = e.s.List(ctx, v, store.ListQuery{Kind: store.KindFact, Limit: 20})
		case 1:
			_, err = e.s.Search(ctx, v, store.SearchQuery{Text: "writer item", Mode: store.Keyword, Limit: 5})
		case 2:
			_, err = e.s.Get(ctx, v, factRef(writerID(seed, n%perWriter)))
			if errors.Is(err, store.ErrNotFound) {
				err = nil
			}
		case 3:
			_, err = e.s.ListBranches(ctx, store.BranchFilter{})
		}
		if err != nil && ctx.Err() == nil {
			e.t.Errorf("concurrent read: %v", err)
			return
		}
	}
}

// checkPrefix checks that v shows, for every writer, the facts it wrote before some
// point and none after, with the text they were written with. A writer writes a fact at
// every step-th item.
func (e *env) checkPrefix(v store.View, step int) {
	e.t.Helper()
	seen := map[int][]int{}
	for _, r := range e.list(v, store.ListQuery{Kind: store.KindFact}) {
		var w, i int
		if _, err := fmt.Sscanf(r.RecordID(), "w%d-%d", &w, &i); err != nil {
			continue
		}
		if want := fmt.Sprintf("writer %d item %d", w, i); textOf(r) != want {
			e.t.Errorf("%s on %s: %q; want %q", r.RecordID(), v.Branch, textOf(r), want)
		}
		seen[w] = append(seen[w], i)
	}
	for w, is := range seen {
		slices.Sort(is)
		for j, i := range is {
			if i != j*step {
				e.t.Errorf("fork %s shows writer %d's items %v; want a prefix of what the writer wrote", v.Branch, w, is)
				break
			}
		}
	}
}
