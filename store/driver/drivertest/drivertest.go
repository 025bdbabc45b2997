// Package drivertest checks that a driver keeps the contract of package store/driver:
// the rows, commits, branches and items the portable store builds on. A driver passes
// it and the store conformance suite (package store/storetest) run over the portable
// store on it.
package drivertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// Run runs every check, each on a new driver from open, which the checks close.
func Run(t *testing.T, open func(t *testing.T) driver.Driver) {
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, d driver.Driver)
	}{
		{"Rows", testRows},
		{"Rollback", testRollback},
		{"OwnWrites", testOwnWrites},
		{"Snapshot", testSnapshot},
		{"Items", testItems},
		{"Commits", testCommits},
		{"Drop", testDrop},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := open(t)
			defer d.Close()
			c.fn(t, d)
		})
	}
}

func row(br int64, id, data string) driver.Row {
	return driver.Row{Kind: store.KindFact, ID: id, Branch: br, Data: []byte(data),
		Index: driver.Index{Terms: []string{data}, Counts: []int{1}, DocLen: 1}}
}

func update(t *testing.T, d driver.Driver, fn func(w driver.Writer) error) {
	t.Helper()
	if err := d.Update(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, d driver.Driver, fn func(r driver.Reader) error) {
	t.Helper()
	if err := d.Read(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}

// branch makes a branch and returns its ID.
func branch(t *testing.T, d driver.Driver, name string) int64 {
	t.Helper()
	var id int64
	update(t, d, func(w driver.Writer) error {
		var err error
		id, err = w.PutBranch(t.Context(), driver.BranchRow{Name: name})
		return err
	})
	return id
}

// data returns the Data of the live rows of a branch at a commit, by ID.
func data(ctx context.Context, r driver.Reader, br, at int64) ([]string, error) {
	var out []string
	err := r.Rows(ctx, store.KindFact, br, at, func(row driver.Row) error {
		out = append(out, row.ID+"="+string(row.Data))
		return nil
	})
	return out, err
}

// testRows: a record given twice in one Put keeps its last version, a later Put ends
// the row it replaces, rows list by ID, and RIDs keep rising after a branch and its
// rows are deleted.
func testRows(t *testing.T, d driver.Driver) {
	ctx := t.Context()
	br := branch(t, d, "b")
	update(t, d, func(w driver.Writer) error {
		rows := []driver.Row{row(br, "a", "one"), row(br, "b", "bee")}
		for i := range 600 { // more than one statement's chunk
			rows = append(rows, row(br, "many"+string(rune('a'+i%26))+string(rune('a'+i/26)), "many"))
		}
		return w.Put(ctx, append(rows, row(br, "a", "two"))...)
	})
	update(t, d, func(w driver.Writer) error { return w.Put(ctx, row(br, "b", "bee2")) })

	var maxRID int64
	read(t, d, func(r driver.Reader) error {
		first := r.Head().Seq - 1
		got, ok, err := r.Row(ctx, store.KindFact, "a", br, first)
		if err != nil || !ok || string(got.Data) != "two" {
			t.Errorf("a at %d: %q, %v, %v; want the last version, two", first, got.Data, ok, err)
		}
		old, ok, err := r.Row(ctx, store.KindFact, "b", br, first)
		if err != nil || !ok || string(old.Data) != "bee" || old.Until != first+1 {
			t.Errorf("b at %d: %q until %d, %v, %v; want bee until %d", first, old.Data, old.Until, ok, err, first+1)
		}
		cur, ok, err := r.Row(ctx, store.KindFact, "b", br, first+1)
		if err != nil || !ok || string(cur.Data) != "bee2" || cur.Until != driver.Never {
			t.Errorf("b at %d: %q until %d, %v, %v; want bee2, live", first+1, cur.Data, cur.Until, ok, err)
		}
		n := 0
		if err := r.Meta(ctx, 0, func(m driver.Meta) error {
			n++
			if m.RID <= maxRID {
				t.Errorf("Meta gave RID %d after %d; want rising RIDs", m.RID, maxRID)
			}
			maxRID = m.RID
			return nil
		}); err != nil {
			return err
		}
		if n != 603 {
			t.Errorf("%d rows; want 603 (a once, b twice, 600 more)", n)
		}
		var postings int
		if err := r.Postings(ctx, store.KindFact, "many", 0, func(int64, int) error { postings++; return nil }); err != nil {
			return err
		}
		if postings != 600 {
			t.Errorf("%d postings of many; want 600", postings)
		}
		var ids []string
		if err := r.Rows(ctx, store.KindFact, br, r.Head().Seq, func(row driver.Row) error {
			ids = append(ids, row.ID)
			return nil
		}); err != nil {
			return err
		}
		if len(ids) != 602 || !slices.IsSorted(ids) {
			t.Errorf("Rows gave %d IDs, sorted %v; want 602 in order", len(ids), slices.IsSorted(ids))
		}
		return nil
	})
	update(t, d, func(w driver.Writer) error { return w.DeleteBranch(ctx, br) })
	nb := branch(t, d, "c")
	if nb == br {
		t.Errorf("the new branch has the deleted branch's ID %d", br)
	}
	update(t, d, func(w driver.Writer) error { return w.Put(ctx, row(nb, "c", "sea")) })
	read(t, d, func(r driver.Reader) error {
		var n int
		err := r.Meta(ctx, 0, func(m driver.Meta) error {
			n++
			if m.RID <= maxRID {
				t.Errorf("the row after the delete has RID %d; want above %d, the largest before", m.RID, maxRID)
			}
			return nil
		})
		if n != 1 {
			t.Errorf("%d rows after the branch was deleted; want 1", n)
		}
		var postings int
		if err := r.Postings(ctx, store.KindFact, "many", 0, func(int64, int) error { postings++; return nil }); err != nil {
			return err
		}
		if postings != 0 {
			t.Errorf("%d postings of the deleted branch's rows; want none", postings)
		}
		return err
	})
}

// testRollback: an Update whose function fails leaves nothing, and one that writes
// nothing makes no commit.
func testRollback(t *testing.T, d driver.Driver) {
	ctx := t.Context()
	br := branch(t, d, "b")
	update(t, d, func(w driver.Writer) error { return w.Put(ctx, row(br, "a", "one")) })
	var head driver.Commit
	read(t, d, func(r driver.Reader) error { head = r.Head(); return nil })
	boom := errors.New("boom")
	err := d.Update(ctx, func(w driver.Writer) error {
		if err := w.Put(ctx, row(br, "a", "two"), row(br, "b", "bee")); err != nil {
			return err
		}
		if _, err := w.PutBranch(ctx, driver.BranchRow{Name: "c"}); err != nil {
			return err
		}
		if err := w.PutItem(ctx, "coll", "x", []byte("y")); err != nil {
			return err
		}
		if err := w.DeleteBranch(ctx, br); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update: %v; want the function's error", err)
	}
	update(t, d, func(w driver.Writer) error { return nil })
	read(t, d, func(r driver.Reader) error {
		if r.Head() != head {
			t.Errorf("head %+v after a failed and an empty update; want %+v", r.Head(), head)
		}
		got, err := data(ctx, r, br, r.Head().Seq)
		if want := []string{"a=one"}; !slices.Equal(got, want) || err != nil {
			t.Errorf("rows %v, %v; want %v", got, err, want)
		}
		bs, err := r.Branches(ctx)
		if len(bs) != 1 || err != nil {
			t.Errorf("branches %+v, %v; want b alone", bs, err)
		}
		if _, ok, err := r.Item(ctx, "coll", "x"); ok || err != nil {
			t.Errorf("item of a failed update: %v, %v; want none", ok, err)
		}
		return nil
	})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.Update(cctx, func(w driver.Writer) error { return w.Put(ctx, row(br, "z", "zed")) }); !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a cancelled context: %v; want context.Canceled", err)
	}
}

// testOwnWrites: a writer reads what it has written before it commits.
func testOwnWrites(t *testing.T, d driver.Driver) {
	ctx := t.Context()
	br := branch(t, d, "b")
	update(t, d, func(w driver.Writer) error { return w.Put(ctx, row(br, "a", "one"), row(br, "c", "sea")) })
	update(t, d, func(w driver.Writer) error {
		if err := w.Put(ctx, row(br, "b", "bee"), row(br, "a", "two")); err != nil {
			return err
		}
		del := row(br, "c", "")
		del.Deleted, del.Data, del.Index = true, nil, driver.Index{}
		if err := w.Put(ctx, del); err != nil {
			return err
		}
		if err := w.PutItem(ctx, "coll", "k", []byte("v")); err != nil {
			return err
		}
		nb, err := w.PutBranch(ctx, driver.BranchRow{Name: "n", Parent: br, ForkSeq: w.Head().Seq})
		if err != nil {
			return err
		}
		at := w.Head().Seq
		if at != w.Pending().Seq {
			t.Errorf("a writer's head after a write is %d; want its pending commit %d", at, w.Pending().Seq)
		}
		got, err := data(ctx, w, br, at)
		if want := []string{"a=two", "b=bee", "c="}; !slices.Equal(got, want) || err != nil {
			t.Errorf("a writer's rows %v, %v; want %v", got, err, want)
		}
		before, err := data(ctx, w, br, at-1)
		if want := []string{"a=one", "c=sea"}; !slices.Equal(before, want) || err != nil {
			t.Errorf("a writer's rows at the last commit %v, %v; want %v", before, err, want)
		}
		if v, ok, err := w.Item(ctx, "coll", "k"); string(v) != "v" || !ok || err != nil {
			t.Errorf("a writer's item %q, %v, %v; want v", v, ok, err)
		}
		bs, err := w.Branches(ctx)
		if len(bs) != 2 || bs[1].ID != nb || err != nil {
			t.Errorf("a writer's branches %+v, %v; want b and n", bs, err)
		}
		var posts []int64
		if err := w.Postings(ctx, store.KindFact, "two", 0, func(rid int64, tf int) error { posts = append(posts, rid); return nil }); err != nil {
			return err
		}
		if len(posts) != 1 {
			t.Errorf("a writer's postings of two: %v; want one row", posts)
		}
		var metas int
		if err := w.Meta(ctx, 0, func(driver.Meta) error { metas++; return nil }); err != nil {
			return err
		}
		if metas != 2 {
			t.Errorf("a writer's Meta gave %d rows; want 2, those committed before it", metas)
		}
		var ended int
		if err := w.Ended(ctx, 0, func(int64, int64) error { ended++; return nil }); err != nil {
			return err
		}
		if ended != 0 {
			t.Errorf("a writer's Ended gave %d rows; want none, as none was committed", ended)
		}
		return nil
	})
}

// testSnapshot: a read sees one commit however long it runs; a commit made meanwhile
// is seen by the reads after it.
func testSnapshot(t *testing.T, d driver.Driver) {
	ctx := t.Context()
	br := branch(t, d, "b")
	update(t, d, func(w driver.Writer) error { return w.Put(ctx, row(br, "a", "one")) })
	done := make(chan error, 1)
	read(t, d, func(r driver.Reader) error {
		head := r.Head()
		go func() {
			done <- d.Update(ctx, func(w driver.Writer) error { return w.Put(ctx, row(br, "a", "two")) })
		}()
		select { // a driver may hold the commit until the read ends
		case err := <-done:
			done <- err
		case <-time.After(50 * time.Millisecond):
		}
		if r.Head() != head {
			t.Errorf("the reader's head moved from %+v to %+v", head, r.Head())
		}
		got, ok, err := r.Row(ctx, store.KindFact, "a", br, head.Seq)
		if string(got.Data) != "one" || !ok || err != nil {
			t.Errorf("a during a commit: %q, %v, %v; want one", got.Data, ok, err)
		}
		return nil
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	read(t, d, func(r driver.Reader) error {
		got, ok, err := r.Row(ctx, store.KindFact, "a", br, r.Head().Seq)
		if string(got.Data) != "two" || !ok || err != nil {
			t.Errorf("a after the commit: %q, %v, %v; want two", got.Data, ok, err)
		}
		return nil
	})
}

// testItems: items list by ID after a key, replace and delete.
func testItems(t *testing.T, d driver.Driver) {
	ctx := t.Context()
	update(t, d, func(w driver.Writer) error {
		for _, id := range []string{"c", "a", "b", "d"} {
			if err := w.PutItem(ctx, "coll", id, []byte(id+"1")); err != nil {
				return err
			}
		}
		return w.PutItem(ctx, "other", "a", []byte("x"))
	})
	list := func(r driver.Reader, after string) []string {
		var out []string
		if err := r.Items(ctx, "coll", after, func(id string, data []byte) error {
			out = append(out, id+"="+string(data))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	update(t, d, func(w driver.Writer) error {
		if err := w.PutItem(ctx, "coll", "b", []byte("b2")); err != nil {
			return err
		}
		if err := w.DeleteItem(ctx, "coll", "c"); err != nil {
			return err
		}
		if err := w.PutItem(ctx, "coll", "bb", []byte("new")); err != nil {
			return err
		}
		if got, want := list(w, "a"), []string{"b=b2", "bb=new", "d=d1"}; !slices.Equal(got, want) {
			t.Errorf("a writer's items after a: %v; want %v", got, want)
		}
		return nil
	})
	read(t, d, func(r driver.Reader) error {
		if got, want := list(r, ""), []string{"a=a1", "b=b2", "bb=new", "d=d1"}; !slices.Equal(got, want) {
			t.Errorf("items: %v; want %v", got, want)
		}
		if _, ok, err := r.Item(ctx, "coll", "c"); ok || err != nil {
			t.Errorf("deleted item: %v, %v; want none", ok, err)
		}
		return nil
	})
}

// testCommits: commits are numbered from 1, dated in order, and found by number and
// by instant.
func testCommits(t *testing.T, d driver.Driver) {
	ctx := t.Context()
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		update(t, d, func(w driver.Writer) error {
			if c := w.SetInstant(base.Add(time.Duration(i) * time.Hour)); !c.At.Equal(base.Add(time.Duration(i) * time.Hour)) {
				t.Errorf("SetInstant gave %v", c.At)
			}
			return w.PutItem(ctx, "coll", fmt.Sprint(i), nil)
		})
	}
	update(t, d, func(w driver.Writer) error {
		c := w.SetInstant(base) // earlier than the last commit
		if want := base.Add(2*time.Hour + time.Nanosecond); !c.At.Equal(want) {
			t.Errorf("SetInstant of an earlier time gave %v; want %v", c.At, want)
		}
		return w.PutItem(ctx, "coll", "x", nil)
	})
	read(t, d, func(r driver.Reader) error {
		if r.Head().Seq != 4 {
			t.Errorf("head %d; want 4", r.Head().Seq)
		}
		c, err := r.CommitAt(ctx, base.Add(90*time.Minute))
		if c.Seq != 2 || err != nil {
			t.Errorf("CommitAt(1h30) = %+v, %v; want commit 2", c, err)
		}
		if c, _ := r.CommitAt(ctx, base.Add(-time.Second)); c.Seq != 0 {
			t.Errorf("CommitAt before the first = %+v; want none", c)
		}
		c, err = r.CommitOf(ctx, 3)
		if !c.At.Equal(base.Add(2*time.Hour)) || err != nil {
			t.Errorf("CommitOf(3) = %+v, %v", c, err)
		}
		if c, _ := r.CommitOf(ctx, 9); c.Seq != 0 {
			t.Errorf("CommitOf(9) = %+v; want none", c)
		}
		return nil
	})
}

// testDrop: dropped rows leave reads, postings and Meta; Ended reports the rows a
// commit ended.
func testDrop(t *testing.T, d driver.Driver) {
	ctx := t.Context()
	br := branch(t, d, "b")
	update(t, d, func(w driver.Writer) error { return w.Put(ctx, row(br, "a", "one"), row(br, "b", "bee")) })
	var seq int64
	update(t, d, func(w driver.Writer) error { seq = w.Pending().Seq; return w.Put(ctx, row(br, "a", "two")) })
	var old, cur driver.Row
	read(t, d, func(r driver.Reader) error {
		var ended []int64
		if err := r.Ended(ctx, seq-1, func(rid, until int64) error {
			if until != seq {
				t.Errorf("row %d ended at %d; want %d", rid, until, seq)
			}
			ended = append(ended, rid)
			return nil
		}); err != nil {
			return err
		}
		var ok bool
		var err error
		old, ok, err = r.Row(ctx, store.KindFact, "a", br, seq-1)
		if len(ended) != 1 || !ok || err != nil || ended[0] != old.RID {
			t.Errorf("Ended gave %v; want the first version of a, %d", ended, old.RID)
		}
		old.Index = driver.Index{Terms: []string{"one"}}
		return nil
	})
	update(t, d, func(w driver.Writer) error { return w.Drop(ctx, old) })
	read(t, d, func(r driver.Reader) error {
		if _, ok, _ := r.Row(ctx, store.KindFact, "a", br, seq-1); ok {
			t.Errorf("a dropped row is read")
		}
		var n int
		r.Postings(ctx, store.KindFact, "one", 0, func(int64, int) error { n++; return nil })
		r.Fetch(ctx, []int64{old.RID}, func(driver.Row) error { n++; return nil })
		r.Meta(ctx, 0, func(m driver.Meta) error {
			if m.RID == old.RID {
				n++
			}
			return nil
		})
		if n != 0 {
			t.Errorf("the dropped row was found %d times in postings, Fetch and Meta", n)
		}
		got, err := data(ctx, r, br, r.Head().Seq)
		if want := []string{"a=two", "b=bee"}; !slices.Equal(got, want) || err != nil {
			t.Errorf("rows %v, %v; want %v", got, err, want)
		}
		cur, _, err = r.Row(ctx, store.KindFact, "b", br, r.Head().Seq)
		return err
	})
	// One commit drops every row of b and writes b again: b is listed once.
	update(t, d, func(w driver.Writer) error {
		cur.Index = driver.Index{Terms: []string{"bee"}}
		if err := w.Drop(ctx, cur); err != nil {
			return err
		}
		return w.Put(ctx, row(br, "b", "bee3"))
	})
	read(t, d, func(r driver.Reader) error {
		got, err := data(ctx, r, br, r.Head().Seq)
		if want := []string{"a=two", "b=bee3"}; !slices.Equal(got, want) || err != nil {
			t.Errorf("rows after b was dropped and written again: %v, %v; want %v", got, err, want)
		}
		return nil
	})
}
