package matrixone

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
	"sync"

	"github.com/day1ai/day1/internal/simhash"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// Near-duplicate codes. A new fact supersedes the live fact most similar to it when
// their cosine similarity reaches the write's threshold. Asking the server for the most
// similar facts costs one vector scan per new fact (hundreds of milliseconds per fact on
// a 10k-fact branch of the 2024-11 build), so the store keeps a short code per fact
// instead: the sign bits of its embedding after a fixed pseudo-random rotation
// (package simhash). Two embeddings at angle θ differ in each bit with probability θ/π,
// so a fact within the threshold differs from the new one in at most dupCoder.bound
// bits but for a negligible chance (four standard deviations), and the facts farther
// apart need no exact check. The codes of a branch's live facts are kept in memory, per table, and
// brought up to date under the branch lock from the rows written since (codeIndex).

// maxDupBits bounds the code length (64 bytes per fact in memory). With 512 bits a
// fact at cosine 0.7 of the new one, common among facts written from one template,
// falls within the 0.92 bound about 3% of the time; with 256 bits, half of the time.
const maxDupBits = 512

// dupCodeVersion prefixes every stored code. A code with another prefix (or none, for
// rows written before codes existed) is treated as unknown: its fact is always a
// candidate, so a change of the rotation never loses a near-duplicate.
const dupCodeVersion = "1:"

// dupCodeSeed fixes the rotation. Stored codes depend on it: never change it without
// changing dupCodeVersion.
const dupCodeSeed = 0x6461793164757031

// dupCoder computes near-duplicate codes for embeddings of one length: the first bits
// of the code vecmath.Rotation gives, under a sign sequence of the store's own. It is
// safe for concurrent use.
type dupCoder struct {
	dims  int
	bits  int // code length: min(the rotation's, maxDupBits)
	words int
	rot   *vecmath.Rotation
	pool  sync.Pool // *[]float32 scratch of the rotation's length
}

func newDupCoder(dims int) *dupCoder {
	n := 1
	for n < dims {
		n <<= 1
	}
	signs := make([]float32, n)
	x := uint64(dupCodeSeed)
	for i := range signs {
		if splitmix64(&x)&1 == 0 {
			signs[i] = 1
		} else {
			signs[i] = -1
		}
	}
	c := &dupCoder{dims: dims, bits: min(n, maxDupBits), rot: vecmath.RotationOf(signs)}
	c.words = (c.bits + 63) / 64
	c.pool.New = func() any { b := make([]float32, n); return &b }
	return c
}

// splitmix64 is a small fixed generator, so the rotation never depends on a library's
// choice of algorithm.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// code returns the code of v, c.words words.
func (c *dupCoder) code(v []float32) []uint64 {
	bp := c.pool.Get().(*[]float32)
	defer c.pool.Put(bp)
	return c.rot.AppendCode(make([]uint64, 0, c.rot.Words()), v, *bp)[:c.words]
}

// encode formats a code for the dup_code column.
func (c *dupCoder) encode(code []uint64) string {
	b := make([]byte, 8*len(code))
	for i, w := range code {
		binary.BigEndian.PutUint64(b[8*i:], w)
	}
	return dupCodeVersion + hex.EncodeToString(b)
}

// column returns the dup_code value of an embedding: "" for none.
func (c *dupCoder) column(v []float32) string {
	if len(v) == 0 {
		return ""
	}
	return c.encode(c.code(v))
}

