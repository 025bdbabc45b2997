package portable

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/day1ai/day1/internal/mapfile"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// The index is saved from time to time as a file in the memory's folder (a driver
// that is a driver.Folder), named after the last commit it holds:
// index-<commit>.d1ix. A new process maps the latest file and reads its columns in
// place, without decoding or copying them: opening a memory costs the same at any
// size, and only the pages a read touches are read from disk. It then catches up with
// the rows committed since, as it does between reads. A file is written whole under
// a temporary name and renamed; a file that does not match the memory (damaged, of
// another format, saved after the reader's commit, or of another memory's history)
// is passed over, and the index built from the rows instead.
//
// The file: a header (headerSize bytes), a table of sections (sectionSize bytes
// each), then the sections, each at an offset that is a multiple of 8. The header
// holds, little-endian: the magic, the format version, the number of sections, the
// last RID and commit held, that commit's instant, the number of rows, the file's
// size, and a CRC-32C of the header before it and of the table. The sections, each
// tagged: the rows (meta, as laid out in memory), their RIDs, their live words, the
// offsets and bytes of their ids and groups, the codes and code slots of each kind,
// the positions of each branch's rows, the running counts, the expiries, the update
// times, the branches caught up with, the rows of each group (a fact's session, a
// message's conversation), the facts by text key, and the records (by a hash of
// kind and id) with their rows and each row's record. A section a reader does not
// find is built from the rows when a read needs it.
//
// Values are read in place, so a damaged value that passes the checks must not make
// a read fail: every position read from the file is checked against the rows before
// it is used, and a bad one reads as nothing.

const (
	indexVersion  = 8
	indexMagic    = "d1ix"
	indexPrefix   = "index-"
	indexSuffix   = ".d1ix"
	headerSize    = 64
	sectionSize   = 32
	metaSize      = 72
	saveFraction  = 8 // rows read past the saved copy, as a fraction of those saved, before a save
	staleTempFile = time.Hour
)

// saveMinRows is the fewest rows the index reads past its saved copy before it is
// saved again, and saveEvery how old the copy must be for a quarter of that
// (index.due).
var (
	saveMinRows = 4096
	saveEvery   = time.Minute
)

// Section tags.
const (
	secRows uint32 = iota + 1
	secRIDs
	secLive
	secNameOffs
	secNameBlob
	secCodes      // kind, words
	secSlots      // kind: the row position of each code slot
	secBranchDir  // each branch, where its rows start, how many: three int64s each
	secBranchRows // the positions of the rows of every branch, branch after branch
	secCounts     // branch, kind, count, length sum: four int64s each
	secExpires    // position, expiry: two int64s each
	secUpdates    // position, update time: two int64s each
	secBranches   // the branches caught up with, int64s
	secGroupDir   // the groups, by kind and name: groupEntry each
	secGroupRows
	secTexts // the facts by text key: textEntry each
	secKeyDir
	secKeyRows
	secKeyOf // each row's key, int32s
	secLast  = secKeyOf
)

// mappable reports whether this platform reads a saved index in place: little-endian,
// with meta laid out as the file has it.
var mappable = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1 && unsafe.Sizeof(meta{}) == metaSize && unsafe.Sizeof(groupEntry{}) == 16 &&
		unsafe.Sizeof(textEntry{}) == 16 && unsafe.Sizeof(keyEntry{}) == 24
}()

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// indexFile is a saved index, mapped.
type indexFile struct {
	path string
	m    *mapfile.Map
}

type section struct {
	tag, kind uint32
	x         int64
	off, len  int64
}

// bytesOf returns the memory of a slice as bytes.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// viewOf returns bytes read in place as a slice of T; its capacity is its length, so
// that an append copies it rather than writing past it. Callers check that b holds a
// whole number of T and is aligned.
func viewOf[T any](b []byte) []T {
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// viewAll is viewOf for bytes that must hold whole groups of per values of T: ok is
// false when they do not.
func viewAll[T any](b []byte, per int) (_ []T, ok bool) {
	var zero T
	if len(b)%(per*int(unsafe.Sizeof(zero))) != 0 {
		return nil, false
	}
	return viewOf[T](b), true
}

// viewN is viewOf for bytes that must hold exactly n values of T.
func viewN[T any](b []byte, n int) (_ []T, ok bool) {
	var zero T
	if len(b) != n*int(unsafe.Sizeof(zero)) {
		return nil, false
	}
	return viewOf[T](b), true
}

// positions reads a section of row positions: ok is false unless each is one of the
// n rows.
func positions(b []byte, n int) (_ []int32, ok bool) {
	ps, ok := viewAll[int32](b, 1)
	for _, p := range ps {
		if p < 0 || int(p) >= n {
			return nil, false
		}
	}
	return ps, ok
}

// indexFiles returns the saved indexes in dir, the latest first.
func indexFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, indexPrefix) && strings.HasSuffix(n, indexSuffix) {
			out = append(out, n)
		}
	}
	// The names hold the commit zero-padded: sorting them sorts by commit.
	slices.Sort(out)
	slices.Reverse(out)
	for i, n := range out {
		out[i] = filepath.Join(dir, n)
	}
	return out, nil
}

