package matrixone

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// key names one record of one kind.
type key struct {
	kind store.Kind
	id   string
}

// Put writes a batch of records atomically, in one transaction that holds the branch's
// lock while it reads and decides and the store's commit lock while it writes, retried
// after a transient failure (see "Errors and retries").
func (s *Store) Put(ctx context.Context, branch string, recs []store.Record, opts store.PutOptions) ([]store.PutResult, error) {
	if err := store.ValidatePutBatch(recs, opts); err != nil {
		return nil, err
	}
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if err := store.ValidateBranchName("branch", branch); err != nil {
		return nil, err
	}
	in := make([]store.Record, len(recs))
	seen := make(map[key]bool, len(recs))
	for i, r := range recs {
		if err := store.ValidateRecord(r, s.opts.Dimensions); err != nil {
			return nil, store.AtIndex(err, "records", i)
		}
		k := key{r.RecordKind(), r.RecordID()}
		if seen[k] {
			return nil, store.Invalid("records", fmt.Sprintf("record %d repeats %s; a batch may hold each record once", i, store.RefOf(r)), nil)
		}
		seen[k] = true
		in[i] = normalize(store.WithBranch(store.Clone(r), branch))
	}
	return s.put(ctx, branch, in, opts)
}

func (s *Store) put(ctx context.Context, branch string, recs []store.Record, opts store.PutOptions) ([]store.PutResult, error) {
	results := make([]store.PutResult, len(recs))
	expiring := slices.ContainsFunc(recs, func(r store.Record) bool {
		f, ok := r.(store.Fact)
		return ok && !f.ExpiresAt.IsZero()
	})
	err := s.write(ctx, "Put", writeSpec{branches: []string{branch}, late: true}, func(w *writeTx) error {
		b, err := writableBranch(ctx, w, branch)
		if err != nil {
			return err
		}
		if expiring {
			// Reads check expiry from now on (holdsExpiring).
			if _, err := w.ExecContext(ctx, "INSERT IGNORE INTO day1_expiring (id) VALUES (1)"); err != nil {
				return err
			}
		}
		// The current versions of the batch's ids, but for generated fact ids, which no
		// record has yet (PutOptions.GeneratedIDs): neither a fact nor an alias.
		ids := map[store.Kind][]string{}
		absent := map[key]bool{}
		for _, r := range recs {
			k := key{r.RecordKind(), r.RecordID()}
			if k.kind == store.KindFact && opts.GeneratedIDs[k.id] {
				absent[k], absent[key{store.KindAlias, k.id}] = true, true
				continue
			}
			ids[k.kind] = append(ids[k.kind], k.id)
		}
		// The aliases of the batch's fact ids, which a new fact may write or delete.
		aliasIDs := slices.Clone(ids[store.KindAlias])
		inAliases := make(map[string]bool, len(aliasIDs))
		for _, id := range aliasIDs {
			inAliases[id] = true
		}
		for _, id := range ids[store.KindFact] {
			if !inAliases[id] {
				inAliases[id] = true
				aliasIDs = append(aliasIDs, id)
			}
		}
		if len(aliasIDs) > 0 {
			ids[store.KindAlias] = aliasIDs
		}
		cur := map[key]store.Record{}
		bw := newBatchWrite(cur, s.dup)
		for k, list := range ids {
			rows, err := currentRows(ctx, w, k, b.suffix, list, true)
			if err != nil {
				return err
			}
			for _, id := range list {
				absent[key{k, id}] = true
			}
			for _, r := range rows {
				delete(absent, key{k, r.id})
				bw.vids[key{k, r.id}] = r.vid
				if !r.deleted {
					cur[key{k, r.id}] = r.rec
				}
			}
		}
		// A record equal to the current version but for the embedding is a no-op
		// only when the embeddings are equal too: those current versions are read
		// again, whole.
		var whole []key
		for _, r := range recs {
			k := key{r.RecordKind(), r.RecordID()}
			if c := cur[k]; c != nil && store.SameContentExceptEmbedding(c, store.StampLike(r, c)) {
				whole = append(whole, k)
			}
		}
		if err := readWhole(ctx, w, b.suffix, cur, whole); err != nil {
			return err
		}
		dc, err := s.findDupCandidates(ctx, w, b, w.rev, bw, recs, opts.DedupeThreshold)
		if err != nil {
			return err
		}
		// What the batch decides on is read; the rest needs the commit lock.
		if err := w.seal(ctx); err != nil {
			return err
		}
		stamp := micro(opts.Now)
		if stamp.IsZero() {
			stamp = w.now
		}
		for i, r := range recs {
			k := key{r.RecordKind(), r.RecordID()}
			fresh := k.kind == store.KindFact && bw.get(k) == nil
			at := store.BatchTime(stamp, i, len(recs))
			res, writes := s.decide(bw, dc, i, r, opts.DedupeThreshold, at)
			for _, wr := range writes {
				bw.add(wr)
			}
			if fresh {
				ak := key{store.KindAlias, k.id}
				var alias *store.Alias
				if a, ok := bw.get(ak).(store.Alias); ok {
					alias = &a
				}
				aw, del := store.AliasAfterPut(&res, k.id, alias, opts.GeneratedIDs, at, branch)
				switch {
				case aw != nil:
					bw.add(*aw)
				case del:
					bw.remove(ak)
				}
			}
			res.Record = store.WithBranch(store.Clone(res.Record), branch)
			results[i] = res
		}
		if len(bw.order) == 0 {
			return nil
		}
		return s.commitWrites(ctx, w, b, bw.versions(absent))
	})
	if err != nil {
		return nil, err
	}
	if expiring {
		s.expiring.Store(true)
	}
	return results, nil
}

