package portable

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/day1ai/day1/internal/reccodec"
	"github.com/day1ai/day1/internal/simhash"
	"github.com/day1ai/day1/internal/textsearch"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// index is what a store keeps in memory of its rows to find them without reading
// them: per row a few numbers and the code of its embedding, about 100 bytes for a
// fact with a 384-dimension embedding. It is built at the first read that needs it,
// from the driver's Meta, and caught up before each later one with the rows committed
// since (Meta after the last RID, Ended after the last commit), in this process or
// another. Searches, the near-duplicate check and diffs read it; the records
// themselves stay with the driver until a result needs them.
type index struct {
	mu sync.RWMutex
	// dir is the folder the index is saved in, "" for none (indexfile.go).
	dir     string
	built   bool
	lastRID int64
	lastSeq int64
	lastAt  int64      // the instant of commit lastSeq, Unix nanoseconds
	rows    col[meta]  // by position, in RID order
	rids    col[int64] // by position: RIDs ascending, for finding a row's position
	names   names      // by position: ids and groups
	// file is the saved index the columns' bases are views of, nil for none.
	file *indexFile
	// keys and byKey find the rows of one record, byText the facts with one folded
	// text: each is built when a read first needs it (keys for reads of a branch
	// with ancestors, byText for writes), then kept up to date. keyOf holds each
	// row's key, by position, once keys are built. With a saved index, the keys it
	// lists (savedKeys) are numbered first: keys and byKey then hold those of the
	// records first written after it, and keyMore the rows written after it of
	// records it lists (rowsOfKey).
	keys      map[string]int32
	keyOf     col[int32]
	byKey     [][]int32 // key - len(savedKeys.dir) → positions of its rows
	savedKeys keysSaved
	keyMore   map[int32][]int32
	byText    map[int64][]int32 // fact text key → positions
	// savedTexts are the facts of each text as a saved index lists them, by text
	// key: byText then lists the rows caught up after it.
	savedTexts []textEntry
	kinds      map[store.Kind]*kindVecs
	// branches are those the index was last caught up with.
	branches map[int64]bool
	saved    int       // rows in the saved copy it was loaded from or last saved
	savedAt  time.Time // when that copy was saved
	// stale is set when a read caught the index up far past its saved copy
	// (index.due): the store then saves it (Store.saveIndexSoon), so that the next
	// process loads it instead of building it from the rows.
	stale atomic.Bool
	recs  recordCache
	// counts are the live records of each kind at the head of each branch.
	counts map[countKey]liveCount
	// live says, by position, whether a row is live at its branch's head: its
	// branch's ID shifted left by one, with the low bit set for history, or 0. Reads
	// of a branch without ancestors at the index's head decide from it alone, from
	// eight bytes a row rather than the row's meta (headOf).
	live col[int64]
	// groups lists the rows of each session and conversation (addGroup), once a
	// read first needs them (buildGroups); with a saved index, those of the rows
	// added after it, the others being listed in saved (groupsSaved).
	groups      map[groupKey][]int32
	savedGroups groupsSaved
	// byBranch lists the positions of each branch's rows, in RID order, which is
	// commit order: a diff finds the rows a branch wrote between two commits by a
	// binary search.
	byBranch map[int64]*col[int32]
	// expires holds, by position, the expiry of the rows of facts that have one
	// (driver.Index.Expires): searches and lists that leave out expired facts check it
	// when it is not empty.
	expires map[int32]int64
	// terms caches the postings of the terms searched (termLists).
	terms map[store.Kind]map[string]*termList
	// updated holds, by position, the update time (store.UpdateTime, Unix
	// nanoseconds) of the rows whose update time is not their time (meta.time): from
	// their driver's rows, or, for rows kept without one (flagUpdKnown unset), read
	// from their records by the first list by update that needs them; rows never
	// change, so each is read once in a process (listByUpdate).
	updated map[int32]int64
}

// meta is one row as the index holds it. It holds no pointer and has the same
// layout on every platform (metaSize bytes), so that a saved index is read in place.
type meta struct {
	rid, br    int64
	seq, until int64
	tkey       int64
	ord        int64 // driver.Index.Order
	time       int64 // driver.Index.Time
	dlen       int32 // search text length, in terms
	vslot      int32 // position of its code in its kind's codes, -1 for none
	kc         uint8 // its kind (kindCode)
	flags      uint8 // flagDel, flagDead, flagHist, flagUpdKnown
}

// kindVecs are the codes of the embeddings of one kind's rows, back to back, with the
// band index over them for facts. The codes and rowOf have their bases in the same
// slots: slot i of the base is codes.base[i*words:(i+1)*words] and rowOf.base[i].
type kindVecs struct {
	words int
	codes col[uint64]
	rowOf col[int32] // code slot → row position
	bands *simhash.Bands
	// vecs holds, by code slot, the embeddings searches have read: the exact
	// scoring of the nearest codes reads them from memory once they are here.
	vecs [][]float32
}

