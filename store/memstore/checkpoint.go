package memstore

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/day1ai/day1/store"
)

// A checkpoint is framed like a log, its entries made of ops of their own: a header
// (opCkpt), the branches (opBranch, parents first, with their heads), the commit
// instants kept (opCommits), the versions kept in sequence order (opPut and opDelete
// with their sequence numbers), snapshots, sessions, merge records, merge points
// (opMergePoint) and documents, and a trailer (opCkptEnd) that counts the versions.
// A checkpoint without its trailer is not one: it is refused.

// ckptFormat is the version of the checkpoint format.
const ckptFormat = 1

// ckptHeader opens a checkpoint.
type ckptHeader struct {
	Format int    `json:"f"`
	Gen    uint64 `json:"g"`
	// Seq is the store's sequence number the checkpoint holds it at: the log of the
	// same generation continues from it.
	Seq uint64 `json:"q"`
	// Horizon is the oldest instant reads may ask for; zero when all history is kept.
	Horizon time.Time `json:"h,omitzero"`
	Dims    int       `json:"d,omitempty"`
	At      time.Time `json:"a"` // when it was taken
}

// commitAt is a commit instant kept in a checkpoint.
type commitAt struct {
	Seq uint64    `json:"q"`
	At  time.Time `json:"a"`
}

// ckptBatch is the number of ops per entry of a checkpoint: entries are decoded in
// parallel on load.
const ckptBatch = 256

// ckptWriter writes the entries of a checkpoint to a file.
type ckptWriter struct {
	w   *bufio.Writer
	buf []byte
	n   int64
}

func (cw *ckptWriter) entry(ops ...op) error {
	payload, err := json.Marshal(entry{Ops: ops})
	if err != nil {
		return fmt.Errorf("day1: memstore: encoding checkpoint entry: %w", err)
	}
	cw.buf = appendFrame(cw.buf[:0], payload)
	n, err := cw.w.Write(cw.buf)
	cw.n += int64(n)
	return err
}

// batches writes ops in entries of ckptBatch.
func (cw *ckptWriter) batches(ops []op) error {
	for lo := 0; lo < len(ops); lo += ckptBatch {
		if err := cw.entry(ops[lo:min(lo+ckptBatch, len(ops))]...); err != nil {
			return err
		}
	}
	return nil
}

// writeCheckpoint writes the checkpoint of p to path, flushed to stable storage, and
// returns its size. hook is called at the step halfway through the versions.
func writeCheckpoint(ctx context.Context, path string, p *plan, hook func(step string)) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, fmt.Errorf("day1: memstore: %w", err)
	}
	cw := &ckptWriter{w: bufio.NewWriterSize(f, 1<<20)}
	err = p.write(ctx, cw, hook)
	if err == nil {
		err = cw.w.Flush()
	}
	if err == nil {
		hook(stepCheckpointWritten)
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return 0, fmt.Errorf("day1: memstore: writing checkpoint %s: %w", path, err)
	}
	return cw.n, nil
}

// write writes the entries of the checkpoint.
func (p *plan) write(ctx context.Context, cw *ckptWriter, hook func(step string)) error {
	c := p.c
	if err := cw.entry(op{Type: opCkpt, Ckpt: &ckptHeader{Format: ckptFormat, Gen: p.gen, Seq: c.seq, Horizon: p.horizon, Dims: c.dims, At: c.at}}); err != nil {
		return err
	}
	var ops []op
	for _, b := range c.branches {
		info := b.info
		ops = append(ops, op{Type: opBranch, Branch: &info, ForkSeq: b.forkSeq})
	}
	if err := cw.batches(ops); err != nil {
		return err
	}
	if err := cw.entry(op{Type: opCommits, Commits: p.commits}); err != nil {
		return err
	}
	ops = ops[:0]
	half := len(p.versions) / 2
	for i, v := range p.versions {
		if i == half {
			if err := cw.batches(ops); err != nil {
				return err
			}
			ops = ops[:0]
			hook(stepCheckpointHalf)
		}
		if i%4096 == 0 {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			store.ReportProgress(ctx, i, len(p.versions))
		}
		var o op
		if v.rec == nil {
			o = op{Type: opDelete, Kind: v.key.kind, ID: v.key.id}
		} else {
			o = putOp(v.full())
		}
		o.Name, o.Seq = c.names[v.br], v.seq
		ops = append(ops, o)
		if len(ops) == ckptBatch {
			if err := cw.entry(ops...); err != nil {
				return err
			}
			ops = ops[:0]
		}
	}
	if err := cw.batches(ops); err != nil {
		return err
	}
	store.ReportProgress(ctx, len(p.versions), len(p.versions))
	ops = ops[:0]
	for _, sn := range c.snaps {
		info := sn.info
		ops = append(ops, op{Type: opSnapshot, Snapshot: &info, ForkSeq: sn.seq})
	}
	for i := range c.sessions {
		ops = append(ops, op{Type: opSession, Session: &c.sessions[i]})
	}
	for i := range c.merges {
		ops = append(ops, op{Type: opMerge, Merge: &c.merges[i]})
	}
	for i := range c.points {
		ops = append(ops, op{Type: opMergePoint, Point: &c.points[i]})
	}
	for _, d := range c.docs {
		ops = append(ops, op{Type: opDoc, Doc: d})
	}
	if err := cw.batches(ops); err != nil {
		return err
	}
	return cw.entry(op{Type: opCkptEnd, Gen: p.gen, Seq: uint64(len(p.versions))})
}