// writableBranch returns a branch that accepts writes, as w's lock read it.
func writableBranch(ctx context.Context, w *writeTx, name string) (branchRow, error) {
	b, err := w.lockedBranch(ctx, name)
	if err != nil {
		return b, err
	}
	if b.info.Status == store.BranchArchived {
		return b, fmt.Errorf("%w: %q", store.ErrBranchArchived, name)
	}
	return b, nil
}

// batchWrite is what a batch has decided so far: the versions to write, over the
// current state it read. It indexes its own facts by normalised text and keeps their
// embeddings' inverse norms, so that checking a batch against itself stays cheap.
type batchWrite struct {
	cur     map[key]store.Record // current live versions of the batch's ids
	overlay map[key]store.Record // versions written by the batch so far (nil: deleted)
	order   []key
	pos     map[key]int      // index in order
	norms   map[string][]key // normalised text -> facts of the batch written with it
	normOf  map[key]string   // the normalised text of each fact of the batch
	facts   []batchFact      // the batch's facts, in order
	factAt  map[key]int      // index in facts
	coder   *dupCoder        // codes the batch's embeddings, for a cheap first check
	vids    map[key]int64    // the primary key of the current version of ids read
}

// batchFact is what the similarity check reads of a fact the batch wrote.
type batchFact struct {
	k    key
	emb  []float32
	inv  float32 // 1/|emb|, 0 when it has none
	code []uint64
	live bool
}

func newBatchWrite(cur map[key]store.Record, coder *dupCoder) *batchWrite {
	return &batchWrite{cur: cur, overlay: map[key]store.Record{}, pos: map[key]int{}, norms: map[string][]key{},
		normOf: map[key]string{}, factAt: map[key]int{}, coder: coder, vids: map[key]int64{}}
}