func indexName(dir string, seq int64) string {
	return filepath.Join(dir, fmt.Sprintf("%s%020d%s", indexPrefix, seq, indexSuffix))
}

// load fills an empty index from the latest saved index in dir that matches what
// the reader sees: false when there is none. Callers hold ix.mu for writing.
func (ix *index) load(ctx context.Context, r driver.Reader, dir string) (bool, error) {
	if dir == "" || !mappable {
		return false, nil
	}
	paths, err := indexFiles(dir)
	if err != nil {
		return false, nil // no folder to read: build from the rows
	}
	for _, path := range paths {
		m, err := mapfile.Open(path)
		if err != nil {
			continue // removed by a save since the listing, or unreadable
		}
		ok, err := ix.loadFrom(ctx, r, m.Bytes())
		if err != nil {
			m.Close()
			return false, err
		}
		if ok {
			ix.file = &indexFile{path: path, m: m}
			if fi, err := os.Stat(path); err == nil {
				ix.savedAt = fi.ModTime()
			}
			return true, nil
		}
		m.Close()
		ix.reset()
	}
	return false, nil
}

// reset empties the index's columns, keeping its lock and caches.
func (ix *index) reset() {
	ix.rows, ix.rids, ix.live, ix.names = col[meta]{}, col[int64]{}, col[int64]{}, names{}
	ix.kinds = map[store.Kind]*kindVecs{}
	ix.counts, ix.byBranch, ix.expires, ix.updated, ix.branches = nil, nil, nil, nil, nil
	ix.groups, ix.savedGroups = nil, groupsSaved{}
	ix.byText, ix.savedTexts = nil, nil
	ix.keys, ix.keyOf, ix.byKey, ix.savedKeys, ix.keyMore = nil, col[int32]{}, nil, keysSaved{}, nil
	ix.lastRID, ix.lastSeq, ix.lastAt, ix.saved, ix.savedAt = 0, 0, 0, 0, time.Time{}
}