// loadCheckpoint fills the empty store from the checkpoint at path.
func (s *Store) loadCheckpoint(path string, c *chain) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("day1: memstore: %s: %w", path, errVanished)
		}
		return fmt.Errorf("day1: memstore: %w", err)
	}
	defer f.Close()
	l := ckptLoader{s: s, heads: map[string]uint64{}}
	n, err := readFrames(f, 0, l.apply)
	if err != nil {
		return fmt.Errorf("day1: memstore: loading checkpoint %s: %w", path, err)
	}
	if !l.done {
		return fmt.Errorf("%w: checkpoint %s is incomplete or damaged after byte %d; it replaced the files before it, so restore the folder from a backup. Nothing was changed", ErrCorrupt, path, n)
	}
	c.ckptBytes = n
	return nil
}

// ckptLoader applies the entries of a checkpoint.
type ckptLoader struct {
	s        *Store
	hdr      *ckptHeader
	heads    map[string]uint64
	versions uint64
	done     bool
}

func (l *ckptLoader) apply(e *entry) error {
	s := l.s
	if l.done {
		return errors.New("entries after the end of the checkpoint")
	}
	for _, o := range e.Ops {
		if l.hdr == nil && o.Type != opCkpt {
			return errors.New("no checkpoint header")
		}
		switch o.Type {
		case opCkpt:
			if l.hdr != nil || o.Ckpt == nil {
				return errors.New("a second or empty checkpoint header")
			}
			if o.Ckpt.Format != ckptFormat {
				return fmt.Errorf("checkpoint format %d; this version reads format %d: open the store with the version of day1 that wrote it", o.Ckpt.Format, ckptFormat)
			}
			l.hdr = o.Ckpt
			if s.dims == 0 {
				s.dims = o.Ckpt.Dims
			}
			s.horizon = o.Ckpt.Horizon
		case opBranch:
			if o.Branch == nil {
				return errors.New("branch op without a branch")
			}
			l.heads[o.Branch.Name] = o.Branch.Head
			if err := s.replayOp(o, time.Time{}); err != nil {
				return err
			}
		case opCommits:
			for _, c := range o.Commits {
				s.commits = append(s.commits, commit{seq: c.Seq, at: c.At})
			}
		case opPut, opDelete:
			if o.Seq <= s.seq || o.Seq > l.hdr.Seq {
				return fmt.Errorf("version %d out of order (after %d, checkpoint at %d)", o.Seq, s.seq, l.hdr.Seq)
			}
			// replayOp adds the version at the sequence number after s.seq: its own.
			s.seq = o.Seq - 1
			if err := s.replayOp(o, time.Time{}); err != nil {
				return err
			}
			l.versions++
		case opSnapshot, opSession, opMerge, opDoc:
			o.SourceSeq = 0 // merge points come apart
			if err := s.replayOp(o, time.Time{}); err != nil {
				return err
			}
		case opMergePoint:
			if o.Point == nil {
				return errors.New("merge point op without a point")
			}
			s.hist.AddMerge(*o.Point)
		case opCkptEnd:
			if o.Seq != l.versions || o.Gen != l.hdr.Gen {
				return fmt.Errorf("checkpoint trailer counts %d versions of generation %d; read %d of %d", o.Seq, o.Gen, l.versions, l.hdr.Gen)
			}
			s.seq = l.hdr.Seq
			for name, head := range l.heads {
				if b := s.branches[name]; b != nil {
					b.info.Head = head
				}
			}
			l.done = true
		default:
			return fmt.Errorf("op type %d in a checkpoint", o.Type)
		}
	}
	s.tidyIndexes()
	return nil
}

// sortedUnique sorts xs and drops repeats.
func sortedUnique(xs []uint64) []uint64 {
	slices.Sort(xs)
	return slices.Compact(xs)
}
