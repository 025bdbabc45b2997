package portable

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// headReader is a reader that knows only its head.
type headReader struct {
	driver.Reader
	head driver.Commit
}

func (r headReader) Head() driver.Commit { return r.head }

func (r headReader) CommitOf(_ context.Context, seq int64) (driver.Commit, error) {
	if seq == r.head.Seq {
		return r.head, nil
	}
	return driver.Commit{}, nil
}

// sampleIndex returns an index of n rows of facts and messages on two branches, with
// codes, groups, expiries and update times, caught up with head.
func sampleIndex(n int, head driver.Commit) *index {
	ix := &index{kinds: map[store.Kind]*kindVecs{}, built: true}
	for i := range n {
		m := driver.Meta{RID: int64(i + 1), Kind: store.KindFact, ID: fmt.Sprintf("f%04d", i%250), Branch: 1 + int64(i%2),
			Seq: int64(i/10 + 1), Until: driver.Never, TextKey: int64(i + 1), DocLen: 5, Group: fmt.Sprintf("s%d", i%4),
			Order: int64(i), Time: int64(i), Code: make([]byte, 16)}
		binary.LittleEndian.PutUint64(m.Code, uint64(i)*0x9e3779b97f4a7c15)
		if i%3 == 0 {
			m.Kind, m.Code = store.KindMessage, nil
		}
		if i%5 == 0 {
			m.Expires = int64(1000 + i)
		}
		if i%7 == 0 {
			m.Updated = int64(2000 + i)
		}
		ix.add(m)
	}
	ix.lastSeq, ix.lastAt = head.Seq, head.At.UnixNano()
	ix.branches = map[int64]bool{1: true, 2: true}
	return ix
}

// use reads every column of every row the way reads do: a damaged index that was
// accepted must not make any of it fail.
func (ix *index) use() {
	for p := range int32(ix.rows.len()) {
		m := ix.rows.at(p)
		_ = m.kind()
		_, _ = ix.names.idView(p), ix.names.grpView(p)
		_, _ = ix.names.id(p), ix.names.grp(p)
		ix.position(*ix.rids.at(p))
		_ = ix.updateOf(p)
		_ = ix.expired(p, time.Unix(0, 1500))
		for _, kv := range ix.kinds {
			_ = kv.vecOf(m.vslot)
			kv.keepVec(m.vslot, []float32{1})
		}
	}
	ix.need(true, true)
	for p := range int32(ix.rows.len()) {
		if key, ok := ix.keyNum(ix.rows.at(p).kc, ix.names.idView(p)); ok {
			for _, qs := range ix.rowsOfKey(key) {
				for _, q := range qs {
					_ = ix.rows.at(q)
				}
			}
		}
		for _, qs := range ix.rowsOfKey(*ix.keyOf.at(p)) {
			for _, q := range qs {
				_ = ix.rows.at(q)
			}
		}
	}
	for k := range int64(300) {
		for _, p := range ix.withText(k) {
			_ = ix.rows.at(p)
		}
	}
	for _, e := range ix.savedGroups.dir {
		for _, g := range []string{"s1", "", "zz"} {
			for _, p := range ix.savedGroups.of(ix, groupKey{uint8(e.kc), g}) {
				_ = ix.rows.at(p)
			}
		}
	}
	ix.groups = nil
	ix.buildGroups()
	for _, kv := range ix.kinds {
		for slot := range int32(kv.slots()) {
			_ = ix.rows.at(*kv.rowOf.at(slot))
			_ = kv.code(slot)
		}
		_ = kv.bandsOf()
	}
	for _, ps := range ix.byBranch {
		for i := range int32(ps.len()) {
			_ = ix.rows.at(*ps.at(i))
		}
	}
}

