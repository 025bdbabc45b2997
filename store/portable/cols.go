package portable

import (
	"cmp"
	"slices"
	"strings"
	"unsafe"

	"github.com/day1ai/day1/store"
)

// col is a column of the index, by row position: a base, which may be a view of a
// mapped saved index (indexFile) and is never appended to, and the values added
// after it in this process. Values of the base may be changed in place: a mapping is
// private to the process.
type col[T any] struct {
	base, tail []T
}

// at returns the value at position p.
func (c *col[T]) at(p int32) *T {
	if int(p) < len(c.base) {
		return &c.base[p]
	}
	return &c.tail[int(p)-len(c.base)]
}

func (c *col[T]) len() int { return len(c.base) + len(c.tail) }

func (c *col[T]) add(v T) { c.tail = append(grown(c.tail, 1, len(c.base)), v) }

// grown returns tail with room for n more values. While the tail is shorter than its
// base (a process catching up with the rows written since the index it mapped was
// saved), it doubles when it has to grow: append grows a large slice by a quarter,
// which copies a tail of a hundred thousand rows about four times over, each copy
// into memory touched for the first time. A longer tail (an index built from the
// rows) grows as append grows it, leaving less room unused.
func grown[T any](tail []T, n, base int) []T {
	if len(tail)+n <= cap(tail) || len(tail) >= base {
		return tail
	}
	return slices.Grow(tail, max(n, len(tail), 256))
}

// names are the ids and groups of the rows, by position: those of the base kept as
// one block of bytes with an offset per string (a view of a mapped saved index), and
// those added after it as strings.
type names struct {
	offs []uint32 // 2n+1 offsets into blob: row p's id, then its group
	blob []byte
	tail []string // id, group, id, group, ...
}

func (ns *names) baseLen() int { return max(len(ns.offs)-1, 0) / 2 }

