package portable

import (
	"fmt"
	"testing"

	"github.com/day1ai/day1/store"
)

// A full record cache lets go of records read once before those read again: after a
// stream of new records half the cache's size, every record that searches kept
// reading is still there, and the cache holds no more than its limit.
func TestRecordCacheKeepsWhatIsReadAgain(t *testing.T) {
	var c recordCache
	fact := func(rid int64) store.Record { return store.Fact{ID: fmt.Sprint("f", rid), Text: "a fact"} }
	add := func(lo, hi int64) {
		for rid := lo; rid < hi; rid += 100 {
			var rids []int64
			var recs []store.Record
			for r := rid; r < min(rid+100, hi); r++ {
				rids, recs = append(rids, r), append(recs, fact(r))
			}
			c.add(rids, recs)
		}
	}
	const n = maxCachedRecords
	add(0, n)
	hot := func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for rid := int64(0); rid < n; rid += 16 {
			if _, ok := c.get(rid); !ok {
				t.Fatalf("record %d is gone", rid)
			}
		}
	}
	for round := range 4 {
		hot()
		from := int64(n + round*n/2)
		add(from, from+n/2)
		if len(c.at) != n || len(c.slots) != n {
			t.Fatalf("round %d: the cache holds %d records in %d slots; want %d", round, len(c.at), len(c.slots), n)
		}
		c.mu.Lock()
		for rid := from; rid < from+n/2; rid += 97 {
			r, ok := c.get(rid)
			if !ok || r.RecordID() != fmt.Sprint("f", rid) {
				t.Errorf("round %d: new record %d: %v, %v", round, rid, r, ok)
			}
		}
		for rid, i := range c.at {
			if c.slots[i].rid != rid {
				t.Fatalf("round %d: record %d points at slot %d, which holds %d", round, rid, i, c.slots[i].rid)
			}
		}
		c.mu.Unlock()
	}
	hot()
}