// decode parses a dup_code value; false when it is empty, of another version or
// malformed.
func (c *dupCoder) decode(s string) ([]uint64, bool) {
	rest, ok := strings.CutPrefix(s, dupCodeVersion)
	if !ok || len(rest) != 16*c.words {
		return nil, false
	}
	b, err := hex.DecodeString(rest)
	if err != nil {
		return nil, false
	}
	out := make([]uint64, c.words)
	for i := range out {
		out[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	return out, true
}

// bound is the largest Hamming distance between the codes of two embeddings whose
// cosine similarity reaches threshold, but for a negligible chance
// (simhash.HammingBound).
func (c *dupCoder) bound(threshold float64) int { return simhash.HammingBound(threshold, c.bits) }

// codeIndex holds the codes of the current live facts of one branch table that have an
// embedding, as of revision rev. Writers use it to find near-duplicates and searches to
// rank candidates (codeSearch); mu guards it.
//
// A fact takes a slot, which it keeps until it is removed or its code changes. Slots
// are not reused: the band index lists them by position (simhash.Bands), so a freed slot stays dead
// until the dead outnumber the live ones, and then every slot is renumbered
// (compactIfDue).
type codeIndex struct {
	mu    sync.Mutex
	rev   int64
	slot  map[string]int // id -> slot
	ids   []string       // by slot; "" for a dead slot
	vids  []int64        // by slot: the primary key of the fact's current version
	codes []uint64       // words per slot
	known []bool         // false: the fact's code is unknown, it is always a candidate
	words int            // uint64 words per code, from the first set
	bands *simhash.Bands // nil below minBandSlots slots, or for codes shorter than simhash.MinBandWords
	dead  int            // dead slots
	// unknown counts the live slots whose code is unknown.
	unknown int
}

func (ix *codeIndex) remove(id string) {
	if i, ok := ix.slot[id]; ok {
		delete(ix.slot, id)
		ix.kill(i)
		ix.compactIfDue()
	}
}

// kill makes slot i dead.
func (ix *codeIndex) kill(i int) {
	if !ix.known[i] {
		ix.unknown--
	}
	ix.ids[i] = ""
	ix.known[i] = true // a dead slot counts as neither known nor unknown
	ix.dead++
}

// set records the code of the current version of a live fact, vid.
func (ix *codeIndex) set(id string, vid int64, code []uint64, known bool, words int) {
	if i, ok := ix.slot[id]; ok {
		if known && ix.known[i] && slices.Equal(ix.codes[i*words:(i+1)*words], code) {
			ix.vids[i] = vid
			return
		}
		ix.kill(i)
	}
	ix.words = words
	i := len(ix.ids)
	ix.ids = append(ix.ids, id)
	ix.vids = append(ix.vids, vid)
	ix.codes = append(ix.codes, make([]uint64, words)...)
	ix.known = append(ix.known, known)
	ix.slot[id] = i
	if !known {
		ix.unknown++
	} else {
		copy(ix.codes[i*words:(i+1)*words], code)
	}
	if ix.bands != nil {
		// Every slot is listed, a dead or unknown one too: the bands know slots by
		// position. Unknown codes are zeros, and a scan finds their facts.
		ix.bands.Add(ix.codes)
		if ix.bands.FoldDue(1) {
			ix.bands.Fold(ix.codes)
		}
	}
	ix.compactIfDue()
	ix.bandsIfDue()
}

// bandsIfDue lists every slot in new bands once the index holds minBandSlots facts of
// codes long enough for bands.
func (ix *codeIndex) bandsIfDue() {
	if ix.bands != nil || len(ix.slot) < minBandSlots || ix.words < simhash.MinBandWords {
		return
	}
	ix.bands = simhash.NewBands(ix.words)
	ix.bands.AddAll(ix.codes)
}

// minBandSlots is the fewest slots for which an index keeps bands: below it a scan of
// every code costs less than the buckets' memory.
const minBandSlots = 4096

// compactIfDue renumbers the slots when the dead ones outnumber the live ones, so that
// scans and the band index stay in proportion to the live facts.
func (ix *codeIndex) compactIfDue() {
	if ix.dead < minCompact || ix.dead < len(ix.ids)-ix.dead {
		return
	}
	words := ix.words
	live := len(ix.ids) - ix.dead
	ids, vids, codes, known := make([]string, 0, live), make([]int64, 0, live), make([]uint64, 0, live*words), make([]bool, 0, live)
	for i, id := range ix.ids {
		if id == "" {
			continue
		}
		ix.slot[id] = len(ids)
		ids, vids = append(ids, id), append(vids, ix.vids[i])
		codes = append(codes, ix.codes[i*words:(i+1)*words]...)
		known = append(known, ix.known[i])
	}
	ix.ids, ix.vids, ix.codes, ix.known, ix.dead = ids, vids, codes, known, 0
	ix.bands = nil
	ix.bandsIfDue()
}

// minCompact is the fewest dead slots worth a compaction.
const minCompact = 4096

// codeCache keeps the code indexes of the tables the store writes to, the most
// recently used maxCodeTables of them: about 270 bytes per live fact each (the id, the
// 64-byte code and its place in 40 buckets), and 4 MB of buckets per index of 4096
// facts or more.
type codeCache struct {
	mu  sync.Mutex
	lru tableLRU[*codeIndex]
}

// maxCodeTables bounds the code indexes kept in memory.
const maxCodeTables = 16

// codes returns the code index of a branch's facts table, brought up to the revision
// the write transaction holds: the current rows written since the index's revision
// replace what it knew of their ids. The caller holds the branch's lock and read rev,
// a committed revision, after taking it: the table has no version above rev, and no
// revision at or below it is still being written. It must hold the index's mutex while
// it uses the index.
func (s *Store) codes(ctx context.Context, q queryer, suffix string, rev int64) (*codeIndex, error) {
	ix := s.codeCache.get(tableName(store.KindFact, suffix), rev, true)
	if err := s.catchUp(ctx, q, ix, suffix, rev); err != nil {
		return nil, err
	}
	return ix, nil
}

// codesAt returns the code index of a branch's facts table brought up to revision cut,
// a committed revision, for a search; false when the index is already past cut (a read
// of the past, or one that raced a newer write), whose state it cannot give. The
// caller must hold the index's mutex while it uses the index.
func (s *Store) codesAt(ctx context.Context, suffix string, cut int64) (*codeIndex, bool, error) {
	ix := s.codeCache.get(tableName(store.KindFact, suffix), cut, false)
	if err := s.catchUp(ctx, s.db, ix, suffix, cut); err != nil {
		return nil, false, err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix, ix.rev == cut, nil
}

// codeChange is one row catchUp applies to a code index.
type codeChange struct {
	id    string
	vid   int64
	live  bool
	code  []uint64
	known bool
}

// catchUp brings ix to revision rev, unless it is there or past it already: the
// current rows written since the index's revision replace what it knew of their ids.
// The rows are read without holding ix.mu, so that no search or writer waits on the
// index while another one waits on the server (a writer holds a connection and the
// branch and commit locks; a search holding the mutex while it waited for a connection could wait
// on that writer). When another caller moved the index meanwhile, the rows are read
// again from where it left it.
func (s *Store) catchUp(ctx context.Context, q queryer, ix *codeIndex, suffix string, rev int64) error {
	for {
		ix.mu.Lock()
		from := ix.rev
		ix.mu.Unlock()
		if from >= rev {
			return nil
		}
		changes, err := s.codeChanges(ctx, q, suffix, from, rev)
		if err != nil {
			return err
		}
		ix.mu.Lock()
		if ix.rev == from {
			w := s.dup.words
			for _, c := range changes {
				if c.live {
					ix.set(c.id, c.vid, c.code, c.known, w)
				} else {
					ix.remove(c.id)
				}
			}
			ix.rev = rev
			ix.mu.Unlock()
			return nil
		}
		ix.mu.Unlock()
	}
}

// codeChanges reads the current rows of a facts table written after revision from, up
// to rev. A live fact with a code has an embedding (the code is made from it); one
// without has none, unless it was written before facts had codes: the vectors table
// is asked about those.
func (s *Store) codeChanges(ctx context.Context, q queryer, suffix string, from, rev int64) ([]codeChange, error) {
	rs, err := q.QueryContext(ctx, "SELECT vid, id, deleted, status, dup_code FROM "+
		table(store.KindFact, suffix)+" WHERE rev > ? AND rev <= ? AND next_rev > ?", from, rev, rev)
	if err != nil {
		return nil, err
	}
	var out []codeChange
	var uncoded []int64 // vids of the live facts without a code
	uncodedAt := map[int64]int{}
	for rs.Next() {
		var vid int64
		var id, status, code string
		var deleted bool
		if err := rs.Scan(&vid, &id, &deleted, &status, &code); err != nil {
			rs.Close()
			return nil, err
		}
		if deleted || !store.FactStatus(status).Live() {
			out = append(out, codeChange{id: id, vid: vid})
			continue
		}
		if code == "" {
			uncoded = append(uncoded, vid)
			uncodedAt[vid] = len(out)
			out = append(out, codeChange{id: id, vid: vid})
			continue
		}
		c, ok := s.dup.decode(code)
		out = append(out, codeChange{id: id, vid: vid, live: true, code: c, known: ok})
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, err
	}
	for _, chunk := range chunks(uncoded, vectorChunk) {
		args := make([]any, len(chunk))
		for i, v := range chunk {
			args[i] = v
		}
		rs, err := q.QueryContext(ctx, "SELECT vid FROM "+vecTable(store.KindFact)+" WHERE vid IN ("+placeholders(len(chunk))+")", args...)
		if err != nil {
			return nil, err
		}
		for rs.Next() {
			var vid int64
			if err := rs.Scan(&vid); err != nil {
				rs.Close()
				return nil, err
			}
			out[uncodedAt[vid]].live = true // an embedding without a code: unknown
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// get returns the cached index of a table, made empty when missing, and marks it the
// most recently used. A writer whose revision is below the cached index's starts a
// new one, the table having gone back in time.
func (c *codeCache) get(name string, rev int64, writer bool) *codeIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := func(ix *codeIndex) bool {
		if !writer {
			return true
		}
		ix.mu.Lock()
		defer ix.mu.Unlock()
		return ix.rev <= rev
	}
	return c.lru.use(name, maxCodeTables, keep, func() *codeIndex { return &codeIndex{rev: -1, slot: map[string]int{}} })
}

// vid returns the primary key of the current version of fact id; false when ix does
// not hold the fact. The caller holds ix.mu.
func (ix *codeIndex) vid(id string) (int64, bool) {
	i, ok := ix.slot[id]
	if !ok {
		return 0, false
	}
	return ix.vids[i], true
}

// candidates returns the ids of the facts of ix whose code is within the bound of code,
// or unknown: from the band index when it holds every code, for a near-duplicate
// threshold of threshold, else by a scan of every code. The caller holds ix.mu.
func (ix *codeIndex) candidates(code []uint64, threshold float64, bound, words int) []string {
	var out []string
	if ix.bands != nil && ix.unknown == 0 {
		// A slot sharing several bands is met several times: the rare ones within the
		// bound are deduplicated at the end.
		slots, _ := ix.bands.AppendCandidates(nil, ix.codes, code, 0, simhash.TagBound(threshold, ix.bands.TagBits()))
		in := slots[:0]
		for _, i := range slots {
			if ix.ids[i] != "" && vecmath.Hamming(code, ix.codes[int(i)*words:][:words]) <= bound {
				in = append(in, i)
			}
		}
		slices.Sort(in)
		for _, i := range slices.Compact(in) {
			out = append(out, ix.ids[i])
		}
		return out
	}
	for i, id := range ix.ids {
		if id == "" {
			continue
		}
		if !ix.known[i] || vecmath.Hamming(code, ix.codes[i*words:(i+1)*words]) <= bound {
			out = append(out, id)
		}
	}
	return out
}