func (bw *batchWrite) add(r store.Record) {
	k := key{r.RecordKind(), r.RecordID()}
	if _, ok := bw.overlay[k]; !ok {
		bw.pos[k] = len(bw.order)
		bw.order = append(bw.order, k)
		if k.kind == store.KindFact {
			bw.factAt[k] = len(bw.facts)
			bw.facts = append(bw.facts, batchFact{k: k})
		}
	}
	bw.overlay[k] = r
	if f, ok := r.(store.Fact); ok {
		if n := store.NormText(f.Text); bw.normOf[k] != n || len(bw.norms[n]) == 0 {
			bw.normOf[k] = n
			bw.norms[n] = append(bw.norms[n], k)
		}
		bf := batchFact{k: k, emb: f.Embedding, live: f.Status.Live()}
		if len(f.Embedding) > 0 {
			if n := vecmath.Norm(f.Embedding); n > 0 {
				bf.inv = 1 / n
				if bw.coder != nil && len(f.Embedding) == bw.coder.dims {
					bf.code = bw.coder.code(f.Embedding)
				}
			}
		}
		bw.facts[bw.factAt[k]] = bf
	} else if i, ok := bw.factAt[k]; ok {
		bw.facts[i].live = false // a tombstone
	}
}

// remove adds a tombstone of k, a record that is not a fact.
func (bw *batchWrite) remove(k key) {
	if _, ok := bw.overlay[k]; !ok {
		bw.pos[k] = len(bw.order)
		bw.order = append(bw.order, k)
	}
	bw.overlay[k] = nil
}

func (bw *batchWrite) get(k key) store.Record {
	if r, ok := bw.overlay[k]; ok {
		return r
	}
	return bw.cur[k]
}

// resolve returns the version of a row read from the table that the batch sees: its
// own write of that id when it made one.
func (bw *batchWrite) resolve(r row) store.Record {
	if rec, ok := bw.overlay[key{r.rec.RecordKind(), r.id}]; ok {
		return rec
	}
	return r.rec
}

// version is one version to write: a record, or a tombstone of ref.
type version struct {
	ref   store.Ref
	rec   store.Record // nil for a tombstone
	fresh bool         // the id has no current version (not even a tombstone) to close
	// vid is the primary key of the current version to close, 0 when unknown: that
	// version is then closed by its id.
	vid int64
}

// versions returns the versions the batch writes; absent holds the keys known to have
// no current version.
func (bw *batchWrite) versions(absent map[key]bool) []version {
	out := make([]version, len(bw.order))
	for i, k := range bw.order {
		out[i] = version{ref: store.Ref{Kind: k.kind, ID: k.id}, rec: bw.overlay[k], fresh: absent[k], vid: bw.vids[k]}
	}
	return out
}

// decide says what writing r does, as the embedded store decides it: nothing, a new
// version, or a new fact superseding a near-duplicate. dc holds the database's
// candidates for record i of the batch.
func (s *Store) decide(bw *batchWrite, dc *dupCandidates, i int, r store.Record, threshold float64, now time.Time) (store.PutResult, []store.Record) {
	k := key{r.RecordKind(), r.RecordID()}
	if cur := bw.get(k); cur != nil {
		if store.SameContent(cur, store.StampLike(r, cur)) {
			return store.PutResult{Record: cur, Outcome: store.Deduplicated}, nil
		}
		r = store.KeepCreated(store.WithDefaults(r, now), cur, r.RecordTime().IsZero())
		return store.PutResult{Record: r, Outcome: store.Updated}, []store.Record{r}
	}
	r = store.WithDefaults(r, now)
	f, ok := r.(store.Fact)
	if !ok || !f.Status.Live() {
		return store.PutResult{Record: r, Outcome: store.Created}, []store.Record{r}
	}
	dup, sim := nearDuplicate(bw, dc, i, f, threshold)
	switch {
	case dup == nil:
		return store.PutResult{Record: r, Outcome: store.Created}, []store.Record{r}
	case store.NormText(dup.Text) == store.NormText(f.Text):
		return store.PutResult{Record: *dup, Outcome: store.Deduplicated, Replaced: dup.ID, Similarity: sim}, nil
	}
	old, f := store.Supersede(*dup, f)
	return store.PutResult{Record: f, Outcome: store.Superseded, Replaced: old.ID, Similarity: sim}, []store.Record{old, f}
}

// liveStatuses is the SQL list of live fact statuses.
const liveStatuses = "('active', 'verified', 'promoted')"