// view returns string i of the base without a copy: valid only while the index holds
// its mapping, so it must not outlive the caller's hold of the index's lock.
func (ns *names) view(i int) string {
	lo, hi := ns.offs[i], ns.offs[i+1]
	if lo > hi || int(hi) > len(ns.blob) {
		return "" // a damaged saved index
	}
	b := ns.blob[lo:hi]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// idView and grpView return row p's id and group, valid only while the caller holds
// ix.mu (names.view).
func (ns *names) idView(p int32) string {
	if int(p) < ns.baseLen() {
		return ns.view(2 * int(p))
	}
	return ns.tail[2*(int(p)-ns.baseLen())]
}

func (ns *names) grpView(p int32) string {
	if int(p) < ns.baseLen() {
		return ns.view(2*int(p) + 1)
	}
	return ns.tail[2*(int(p)-ns.baseLen())+1]
}

// id and grp return row p's id and group as strings of their own, which outlive
// the index's mapping.
func (ns *names) id(p int32) string {
	if int(p) < ns.baseLen() {
		return strings.Clone(ns.view(2 * int(p)))
	}
	return ns.tail[2*(int(p)-ns.baseLen())]
}

func (ns *names) grp(p int32) string {
	if int(p) < ns.baseLen() {
		return strings.Clone(ns.view(2*int(p) + 1))
	}
	return ns.tail[2*(int(p)-ns.baseLen())+1]
}

func (ns *names) add(id, grp string) { ns.tail = append(grown(ns.tail, 2, 2*ns.baseLen()), id, grp) }

// Flags of a row (meta.flags).
const (
	flagDel      = 1 << iota // a deletion marker
	flagDead                 // its branch was deleted, or a compaction dropped it
	flagHist                 // history: driver.Index.History
	flagUpdKnown             // its update time is known: index.updated[p], else its time
)

func (m *meta) del() bool      { return m.flags&flagDel != 0 }
func (m *meta) dead() bool     { return m.flags&flagDead != 0 }
func (m *meta) hist() bool     { return m.flags&flagHist != 0 }
func (m *meta) updKnown() bool { return m.flags&flagUpdKnown != 0 }
func (m *meta) setDead()       { m.flags |= flagDead }

// kind returns the row's kind; "" for a number no kind has (a damaged saved index),
// which no read asks for.
func (m *meta) kind() store.Kind {
	k, _ := kindOfCode(m.kc)
	return k
}

// kindCode numbers the kinds in the index.
func kindCode(k store.Kind) uint8 { return uint8(slices.Index(store.AllKinds, k) + 1) }

func kindOfCode(c uint8) (store.Kind, bool) {
	if c == 0 || int(c) > len(store.AllKinds) {
		return "", false
	}
	return store.AllKinds[c-1], true
}

// textEntry is a fact's row by its text key, as a saved index lists them: sorted by
// key, then position.
type textEntry struct {
	key int64
	pos int32
	_   int32
}

// withText returns the rows of facts with the text key k. Callers hold ix.mu, with
// the texts built (index.need).
func (ix *index) withText(k int64) []int32 {
	more := ix.byText[k]
	es := ix.savedTexts
	i, _ := slices.BinarySearchFunc(es, k, func(e textEntry, k int64) int { return cmp.Compare(e.key, k) })
	if i == len(es) || es[i].key != k {
		return more
	}
	var out []int32
	for ; i < len(es) && es[i].key == k; i++ {
		if p := es[i].pos; p >= 0 && int(p) < ix.rows.len() {
			out = append(out, p)
		}
	}
	return append(out, more...)
}

// keysSaved are the records of a saved index, each with its rows: key k is dir[k],
// whose rows are rows[start:start+count]. The keys are sorted by the hash of their
// kind and id (keyHash), then by id, so that a key is found by a binary search.
type keysSaved struct {
	dir  []keyEntry
	rows []int32
}

// keyEntry is one record of a saved index: the hash of its kind and id, a row of it
// (whose kind and id name it), and where its rows are.
type keyEntry struct {
	hash         uint64
	named        int32
	start, count uint32
	_            uint32
}

// keyHash hashes a record's kind and id (FNV-1a).
func keyHash(kc uint8, id string) uint64 {
	h := uint64(14695981039346656037)
	h = (h ^ uint64(kc)) * 1099511628211
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	return h
}

// find returns the key of the record of kind kc with an id. Callers hold ix.mu.
func (ks *keysSaved) find(ix *index, kc uint8, id string) (int32, bool) {
	h := keyHash(kc, id)
	i, _ := slices.BinarySearchFunc(ks.dir, h, func(e keyEntry, h uint64) int { return cmp.Compare(e.hash, h) })
	for ; i < len(ks.dir) && ks.dir[i].hash == h; i++ {
		p := ks.dir[i].named
		if p >= 0 && int(p) < ix.rows.len() && ix.rows.at(p).kc == kc && ix.names.idView(p) == id {
			return int32(i), true
		}
	}
	return 0, false
}

// rowsOf returns the saved rows of key k.
func (ks *keysSaved) rowsOf(k int32) []int32 {
	e := ks.dir[k]
	return span(ks.rows, e.start, e.count)
}

// span returns rows[start:start+count], capped so that an append copies it; nil
// when it is outside rows (a damaged saved index).
func span(rows []int32, start, count uint32) []int32 {
	if uint64(start)+uint64(count) > uint64(len(rows)) {
		return nil
	}
	return rows[start : start+count : start+count]
}

// groupsSaved are the rows of each group as a saved index lists them (a view of the
// mapped file): the groups by kind and name, each with where its rows are in rows.
type groupsSaved struct {
	dir  []groupEntry
	rows []int32
}

// groupEntry is one group of a saved index: its kind, a row whose group names it,
// and its rows, rows[start:start+count].
type groupEntry struct {
	kc           uint32
	named        int32
	start, count uint32
}

// of returns the saved rows of a group. Callers hold ix.mu.
func (g *groupsSaved) of(ix *index, k groupKey) []int32 {
	kc := uint32(k.kind)
	i, ok := slices.BinarySearchFunc(g.dir, k, func(e groupEntry, k groupKey) int {
		if e.kc != kc {
			return cmp.Compare(e.kc, kc)
		}
		if e.named < 0 || int(e.named) >= ix.rows.len() {
			return -1 // a damaged saved index
		}
		return strings.Compare(ix.names.grpView(e.named), k.group)
	})
	if !ok {
		return nil
	}
	e := g.dir[i]
	return span(g.rows, e.start, e.count)
}
