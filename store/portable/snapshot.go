package portable

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// The index is saved as driver items from time to time, so that a new process loads
// it in a few reads of large values instead of one read per row. The items of
// collection collIndex: "head" (the format, the last RID and commit, the number of
// rows); "rows/N", a fixed-size entry per row, partRows rows per part; "ids/N", the
// same rows' ids; "codes/K/N", the code slots of kind K, partRows slots per part, each
// its row's position and code; "expires", the position and expiry of each row of a
// fact that has one; "updates", the position and update time of each row whose
// update time is not its time (index.updated). A process loads the saved index, then catches up with
// the rows committed since, as it does between reads.

const (
	collIndex    = "index"
	indexHead    = "head"
	indexMagic   = "d1ix"
	indexVersion = 6
	rowBytes     = 64
	partRows     = 1 << 16
	saveFraction = 8 // rows read past the saved copy, as a fraction of those saved, before a save
	headBytes    = 4 + 2 + 8 + 8 + 4
)

// saveMinRows is the fewest rows the index reads past its saved copy before a write
// saves it again.
var saveMinRows = 4096

// kindCode numbers the kinds in the saved index.
func kindCode(k store.Kind) uint8 { return uint8(slices.Index(store.AllKinds, k) + 1) }

func kindOfCode(c uint8) (store.Kind, bool) {
	if c == 0 || int(c) > len(store.AllKinds) {
		return "", false
	}
	return store.AllKinds[c-1], true
}

// encodeRows packs the entries of rows [lo, hi).
func (ix *index) encodeRows(lo, hi int) []byte {
	b := make([]byte, 0, (hi-lo)*rowBytes)
	for _, m := range ix.rows[lo:hi] {
		b = binary.LittleEndian.AppendUint64(b, uint64(m.rid))
		b = binary.LittleEndian.AppendUint64(b, uint64(m.br))
		b = binary.LittleEndian.AppendUint64(b, uint64(m.seq))
		b = binary.LittleEndian.AppendUint64(b, uint64(m.until))
		b = binary.LittleEndian.AppendUint64(b, uint64(m.tkey))
		b = binary.LittleEndian.AppendUint64(b, uint64(m.ord))
		b = binary.LittleEndian.AppendUint64(b, uint64(m.time))
		b = binary.LittleEndian.AppendUint32(b, uint32(m.dlen))
		flags := byte(0)
		if m.del {
			flags |= 1
		}
		if m.dead {
			flags |= 2
		}
		if m.hist {
			flags |= 4
		}
		if m.updKnown {
			flags |= 8
		}
		b = append(b, kindCode(m.kind), flags, 0, 0)
	}
	return b
}

// encodeIDs packs the ids and groups of rows [lo, hi), each after its length.
func (ix *index) encodeIDs(lo, hi int) []byte {
	var b []byte
	for _, m := range ix.rows[lo:hi] {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(m.id)))
		b = append(b, m.id...)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(m.grp)))
		b = append(b, m.grp...)
	}
	return b
}