// nearDupCandidates is how many of the most similar facts the server returns for the
// exact check in Go when the codes do not narrow the candidates down.
const nearDupCandidates = 16

// maxCodeCandidates is how many candidates the codes may leave for one new fact before
// the server is asked instead (codes of few-dimension embeddings tell little apart).
const maxCodeCandidates = 256

// dupCandidates is what the database says, once per batch, about the near-duplicates
// of the batch's new facts: the current live facts sharing each normalised-text hash,
// and for each new fact the current live facts that may reach the threshold, by
// revision and id.
type dupCandidates struct {
	byNorm map[string][]row // norm_key -> rows, by rev and id
	bySim  map[int][]row    // batch index -> rows
	codes  map[int][]uint64 // batch index -> the code of its embedding
	bound  int              // the Hamming bound of the write's threshold
}

// findDupCandidates finds the candidates of the new live facts of recs (those whose
// id has no current version), as of revision rev, a committed revision read under the
// branch's lock: one query per 500 text hashes, and for the embeddings the facts whose
// near-duplicate codes are close enough (see codeIndex), read in one query per 500.
func (s *Store) findDupCandidates(ctx context.Context, q queryer, b branchRow, rev int64, bw *batchWrite, recs []store.Record, threshold float64) (*dupCandidates, error) {
	dc := &dupCandidates{byNorm: map[string][]row{}, bySim: map[int][]row{}, codes: map[int][]uint64{}}
	var norms []string
	seenNorm := map[string]bool{}
	var vecIdx []int
	for i, r := range recs {
		f, ok := r.(store.Fact)
		if !ok || bw.cur[key{store.KindFact, f.ID}] != nil {
			continue
		}
		if f.Status != "" && !f.Status.Live() {
			continue
		}
		if nk := normKey(f.Text); !seenNorm[nk] {
			seenNorm[nk] = true
			norms = append(norms, nk)
		}
		if threshold > 0 && len(f.Embedding) > 0 {
			vecIdx = append(vecIdx, i)
		}
	}
	t := table(store.KindFact, b.suffix)
	cols := specs[store.KindFact].selectCols()
	for _, chunk := range chunks(norms, 500) {
		args := []any{int64(never)}
		for _, nk := range chunk {
			args = append(args, nk)
		}
		rs, err := q.QueryContext(ctx, "SELECT "+cols+", norm_key FROM "+t+
			" WHERE next_rev = ? AND deleted = 0 AND norm_key IN ("+placeholders(len(chunk))+") ORDER BY rev, id", args...)
		if err != nil {
			return nil, err
		}
		var rows []row
		var nks []string
		for rs.Next() {
			var nk string
			r, err := scanRow(store.KindFact, rs, &nk)
			if err != nil {
				rs.Close()
				return nil, err
			}
			rows, nks = append(rows, r), append(nks, nk)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return nil, err
		}
		if err := withVectors(ctx, q, store.KindFact, rows); err != nil {
			return nil, err
		}
		for i, r := range rows {
			bw.vids[key{store.KindFact, r.id}] = r.vid
			dc.byNorm[nks[i]] = append(dc.byNorm[nks[i]], r)
		}
	}
	if len(vecIdx) == 0 {
		return dc, nil
	}
	codes, err := s.codes(ctx, q, b.suffix, rev)
	if err != nil {
		return nil, err
	}
	bound := s.dup.bound(threshold)
	dc.bound = bound
	want := map[int][]string{}
	var union []string
	var vids []int64 // of union, from the index
	seenID := map[string]bool{}
	cast := "cast(? AS vecf32(" + fmt.Sprint(s.opts.Dimensions) + "))"
	for _, i := range vecIdx {
		emb := recs[i].(store.Fact).Embedding
		dc.codes[i] = s.dup.code(emb)
		codes.mu.Lock()
		ids := codes.candidates(dc.codes[i], threshold, bound, s.dup.words)
		idVids := make([]int64, len(ids))
		for j, id := range ids {
			idVids[j], _ = codes.vid(id)
		}
		codes.mu.Unlock()
		if len(ids) > maxCodeCandidates {
			// Codes too short to tell facts apart (few dimensions): ask the server for the
			// most similar ones instead.
			rows, err := queryRows(ctx, q, store.KindFact, "SELECT "+specs[store.KindFact].columns("t")+" FROM "+t+" t JOIN "+
				vecTable(store.KindFact)+" v ON v.vid = t.vid WHERE t.next_rev = ? AND t.deleted = 0 AND t.status IN "+liveStatuses+
				" ORDER BY cosine_similarity(v.embedding, "+cast+") DESC, t.rev, t.id LIMIT ?",
				int64(never), vecLiteral(emb), nearDupCandidates)
			if err != nil {
				return nil, err
			}
			if err := withVectors(ctx, q, store.KindFact, rows); err != nil {
				return nil, err
			}
			dc.bySim[i] = rows
			continue
		}
		want[i] = ids
		for j, id := range ids {
			if !seenID[id] {
				seenID[id] = true
				union, vids = append(union, id), append(vids, idVids[j])
			}
		}
	}
	if len(union) == 0 {
		return dc, nil
	}
	rows, err := s.closeCandidates(ctx, q, b, recs, want, union, vids, threshold)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]row, len(rows))
	for _, r := range rows {
		bw.vids[key{store.KindFact, r.id}] = r.vid
		if !r.deleted {
			byID[r.id] = r
		}
	}
	for i, ids := range want {
		var list []row
		for _, id := range ids {
			if r, ok := byID[id]; ok {
				list = append(list, r)
			}
		}
		slices.SortFunc(list, func(a, b row) int {
			if a.rev != b.rev {
				return cmp.Compare(a.rev, b.rev)
			}
			return strings.Compare(a.id, b.id)
		})
		dc.bySim[i] = list
	}
	return dc, nil
}