// loadFrom reads the index in place from the bytes of a saved index: false when
// they do not match the reader's memory or are damaged.
func (ix *index) loadFrom(ctx context.Context, r driver.Reader, b []byte) (bool, error) {
	if len(b) < headerSize || string(b[:4]) != indexMagic || binary.LittleEndian.Uint16(b[4:]) != indexVersion {
		return false, nil
	}
	nsect := int(binary.LittleEndian.Uint16(b[6:]))
	lastRID := int64(binary.LittleEndian.Uint64(b[8:]))
	lastSeq := int64(binary.LittleEndian.Uint64(b[16:]))
	lastAt := int64(binary.LittleEndian.Uint64(b[24:]))
	n := int64(binary.LittleEndian.Uint64(b[32:]))
	size := int64(binary.LittleEndian.Uint64(b[40:]))
	tableEnd := headerSize + nsect*sectionSize
	if size != int64(len(b)) || tableEnd > len(b) || n < 0 || n > int64(len(b))/metaSize {
		return false, nil
	}
	crc := crc32.Update(crc32.Checksum(b[:48], castagnoli), castagnoli, b[headerSize:tableEnd])
	if binary.LittleEndian.Uint32(b[48:]) != crc {
		return false, nil
	}
	if lastSeq > r.Head().Seq {
		return false, nil // saved after the reader's snapshot began: build from the rows
	}
	if lastSeq > 0 {
		c, err := r.CommitOf(ctx, lastSeq)
		if err != nil {
			return false, err
		}
		if c.At.UnixNano() != lastAt {
			return false, nil // another memory's history
		}
	}
	rows := int(n)
	ix.kinds = map[store.Kind]*kindVecs{}
	ix.counts, ix.byBranch, ix.branches = map[countKey]liveCount{}, map[int64]*col[int32]{}, map[int64]bool{}
	var got [secLast + 1]bool
	var branchDir []int64
	var branchRows []int32
	for i := range nsect {
		e := b[headerSize+i*sectionSize:]
		s := section{
			tag: binary.LittleEndian.Uint32(e), kind: binary.LittleEndian.Uint32(e[4:]),
			x: int64(binary.LittleEndian.Uint64(e[8:])), off: int64(binary.LittleEndian.Uint64(e[16:])), len: int64(binary.LittleEndian.Uint64(e[24:])),
		}
		if s.off < int64(tableEnd) || s.off%8 != 0 || s.len < 0 || s.off > int64(len(b)) || s.len > int64(len(b))-s.off || s.tag == 0 || s.tag > secLast {
			return false, nil
		}
		data := b[s.off : s.off+s.len]
		got[s.tag] = true
		// ok says the section holds whole values of its type, and as many as it must.
		ok := true
		switch s.tag {
		case secRows:
			ix.rows.base, ok = viewN[meta](data, rows)
		case secRIDs:
			ix.rids.base, ok = viewN[int64](data, rows)
		case secLive:
			ix.live.base, ok = viewN[int64](data, rows)
		case secNameOffs:
			ix.names.offs, ok = viewN[uint32](data, 2*rows+1)
		case secNameBlob:
			ix.names.blob = data[:len(data):len(data)]
		case secCodes, secSlots:
			kind, known := kindOfCode(uint8(s.kind))
			if !known || s.kind > 255 {
				return false, nil
			}
			kv := ix.kinds[kind]
			if kv == nil {
				kv = &kindVecs{}
				ix.kinds[kind] = kv
			}
			if s.tag == secCodes {
				ok = s.x > 0 && s.x <= 64 && len(data)%(8*int(s.x)) == 0
				kv.words, kv.codes.base = int(s.x), viewOf[uint64](data)
			} else {
				kv.rowOf.base, ok = positions(data, rows)
			}
		case secBranchDir:
			branchDir, ok = viewAll[int64](data, 3)
		case secBranchRows:
			branchRows, ok = positions(data, rows)
		case secCounts:
			var cs []int64
			cs, ok = viewAll[int64](data, 4)
			for c := range chunks(cs, 4) {
				ix.counts[countKey{c[0], uint8(c[1])}] = liveCount{int(c[2]), int(c[3])}
			}
		case secExpires, secUpdates:
			var pairs []int64
			pairs, ok = viewAll[int64](data, 2)
			m := map[int32]int64{}
			for c := range chunks(pairs, 2) {
				if c[0] < 0 || c[0] >= int64(rows) {
					return false, nil
				}
				m[int32(c[0])] = c[1]
			}
			if s.tag == secExpires {
				ix.expires = m
			} else {
				ix.updated = m
			}
		case secBranches:
			var ids []int64
			ids, ok = viewAll[int64](data, 1)
			for _, id := range ids {
				ix.branches[id] = true
			}
		case secGroupDir:
			ix.savedGroups.dir, ok = viewAll[groupEntry](data, 1)
		case secGroupRows:
			ix.savedGroups.rows, ok = positions(data, rows)
		case secTexts:
			ix.savedTexts, ok = viewAll[textEntry](data, 1)
		case secKeyDir:
			ix.savedKeys.dir, ok = viewAll[keyEntry](data, 1)
		case secKeyRows:
			ix.savedKeys.rows, ok = positions(data, rows)
		case secKeyOf:
			ix.keyOf.base, ok = viewN[int32](data, rows)
		}
		if !ok {
			return false, nil
		}
	}
	for e := range chunks(branchDir, 3) {
		start, count := e[1], e[2]
		if start < 0 || count < 0 || start > int64(len(branchRows)) || count > int64(len(branchRows))-start {
			return false, nil
		}
		ix.byBranch[e[0]] = &col[int32]{base: branchRows[start : start+count : start+count]}
	}
	if got[secGroupDir] {
		ix.groups = map[groupKey][]int32{} // the rows added from now on
	}
	if got[secTexts] {
		ix.byText = map[int64][]int32{}
	}
	if got[secKeyDir] && got[secKeyRows] && got[secKeyOf] {
		ix.keys = map[string]int32{}
	} else {
		ix.savedKeys, ix.keyOf = keysSaved{}, col[int32]{}
	}
	if rows > 0 && !(got[secRows] && got[secRIDs] && got[secLive] && got[secNameOffs]) {
		return false, nil
	}
	for _, kv := range ix.kinds {
		if kv.words == 0 || len(kv.codes.base) != len(kv.rowOf.base)*kv.words {
			return false, nil
		}
	}
	ix.lastRID, ix.lastSeq, ix.lastAt, ix.saved = lastRID, lastSeq, lastAt, rows
	return true, nil
}