// encodeCodes packs code slots [lo, hi) of a kind: each its row's position, then its
// code.
func (kv *kindVecs) encodeCodes(lo, hi int) []byte {
	b := make([]byte, 0, (hi-lo)*(4+8*kv.words))
	for slot := lo; slot < hi; slot++ {
		b = binary.LittleEndian.AppendUint32(b, uint32(kv.rowOf[slot]))
		for _, w := range kv.codes[slot*kv.words : (slot+1)*kv.words] {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
	}
	return b
}

var errIndexFormat = errors.New("saved index is damaged or of another version")

// decodeRows fills rows [lo, lo+len(b)/rowBytes) from a "rows" part.
func (ix *index) decodeRows(lo int, b []byte) error {
	if len(b)%rowBytes != 0 || lo+len(b)/rowBytes > len(ix.rows) {
		return errIndexFormat
	}
	for i := 0; i < len(b)/rowBytes; i++ {
		e := b[i*rowBytes:]
		m := &ix.rows[lo+i]
		m.rid = int64(binary.LittleEndian.Uint64(e))
		m.br = int64(binary.LittleEndian.Uint64(e[8:]))
		m.seq = int64(binary.LittleEndian.Uint64(e[16:]))
		m.until = int64(binary.LittleEndian.Uint64(e[24:]))
		m.tkey = int64(binary.LittleEndian.Uint64(e[32:]))
		m.ord = int64(binary.LittleEndian.Uint64(e[40:]))
		m.time = int64(binary.LittleEndian.Uint64(e[48:]))
		m.dlen = int32(binary.LittleEndian.Uint32(e[56:]))
		k, ok := kindOfCode(e[60])
		if !ok {
			return errIndexFormat
		}
		m.kind, m.del, m.dead, m.hist, m.updKnown, m.key, m.vslot = k, e[61]&1 != 0, e[61]&2 != 0, e[61]&4 != 0, e[61]&8 != 0, -1, -1
		ix.rids[lo+i] = m.rid
	}
	return nil
}

// decodeIDs sets the ids and groups of the rows from lo from an "ids" part: slices of
// one string made of the part, one allocation for all of them.
func (ix *index) decodeIDs(lo int, b []byte) error {
	all := string(b)
	off, i := 0, lo
	next := func() (string, bool) {
		if off+2 > len(all) {
			return "", false
		}
		l := int(binary.LittleEndian.Uint16(b[off:]))
		if off+2+l > len(all) {
			return "", false
		}
		str := all[off+2 : off+2+l]
		off += 2 + l
		return str, true
	}
	for off < len(all) {
		if i >= len(ix.rows) {
			return errIndexFormat
		}
		id, ok1 := next()
		grp, ok2 := next()
		if !ok1 || !ok2 {
			return errIndexFormat
		}
		ix.rows[i].id, ix.rows[i].grp = id, grp
		i++
	}
	return nil
}

// decodeCodes adds the code slots of a "codes" part to its kind's.
func (ix *index) decodeCodes(kind store.Kind, words int, b []byte) error {
	kv := ix.kinds[kind]
	if kv == nil {
		kv = &kindVecs{words: words}
		ix.kinds[kind] = kv
	}
	size := 4 + 8*words
	if kv.words != words || len(b)%size != 0 {
		return errIndexFormat
	}
	n := len(b) / size
	kv.rowOf = slices.Grow(kv.rowOf, n)
	kv.codes = slices.Grow(kv.codes, n*words)
	for i := range n {
		e := b[i*size:]
		p := int32(binary.LittleEndian.Uint32(e))
		if p < 0 || int(p) >= len(ix.rows) {
			return errIndexFormat
		}
		kv.rowOf = append(kv.rowOf, p)
		for w := range words {
			kv.codes = append(kv.codes, binary.LittleEndian.Uint64(e[4+8*w:]))
		}
	}
	return nil
}

// encodeTimes packs the times of rows held apart (index.expires, index.updated):
// each its row's position, then its time, in position order.
func encodeTimes(m map[int32]int64) []byte {
	ps := slices.Sorted(maps.Keys(m))
	b := make([]byte, 0, len(ps)*12)
	for _, p := range ps {
		b = binary.LittleEndian.AppendUint32(b, uint32(p))
		b = binary.LittleEndian.AppendUint64(b, uint64(m[p]))
	}
	return b
}

// decodeTimes reads what encodeTimes packed, for an index of n rows.
func decodeTimes(b []byte, n int) (map[int32]int64, error) {
	if len(b)%12 != 0 {
		return nil, errIndexFormat
	}
	m := make(map[int32]int64, len(b)/12)
	for i := 0; i < len(b); i += 12 {
		p := int32(binary.LittleEndian.Uint32(b[i:]))
		if p < 0 || int(p) >= n {
			return nil, errIndexFormat
		}
		m[p] = int64(binary.LittleEndian.Uint64(b[i+4:]))
	}
	return m, nil
}

// load fills an empty index from its saved copy, if there is one the reader can use:
// false when there is none. A damaged copy is left for the next save to replace; the
// index is then built from the rows.
func (ix *index) load(ctx context.Context, r driver.Reader) (bool, error) {
	head, ok, err := r.Item(ctx, collIndex, indexHead)
	if err != nil || !ok {
		return false, err
	}
	if len(head) != headBytes || string(head[:4]) != indexMagic || binary.LittleEndian.Uint16(head[4:]) != indexVersion {
		return false, nil
	}
	lastRID := int64(binary.LittleEndian.Uint64(head[6:]))
	lastSeq := int64(binary.LittleEndian.Uint64(head[14:]))
	n := int(binary.LittleEndian.Uint32(head[22:]))
	if lastSeq > r.Head().Seq {
		return false, nil // saved after the reader's snapshot began: build from the rows
	}
	ix.rows, ix.rids, ix.live = make([]meta, n, n+n/4), make([]int64, n, n+n/4), make([]int64, n, n+n/4)
	// Parts are read in the order of their ids: codes, then ids, then rows.
	err = r.Items(ctx, collIndex, "", func(id string, data []byte) error {
		var kind, words, part int
		switch {
		case id == indexHead:
			return nil
		case scan(id, "rows/%d", &part):
			return ix.decodeRows(part*partRows, data)
		case scan(id, "ids/%d", &part):
			return ix.decodeIDs(part*partRows, data)
		case id == "expires":
			m, err := decodeTimes(data, len(ix.rows))
			ix.expires = m
			return err
		case id == "updates":
			m, err := decodeTimes(data, len(ix.rows))
			ix.updated = m
			return err
		case scan(id, "codes/%d/%d/%d", &kind, &words, &part):
			k, ok := kindOfCode(uint8(kind))
			if !ok {
				return errIndexFormat
			}
			return ix.decodeCodes(k, words, data)
		}
		return errIndexFormat
	})
	if err != nil {
		// What the parts filled goes; the rest of the index (its lock, held by the
		// caller, and its caches) stays.
		ix.rows, ix.rids, ix.live, ix.expires, ix.updated = nil, nil, nil, nil, nil
		ix.kinds = map[store.Kind]*kindVecs{}
		if errors.Is(err, errIndexFormat) {
			return false, nil
		}
		return false, err
	}
	for _, kv := range ix.kinds {
		for slot, p := range kv.rowOf {
			ix.rows[p].vslot = int32(slot)
		}
	}
	for p := range ix.rows {
		ix.count(int32(p), 1)
		ix.addGroup(int32(p))
	}
	ix.lastRID, ix.lastSeq, ix.saved = lastRID, lastSeq, n
	ix.branches = map[int64]bool{}
	for _, m := range ix.rows {
		ix.branches[m.br] = true
	}
	return true, nil
}

// scan parses an item id of the saved index.
func scan(id, format string, args ...any) bool {
	n, err := fmt.Sscanf(id, format, args...)
	return err == nil && n == len(args)
}

// due reports whether the index has read enough rows past its saved copy for a write
// to save it again.
func (ix *index) due() bool {
	return len(ix.rows)-ix.saved >= max(saveMinRows, ix.saved/saveFraction)
}

// savedItem is one item of the saved index.
type savedItem struct {
	id   string
	data []byte
}

// encode returns the items of the saved index: its parts, then its head. Callers
// hold ix.mu, shared at least.
func (ix *index) encode() []savedItem {
	var out []savedItem
	n := len(ix.rows)
	for lo := 0; lo < n; lo += partRows {
		hi := min(lo+partRows, n)
		out = append(out,
			savedItem{fmt.Sprintf("rows/%06d", lo/partRows), ix.encodeRows(lo, hi)},
			savedItem{fmt.Sprintf("ids/%06d", lo/partRows), ix.encodeIDs(lo, hi)})
	}
	if len(ix.expires) > 0 {
		out = append(out, savedItem{"expires", encodeTimes(ix.expires)})
	}
	if len(ix.updated) > 0 {
		out = append(out, savedItem{"updates", encodeTimes(ix.updated)})
	}
	for kind, kv := range ix.kinds {
		for lo := 0; lo < len(kv.rowOf); lo += partRows {
			id := fmt.Sprintf("codes/%03d/%03d/%06d", kindCode(kind), kv.words, lo/partRows)
			out = append(out, savedItem{id, kv.encodeCodes(lo, min(lo+partRows, len(kv.rowOf)))})
		}
	}
	head := make([]byte, 0, headBytes)
	head = append(head, indexMagic...)
	head = binary.LittleEndian.AppendUint16(head, indexVersion)
	head = binary.LittleEndian.AppendUint64(head, uint64(ix.lastRID))
	head = binary.LittleEndian.AppendUint64(head, uint64(ix.lastSeq))
	head = binary.LittleEndian.AppendUint32(head, uint32(n))
	return append(out, savedItem{indexHead, head})
}

// write puts the items of a saved index in the writer's commit, in place of the
// copy saved before.
func writeSaved(ctx context.Context, w driver.Writer, items []savedItem) error {
	var old []string
	err := w.Items(ctx, collIndex, "", func(id string, _ []byte) error {
		old = append(old, id)
		return nil
	})
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, it := range items {
		keep[it.id] = true
	}
	for _, id := range old {
		if !keep[id] {
			if err := w.DeleteItem(ctx, collIndex, id); err != nil {
				return err
			}
		}
	}
	for _, it := range items {
		if err := w.PutItem(ctx, collIndex, it.id, it.data); err != nil {
			return err
		}
	}
	return nil
}

// saveIfDue puts the index in the writer's commit when it is due: the index as it
// is before the commit, whose own rows are read back after it like any other. Reads
// of the index wait only while it is encoded, not while the driver writes it. It
// returns what marks the index saved, for the caller to run once the commit is made
// (nil when it put nothing).
func (ix *index) saveIfDue(ctx context.Context, w driver.Writer) (saved func(), err error) {
	ix.mu.RLock()
	if !ix.built || !ix.due() {
		ix.mu.RUnlock()
		return nil, nil
	}
	items, n := ix.encode(), len(ix.rows)
	ix.mu.RUnlock()
	if err := writeSaved(ctx, w, items); err != nil {
		return nil, err
	}
	return func() {
		ix.mu.Lock()
		ix.saved = max(ix.saved, n)
		ix.stale.Store(ix.due())
		ix.mu.Unlock()
	}, nil
}