// TestSavedIndexRoundTrip checks that an index read in place from its saved file
// holds what was saved.
func TestSavedIndexRoundTrip(t *testing.T) {
	head := driver.Commit{Seq: 30, At: time.Unix(0, 123456789)}
	ix := sampleIndex(300, head)
	dir := t.TempDir()
	path, err := saveTo(ix, dir)
	if err != nil {
		t.Fatal(err)
	}
	got := &index{}
	ok, err := got.load(context.Background(), headReader{head: head}, dir)
	if err != nil || !ok {
		t.Fatalf("load: %v, %v", ok, err)
	}
	defer got.release()
	if got.file == nil || got.file.path != path || got.rows.len() != 300 || len(got.rows.tail) != 0 {
		t.Fatalf("the loaded index is not the saved file read in place")
	}
	for p := range int32(300) {
		if *got.rows.at(p) != *ix.rows.at(p) || got.names.id(p) != ix.names.id(p) || got.names.grp(p) != ix.names.grp(p) ||
			*got.live.at(p) != *ix.live.at(p) || *got.rids.at(p) != *ix.rids.at(p) {
			t.Fatalf("row %d differs after the round trip", p)
		}
	}
	for k, kv := range ix.kinds {
		g := got.kinds[k]
		if g == nil || g.words != kv.words || fmt.Sprint(g.codes.base) != fmt.Sprint(kv.codes.tail) || fmt.Sprint(g.rowOf.base) != fmt.Sprint(kv.rowOf.tail) {
			t.Errorf("the codes of %s differ after the round trip", k)
		}
	}
	byBranch := func(ix *index) map[int64][]int32 {
		m := map[int64][]int32{}
		for br, ps := range ix.byBranch {
			m[br] = append(append([]int32(nil), ps.base...), ps.tail...)
		}
		return m
	}
	if fmt.Sprint(got.counts) != fmt.Sprint(ix.counts) || fmt.Sprint(byBranch(got)) != fmt.Sprint(byBranch(ix)) ||
		fmt.Sprint(got.expires) != fmt.Sprint(ix.expires) || fmt.Sprint(got.updated) != fmt.Sprint(ix.updated) ||
		fmt.Sprint(got.branches) != fmt.Sprint(ix.branches) {
		t.Error("the counts, branches, expiries or update times differ after the round trip")
	}
	// Rows added after the load go to the columns' tails.
	code := []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}
	got.add(driver.Meta{RID: 301, Kind: store.KindFact, ID: "late", Branch: 1, Seq: 31, Until: driver.Never, Group: "s1", Code: code, TextKey: 8})
	got.add(driver.Meta{RID: 302, Kind: store.KindFact, ID: "f0001", Branch: 2, Seq: 31, Until: driver.Never})
	// ref is the index built from the rows, the same added.
	ref := sampleIndex(300, head)
	ref.add(driver.Meta{RID: 301, Kind: store.KindFact, ID: "late", Branch: 1, Seq: 31, Until: driver.Never, Group: "s1", Code: code, TextKey: 8})
	ref.add(driver.Meta{RID: 302, Kind: store.KindFact, ID: "f0001", Branch: 2, Seq: 31, Until: driver.Never})
	ref.need(true, true)
	flat := func(ix *index, key int32) []int32 {
		rs := ix.rowsOfKey(key)
		return append(append([]int32(nil), rs[0]...), rs[1]...)
	}
	for p := range int32(302) {
		m := ref.rows.at(p)
		want, ok1 := ref.keyNum(m.kc, ref.names.id(p))
		have, ok2 := got.keyNum(m.kc, ref.names.id(p))
		if !ok1 || !ok2 || *got.keyOf.at(p) != have || fmt.Sprint(flat(got, have)) != fmt.Sprint(flat(ref, want)) {
			t.Fatalf("the rows of the record of row %d after the load: %v; want %v", p, flat(got, have), flat(ref, want))
		}
	}
	if _, ok := got.keyNum(kindCode(store.KindFact), "nobody"); ok {
		t.Error("a record that is not there has a key")
	}
	for k := range int64(310) {
		want := ref.withText(k)
		if have := got.withText(k); fmt.Sprint(have) != fmt.Sprint(want) {
			t.Errorf("the facts of text %d after the load: %v; want %v", k, have, want)
		}
	}
	if p, ok := got.position(301); !ok || p != 300 || got.names.id(p) != "late" || got.names.grp(p) != "s1" {
		t.Errorf("a row added after the load: position %d %v", p, ok)
	}
	kv := got.kinds[store.KindFact]
	last := int32(kv.slots() - 1)
	if c := kv.code(last); fmt.Sprint(c) != "[1 2]" || *kv.rowOf.at(last) != 300 || got.rows.at(300).vslot != last {
		t.Errorf("the code of a row added after the load: slot %d holds %v", last, c)
	}
	want := append(append([]uint64(nil), ix.kinds[store.KindFact].codes.tail...), 1, 2)
	if flat := kv.flat(); fmt.Sprint(flat) != fmt.Sprint(want) || kv.slots() != int(last)+1 || fmt.Sprint(kv.code(0)) != fmt.Sprint(want[:2]) {
		t.Error("the codes made flat differ from those saved and added")
	}
	for g := range 4 {
		k := groupKey{kindCode(store.KindFact), fmt.Sprintf("s%d", g)}
		want := ix.groupsOf(k)
		if g == 1 {
			want = append(want, 300)
		}
		if have := append(got.savedGroups.of(got, k), got.groups[k]...); fmt.Sprint(have) != fmt.Sprint(want) {
			t.Errorf("the rows of group %v after the load: %v; want %v", k, have, want)
		}
	}
	if p, ok := got.position(150); !ok || p != 149 {
		t.Errorf("position(150) = %d %v after the load; want 149", p, ok)
	}
	// A reader whose memory has a different history at the saved commit, or has not
	// reached it, does not read it.
	for _, r := range []headReader{{head: driver.Commit{Seq: 30, At: time.Unix(0, 1)}}, {head: driver.Commit{Seq: 29, At: time.Unix(0, 123456789)}}} {
		other := &index{}
		if ok, err := other.load(context.Background(), r, dir); ok || err != nil {
			t.Errorf("a reader at %+v read the saved index (%v, %v)", r.head, ok, err)
		}
	}
}