// chunks yields s in chunks of n, the last one whole or left out.
func chunks[T any](s []T, n int) func(func([]T) bool) {
	return func(yield func([]T) bool) {
		for i := 0; i+n <= len(s); i += n {
			if !yield(s[i : i+n]) {
				return
			}
		}
	}
}

// due reports whether the index has read enough rows past its saved copy to be
// saved again: an eighth of those saved (saveMinRows at least), or a quarter of
// saveMinRows once the copy is saveEvery old. A new process catches up with the rows
// past the copy, about 10 µs a row, so this bounds its work; saving a large index
// costs seconds, so it is not done often.
func (ix *index) due() bool {
	past := ix.rows.len() - ix.saved
	return past >= max(saveMinRows, ix.saved/saveFraction) || past >= max(saveMinRows/4, 1) && time.Since(ix.savedAt) >= saveEvery
}

// save writes the index to a new file in dir, if it is due, and removes the files
// saved before it. The index's read lock is held while the file is written, not
// while it is synced: writers of this process wait for the first. A commit another
// process saved already is not saved again.
func (ix *index) save(dir string) error {
	ix.mu.RLock()
	if !ix.built || !ix.due() || !mappable {
		ix.mu.RUnlock()
		return nil
	}
	path, n := indexName(dir, ix.lastSeq), ix.rows.len()
	var f *os.File
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() || errors.Is(err, os.ErrNotExist) {
		f, err = ix.writeFile(dir)
	}
	ix.mu.RUnlock()
	if f != nil {
		err = finishFile(f, dir, path)
	}
	if err != nil {
		return err
	}
	ix.mu.Lock()
	if n > ix.saved {
		ix.saved, ix.savedAt = n, time.Now()
	}
	ix.stale.Store(ix.due())
	ix.mu.Unlock()
	removeOldIndexes(dir, path)
	return nil
}

// removeOldIndexes removes the saved indexes in dir older than keep (of an earlier
// commit: a process that lags does not remove a newer one), and temporary files that
// saves left behind long ago. A file another process has mapped may refuse (on
// Windows): the next save tries again.
func removeOldIndexes(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		path := filepath.Join(dir, name)
		switch {
		case !strings.HasPrefix(name, indexPrefix) || path == keep:
		case strings.HasSuffix(name, indexSuffix):
			// The names hold the commit zero-padded: they sort as commits do.
			if name < filepath.Base(keep) {
				os.Remove(path)
			}
		case strings.HasSuffix(name, ".tmp"):
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTempFile {
				os.Remove(path)
			}
		}
	}
}