// catchUp brings the index up to the reader's head. Rows of branches that no longer
// exist are marked dead.
// keys and texts say what the caller needs built (index.need).
func (ix *index) catchUp(ctx context.Context, r driver.Reader, st *state, keys, texts bool) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	defer ix.need(keys, texts)
	if !ix.built {
		ix.kinds = map[store.Kind]*kindVecs{}
		ix.built = true
		if _, err := ix.load(ctx, r, ix.dir); err != nil {
			return err
		}
	}
	head := r.Head()
	if head.Seq <= ix.lastSeq && head.Seq > 0 {
		return nil
	}
	err := r.Meta(ctx, ix.lastRID, func(m driver.Meta) error {
		ix.add(m)
		return nil
	})
	if err != nil {
		return err
	}
	err = r.Ended(ctx, ix.lastSeq, func(rid, until int64) error {
		if p, ok := ix.position(rid); ok {
			ix.count(p, -1)
			ix.rows.at(p).until = until
		}
		return nil
	})
	if err != nil {
		return err
	}
	if gone := ix.branchesGone(st); gone != nil {
		for i := range int32(ix.rows.len()) {
			if m := ix.rows.at(i); gone[m.br] && !m.dead() {
				ix.count(i, -1)
				m.setDead()
			}
		}
	}
	ix.lastSeq, ix.lastAt = head.Seq, head.At.UnixNano()
	if ix.due() {
		ix.stale.Store(true)
	}
	return nil
}

func (ix *index) add(m driver.Meta) {
	p := int32(ix.rows.len())
	row := meta{rid: m.RID, br: m.Branch, seq: m.Seq, until: m.Until, ord: m.Order, time: m.Time, tkey: m.TextKey,
		kc: kindCode(m.Kind), dlen: int32(m.DocLen), vslot: -1}
	if m.Deleted {
		row.flags |= flagDel
	}
	if m.History {
		row.flags |= flagHist
	}
	if m.Expires != 0 {
		if ix.expires == nil {
			ix.expires = map[int32]int64{}
		}
		ix.expires[p] = m.Expires
	}
	if m.Updated != 0 {
		row.flags |= flagUpdKnown
		if m.Updated != m.Time {
			if ix.updated == nil {
				ix.updated = map[int32]int64{}
			}
			ix.updated[p] = m.Updated
		}
	}
	if len(m.Code) > 0 && len(m.Code)%8 == 0 {
		kv := ix.kinds[m.Kind]
		words := len(m.Code) / 8
		if kv == nil {
			kv = &kindVecs{words: words}
			ix.kinds[m.Kind] = kv
		}
		if words == kv.words {
			row.vslot = int32(kv.rowOf.len())
			for i := range words {
				kv.codes.add(binary.LittleEndian.Uint64(m.Code[8*i:]))
			}
			kv.rowOf.add(p)
			if kv.bands != nil {
				codes := kv.flat()
				kv.bands.Add(codes)
				if kv.bands.FoldDue(1) {
					kv.bands.Fold(codes)
				}
			}
		}
	}
	ix.rows.add(row)
	ix.live.add(0)
	ix.rids.add(m.RID)
	ix.names.add(m.ID, m.Group)
	ix.lastRID = m.RID
	ix.count(p, 1)
	if ix.keys != nil {
		ix.addKey(p)
	}
	if ix.byText != nil && m.TextKey != 0 {
		ix.byText[m.TextKey] = append(ix.byText[m.TextKey], p)
	}
	ix.addGroup(p)
}

// addGroup lists the row at position p under its branch and, once the groups are
// built, under its group (a fact's session, a message's conversation).
func (ix *index) addGroup(p int32) {
	m := ix.rows.at(p)
	if ix.byBranch == nil {
		ix.byBranch = map[int64]*col[int32]{}
	}
	c := ix.byBranch[m.br]
	if c == nil {
		c = &col[int32]{}
		ix.byBranch[m.br] = c
	}
	c.add(p)
	if ix.groups != nil {
		ix.addToGroup(p)
	}
}

func (ix *index) addToGroup(p int32) {
	if g := ix.names.grpView(p); g != "" {
		k := groupKey{ix.rows.at(p).kc, ix.names.grp(p)}
		ix.groups[k] = append(ix.groups[k], p)
	}
}

// buildGroups lists the rows of every group, if they are not listed yet: reads of
// a group's rows (inGroup) need them.
func (ix *index) buildGroups() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.groups == nil {
		ix.groups = map[groupKey][]int32{}
		for p := range int32(ix.rows.len()) {
			ix.addToGroup(p)
		}
	}
}

// groupKey names the rows of one kind in one group.
type groupKey struct {
	kind  uint8 // kindCode
	group string
}

