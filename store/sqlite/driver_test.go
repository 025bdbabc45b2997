package sqlite_test

import (
	"context"
	"testing"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
	"github.com/day1ai/day1/store/sqlite"
)

// TestDriverRows checks the driver's rows below the portable store: a record given
// twice in one Put keeps its last version, a later Put ends the row it replaces, and
// RIDs keep rising after a branch and its rows are deleted.
func TestDriverRows(t *testing.T) {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Options{Path: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	row := func(br int64, id, data string) driver.Row {
		return driver.Row{Kind: store.KindFact, ID: id, Branch: br, Data: []byte(data),
			Index: driver.Index{Terms: []string{data}, Counts: []int{1}, DocLen: 1}}
	}
	var br int64
	update := func(fn func(w driver.Writer) error) {
		t.Helper()
		if err := d.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	update(func(w driver.Writer) error {
		var err error
		if br, err = w.PutBranch(ctx, driver.BranchRow{Name: "b"}); err != nil {
			return err
		}
		rows := []driver.Row{row(br, "a", "one"), row(br, "b", "bee")}
		for i := range 600 { // more than one statement's chunk
			rows = append(rows, row(br, "many"+string(rune('a'+i%26))+string(rune('a'+i/26)), "many"))
		}
		return w.Put(ctx, append(rows, row(br, "a", "two"))...)
	})
	update(func(w driver.Writer) error { return w.Put(ctx, row(br, "b", "bee2")) })

	var maxRID int64
	err = d.Read(ctx, func(r driver.Reader) error {
		got, ok, err := r.Row(ctx, store.KindFact, "a", br, 1)
		if err != nil || !ok || string(got.Data) != "two" {
			t.Errorf("a at 1: %q, %v, %v; want the last version, two", got.Data, ok, err)
		}
		old, ok, err := r.Row(ctx, store.KindFact, "b", br, 1)
		if err != nil || !ok || string(old.Data) != "bee" || old.Until != 2 {
			t.Errorf("b at 1: %q until %d, %v, %v; want bee until 2", old.Data, old.Until, ok, err)
		}
		cur, ok, err := r.Row(ctx, store.KindFact, "b", br, 2)
		if err != nil || !ok || string(cur.Data) != "bee2" || cur.Until != driver.Never {
			t.Errorf("b at 2: %q until %d, %v, %v; want bee2, live", cur.Data, cur.Until, ok, err)
		}
		n := 0
		if err := r.Meta(ctx, 0, func(m driver.Meta) error {
			n++
			maxRID = max(maxRID, m.RID)
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
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	update(func(w driver.Writer) error { return w.DeleteBranch(ctx, br) })
	update(func(w driver.Writer) error {
		nb, err := w.PutBranch(ctx, driver.BranchRow{Name: "c"})
		if err != nil {
			return err
		}
		return w.Put(ctx, row(nb, "c", "sea"))
	})
	err = d.Read(ctx, func(r driver.Reader) error {
		return r.Meta(ctx, 0, func(m driver.Meta) error {
			if m.RID <= maxRID {
				t.Errorf("the row after the delete has RID %d; want above %d, the largest before", m.RID, maxRID)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}