// writeFile writes the index to a temporary file in dir, which finishFile makes the
// saved index. Callers hold ix.mu, shared at least.
func (ix *index) writeFile(dir string) (*os.File, error) {
	n := ix.rows.len()
	// The ids and groups, back to back, and where each starts.
	offs := make([]uint32, 0, 2*n+1)
	var blobLen uint64
	for p := range int32(n) {
		for _, s := range [2]string{ix.names.idView(p), ix.names.grpView(p)} {
			offs = append(offs, uint32(blobLen))
			blobLen += uint64(len(s))
		}
	}
	if blobLen > 1<<32-1 {
		return nil, fmt.Errorf("%w: the ids of the index take more than 4 GiB", store.ErrNotSupported)
	}
	offs = append(offs, uint32(blobLen))

	// Each section's parts, written one after another.
	type part struct {
		s     section
		parts [][]byte
		write func(w io.Writer) error // instead of parts
	}
	var ps []part
	add := func(tag, kind uint32, x int64, parts ...[]byte) {
		l := 0
		for _, b := range parts {
			l += len(b)
		}
		ps = append(ps, part{s: section{tag: tag, kind: kind, x: x, len: int64(l)}, parts: parts})
	}
	add(secRows, 0, 0, bytesOf(ix.rows.base), bytesOf(ix.rows.tail))
	add(secRIDs, 0, 0, bytesOf(ix.rids.base), bytesOf(ix.rids.tail))
	add(secLive, 0, 0, bytesOf(ix.live.base), bytesOf(ix.live.tail))
	add(secNameOffs, 0, 0, bytesOf(offs))
	ps = append(ps, part{s: section{tag: secNameBlob, len: int64(blobLen)}, write: func(w io.Writer) error {
		for p := range int32(n) {
			if _, err := io.WriteString(w, ix.names.idView(p)); err != nil {
				return err
			}
			if _, err := io.WriteString(w, ix.names.grpView(p)); err != nil {
				return err
			}
		}
		return nil
	}})
	for _, kind := range slices.Sorted(maps.Keys(ix.kinds)) {
		kv := ix.kinds[kind]
		add(secCodes, uint32(kindCode(kind)), int64(kv.words), bytesOf(kv.codes.base), bytesOf(kv.codes.tail))
		add(secSlots, uint32(kindCode(kind)), 0, bytesOf(kv.rowOf.base), bytesOf(kv.rowOf.tail))
	}
	var branchDir []int64
	var branchRows []int32
	for _, br := range slices.Sorted(maps.Keys(ix.byBranch)) {
		ps := ix.byBranch[br]
		branchDir = append(branchDir, br, int64(len(branchRows)), int64(ps.len()))
		branchRows = append(append(branchRows, ps.base...), ps.tail...)
	}
	add(secBranchDir, 0, 0, bytesOf(branchDir))
	add(secBranchRows, 0, 0, bytesOf(branchRows))
	var counts []int64
	for k, c := range ix.counts {
		counts = append(counts, k.br, int64(k.kind), int64(c.n), int64(c.sum))
	}
	add(secCounts, 0, 0, bytesOf(counts))
	for tag, m := range map[uint32]map[int32]int64{secExpires: ix.expires, secUpdates: ix.updated} {
		var pairs []int64
		for _, p := range slices.Sorted(maps.Keys(m)) {
			pairs = append(pairs, int64(p), m[p])
		}
		add(tag, 0, 0, bytesOf(pairs))
	}
	add(secBranches, 0, 0, bytesOf(slices.Sorted(maps.Keys(ix.branches))))
	groups, grouped := ix.groupLists()
	add(secGroupDir, 0, 0, bytesOf(groups))
	add(secGroupRows, 0, 0, bytesOf(grouped))
	add(secTexts, 0, 0, bytesOf(ix.textList()))
	keys, keyed, keyOf := ix.keyLists()
	add(secKeyDir, 0, 0, bytesOf(keys))
	add(secKeyRows, 0, 0, bytesOf(keyed))
	add(secKeyOf, 0, 0, bytesOf(keyOf))

	// The table, with each section's place.
	off := int64(headerSize + len(ps)*sectionSize)
	head := make([]byte, headerSize, off)
	for i := range ps {
		off = (off + 7) &^ 7
		ps[i].s.off = off
		off += ps[i].s.len
		s := ps[i].s
		head = binary.LittleEndian.AppendUint32(head, s.tag)
		head = binary.LittleEndian.AppendUint32(head, s.kind)
		head = binary.LittleEndian.AppendUint64(head, uint64(s.x))
		head = binary.LittleEndian.AppendUint64(head, uint64(s.off))
		head = binary.LittleEndian.AppendUint64(head, uint64(s.len))
	}
	copy(head, indexMagic)
	binary.LittleEndian.PutUint16(head[4:], indexVersion)
	binary.LittleEndian.PutUint16(head[6:], uint16(len(ps)))
	binary.LittleEndian.PutUint64(head[8:], uint64(ix.lastRID))
	binary.LittleEndian.PutUint64(head[16:], uint64(ix.lastSeq))
	binary.LittleEndian.PutUint64(head[24:], uint64(ix.lastAt))
	binary.LittleEndian.PutUint64(head[32:], uint64(n))
	binary.LittleEndian.PutUint64(head[40:], uint64(off))
	crc := crc32.Update(crc32.Checksum(head[:48], castagnoli), castagnoli, head[headerSize:])
	binary.LittleEndian.PutUint32(head[48:], crc)

	f, err := os.CreateTemp(dir, indexPrefix+"*.tmp")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*os.File, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	at := int64(len(head))
	if _, err := w.Write(head); err != nil {
		return fail(err)
	}
	var pad [8]byte
	for _, p := range ps {
		if _, err := w.Write(pad[:p.s.off-at]); err != nil {
			return fail(err)
		}
		if p.write != nil {
			if err := p.write(w); err != nil {
				return fail(err)
			}
		}
		for _, b := range p.parts {
			if _, err := w.Write(b); err != nil {
				return fail(err)
			}
		}
		at = p.s.off + p.s.len
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	return f, nil
}

// finishFile makes the temporary file f, written by writeFile, the saved index at
// path: readable by whoever may read the folder, as the driver's files are, synced,
// and renamed.
func finishFile(f *os.File, dir, path string) error {
	tmp := f.Name()
	err := func() error {
		if fi, err := os.Stat(dir); err == nil {
			if err := f.Chmod(fi.Mode().Perm()&0o666 | 0o200); err != nil {
				return err
			}
		}
		if err := f.Sync(); err != nil {
			return err
		}
		return f.Close()
	}()
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
	}
	return err
}