// closeCandidates reads the current rows of the candidates (union, whose current
// versions the code index names vids) that may be near-duplicates of the batch's new
// facts (want: the candidates of record i of recs). Codes within the bound are common
// among facts written from one template (several per new fact at 100k facts), and
// most of them are not within the threshold, so the candidates' embeddings are read
// first, alone, by primary key; then the rows of those whose cosine similarity to a
// new fact wanting them reaches the threshold, as nearDuplicate computes it, and of
// those the batch writes, whose version it may replace before it considers them.
// The others cannot be chosen.
func (s *Store) closeCandidates(ctx context.Context, q queryer, b branchRow, recs []store.Record, want map[int][]string, union []string, vids []int64, threshold float64) ([]row, error) {
	vecs, err := loadVectors(ctx, q, store.KindFact, vids)
	if err != nil {
		return nil, err
	}
	embOf := make(map[string][]float32, len(union))
	for j, id := range union {
		embOf[id] = vecs[vids[j]]
	}
	keep := map[string]bool{}
	for _, r := range recs {
		if _, ok := embOf[r.RecordID()]; ok && r.RecordKind() == store.KindFact {
			keep[r.RecordID()] = true
		}
	}
	for i, ids := range want {
		f := recs[i].(store.Fact).Embedding
		fInv := 1 / vecmath.Norm(f)
		for _, id := range ids {
			if sim, ok := cosineInv(f, fInv, embOf[id]); ok && sim >= threshold {
				keep[id] = true
			}
		}
	}
	list := make([]string, 0, len(keep))
	for _, id := range union {
		if keep[id] {
			list = append(list, id)
		}
	}
	rows, err := currentRows(ctx, q, store.KindFact, b.suffix, list, true)
	if err != nil {
		return nil, err
	}
	// A row of a version other than the one the index named (none is expected under
	// the branch lock) has its embedding read as usual.
	var miss []row
	var at []int
	for j, r := range rows {
		if r.rec == nil {
			continue
		}
		if v, ok := vecs[r.vid]; ok {
			rows[j].rec = store.WithEmbedding(r.rec, v)
		} else {
			miss, at = append(miss, r), append(at, j)
		}
	}
	if err := withVectors(ctx, q, store.KindFact, miss); err != nil {
		return nil, err
	}
	for n, j := range at {
		rows[j] = miss[n]
	}
	return rows, nil
}