// inGroup returns the positions of the rows of a kind in a group that the view sees,
// live. Callers hold ix.mu, and built the groups (buildGroups).
func (ix *index) inGroup(v view, kind store.Kind, group string) []int32 {
	var out []int32
	k := groupKey{kindCode(kind), group}
	for _, ps := range [2][]int32{ix.savedGroups.of(ix, k), ix.groups[k]} {
		for _, p := range ps {
			if !ix.rows.at(p).del() && ix.visible(v, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// positionAfter is position for a RID whose row is at from or after it: it steps
// from there by doubling steps, then searches within the last step.
func (ix *index) positionAfter(rid int64, from int32) (int32, bool) {
	n := int32(ix.rows.len())
	if from < 0 || from >= n || *ix.rids.at(from) > rid {
		return ix.position(rid)
	}
	lo, step := from, int32(1)
	hi := lo + step
	for hi < n && *ix.rids.at(hi) < rid {
		lo, step = hi, step*2
		hi = lo + step
	}
	hi = min(hi, n-1)
	i := sort.Search(int(hi-lo)+1, func(i int) bool { return *ix.rids.at(lo + int32(i)) >= rid })
	p := lo + int32(i)
	return p, p < n && *ix.rids.at(p) == rid
}

// position returns the position of the row with a RID.
func (ix *index) position(rid int64) (int32, bool) {
	if i, ok := slices.BinarySearch(ix.rids.base, rid); ok || i < len(ix.rids.base) {
		return int32(i), ok
	}
	i, ok := slices.BinarySearch(ix.rids.tail, rid)
	return int32(len(ix.rids.base) + i), ok
}

func (ix *index) addKey(p int32) {
	m := ix.rows.at(p)
	id := ix.names.idView(p)
	key, ok := ix.keyNum(m.kc, id)
	saved := int32(len(ix.savedKeys.dir))
	if !ok {
		key = saved + int32(len(ix.byKey))
		ix.keys[string(m.kind())+"\x00"+id] = key
		ix.byKey = append(ix.byKey, nil)
	}
	ix.keyOf.add(key)
	if key < saved {
		if ix.keyMore == nil {
			ix.keyMore = map[int32][]int32{}
		}
		ix.keyMore[key] = append(ix.keyMore[key], p)
	} else {
		ix.byKey[key-saved] = append(ix.byKey[key-saved], p)
	}
}

// keyNum returns the key of the record of kind kc with an id. Callers hold ix.mu,
// with keys built.
func (ix *index) keyNum(kc uint8, id string) (int32, bool) {
	if key, ok := ix.savedKeys.find(ix, kc, id); ok {
		return key, true
	}
	k, _ := kindOfCode(kc)
	key, ok := ix.keys[string(k)+"\x00"+id]
	return key, ok
}

// rowsOfKey returns the rows of a key: those a saved index lists, and the others.
// Callers hold ix.mu, with keys built.
func (ix *index) rowsOfKey(key int32) [2][]int32 {
	saved := int32(len(ix.savedKeys.dir))
	switch {
	case key < 0:
		return [2][]int32{}
	case key < saved:
		return [2][]int32{ix.savedKeys.rowsOf(key), ix.keyMore[key]}
	case int(key-saved) < len(ix.byKey):
		return [2][]int32{ix.byKey[key-saved]}
	}
	return [2][]int32{} // a damaged saved index
}

// need builds what a read needs that the index has not built yet: the rows of each
// record (keys) and the facts of each text (texts). Callers hold ix.mu for writing.
func (ix *index) need(keys, texts bool) {
	n := int32(ix.rows.len())
	if keys && ix.keys == nil {
		ix.keys = make(map[string]int32, n)
		ix.keyOf = col[int32]{tail: make([]int32, 0, n)}
		for p := range n {
			ix.addKey(p)
		}
	}
	if texts && ix.byText == nil {
		ix.byText = map[int64][]int32{}
		for p := range n {
			if m := ix.rows.at(p); m.tkey != 0 {
				ix.byText[m.tkey] = append(ix.byText[m.tkey], p)
			}
		}
	}
}

// branchesGone returns the branches the index has rows of that the state no longer
// holds, nil for none, and remembers the state's.
func (ix *index) branchesGone(st *state) map[int64]bool {
	var gone map[int64]bool
	for id := range ix.branches {
		if st.byID[id] == nil {
			if gone == nil {
				gone = map[int64]bool{}
			}
			gone[id] = true
		}
	}
	ix.branches = make(map[int64]bool, len(st.byID))
	for id := range st.byID {
		ix.branches[id] = true
	}
	return gone
}

// bandsOf returns the band index over a kind's codes, built at the first call: only
// the near-duplicate check of writes needs it. Callers hold ix.mu for writing.
func (kv *kindVecs) bandsOf() *simhash.Bands {
	if kv.bands == nil && kv.words >= simhash.MinBandWords {
		kv.bands = simhash.NewBands(kv.words)
		kv.bands.AddAll(kv.flat())
	}
	return kv.bands
}

// slots returns the number of code slots.
func (kv *kindVecs) slots() int { return kv.rowOf.len() }

// code returns the code of a slot.
func (kv *kindVecs) code(slot int32) []uint64 {
	w := kv.words
	if n := int32(len(kv.rowOf.base)); slot >= n {
		slot -= n
		return kv.codes.tail[int(slot)*w : int(slot+1)*w]
	}
	return kv.codes.base[int(slot)*w : int(slot+1)*w]
}

// flat returns every code, back to back, in one slice of the heap: the band index
// reads them so. The first call after a load copies the codes read in place.
func (kv *kindVecs) flat() []uint64 {
	if len(kv.rowOf.base) > 0 {
		kv.codes.tail = slices.Concat(kv.codes.base, kv.codes.tail)
		kv.rowOf.tail = slices.Concat(kv.rowOf.base, kv.rowOf.tail)
		kv.codes.base, kv.rowOf.base = nil, nil
	}
	return kv.codes.tail
}

// buildBands builds the band index over a kind's codes if it has none yet.
func (ix *index) buildBands(kind store.Kind) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if kv := ix.kinds[kind]; kv != nil {
		kv.bandsOf()
	}
}

// visible reports whether the view sees the row at position p: the row is live at its
// branch's cut, and no branch before it in the chain has a row of the same record by
// its own cut. Callers hold ix.mu.
func (ix *index) visible(v view, p int32) bool {
	m := ix.rows.at(p)
	if m.dead() {
		return false
	}
	for i, l := range v.chain {
		if l.br.id != m.br {
			continue
		}
		if m.seq > l.cut || m.until <= l.cut {
			return false
		}
		if i == 0 {
			return true
		}
		for _, qs := range ix.rowsOfKey(*ix.keyOf.at(p)) {
			for _, q := range qs {
				o := ix.rows.at(q)
				for _, e := range v.chain[:i] {
					if o.br == e.br.id && o.seq <= e.cut && !o.dead() {
						return false
					}
				}
			}
		}
		return true
	}
	return false
}

// find returns the position of the row of a record that the view sees, as
// view.resolve finds it: the row live at the cut of the first link of the chain that
// has one. ok is false when no link has one or the row is a deletion marker. Callers
// hold ix.mu, with keys built.
func (ix *index) find(v view, ref store.Ref) (int32, bool) {
	key, ok := ix.keyNum(kindCode(ref.Kind), ref.ID)
	if !ok {
		return 0, false
	}
	rows := ix.rowsOfKey(key)
	for _, l := range v.chain {
		for _, qs := range rows {
			for _, q := range qs {
				m := ix.rows.at(q)
				if m.br == l.br.id && !m.dead() && m.seq <= l.cut && l.cut < m.until {
					return q, !m.del()
				}
			}
		}
	}
	return 0, false
}

// headOf returns the branch a view reads when it reads one branch without ancestors
// at the index's head, and whether it does: then the row at position p is visible to
// it when live[p]>>1 is that branch. Callers hold ix.mu.
func (ix *index) headOf(v view) (int64, bool) {
	if len(v.chain) != 1 || v.chain[0].cut != ix.lastSeq {
		return 0, false
	}
	return v.chain[0].br.id, true
}

// changed adds to keys the records on which views a and b may differ: those that a
// branch of either chain wrote between the commits the two views read it at (a
// branch one chain lacks is read at 0 there). Callers hold ix.mu.
func (ix *index) changed(keys map[store.Ref]bool, a, b view) {
	type span struct{ lo, hi int64 }
	spans := map[int64]span{}
	cut := func(v view, br int64) int64 {
		for _, l := range v.chain {
			if l.br.id == br {
				return l.cut
			}
		}
		return 0
	}
	for _, v := range []view{a, b} {
		for _, l := range v.chain {
			ca, cb := cut(a, l.br.id), cut(b, l.br.id)
			if ca != cb {
				spans[l.br.id] = span{min(ca, cb), max(ca, cb)}
			}
		}
	}
	for br, sp := range spans {
		ps := ix.byBranch[br]
		if ps == nil {
			continue
		}
		i := sort.Search(ps.len(), func(i int) bool { return ix.rows.at(*ps.at(int32(i))).seq > sp.lo })
		for ; i < ps.len(); i++ {
			p := *ps.at(int32(i))
			m := ix.rows.at(p)
			if m.seq > sp.hi {
				break
			}
			if !m.dead() {
				keys[store.Ref{Kind: m.kind(), ID: ix.names.id(p)}] = true
			}
		}
	}
}

// fetch reads the records of the rows at the given positions, as the view names
// them, in the positions' order (a position given twice gives its record twice); a
// deleted row gives nil. Records read before come from the record cache, and those
// read now are kept there.
func (ix *index) fetch(ctx context.Context, v view, ps []int32) ([]store.Record, error) {
	return ix.read(ctx, v, ps, readOpts{keep: true})
}

// readOpts are the options of index.read.
type readOpts struct {
	// keep keeps the records read in the cache. Reads of many records once (large
	// diffs and merges, batches) leave the cache to searches and lists.
	keep bool
	// borrow gives the cache's own records where it holds them, not clones: for a
	// caller that never changes them (see view.borrowMany).
	borrow bool
}

// read is fetch with options.
func (ix *index) read(ctx context.Context, v view, ps []int32, o readOpts) ([]store.Record, error) {
	out := make([]store.Record, len(ps))
	rids := make([]int64, len(ps))
	ix.mu.RLock()
	for i, p := range ps {
		rids[i] = ix.rows.at(p).rid
	}
	ix.mu.RUnlock()
	var missing []int64
	at := map[int64][]int{}
	shared := make([]bool, len(ps)) // out[i] is held by the cache too
	ix.recs.mu.Lock()
	for i, rid := range rids {
		if r, ok := ix.recs.get(rid); ok {
			out[i], shared[i] = r, true
			continue
		}
		if len(at[rid]) == 0 {
			missing = append(missing, rid)
		}
		at[rid] = append(at[rid], i)
	}
	ix.recs.mu.Unlock()
	if len(missing) > 0 {
		var got []store.Record
		var gotRIDs []int64
		err := v.st.r.Fetch(ctx, missing, func(row driver.Row) error {
			if row.Deleted {
				return nil
			}
			r, err := reccodec.Join(row.Kind, row.Data, row.Vector)
			if err != nil {
				return fmt.Errorf("%w: %s %q: %v", store.ErrCorrupt, row.Kind, row.ID, err)
			}
			for j, i := range at[row.RID] {
				out[i], shared[i] = r, o.keep || j > 0
			}
			got, gotRIDs = append(got, r), append(gotRIDs, row.RID)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if o.keep {
			ix.recs.add(gotRIDs, got)
		}
	}
	for i, r := range out {
		if r != nil && shared[i] && !o.borrow {
			r = store.Clone(r)
		}
		if r != nil {
			out[i] = store.WithBranch(r, v.name())
		}
	}
	return out, nil
}

// recordCache keeps decoded records by RID: a row's record never changes, so a
// record read once is good for every later read, in any view. It holds at most
// maxCachedRecords. When it is full, a new record takes the slot of the first one
// the clock hand finds unread since the hand last passed it (CLOCK, the
// second-chance approximation of least recently used): records that searches read
// again and again stay, and a record read once goes first, as it enters unread.
type recordCache struct {
	mu    sync.Mutex
	at    map[int64]int32 // RID: slot
	slots []cachedRecord
	hand  int
}

// cachedRecord is one slot of a recordCache.
type cachedRecord struct {
	rid  int64
	rec  store.Record
	read bool // read since the hand last passed
}

const maxCachedRecords = 1 << 14

// keepRecords is the most references a read of a diff or merge keeps the records of
// in the cache (view.borrowMany).
const keepRecords = maxCachedRecords / 32

// get returns the record of rid, if the cache holds it, and marks it read. c.mu must
// be held.
func (c *recordCache) get(rid int64) (store.Record, bool) {
	i, ok := c.at[rid]
	if !ok {
		return nil, false
	}
	s := &c.slots[i]
	s.read = true
	return s.rec, true
}

func (c *recordCache) add(rids []int64, recs []store.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[int64]int32{}
	}
	for i, rid := range rids {
		if j, ok := c.at[rid]; ok {
			c.slots[j].rec = recs[i]
			continue
		}
		if len(c.slots) < maxCachedRecords {
			c.at[rid] = int32(len(c.slots))
			c.slots = append(c.slots, cachedRecord{rid: rid, rec: recs[i]})
			continue
		}
		// One turn of the hand at most: it clears the marks it passes.
		for c.slots[c.hand].read {
			c.slots[c.hand].read = false
			c.hand = (c.hand + 1) % len(c.slots)
		}
		delete(c.at, c.slots[c.hand].rid)
		c.slots[c.hand] = cachedRecord{rid: rid, rec: recs[i]}
		c.at[rid] = int32(c.hand)
		c.hand = (c.hand + 1) % len(c.slots)
	}
}

// fetchVecs reads the embeddings of the rows at the given positions, in order; nil
// for a deleted row or one without.
func (ix *index) fetchVecs(ctx context.Context, r driver.Reader, ps []int32) ([][]float32, error) {
	rids := make([]int64, len(ps))
	at := make(map[int64]int, len(ps))
	ix.mu.RLock()
	for i, p := range ps {
		rids[i] = ix.rows.at(p).rid
		at[rids[i]] = i
	}
	ix.mu.RUnlock()
	out := make([][]float32, len(ps))
	err := r.Fetch(ctx, rids, func(row driver.Row) error {
		if row.Deleted {
			return nil
		}
		emb, err := reccodec.Vector(row.Vector)
		if err != nil {
			return fmt.Errorf("%w: %s %q: %v", store.ErrCorrupt, row.Kind, row.ID, err)
		}
		out[at[row.RID]] = emb
		return nil
	})
	return out, err
}

// textKey hashes a fact's folded text.
func textKey(text string) int64 {
	h := fnv.New64a()
	h.Write([]byte(store.NormText(text)))
	k := int64(h.Sum64() &^ (1 << 63))
	if k == 0 {
		k = 1
	}
	return k
}

// codeRotation is the rotation of the codes of every embedding of a length, made
// once: the same seed on every store, so codes written by one process are read by
// every other.
var (
	rotMu     sync.Mutex
	rotations = map[int]*vecmath.Rotation{}
)

const rotationSeed = 0x64617931 // "day1"

func rotationFor(dims int) *vecmath.Rotation {
	rotMu.Lock()
	defer rotMu.Unlock()
	r := rotations[dims]
	if r == nil {
		r = vecmath.NewRotation(dims, rotationSeed)
		rotations[dims] = r
	}
	return r
}

// codeOf returns the code of an embedding as little-endian words.
func codeOf(emb []float32) []uint64 {
	return rotationFor(len(emb)).AppendCode(nil, emb, nil)
}

func codeBytes(code []uint64) []byte {
	b := make([]byte, 8*len(code))
	for i, w := range code {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return b
}

// indexOf returns what the driver keeps beside a record to find it.
func indexOf(r store.Record) driver.Index {
	var ix driver.Index
	if f, ok := r.(store.Fact); ok {
		ix.TextKey = textKey(f.Text)
	}
	if text := store.SearchText(r); text != "" {
		terms := textsearch.Terms(text)
		ix.DocLen = len(terms)
		counts := map[string]int{}
		for _, t := range terms {
			if counts[t] == 0 {
				ix.Terms = append(ix.Terms, t)
			}
			counts[t]++
		}
		ix.Counts = make([]int, len(ix.Terms))
		for i, t := range ix.Terms {
			ix.Counts[i] = counts[t]
		}
	}
	if emb := store.EmbeddingOf(r); len(emb) > 0 {
		ix.Code = codeBytes(codeOf(emb))
	}
	ix.History = store.IsHistory(r)
	ix.Time = r.RecordTime().UnixNano()
	ix.Updated = store.UpdateTime(r).UnixNano()
	switch x := r.(type) {
	case store.Fact:
		ix.Group, ix.Order = x.SessionID, x.CreatedAt.UnixNano()
		if !x.ExpiresAt.IsZero() {
			ix.Expires = expiryNanos(x.ExpiresAt)
		}
	case store.Message:
		ix.Group, ix.Order = x.ConversationID, int64(x.Seq)
	}
	return ix
}

// scorers keeps the scorers of keyword searches for reuse: one holds every posting a
// search keeps.
var scorers = sync.Pool{New: func() any { return new(textsearch.Scorer) }}

// termList is the postings of one term among one kind's rows, by row position, as
// far as the row with RID upTo: all of them, live or not, on any branch.
type termList struct {
	list textsearch.List
	upTo int64
}

// termLists returns the query's terms and their postings, each list read from the
// driver at its first use and extended with the rows indexed since at each later one.
// Only rows the index holds are listed.
func (ix *index) termLists(ctx context.Context, r driver.Reader, kind store.Kind, terms map[string]int) ([]string, []*textsearch.List, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.terms == nil {
		ix.terms = map[store.Kind]map[string]*termList{}
	}
	byTerm := ix.terms[kind]
	if byTerm == nil {
		byTerm = map[string]*termList{}
		ix.terms[kind] = byTerm
	}
	names := make([]string, 0, len(terms))
	out := make([]*textsearch.List, 0, len(terms))
	for t := range terms {
		tl := byTerm[t]
		if tl == nil {
			tl = &termList{}
			byTerm[t] = tl
		}
		if tl.upTo < ix.lastRID {
			// Postings come by RID, so each row is found after the last one.
			var from int32
			err := r.Postings(ctx, kind, t, tl.upTo, func(rid int64, tf int) error {
				if rid > ix.lastRID {
					return nil
				}
				p, ok := ix.positionAfter(rid, from)
				if ok {
					tl.list.Add(p, 0, tf, int(ix.rows.at(p).dlen))
				}
				from = p
				return nil
			})
			if err != nil {
				return nil, nil, err
			}
			tl.upTo = ix.lastRID
		}
		names = append(names, t)
		out = append(out, &tl.list)
	}
	return names, out, nil
}

// stats returns the number of live records of a kind the view sees and the sum of
// their lengths: from the running counts at the head of a branch without ancestors,
// else by a pass over the rows. Callers hold ix.mu.
func (ix *index) stats(v view, kind store.Kind) (n, sum int) {
	if l := v.chain[0]; len(v.chain) == 1 && l.cut >= ix.lastSeq {
		c := ix.counts[countKey{l.br.id, kindCode(kind)}]
		return c.n, c.sum
	}
	for p := range int32(ix.rows.len()) {
		m := ix.rows.at(p)
		if m.kind() == kind && !m.del() && ix.visible(v, p) {
			n++
			sum += int(m.dlen)
		}
	}
	return n, sum
}

// countKey names the running count of the live records of a kind on a branch.
type countKey struct {
	br   int64
	kind uint8 // kindCode
}

type liveCount struct{ n, sum int }

// count adds d times row p to the running counts, if it is a live record at its
// branch's head.
func (ix *index) count(p int32, d int) {
	m := ix.rows.at(p)
	if m.del() || m.dead() || m.until != driver.Never {
		return
	}
	live := ix.live.at(p)
	if d > 0 {
		*live = m.br << 1
		if m.hist() {
			*live |= 1
		}
	} else {
		*live = 0
	}
	if ix.counts == nil {
		ix.counts = map[countKey]liveCount{}
	}
	k := countKey{m.br, m.kc}
	c := ix.counts[k]
	c.n += d
	c.sum += d * int(m.dlen)
	ix.counts[k] = c
}

// keyword ranks the records of a kind the view sees by BM25 over the view: document
// frequencies, count and average length are those of the rows the view sees. It
// returns the best k the filter accepts.
func (s *Store) keyword(ctx context.Context, v view, kind store.Kind, q store.SearchQuery, k int) ([]store.Ranked, []int32, error) {
	ix := &s.ix
	terms := textsearch.TermFreqs(textsearch.Terms(q.Text))
	names, lists, err := ix.termLists(ctx, v.st.r, kind, terms)
	if err != nil {
		return nil, nil, err
	}
	ix.mu.RLock()
	n, sum := ix.stats(v, kind)
	if n == 0 || k <= 0 {
		ix.mu.RUnlock()
		return nil, nil, nil
	}
	avg := float64(sum) / float64(n)
	// A filter that only leaves history out is decided by the index; any other
	// reads the records of the best candidates (takeBest).
	history := store.HistoryOnly(q.Filter)
	filtered := !q.Filter.IsZero() && !history
	sc := scorers.Get().(*textsearch.Scorer)
	defer scorers.Put(sc)
	sc.Reset()
	br, atHead := ix.headOf(v)
	var idfs []float64 // of the query's terms, for store.Ranked.Full
	absent := textsearch.AbsentWeights(q.Text)
	for i, l := range lists {
		df := 0
		for _, p := range l.Postings {
			var hist bool
			if atHead {
				x := *ix.live.at(p.Ord)
				if x>>1 != br {
					continue
				}
				hist = x&1 != 0
			} else if m := ix.rows.at(p.Ord); m.kind() == kind && !m.del() && ix.visible(v, p.Ord) {
				hist = m.hist()
			} else {
				continue
			}
			df++
			if !history || !hist && !ix.expired(p.Ord, q.Filter.LiveAt) {
				sc.Keep(p)
			}
		}
		idf := textsearch.DefaultBM25.IDF(df, n)
		idfs = append(idfs, absent.Of(names[i], df, idf))
		sc.Term(l, idf)
	}
	long := func(ord int32) int { return int(ix.rows.at(ord).dlen) }
	full := textsearch.Full(idfs)
	var order []vecmath.Scored[int32]
	if !filtered {
		order = sc.Top(avg, k, long)
	} else {
		for p, score := range sc.All(avg, long) {
			order = append(order, vecmath.Scored[int32]{Item: p, Score: score})
		}
		slices.SortFunc(order, func(a, b vecmath.Scored[int32]) int {
			if a.Score != b.Score {
				if a.Score > b.Score {
					return -1
				}
				return 1
			}
			return int(a.Item - b.Item)
		})
	}
	ix.mu.RUnlock()
	if !filtered {
		q.Filter = store.Filter{}
	}
	return s.takeBest(ctx, v, order, q.Filter, k, full)
}

// takeBest reads the records of candidates in order, keeping the first k the filter
// accepts, and returns their positions beside them.
func (s *Store) takeBest(ctx context.Context, v view, order []vecmath.Scored[int32], f store.Filter, k int, full float64) ([]store.Ranked, []int32, error) {
	var out []store.Ranked
	var at []int32
	for len(order) > 0 && len(out) < k {
		n := min(len(order), max(2*(k-len(out)), 32))
		chunk := order[:n]
		order = order[n:]
		ps := make([]int32, n)
		for i, c := range chunk {
			ps[i] = c.Item
		}
		recs, err := s.ix.fetch(ctx, v, ps)
		if err != nil {
			return nil, nil, err
		}
		for i, r := range recs {
			if r != nil && f.Match(r) && len(out) < k {
				out = append(out, store.Ranked{Record: r, Score: chunk[i].Score, Full: full})
				at = append(at, ps[i])
			}
		}
	}
	return out, at, nil
}

// vecOf returns the embedding kept for a code slot, nil when it has not been read.
func (kv *kindVecs) vecOf(slot int32) []float32 {
	if slot < 0 || int(slot) >= len(kv.vecs) {
		return nil
	}
	return kv.vecs[slot]
}

// keepVec keeps the embedding of a code slot for later searches. Callers hold ix.mu
// for writing.
func (kv *kindVecs) keepVec(slot int32, emb []float32) {
	if slot < 0 || int(slot) >= kv.slots() {
		return
	}
	if int(slot) >= len(kv.vecs) {
		kv.vecs = slices.Grow(kv.vecs, kv.slots()-len(kv.vecs))[:kv.slots()]
	}
	kv.vecs[slot] = emb
}

// vector ranks the records of a kind the view sees by the cosine of their embeddings
// with the query's: by the Hamming distance of codes first, then exactly for the
// nearest codes, in order, until enough the filter accepts have been scored. Only the
// records of the best k are decoded whole (or every candidate's, with a filter).
func (s *Store) vector(ctx context.Context, v view, kind store.Kind, q store.SearchQuery, k int) ([]store.Ranked, error) {
	ix := &s.ix
	ix.mu.RLock()
	kv := ix.kinds[kind]
	if kv == nil || k <= 0 {
		ix.mu.RUnlock()
		return nil, nil
	}
	qc := codeOf(q.Vector)
	if len(qc) != kv.words {
		ix.mu.RUnlock()
		return nil, nil
	}
	// A counting sort by distance: the nearest codes first, ties in position order.
	// The distance of each slot (none for a row the view does not see) is kept in a
	// buffer reused by later searches; only the slots near enough to be scored are
	// sorted: the nearest want of them and their ties, or, with a filter that may
	// turn many down, every one.
	want := max(k*16, 400)
	history := store.HistoryOnly(q.Filter)
	filtered := !q.Filter.IsZero() && !history
	bits := kv.words * 64
	counts := make([]int32, bits+2)
	dp := distances.Get().(*[]uint16)
	defer distances.Put(dp)
	dist := slices.Grow((*dp)[:0], kv.slots())[:kv.slots()]
	*dp = dist
	br, atHead := ix.headOf(v)
	w := kv.words
	slot := 0
	for _, seg := range [2]struct {
		codes []uint64
		rows  []int32
	}{{kv.codes.base, kv.rowOf.base}, {kv.codes.tail, kv.rowOf.tail}} {
		for i, p := range seg.rows {
			dist[slot] = unseen
			slot++
			if atHead {
				if x := *ix.live.at(p); x>>1 != br || history && x&1 != 0 {
					continue
				}
			} else if m := ix.rows.at(p); m.del() || history && m.hist() || !ix.visible(v, p) {
				continue
			}
			if history && ix.expired(p, q.Filter.LiveAt) {
				continue
			}
			d := vecmath.Hamming(qc, seg.codes[i*w:(i+1)*w])
			dist[slot-1] = uint16(d)
			counts[d+1]++
		}
	}
	limit := bits
	if !filtered {
		for d, n := 0, int32(0); d <= bits; d++ {
			if n += counts[d+1]; n >= int32(want) {
				limit = d
				break
			}
		}
	}
	for d := 1; d < len(counts); d++ {
		counts[d] += counts[d-1]
	}
	order := make([]int32, counts[limit+1])
	for s, d := range dist {
		if int(d) <= limit {
			order[counts[d]] = *kv.rowOf.at(int32(s))
			counts[d]++
		}
	}
	ix.mu.RUnlock()
	top := vecmath.NewTopK[int32](k)
	got := 0
	var err error
	for len(order) > 0 && got < want {
		n := min(len(order), want-got)
		batch := order[:n]
		order = order[n:]
		// Embeddings read before are scored from memory; the others are read, and
		// kept for the next searches. With a filter, every candidate's record is read.
		var missing []int32
		ix.mu.RLock()
		for _, p := range batch {
			emb := kv.vecOf(ix.rows.at(p).vslot)
			if emb == nil || filtered {
				missing = append(missing, p)
				continue
			}
			top.Push(float64(vecmath.Cosine(q.Vector, emb)), p)
			got++
		}
		ix.mu.RUnlock()
		if len(missing) == 0 {
			continue
		}
		embs := make([][]float32, len(missing))
		if filtered {
			recs, err := ix.fetch(ctx, v, missing)
			if err != nil {
				return nil, err
			}
			for i, r := range recs {
				if r != nil && q.Filter.Match(r) {
					embs[i] = store.EmbeddingOf(r)
				}
			}
		} else if embs, err = ix.fetchVecs(ctx, v.st.r, missing); err != nil {
			return nil, err
		}
		ix.mu.Lock()
		for i, emb := range embs {
			if len(emb) != len(q.Vector) {
				continue
			}
			kv.keepVec(ix.rows.at(missing[i]).vslot, emb)
			top.Push(float64(vecmath.Cosine(q.Vector, emb)), missing[i])
			got++
		}
		ix.mu.Unlock()
	}
	sorted := top.Sorted()
	ps := make([]int32, len(sorted))
	for i, x := range sorted {
		ps[i] = x.Item
	}
	recs, err := ix.fetch(ctx, v, ps)
	if err != nil {
		return nil, err
	}
	out := make([]store.Ranked, 0, len(sorted))
	for i, x := range sorted {
		if recs[i] != nil {
			out = append(out, store.Ranked{Record: recs[i], Score: x.Score})
		}
	}
	return out, nil
}

// distances are the buffers of code distances vector searches reuse; unseen marks
// a slot the search's view does not see.
var distances = sync.Pool{New: func() any { return new([]uint16) }}

const unseen = math.MaxUint16

// expired reports whether the row at position p is a fact that has expired at t (a
// zero t checks nothing). Callers hold ix.mu.
func (ix *index) expired(p int32, t time.Time) bool {
	if len(ix.expires) == 0 || t.IsZero() {
		return false
	}
	e, ok := ix.expires[p]
	return ok && e <= expiryNanos(t)
}

// holdsExpiring reports whether the index holds a fact with an expiry.
func (ix *index) holdsExpiring() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.expires) > 0
}

// expiryNanos is an expiry in Unix nanoseconds, the latest that int64 holds for one
// after 2262 and the earliest after 0 for one before 1970.
func expiryNanos(t time.Time) int64 {
	switch {
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	case !t.After(time.Unix(0, 1)):
		return 1
	}
	return t.UnixNano()
}
