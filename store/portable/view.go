package portable

import (
	"context"
	"fmt"

	"github.com/day1ai/day1/internal/reccodec"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

// view is a read position: a chain of branches from the one read up to the root,
// each link read at a commit.
type view struct {
	st    *state
	chain []link
}

type link struct {
	br  *branch
	cut int64
}

func (st *state) chainOf(b *branch, seq int64) view {
	v := view{st: st}
	for b != nil {
		v.chain = append(v.chain, link{b, seq})
		seq = min(seq, b.forkSeq)
		b = b.parent
	}
	return v
}

// head is the view of a branch's latest state: at the reader's head, which for a
// writer that has written is its pending commit.
func (st *state) head(b *branch) view { return st.chainOf(b, st.r.Head().Seq) }

func (st *state) resolveView(ctx context.Context, v store.View) (view, error) {
	name := v.Branch
	if v.At.Snapshot != "" {
		sn, err := st.snapshot(ctx, v.At.Snapshot)
		if err != nil {
			return view{}, err
		}
		if name == "" {
			name = sn.Info.Branch
		}
		if name != sn.Info.Branch {
			return view{}, store.Invalid("View.At.Snapshot", fmt.Sprintf("is a snapshot of branch %q, not of %q", sn.Info.Branch, name), v.At.Snapshot)
		}
		b, err := st.branch(name)
		if err != nil {
			return view{}, err
		}
		return st.chainOf(b, sn.Seq), nil
	}
	if name == "" {
		name = store.DefaultBranch
	}
	b, err := st.branch(name)
	if err != nil {
		return view{}, err
	}
	seq := st.r.Head().Seq
	if !v.At.Time.IsZero() {
		if err := store.CheckInstant(b.info, v.At.Time); err != nil {
			return view{}, err
		}
		if err := st.retained(ctx, v.At.Time); err != nil {
			return view{}, err
		}
		c, err := st.r.CommitAt(ctx, v.At.Time)
		if err != nil {
			return view{}, err
		}
		seq = c.Seq
	}
	return st.chainOf(b, seq), nil
}

func (v view) name() string { return v.chain[0].br.info.Name }

// resolve returns the row of a record the view sees, deletion markers included.
func (v view) resolve(ctx context.Context, kind store.Kind, id string) (driver.Row, bool, error) {
	for _, l := range v.chain {
		row, ok, err := v.st.r.Row(ctx, kind, id, l.br.id, l.cut)
		if err != nil || ok {
			return row, ok, err
		}
	}
	return driver.Row{}, false, nil
}

// get returns the live record the view sees, nil for none.
func (v view) get(ctx context.Context, kind store.Kind, id string) (store.Record, error) {
	row, ok, err := v.resolve(ctx, kind, id)
	if err != nil || !ok || row.Deleted {
		return nil, err
	}
	return v.decode(row)
}

// decode returns the record of a row, naming the branch the view reads.
func (v view) decode(row driver.Row) (store.Record, error) {
	r, err := reccodec.Join(row.Kind, row.Data, row.Vector)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q: %v", store.ErrCorrupt, row.Kind, row.ID, err)
	}
	return store.WithBranch(r, v.name()), nil
}

// each calls fn with every live record of a kind the view sees, in no particular
// order.
func (v view) each(ctx context.Context, kind store.Kind, fn func(store.Record) error) error {
	seen := map[string]bool{}
	for _, l := range v.chain {
		err := v.st.r.Rows(ctx, kind, l.br.id, l.cut, func(row driver.Row) error {
			if seen[row.ID] {
				return nil
			}
			seen[row.ID] = true
			if row.Deleted {
				return nil
			}
			r, err := v.decode(row)
			if err != nil {
				return err
			}
			return fn(r)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// getMany returns the live records the view sees of refs, in the order of refs, nil
// where it sees none: the index finds each record's row without a read, and the rows
// are read together. The caller has caught the index up to the view's reader with
// keys built, and has written nothing since. The records are the caller's own, and
// those read now are not kept in the record cache (a batch's reads leave it to
// searches and lists).
func (v view) getMany(ctx context.Context, ix *index, refs []store.Ref) ([]store.Record, error) {
	return v.records(ctx, ix, refs, readOpts{})
}

// borrowMany is getMany for a diff or a merge, which only read the records. When
// borrows(len(refs)) (a diff or merge of a few hundred changes), what it reads is kept
// in the record cache, as what is read so is often read again soon (a diff, then its
// merge), and the records are lent: they may be the cache's own, so their slices and
// maps are never changed, and one handed on to a caller outside the store is cloned
// first (store.Clone). A larger read is getMany's.
func (v view) borrowMany(ctx context.Context, ix *index, refs []store.Ref) ([]store.Record, error) {
	if !borrows(len(refs)) {
		return v.getMany(ctx, ix, refs)
	}
	return v.records(ctx, ix, refs, readOpts{keep: true, borrow: true})
}

// borrows reports whether view.borrowMany of n references lends its records.
func borrows(n int) bool { return n <= keepRecords }

func (v view) records(ctx context.Context, ix *index, refs []store.Ref, o readOpts) ([]store.Record, error) {
	ps := make([]int32, 0, len(refs))
	at := make([]int, 0, len(refs))
	ix.mu.RLock()
	for i, ref := range refs {
		if p, ok := ix.find(v, ref); ok {
			ps, at = append(ps, p), append(at, i)
		}
	}
	ix.mu.RUnlock()
	recs, err := ix.read(ctx, v, ps, o)
	if err != nil {
		return nil, err
	}
	out := make([]store.Record, len(refs))
	for j, r := range recs {
		out[at[j]] = r
	}
	return out, nil
}