// cosineInv is the cosine similarity of f, whose inverse norm is fInv, and c, in the
// embedded store's arithmetic; false when c has another length or no norm.
func cosineInv(f []float32, fInv float32, c []float32) (float64, bool) {
	if len(c) != len(f) {
		return 0, false
	}
	n := vecmath.Norm(c)
	if n == 0 {
		return 0, false
	}
	return float64(vecmath.Dot(f, c) * fInv * (1 / n)), true
}

// nearDuplicate finds the live fact on the branch most like f (record i of the batch):
// one with the same text (after folding case and spaces), else the one whose embedding
// is most similar with a cosine of at least threshold. The database found the
// candidates (an indexed hash of the normalised text; similarities computed by the
// server); the decision is taken in Go over the batch's own writes too, with the
// embedded store's arithmetic.
func nearDuplicate(bw *batchWrite, dc *dupCandidates, i int, f store.Fact, threshold float64) (*store.Fact, float64) {
	norm := store.NormText(f.Text)
	// A fact that has expired by the time of the write is no longer known: it neither
	// takes a new fact's text nor is superseded by it.
	live := func(r store.Record) (store.Fact, bool) {
		c, ok := r.(store.Fact)
		return c, ok && c.Status.Live() && !c.Expired(f.CreatedAt)
	}
	checked := map[string]bool{}
	for _, r := range dc.byNorm[normKey(f.Text)] {
		checked[r.id] = true
		if c, ok := live(bw.resolve(r)); ok && store.NormText(c.Text) == norm {
			return &c, 1
		}
	}
	same := slices.Clone(bw.norms[norm])
	slices.SortFunc(same, func(a, b key) int { return bw.pos[a] - bw.pos[b] })
	for _, k := range same {
		if checked[k.id] || bw.normOf[k] != norm {
			continue
		}
		if c, ok := live(bw.overlay[k]); ok {
			return &c, 1
		}
	}
	if threshold <= 0 || len(f.Embedding) == 0 {
		return nil, 0
	}
	fInv := 1 / vecmath.Norm(f.Embedding)
	var best *store.Fact
	var bestSim float64
	consider := func(r store.Record) {
		c, ok := live(r)
		if !ok {
			return
		}
		sim, ok := cosineInv(f.Embedding, fInv, c.Embedding)
		if !ok || sim < threshold || sim <= bestSim {
			return
		}
		best, bestSim = &c, sim
	}
	seen := map[string]bool{}
	for _, r := range dc.bySim[i] {
		seen[r.id] = true
		consider(bw.resolve(r))
	}
	// The batch's own facts: codes first, as for the table's facts (the cosine of a
	// fact whose code is beyond the bound is below the threshold but for a negligible
	// chance), so that a large batch costs one cheap comparison per pair.
	code := dc.codes[i]
	var bestOwn *key
	for i := range bw.facts {
		bf := &bw.facts[i]
		if !bf.live || bf.inv == 0 || len(bf.emb) != len(f.Embedding) || seen[bf.k.id] {
			continue
		}
		if code != nil && bf.code != nil && vecmath.Hamming(code, bf.code) > dc.bound {
			continue
		}
		sim := float64(vecmath.Dot(f.Embedding, bf.emb) * fInv * bf.inv)
		if sim >= threshold && sim > bestSim {
			best, bestSim, bestOwn = nil, sim, &bf.k
		}
	}
	if bestOwn != nil {
		c := bw.overlay[*bestOwn].(store.Fact)
		best = &c
	}
	return best, bestSim
}

// currentRows reads the current versions (tombstones included) of ids, with their
// primary keys; lean ones without their embeddings.
func currentRows(ctx context.Context, q queryer, k store.Kind, suffix string, ids []string, lean bool) ([]row, error) {
	return rowsAt(ctx, q, k, suffix, never, ids, lean)
}