// TestDamagedSavedIndexNeverFails damages a saved index byte by byte, and checks that
// each damage is refused or, where it passes the checks (a value in a column), that
// reads of every column of every row go on without failing.
func TestDamagedSavedIndexNeverFails(t *testing.T) {
	head := driver.Commit{Seq: 30, At: time.Unix(0, 123456789)}
	dir := t.TempDir()
	path, err := saveTo(sampleIndex(200, head), dir)
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	r := headReader{head: head}
	try := func(b []byte) {
		t.Helper()
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("a damaged saved index made a read fail: %v", p)
			}
		}()
		ix := &index{}
		ok, err := ix.loadFrom(context.Background(), r, b)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			ix.use()
		}
	}
	tableEnd := headerSize + int(binary.LittleEndian.Uint16(good[6:]))*sectionSize
	for i := range tableEnd {
		b := append([]byte(nil), good...)
		b[i] ^= 1 << rng.IntN(8)
		ix := &index{}
		if ok, _ := ix.loadFrom(context.Background(), r, b); ok && !(i >= 52 && i < headerSize) {
			t.Errorf("a flip in byte %d of the header or table was not noticed", i)
		}
	}
	for range 3000 {
		b := append([]byte(nil), good...)
		for range 1 + rng.IntN(4) {
			i := tableEnd + rng.IntN(len(b)-tableEnd)
			b[i] = byte(rng.Uint32())
		}
		try(b)
	}
	for _, n := range []int{0, 10, headerSize, tableEnd, len(good) - 1} {
		try(good[:n])
	}
}

// groupsOf lists the rows of a group from every row, as a saved index must.
func (ix *index) groupsOf(k groupKey) []int32 {
	var out []int32
	for p := range int32(ix.rows.len()) {
		if ix.rows.at(p).kc == k.kind && ix.names.grpView(p) == k.group {
			out = append(out, p)
		}
	}
	return out
}

// TestPositionAfter checks the search of a RID's row from a row before it against
// the search from the start, over a base and a tail with gaps in the RIDs.
func TestPositionAfter(t *testing.T) {
	ix := &index{}
	for i := range 300 {
		rid := int64(3*i + 1)
		if i < 200 {
			ix.rids.base = append(ix.rids.base, rid)
		} else {
			ix.rids.tail = append(ix.rids.tail, rid)
		}
		ix.rows.add(meta{rid: rid})
	}
	for rid := int64(0); rid < 905; rid++ {
		want, wantOK := ix.position(rid)
		for _, from := range []int32{-1, 0, 1, 50, 199, 200, 250, 299, 300, int32(want), int32(want) - 1} {
			if got, ok := ix.positionAfter(rid, from); ok != wantOK || ok && got != want {
				t.Fatalf("positionAfter(%d, %d) = %d, %v; want %d, %v", rid, from, got, ok, want, wantOK)
			}
		}
	}
}

// saveTo writes the index to its saved file in dir and returns its path.
func saveTo(ix *index, dir string) (string, error) {
	f, err := ix.writeFile(dir)
	if err != nil {
		return "", err
	}
	path := indexName(dir, ix.lastSeq)
	return path, finishFile(f, dir, path)
}

// section returns where the section of a tag is in a saved index's bytes.
func sectionOf(b []byte, tag uint32) (off, n int) {
	for i := range int(binary.LittleEndian.Uint16(b[6:])) {
		e := b[headerSize+i*sectionSize:]
		if binary.LittleEndian.Uint32(e) == tag {
			return int(binary.LittleEndian.Uint64(e[16:])), int(binary.LittleEndian.Uint64(e[24:]))
		}
	}
	return 0, 0
}

// TestDamagedSavedIndexOverflows checks that a branch whose rows' start and count
// sum past the largest int64 is refused, not read.
func TestDamagedSavedIndexOverflows(t *testing.T) {
	head := driver.Commit{Seq: 30, At: time.Unix(0, 123456789)}
	dir := t.TempDir()
	path, err := saveTo(sampleIndex(50, head), dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off, n := sectionOf(b, secBranchDir)
	if n < 24 {
		t.Fatal("no branch in the saved index")
	}
	binary.LittleEndian.PutUint64(b[off+8:], 1)
	binary.LittleEndian.PutUint64(b[off+16:], math.MaxInt64)
	ix := &index{}
	if ok, err := ix.loadFrom(context.Background(), headReader{head: head}, b); ok || err != nil {
		t.Errorf("a branch whose rows overflow was read (%v, %v)", ok, err)
	}
}

// TestRemoveOldIndexes checks that a save removes the saved indexes of earlier
// commits and leaves later ones, which a process that lags may not know of.
func TestRemoveOldIndexes(t *testing.T) {
	dir := t.TempDir()
	for _, seq := range []int64{5, 100, 200} {
		if err := os.WriteFile(indexName(dir, seq), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removeOldIndexes(dir, indexName(dir, 100))
	paths, _ := indexFiles(dir)
	if fmt.Sprint(paths) != fmt.Sprint([]string{indexName(dir, 200), indexName(dir, 100)}) {
		t.Errorf("saved indexes after removing those older than 100: %v", paths)
	}
}
