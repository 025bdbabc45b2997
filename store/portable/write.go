package portable

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/day1ai/day1/internal/reccodec"
	"github.com/day1ai/day1/internal/simhash"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// Put writes a batch of records atomically.
func (s *Store) Put(ctx context.Context, branchName string, recs []store.Record, opts store.PutOptions) ([]store.PutResult, error) {
	if err := store.ValidatePutBatch(recs, opts); err != nil {
		return nil, err
	}
	type rk struct {
		kind store.Kind
		id   string
	}
	seen := make(map[rk]bool, len(recs))
	for i, r := range recs {
		if r == nil {
			return nil, store.AtIndex(store.ValidateRecord(nil, 0), "records", i)
		}
		k := rk{r.RecordKind(), r.RecordID()}
		if seen[k] {
			return nil, store.Invalid("records", fmt.Sprintf("record %d repeats %s; a batch may hold each record once", i, store.RefOf(r)), nil)
		}
		seen[k] = true
	}
	// Only facts (their near-duplicates) and large batches (their reads ahead) need
	// the index: a process that writes a few other records, as a hook does, does not
	// load it.
	indexed := len(recs) >= batchReadMin || slices.ContainsFunc(recs, func(r store.Record) bool { return r.RecordKind() == store.KindFact })
	// The index is caught up before the write lock is taken, so that a new process
	// loads it, and a large batch builds its band index, while others commit.
	if indexed {
		err := s.read(ctx, func(st *state) error {
			if err := s.ix.catchUp(ctx, st.r, st, len(recs) >= batchReadMin, true); err != nil {
				return err
			}
			if opts.DedupeThreshold > 0 && len(recs) >= bandsMinBatch {
				s.ix.buildBands(store.KindFact)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var results []store.PutResult
	err := s.update(ctx, func(st *state, w driver.Writer) error {
		b, err := st.writable(branchName)
		if err != nil {
			return err
		}
		dims, err := s.dims(ctx, st)
		if err != nil {
			return err
		}
		fixed := dims
		if dims == 0 {
			for _, r := range recs {
				if emb := store.EmbeddingOf(r); len(emb) > 0 {
					dims = len(emb)
					break
				}
			}
		}
		for i, r := range recs {
			if err := store.ValidateRecord(r, dims); err != nil {
				return store.AtIndex(err, "records", i)
			}
		}
		if indexed {
			if err := s.ix.catchUp(ctx, w, st, b.parent != nil || len(recs) >= batchReadMin, true); err != nil {
				return err
			}
			if opts.DedupeThreshold > 0 && len(recs) >= bandsMinBatch {
				s.ix.buildBands(store.KindFact)
			}
		}
		p := &putter{s: s, st: st, w: w, b: b, head: st.head(b), threshold: opts.DedupeThreshold}
		if len(recs) >= batchReadMin {
			if err := p.readAhead(ctx, recs, opts.GeneratedIDs); err != nil {
				return err
			}
		}
		stamp := opts.Now
		if stamp.IsZero() {
			stamp = s.stamp(w)
		}
		results = make([]store.PutResult, len(recs))
		for i, r := range recs {
			at := store.BatchTime(stamp, i, len(recs))
			if results[i], err = p.put(ctx, r, at, opts.GeneratedIDs); err != nil {
				return err
			}
		}
		if len(p.rows) == 0 {
			return nil
		}
		if err := w.Put(ctx, p.rows...); err != nil {
			return err
		}
		if fixed == 0 && p.sized {
			if err := w.PutItem(ctx, collMeta, "dims", []byte(strconv.Itoa(dims))); err != nil {
				return err
			}
		}
		return touch(ctx, w, b)
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// batchReadMin is the smallest batch that reads the records it replaces together,
// through the index, rather than one at a time.
const batchReadMin = 32

// bandsMinBatch is the smallest batch for which a write builds the band index of
// near-duplicate candidates, if there is none: a smaller one compares codes with every
// stored fact's, which costs less than building the index.
const bandsMinBatch = 32

// dims returns the length of the embeddings the store holds, 0 before the first.
func (s *Store) dims(ctx context.Context, st *state) (int, error) {
	if s.opts.Dimensions > 0 {
		return s.opts.Dimensions, nil
	}
	if n := s.dimsSeen.Load(); n > 0 {
		return int(n), nil // once set, it never changes
	}
	data, ok, err := st.r.Item(ctx, collMeta, "dims")
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.Atoi(string(data))
	if err != nil {
		return 0, fmt.Errorf("%w: the embedding length %q: %v", store.ErrCorrupt, data, err)
	}
	s.dimsSeen.Store(int64(n))
	return n, nil
}

// touch moves a branch's Head to the pending commit: its records changed.
func touch(ctx context.Context, w driver.Writer, b *branch) error {
	b.info.Head = uint64(w.Pending().Seq)
	_, err := putBranch(ctx, w, b)
	return err
}

// putter is one Put under way: the rows it writes, and what it has read of the live
// facts for the near-duplicate check.
type putter struct {
	s         *Store
	st        *state
	w         driver.Writer
	b         *branch
	head      view
	threshold float64
	rows      []driver.Row
	sized     bool
	// written holds the records of the batch written so far, by kind and id: the
	// batch sees its own records before the driver has them.
	written map[store.Ref]store.Record
	// read holds the records the branch held before the batch, read ahead
	// (readAhead): nil for a record it did not hold.
	read  map[store.Ref]store.Record
	facts *liveFacts // the live facts the batch has written
}

// readAhead reads together the records a batch may replace: each record's current
// version and, for a fact, its alias. A fact with an id the caller generated has
// neither.
func (p *putter) readAhead(ctx context.Context, recs []store.Record, generated map[string]bool) error {
	refs := make([]store.Ref, 0, 2*len(recs))
	for _, r := range recs {
		kind, id := r.RecordKind(), r.RecordID()
		if kind == store.KindFact {
			if generated[id] {
				continue
			}
			refs = append(refs, store.Ref{Kind: store.KindAlias, ID: id})
		}
		refs = append(refs, store.Ref{Kind: kind, ID: id})
	}
	got, err := p.head.getMany(ctx, &p.s.ix, refs)
	if err != nil {
		return err
	}
	p.read = make(map[store.Ref]store.Record, len(refs))
	for i, ref := range refs {
		p.read[ref] = got[i]
	}
	return nil
}

// liveFacts are live facts a batch has written, for the near-duplicate check.
type liveFacts struct {
	byText map[string]string // NormText → id
	vecs   map[string][]float32
	codes  map[string][]uint64 // the sign-bit codes of vecs
	facts  map[string]store.Fact
}

func (p *putter) current(ctx context.Context, kind store.Kind, id string) (store.Record, error) {
	ref := store.Ref{Kind: kind, ID: id}
	if r, ok := p.written[ref]; ok {
		return r, nil
	}
	if r, ok := p.read[ref]; ok {
		return r, nil
	}
	return p.head.get(ctx, kind, id)
}

// rowOf returns the row that writes r on a branch.
func rowOf(r store.Record, br int64) driver.Row {
	text, emb := reccodec.Split(r)
	return driver.Row{Kind: r.RecordKind(), ID: r.RecordID(), Branch: br, Data: text, Vector: emb, Index: indexOf(r)}
}

func (p *putter) write(r store.Record) {
	row := rowOf(r, p.b.id)
	p.rows = append(p.rows, row)
	p.sized = p.sized || len(row.Vector) > 0
	if p.written == nil {
		p.written = map[store.Ref]store.Record{}
	}
	p.written[store.RefOf(r)] = r
	if f, ok := r.(store.Fact); ok {
		p.batchFacts().set(f)
	}
}

func (p *putter) delete(kind store.Kind, id string) {
	p.rows = append(p.rows, driver.Row{Kind: kind, ID: id, Branch: p.b.id, Deleted: true})
	if p.written == nil {
		p.written = map[store.Ref]store.Record{}
	}
	p.written[store.Ref{Kind: kind, ID: id}] = nil
}

func (p *putter) put(ctx context.Context, r store.Record, at time.Time, generated map[string]bool) (store.PutResult, error) {
	kind, id := r.RecordKind(), r.RecordID()
	fresh := kind == store.KindFact && generated[id]
	var cur store.Record
	if !fresh {
		var err error
		if cur, err = p.current(ctx, kind, id); err != nil {
			return store.PutResult{}, err
		}
	}
	in := r
	r = store.WithBranch(store.Clone(r), p.b.info.Name)
	if cur != nil {
		if store.SameContent(store.StampLike(r, cur), cur) {
			return store.PutResult{Record: cur, Outcome: store.Deduplicated}, nil
		}
		r = store.KeepCreated(store.WithDefaults(r, at), cur, r.RecordTime().IsZero())
		p.write(r)
		return store.PutResult{Record: store.AsWritten(r, in), Outcome: store.Updated}, nil
	}
	r = store.WithDefaults(r, at)
	res, err := p.decideNew(ctx, r, in)
	if err != nil || kind != store.KindFact {
		return res, err
	}
	var alias *store.Alias
	if !fresh {
		a, err := p.current(ctx, store.KindAlias, id)
		if err != nil {
			return res, err
		}
		if a != nil {
			x := a.(store.Alias)
			alias = &x
		}
	}
	aw, del := store.AliasAfterPut(&res, id, alias, generated, at, p.b.info.Name)
	switch {
	case aw != nil:
		p.write(*aw)
	case del:
		p.delete(store.KindAlias, id)
	}
	return res, nil
}

// decideNew writes a record no live record holds the id of: a fact whose text a live
// fact has is deduplicated, one a live fact's embedding is near enough to supersedes
// it, others are created.
func (p *putter) decideNew(ctx context.Context, r, in store.Record) (store.PutResult, error) {
	f, ok := r.(store.Fact)
	if !ok || !f.Status.Live() {
		p.write(r)
		return store.PutResult{Record: store.AsWritten(r, in), Outcome: store.Created}, nil
	}
	was, sim, sameText, err := p.nearest(ctx, f)
	if err != nil {
		return store.PutResult{}, err
	}
	if was == nil {
		p.write(f)
		return store.PutResult{Record: store.AsWritten(f, in), Outcome: store.Created}, nil
	}
	if sameText {
		return store.PutResult{Record: *was, Outcome: store.Deduplicated, Replaced: was.ID, Similarity: sim}, nil
	}
	old, nf := store.Supersede(*was, f)
	p.write(old)
	p.write(nf)
	return store.PutResult{Record: store.AsWritten(nf, in), Outcome: store.Superseded, Replaced: old.ID, Similarity: sim}, nil
}

// facts returns the live facts the batch has written so far, kept up to date by
// write.
func (p *putter) batchFacts() *liveFacts {
	if p.facts == nil {
		p.facts = &liveFacts{byText: map[string]string{}, vecs: map[string][]float32{}, codes: map[string][]uint64{}, facts: map[string]store.Fact{}}
		for ref, r := range p.written {
			if f, ok := r.(store.Fact); ok && ref.Kind == store.KindFact {
				p.facts.set(f)
			}
		}
	}
	return p.facts
}

// nearest returns the live fact the branch holds, or the batch has written, with f's
// text, else the one whose embedding is most similar to f's with a cosine of at least
// the threshold (0: off); nil for none. Stored facts are found through the index: by
// the hash of their text, and by the band index over their codes.
func (p *putter) nearest(ctx context.Context, f store.Fact) (was *store.Fact, sim float64, sameText bool, err error) {
	bf := p.batchFacts()
	if b, s, same := bf.nearest(f, p.threshold); b != nil && same {
		return b, s, true, nil
	} else if b != nil {
		was, sim = b, s
	}
	ix := &p.s.ix
	norm := store.NormText(f.Text)
	ix.mu.RLock()
	var texts []int32
	// A fact that has expired by the time of the write is no longer known: it neither
	// takes a new fact's text nor is superseded by it.
	at := f.CreatedAt
	for _, q := range ix.withText(textKey(f.Text)) {
		if !ix.rows.at(q).del() && !ix.expired(q, at) && ix.visible(p.head, q) {
			texts = append(texts, q)
		}
	}
	var near []int32
	kv := ix.kinds[store.KindFact]
	if p.threshold > 0 && len(f.Embedding) > 0 && kv != nil {
		code := codeOf(f.Embedding)
		if len(code) == kv.words {
			bound := simhash.HammingBound(p.threshold, kv.words*64)
			check := func(slot int32) {
				q := *kv.rowOf.at(slot)
				if vecmath.Hamming(code, kv.code(slot)) <= bound &&
					!ix.rows.at(q).del() && !ix.rows.at(q).hist() && !ix.expired(q, at) && ix.visible(p.head, q) {
					near = append(near, q)
				}
			}
			if kv.bands != nil {
				// The codes are flat once the bands exist (bandsOf): the tail holds
				// them all, and this read lock may not change them.
				cands, _ := kv.bands.AppendCandidates(nil, kv.codes.tail, code, 0, simhash.TagBound(p.threshold, kv.bands.TagBits()))
				slices.Sort(cands)
				for i, c := range cands {
					if i == 0 || c != cands[i-1] {
						check(c)
					}
				}
			} else {
				for slot := range int32(kv.slots()) {
					check(slot)
				}
			}
		}
	}
	// The near candidates' embeddings, from memory or read once and kept.
	var missing []int32
	embs := make([][]float32, len(near))
	ids := make([]string, len(near))
	for i, q := range near {
		ids[i] = ix.names.id(q)
		if embs[i] = kv.vecOf(ix.rows.at(q).vslot); embs[i] == nil {
			missing = append(missing, q)
		}
	}
	ix.mu.RUnlock()
	if len(missing) > 0 {
		read, err := ix.fetchVecs(ctx, p.head.st.r, missing)
		if err != nil {
			return nil, 0, false, err
		}
		ix.mu.Lock()
		got := map[int32][]float32{}
		for i, q := range missing {
			if read[i] != nil {
				kv.keepVec(ix.rows.at(q).vslot, read[i])
				got[q] = read[i]
			}
		}
		ix.mu.Unlock()
		for i, q := range near {
			if embs[i] == nil {
				embs[i] = got[q]
			}
		}
	}
	recs, err := ix.fetch(ctx, p.head, texts)
	if err != nil {
		return nil, 0, false, err
	}
	for _, r := range recs {
		if r == nil {
			continue
		}
		if _, ok := p.written[store.RefOf(r)]; ok {
			continue // the batch changed it: bf holds it as it is now
		}
		if c := r.(store.Fact); c.Status.Live() && !c.Expired(at) && store.NormText(c.Text) == norm {
			return &c, 1, true, nil
		}
	}
	best := int32(-1)
	bestID := ""
	for i, q := range near {
		if len(embs[i]) != len(f.Embedding) {
			continue
		}
		id := ids[i]
		if _, ok := p.written[store.FactRef(id)]; ok {
			continue // the batch changed it: bf holds it as it is now
		}
		s := float64(vecmath.Cosine(f.Embedding, embs[i]))
		if s >= p.threshold && (s > sim || s == sim && (was != nil && id < was.ID || best >= 0 && id < bestID)) {
			best, bestID, sim, was = q, id, s, nil
		}
	}
	if best >= 0 {
		recs, err := ix.fetch(ctx, p.head, []int32{best})
		if err != nil {
			return nil, 0, false, err
		}
		if c, ok := recs[0].(store.Fact); ok {
			was = &c
		}
	}
	return was, sim, false, nil
}

// Delete writes deletion markers for records on a branch.
func (s *Store) Delete(ctx context.Context, branchName string, refs []store.Ref) error {
	if err := store.ValidateDeletes(refs); err != nil {
		return err
	}
	return s.update(ctx, func(st *state, w driver.Writer) error {
		b, err := st.writable(branchName)
		if err != nil {
			return err
		}
		head := st.head(b)
		live := func(kind store.Kind, id string) (bool, error) {
			row, ok, err := head.resolve(ctx, kind, id)
			return ok && !row.Deleted, err
		}
		seen := map[store.Ref]bool{}
		rows := make([]driver.Row, 0, len(refs))
		for _, r := range refs {
			k := r
			has, err := live(k.Kind, k.ID)
			if err != nil {
				return err
			}
			if !has && k.Kind == store.KindFact {
				// The caller's id of a deduplicated fact: the alias goes, the fact stays.
				if a, err := live(store.KindAlias, k.ID); err != nil {
					return err
				} else if a {
					k.Kind, has = store.KindAlias, true
				}
			}
			if !has || seen[k] {
				return fmt.Errorf("%w: %s on branch %q", store.ErrNotFound, r, branchName)
			}
			seen[k] = true
			rows = append(rows, driver.Row{Kind: k.Kind, ID: k.ID, Branch: b.id, Deleted: true})
		}
		if err := w.Put(ctx, rows...); err != nil {
			return err
		}
		return touch(ctx, w, b)
	})
}

func (lf *liveFacts) set(f store.Fact) {
	if old, ok := lf.facts[f.ID]; ok {
		if t := store.NormText(old.Text); lf.byText[t] == f.ID {
			delete(lf.byText, t)
		}
		delete(lf.vecs, f.ID)
		delete(lf.codes, f.ID)
		delete(lf.facts, f.ID)
	}
	if !f.Status.Live() {
		return
	}
	lf.facts[f.ID] = f
	t := store.NormText(f.Text)
	if prev, ok := lf.byText[t]; !ok || f.ID < prev {
		lf.byText[t] = f.ID
	}
	if len(f.Embedding) > 0 {
		lf.vecs[f.ID] = f.Embedding
		lf.codes[f.ID] = codeOf(f.Embedding)
	}
}

// nearest returns the live fact with f's text, else the one whose embedding is most
// similar to f's with a cosine of at least threshold (0: off), nil for none.
func (lf *liveFacts) nearest(f store.Fact, threshold float64) (was *store.Fact, sim float64, sameText bool) {
	if id, ok := lf.byText[store.NormText(f.Text)]; ok {
		x := lf.facts[id]
		return &x, 1, true
	}
	if threshold <= 0 || len(f.Embedding) == 0 {
		return nil, 0, false
	}
	// The codes turn most pairs away before an exact cosine, as for stored facts.
	code := codeOf(f.Embedding)
	bound := simhash.HammingBound(threshold, 64*len(code))
	best := ""
	for id, v := range lf.vecs {
		if len(v) != len(f.Embedding) || vecmath.Hamming(code, lf.codes[id]) > bound {
			continue
		}
		c := float64(vecmath.Cosine(f.Embedding, v))
		if c >= threshold && (c > sim || c == sim && id < best) {
			best, sim = id, c
		}
	}
	if best == "" {
		return nil, 0, false
	}
	x := lf.facts[best]
	return &x, sim, false
}