// rowsAt is currentRows of a table read at revision cut: the versions visible then,
// tombstones included. A cut of never reads the current versions.
func rowsAt(ctx context.Context, q queryer, k store.Kind, suffix string, cut int64, ids []string, lean bool) ([]row, error) {
	where, args := " WHERE next_rev = ?", []any{cut}
	if cut != never {
		where, args = " WHERE rev <= ? AND next_rev > ?", []any{cut, cut}
	}
	var out []row
	for _, chunk := range chunks(ids, 500) {
		a := slices.Clone(args)
		for _, id := range chunk {
			a = append(a, id)
		}
		rows, err := queryRows(ctx, q, k, "SELECT "+specs[k].selectCols()+" FROM "+table(k, suffix)+
			where+" AND id IN ("+placeholders(len(chunk))+")", a...)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	if !lean {
		if err := withVectors(ctx, q, k, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readWhole reads again, with their embeddings, the current versions in cur of keys
// whose kinds have one (cur was read lean).
func readWhole(ctx context.Context, q queryer, suffix string, cur map[key]store.Record, keys []key) error {
	byKind := map[store.Kind][]string{}
	for _, k := range keys {
		if hasEmbedding(k.kind) {
			byKind[k.kind] = append(byKind[k.kind], k.id)
		}
	}
	for k, list := range byKind {
		rows, err := currentRows(ctx, q, k, suffix, list, false)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if kk := (key{k, r.id}); !r.deleted && cur[kk] != nil {
				cur[kk] = r.rec
			}
		}
	}
	return nil
}

// queryRows runs a query whose columns are a kind's selectCols.
func queryRows(ctx context.Context, q queryer, k store.Kind, query string, args ...any) ([]row, error) {
	rs, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []row
	for rs.Next() {
		r, err := scanRow(k, rs)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// insertChunk is how many rows one INSERT statement writes.
const insertChunk = 100

// commitWrites allocates the transaction's revision and writes versions to branch b:
// the current version of each id is closed (next_rev; none for a fresh version) and
// the new one inserted. A transaction may call it more than once, for parts of its
// versions (each id in one call): positions in vid follow on from the rows the
// transaction wrote before.
func (s *Store) commitWrites(ctx context.Context, w *writeTx, b branchRow, vs []version) error {
	rev, err := w.bump(ctx)
	if err != nil {
		return err
	}
	byKind := map[store.Kind][]version{}
	for _, v := range vs {
		byKind[v.ref.Kind] = append(byKind[v.ref.Kind], v)
	}
	for _, k := range store.AllKinds {
		list := byKind[k]
		if len(list) == 0 {
			continue
		}
		if w.added == nil {
			w.added = map[string]map[store.Kind]int{}
		}
		if w.added[b.suffix] == nil {
			w.added[b.suffix] = map[store.Kind]int{}
		}
		first := w.added[b.suffix][k] // the position of the first row written here
		if first+len(list) >= 1<<vidShift {
			return fmt.Errorf("day1: matrixone: one commit may write at most %d versions of a kind", 1<<vidShift-1)
		}
		w.added[b.suffix][k] += len(list)
		t := table(k, b.suffix)
		// The current versions are closed by primary key when the write read it, by
		// id else: a server may scan the table for an UPDATE by a secondary key (the
		// 2024-11 build takes 250 to 600 ms for 50 ids in a new 100k-row table).
		var byVid, byID []any
		for _, v := range list {
			switch {
			case v.fresh:
			case v.vid != 0:
				byVid = append(byVid, v.vid)
			default:
				byID = append(byID, v.ref.ID)
			}
		}
		for _, c := range []struct {
			col  string
			keys []any
		}{{"vid", byVid}, {"id", byID}} {
			for _, chunk := range chunks(c.keys, 200) {
				args := append([]any{rev, int64(never)}, chunk...)
				res, err := w.ExecContext(ctx, "UPDATE "+t+" SET next_rev = ? WHERE next_rev = ? AND "+c.col+" IN ("+placeholders(len(chunk))+")", args...)
				if err != nil {
					return err
				}
				// Under the branch lock the versions read are still current; anything
				// else would leave two current versions of an id.
				if n, err := res.RowsAffected(); err == nil && c.col == "vid" && n != int64(len(chunk)) {
					return fmt.Errorf("day1: matrixone: closed %d of %d current versions in %s", n, len(chunk), t)
				}
			}
		}
		rows := make([][]any, len(list))
		var vecRows [][]any
		for i, v := range list {
			del := 0
			if v.rec == nil {
				del = 1
			}
			vid := rev<<vidShift | int64(first+i)
			rows[i] = append([]any{vid, v.ref.ID, rev, int64(never), del}, values(k, v.rec, s.dup)...)
			if emb := store.EmbeddingOf(v.rec); len(emb) > 0 {
				vecRows = append(vecRows, []any{vid, vecLiteral(emb)})
			}
		}
		if err := s.writeRows(ctx, w, t, specs[k].allCols(), rows); err != nil {
			return err
		}
		// Embeddings always go in INSERTs: loading them only moves their cost to the
		// commit (load.go).
		if err := insertRows(ctx, w, vecTable(k), []string{"vid", "embedding"}, vecRows); err != nil {
			return err
		}
	}
	_, err = w.ExecContext(ctx, "UPDATE day1_branches SET head = ? WHERE name = ?", rev, b.info.Name)
	return err
}

// Delete writes tombstones for records on a branch. Deleting a record that does not
// exist is store.ErrNotFound and nothing is deleted.
func (s *Store) Delete(ctx context.Context, branch string, refs []store.Ref) error {
	if err := store.ValidateDeletes(refs); err != nil {
		return err
	}
	if err := s.usable(ctx); err != nil {
		return err
	}
	if err := store.ValidateBranchName("branch", branch); err != nil {
		return err
	}
	return s.write(ctx, "Delete", writeSpec{branches: []string{branch}, late: true}, func(w *writeTx) error {
		b, err := writableBranch(ctx, w, branch)
		if err != nil {
			return err
		}
		ids := map[store.Kind][]string{}
		for _, r := range refs {
			ids[r.Kind] = append(ids[r.Kind], r.ID)
		}
		for _, id := range ids[store.KindFact] {
			if !slices.Contains(ids[store.KindAlias], id) {
				ids[store.KindAlias] = append(ids[store.KindAlias], id)
			}
		}
		live := map[key]bool{}
		vids := map[key]int64{}
		for k, list := range ids {
			rows, err := currentRows(ctx, w, k, b.suffix, list, true)
			if err != nil {
				return err
			}
			for _, r := range rows {
				live[key{k, r.id}] = !r.deleted
				vids[key{k, r.id}] = r.vid
			}
		}
		seen := map[key]bool{}
		vs := make([]version, 0, len(refs))
		for _, r := range refs {
			k := key{r.Kind, r.ID}
			if k.kind == store.KindFact && !live[k] && live[key{store.KindAlias, k.id}] {
				// The caller's id of a deduplicated fact: the alias goes, the fact stays.
				k.kind = store.KindAlias
			}
			if !live[k] || seen[k] {
				return fmt.Errorf("%w: %s on branch %q", store.ErrNotFound, r, branch)
			}
			seen[k] = true
			vs = append(vs, version{ref: store.Ref{Kind: k.kind, ID: k.id}, vid: vids[k]})
		}
		if len(vs) == 0 {
			return nil
		}
		return s.commitWrites(ctx, w, b, vs)
	})
}

func chunks[T any](xs []T, n int) [][]T {
	var out [][]T
	for len(xs) > n {
		out = append(out, xs[:n])
		xs = xs[n:]
	}
	if len(xs) > 0 {
		out = append(out, xs)
	}
	return out
}

func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}
