package portable

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/day1ai/day1/internal/reccodec"
	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/driver"
)

var _ store.Compacter = (*Store)(nil)

// horizonKey is the meta item that holds the oldest instant reads may ask for once a
// compaction has let history before it go, in Unix nanoseconds.
const horizonKey = "horizon"

// dropChunk is how many rows one commit of a compaction deletes: writers of other
// processes wait for no more than one such commit at a time.
const dropChunk = 2000

// Compact lets go of the history older than Options.Retention: the rows replaced more
// than Retention ago that no branch, snapshot or merge base still reads
// (store.History.Pins) are deleted, with their records and postings, a chunk per
// commit. Reads before the horizon then fail with store.ErrTooOld in every process,
// as they did with Retention set before it. With Retention 0 nothing is deleted.
// Readers go on throughout; writers wait for one chunk at most.
func (s *Store) Compact(ctx context.Context) (store.CompactStats, error) {
	start := time.Now()
	var cs store.CompactStats
	var err error
	if cs.BytesBefore, err = s.size(); err != nil {
		return cs, err
	}
	// Which rows go is decided in one commit, which also records the horizon.
	var drop []int32
	err = s.update(ctx, func(st *state, w driver.Writer) error {
		t0 := time.Now()
		defer func() { cs.Pause = max(cs.Pause, time.Since(t0)) }()
		cs.Seq = uint64(w.Head().Seq)
		if s.opts.Retention <= 0 {
			return nil
		}
		horizon := w.Pending().At.Add(-s.opts.Retention)
		if old, err := st.horizon(ctx); err != nil || old.After(horizon) {
			return err // a later horizon than this one is already kept
		}
		c, err := w.CommitAt(ctx, horizon)
		if err != nil {
			return err
		}
		hseq := uint64(c.Seq)
		hist, err := st.history(ctx)
		if err != nil {
			return err
		}
		var snaps []store.BranchRev
		err = w.Items(ctx, collSnapshot, "", func(_ string, data []byte) error {
			sn, err := decodeSnapshot(data)
			snaps = append(snaps, store.BranchRev{Branch: sn.Info.Branch, Rev: uint64(sn.Seq)})
			return err
		})
		if err != nil {
			return err
		}
		pins := hist.Pins(hseq, snaps)
		if err := s.ix.catchUp(ctx, w, st, false, false); err != nil {
			return err
		}
		s.ix.mu.RLock()
		for p := range int32(s.ix.rows.len()) {
			m := s.ix.rows.at(p)
			b := st.byID[m.br]
			if m.dead() || b == nil {
				continue
			}
			next := uint64(math.MaxUint64)
			if m.until != driver.Never {
				next = uint64(m.until)
			}
			if store.Retained(pins[b.info.Name], hseq, uint64(m.seq), next) {
				cs.Versions++
			} else {
				drop = append(drop, p)
			}
		}
		s.ix.mu.RUnlock()
		cs.Horizon = horizon
		return w.PutItem(ctx, collMeta, horizonKey, []byte(strconv.FormatInt(horizon.UnixNano(), 10)))
	})
	if err != nil {
		return cs, err
	}
	if len(drop) > 0 {
		store.ReportProgress(ctx, 0, len(drop))
	}
	for lo := 0; lo < len(drop); lo += dropChunk {
		ps := drop[lo:min(lo+dropChunk, len(drop))]
		err := s.update(ctx, func(st *state, w driver.Writer) error {
			t0 := time.Now()
			defer func() { cs.Pause = max(cs.Pause, time.Since(t0)) }()
			return s.dropRows(ctx, w, ps)
		})
		if err != nil {
			return cs, err
		}
		cs.Dropped += len(ps)
		store.ReportProgress(ctx, cs.Dropped, len(drop))
	}
	if cs.BytesAfter, err = s.size(); err != nil {
		return cs, err
	}
	cs.Duration = time.Since(start)
	return cs, nil
}

// dropRows deletes the rows at the given positions of the index, which no read sees,
// and marks them dead there.
func (s *Store) dropRows(ctx context.Context, w driver.Writer, ps []int32) error {
	ix := &s.ix
	rids := make([]int64, len(ps))
	ix.mu.RLock()
	for i, p := range ps {
		rids[i] = ix.rows.at(p).rid
	}
	ix.mu.RUnlock()
	var rows []driver.Row
	err := w.Fetch(ctx, rids, func(row driver.Row) error {
		out := driver.Row{RID: row.RID, Kind: row.Kind}
		if !row.Deleted {
			r, err := reccodec.Join(row.Kind, row.Data, row.Vector)
			if err != nil {
				return fmt.Errorf("%w: %s %q: %v", store.ErrCorrupt, row.Kind, row.ID, err)
			}
			out.Index.Terms = indexOf(r).Terms
		}
		rows = append(rows, out)
		return nil
	})
	if err != nil {
		return err
	}
	if err := w.Drop(ctx, rows...); err != nil {
		return err
	}
	ix.mu.Lock()
	for _, p := range ps {
		ix.rows.at(p).setDead()
	}
	ix.mu.Unlock()
	return nil
}

// horizon returns the oldest instant reads may ask for after the last compaction that
// let history go; zero for none.
func (st *state) horizon(ctx context.Context) (time.Time, error) {
	data, ok, err := st.r.Item(ctx, collMeta, horizonKey)
	if err != nil || !ok {
		return time.Time{}, err
	}
	ns, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: the retention horizon %q: %v", store.ErrCorrupt, data, err)
	}
	return time.Unix(0, ns).UTC(), nil
}

// retained fails with store.ErrTooOld for an instant before the history the store
// keeps: more than Options.Retention ago, or before the horizon of the last
// compaction, whichever store made it.
func (st *state) retained(ctx context.Context, t time.Time) error {
	if r := st.retention; r > 0 {
		if h := st.now().Add(-r); t.Before(h) {
			return fmt.Errorf("%w: %s is more than the retention of %s ago; only snapshots reach further back",
				store.ErrTooOld, t.UTC().Format(time.RFC3339Nano), r)
		}
	}
	h, err := st.horizon(ctx)
	if err != nil {
		return err
	}
	if !h.IsZero() && t.Before(h) {
		return fmt.Errorf("%w: %s is before %s, the oldest instant the store has kept since it was compacted; only snapshots reach further back",
			store.ErrTooOld, t.UTC().Format(time.RFC3339Nano), h.Format(time.RFC3339Nano))
	}
	return nil
}

// size returns the bytes the driver's files take, 0 when it does not say
// (a Size() (int64, error) method).
func (s *Store) size() (int64, error) {
	if d, ok := s.d.(interface{ Size() (int64, error) }); ok {
		return d.Size()
	}
	return 0, nil
}