// groupLists lists the rows of every group, for a saved index. Callers hold ix.mu.
func (ix *index) groupLists() ([]groupEntry, []int32) {
	type key struct {
		kc   uint8
		name string
	}
	byGroup := map[key][]int32{}
	for p := range int32(ix.rows.len()) {
		if g := ix.names.grpView(p); g != "" {
			k := key{ix.rows.at(p).kc, g}
			byGroup[k] = append(byGroup[k], p)
		}
	}
	keys := slices.SortedFunc(maps.Keys(byGroup), func(a, b key) int {
		if a.kc != b.kc {
			return int(a.kc) - int(b.kc)
		}
		return strings.Compare(a.name, b.name)
	})
	dir := make([]groupEntry, len(keys))
	var rows []int32
	for i, k := range keys {
		ps := byGroup[k]
		dir[i] = groupEntry{kc: uint32(k.kc), named: ps[0], start: uint32(len(rows)), count: uint32(len(ps))}
		rows = append(rows, ps...)
	}
	return dir, rows
}

// textList lists the facts by text key, for a saved index. Callers hold ix.mu.
func (ix *index) textList() []textEntry {
	var out []textEntry
	for p := range int32(ix.rows.len()) {
		if k := ix.rows.at(p).tkey; k != 0 {
			out = append(out, textEntry{key: k, pos: p})
		}
	}
	slices.SortFunc(out, func(a, b textEntry) int {
		if a.key != b.key {
			return cmp.Compare(a.key, b.key)
		}
		return cmp.Compare(a.pos, b.pos)
	})
	return out
}

// keyLists lists the records and the rows of each, and each row's key, for a saved
// index. Callers hold ix.mu.
func (ix *index) keyLists() ([]keyEntry, []int32, []int32) {
	n := int32(ix.rows.len())
	type hashed struct {
		hash uint64
		p    int32
	}
	all := make([]hashed, n)
	for p := range n {
		all[p] = hashed{keyHash(ix.rows.at(p).kc, ix.names.idView(p)), p}
	}
	same := func(a, b int32) int {
		if c := cmp.Compare(ix.rows.at(a).kc, ix.rows.at(b).kc); c != 0 {
			return c
		}
		return strings.Compare(ix.names.idView(a), ix.names.idView(b))
	}
	slices.SortFunc(all, func(a, b hashed) int {
		if a.hash != b.hash {
			return cmp.Compare(a.hash, b.hash)
		}
		if c := same(a.p, b.p); c != 0 {
			return c
		}
		return cmp.Compare(a.p, b.p)
	})
	var dir []keyEntry
	rows := make([]int32, n)
	keyOf := make([]int32, n)
	for i, h := range all {
		if i == 0 || h.hash != all[i-1].hash || same(h.p, all[i-1].p) != 0 {
			dir = append(dir, keyEntry{hash: h.hash, named: h.p, start: uint32(i)})
		}
		dir[len(dir)-1].count++
		rows[i] = h.p
		keyOf[h.p] = int32(len(dir) - 1)
	}
	return dir, rows, keyOf
}

// release unmaps the saved index the columns are views of. Callers make sure no
// read of the index runs or follows.
func (ix *index) release() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.file != nil {
		ix.file.m.Close()
		ix.file = nil
	}
	ix.built = false
	ix.reset()
}
