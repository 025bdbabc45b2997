package memstore

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/day1ai/day1/internal/filelock"

	"github.com/day1ai/day1/internal/reccodec"
	"github.com/day1ai/day1/internal/vecmath"
	"github.com/day1ai/day1/store"
)

// The log is a sequence of frames: a 4-byte little-endian payload length, a 4-byte
// CRC-32C of the payload, and the payload, one JSON-encoded entry per committed batch.
// A frame cut short or failing its checksum ends the log: it is the trace of a crash
// in the middle of an append, never acknowledged, and it is truncated away on open.

const (
	logName    = "day1.log"
	lockName   = "LOCK"
	frameHead  = 8
	maxPayload = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type opType uint8

const (
	opPut opType = iota + 1
	opDelete
	opBranch
	opBranchStatus
	opBranchDelete
	opSnapshot
	opSnapshotDelete
	opSession
	opMerge
	opDoc
	opDocDelete
	// opSwitch ends a log: the entries after it are in the log of generation Gen.
	opSwitch
	// The ops of a checkpoint only (see checkpoint.go).
	opCkpt
	opCkptEnd
	opCommits
	opMergePoint
	// opAdopt is a merge's copy, on branch Name, of the version Seq of record
	// Kind/ID on branch From, the version the source sees at its head: the log names
	// it instead of holding the record and its embedding again.
	opAdopt
)

// op is one change in the log.
type op struct {
	Type     opType             `json:"t"`
	Name     string             `json:"n,omitempty"` // branch of a put or delete; name of a branch or snapshot
	Kind     store.Kind         `json:"k,omitempty"`
	ID       string             `json:"i,omitempty"`
	Rec      json.RawMessage    `json:"r,omitempty"`
	Emb      []byte             `json:"e,omitempty"` // little-endian float32s, kept out of the JSON text
	Branch   *store.Branch      `json:"b,omitempty"`
	ForkSeq  uint64             `json:"f,omitempty"`
	Status   store.BranchStatus `json:"s,omitempty"`
	Into     string             `json:"o,omitempty"`
	Snapshot *store.Snapshot    `json:"p,omitempty"`
	Session  *store.Session     `json:"x,omitempty"`
	Merge    *store.MergeRecord `json:"m,omitempty"`
	Doc      *store.Doc         `json:"d,omitempty"`
	// SourceSeq is, for a merge that moves the merge base, the sequence number the
	// source was merged as of; the target's is the store's after the merge.
	SourceSeq uint64 `json:"ss,omitempty"`
	// Seq is, for a put or a delete in a checkpoint, the version's sequence number;
	// for an adopt, that of the version copied.
	Seq uint64 `json:"v,omitempty"`
	// From is the branch of the version an adopt copies.
	From string `json:"fr,omitempty"`
	// Gen is the generation a switch names, or a checkpoint's.
	Gen     uint64            `json:"g,omitempty"`
	Ckpt    *ckptHeader       `json:"c,omitempty"`
	Commits []commitAt        `json:"cm,omitempty"`
	Point   *store.MergePoint `json:"mp,omitempty"`

	// Filled when a put is read back from the log, ahead of its replay: the record,
	// or why it could not be decoded, and what indexing it needs.
	rec    store.Record
	recErr error
	terms  *docTerms
	code   []uint64
}

// entry is one committed batch.
type entry struct {
	Seq uint64    `json:"q"` // the store's sequence number after the batch
	At  time.Time `json:"a"`
	Ops []op      `json:"o"`
}

func putOp(r store.Record) op {
	o := op{Type: opPut, Kind: r.RecordKind(), ID: r.RecordID()}
	o.Rec, o.Emb = reccodec.Split(r)
	return o
}

func (o op) record() (store.Record, error) { return reccodec.Join(o.Kind, o.Rec, o.Emb) }

// wal is the log a store that writes follows and appends to. size is how much of f
// the store has read in: all of it when the commit lock is held, after catchUp.
type wal struct {
	dir  string
	f    *os.File
	gen  uint64 // the generation of the log f is
	size int64  // bytes in f
	// seen is the size f had when the store last read it: a torn tail past size
	// (an append under way, or a dead writer's) is not read again until f changes.
	seen int64
	lock *filelock.Lock
	sync SyncPolicy
	buf  []byte
}

// logReader follows the logs of a store another process writes.
type logReader struct {
	dir     string
	f       *os.File
	gen     uint64 // the generation of the log f is
	off     int64  // just past the last entry applied
	seen    int64  // the size f had when it was last read: see wal.seen
	ckptGen uint64 // the generation of the checkpoint the state was loaded from
}

// read passes the entries past r.off to apply, following switch entries into the
// logs of later generations, and moves r.off past the last applied. It reports
// whether the state should be loaded again: a log it must read was removed, or the
// checkpoint of the generation it reads has been written.
func (r *logReader) read(apply func(*entry) error) (reload bool, err error) {
	for {
		fi, err := r.f.Stat()
		if err != nil {
			return false, fmt.Errorf("day1: memstore: %w", err)
		}
		if fi.Size() < r.off {
			return false, fmt.Errorf("day1: memstore: the log is shorter (%d bytes) than what was read of it (%d): it was replaced; reopen the store", fi.Size(), r.off)
		}
		next, switched := uint64(0), false
		if fi.Size() > r.off {
			if _, err := r.f.Seek(r.off, io.SeekStart); err != nil {
				return false, fmt.Errorf("day1: memstore: %w", err)
			}
			good, err := readFrames(r.f, r.off, func(e *entry) error {
				if g, ok := switchOf(e); ok {
					next, switched = g, true
					return errSwitched
				}
				return apply(e)
			})
			r.off, r.seen = good, fi.Size()
			if err != nil && !errors.Is(err, errSwitched) {
				return false, err
			}
		}
		if !switched {
			break
		}
		f, err := os.Open(logPath(r.dir, next))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return true, nil
			}
			return false, fmt.Errorf("day1: memstore: %w", err)
		}
		r.f.Close()
		r.f, r.gen, r.off, r.seen = f, next, 0, 0
	}
	if r.gen > r.ckptGen {
		if _, err := os.Stat(ckptPath(r.dir, r.gen)); err == nil {
			return true, nil
		}
	}
	return false, nil
}

// ErrCorrupt is matched by the error of a store file that cannot be read whole
// while it is no torn append: in a log, a damaged entry with whole entries after it,
// or a whole entry that does not decode; a checkpoint damaged or cut short. Nothing
// is cut or written then.
var ErrCorrupt = store.ErrCorrupt // the same error: store.ErrCorrupt

// checkTail tells a torn tail from damage, for a log f whose whole entries end at
// good, before the end of the file. A torn tail is what an append cut short leaves:
// a last frame that is incomplete or fails its checksum, with nothing after it; it is
// harmless, as the append was never acknowledged. A complete frame that does not
// decode, or a bad frame followed by a good one, is damage (or a newer format): it
// returns an error matching ErrCorrupt that names the file and the offset. whole
// reports a frame at good that is whole and decodes now: an append that completed
// after the log was read, to read rather than cut.
func checkTail(f *os.File, good int64, path string) (whole bool, err error) {
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("day1: memstore: %w", err)
	}
	size := fi.Size()
	var payload []byte
	frameAt := func(off int64) (n int64, whole bool) {
		var head [frameHead]byte
		if _, err := f.ReadAt(head[:], off); err != nil {
			return 0, false
		}
		n = int64(binary.LittleEndian.Uint32(head[:]))
		if n == 0 || n > maxPayload || off+frameHead+n > size {
			return 0, false
		}
		payload = make([]byte, n)
		if _, err := f.ReadAt(payload, off+frameHead); err != nil {
			return n, false
		}
		return n, crc32.Checksum(payload, castagnoli) == binary.LittleEndian.Uint32(head[4:])
	}
	n, whole := frameAt(good)
	if whole && newRecordDecoder().entry(payload, &entry{}) {
		// An append that was under way when the log was read, whole now: the next
		// read takes it.
		return true, nil
	}
	if whole {
		return false, fmt.Errorf("%w: %s: the entry at offset %d is whole but does not decode: it may have been written by a newer version of day1; open the store with that version. Nothing was changed", ErrCorrupt, path, good)
	}
	if n > 0 {
		if _, next := frameAt(good + frameHead + n); next {
			return false, fmt.Errorf("%w: %s: the entry at offset %d is damaged and whole entries follow it, so this is no torn append; restore the file from a backup (or copy out the entries before offset %d). Nothing was changed", ErrCorrupt, path, good, good)
		}
	}
	return false, nil
}

// frame is one frame of the log on its way from the file to apply.
type frame struct {
	payload []byte
	end     int64 // the offset just past the frame
	e       entry
	ok      bool          // the payload decoded
	done    chan struct{} // closed once decoded
}

// readFrames passes the complete entries of a log, read from r, which is positioned
// at offset base of the file, to apply, in order, and returns the offset just past the
// last of them, base if none. One goroutine reads and checks the frames, every
// processor decodes them, and the caller's goroutine applies them as they come: a
// store's log is mostly JSON and embeddings to decode, which take longer than
// applying. At most a few frames are held at a time.
func readFrames(r io.Reader, base int64, apply func(*entry) error) (int64, error) {
	workers := runtime.GOMAXPROCS(0)
	order := make(chan *frame, 2*workers) // every frame read, in log order
	jobs := make(chan *frame, workers)    // the same frames, to decode
	stop := make(chan struct{})
	var wg sync.WaitGroup
	dec := newRecordDecoder()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for fr := range jobs {
				fr.ok = dec.entry(fr.payload, &fr.e)
				fr.payload = nil
				close(fr.done)
			}
		}()
	}
	go func() {
		defer close(jobs)
		defer close(order)
		r := bufio.NewReaderSize(r, 1<<20)
		off := base
		head := make([]byte, frameHead)
		for {
			if _, err := io.ReadFull(r, head); err != nil {
				return // end of log, or a torn frame header
			}
			n := binary.LittleEndian.Uint32(head)
			sum := binary.LittleEndian.Uint32(head[4:])
			if n == 0 || n > maxPayload {
				return
			}
			payload, err := readPayload(r, int(n))
			if err != nil {
				return
			}
			if crc32.Checksum(payload, castagnoli) != sum {
				return
			}
			off += frameHead + int64(n)
			fr := &frame{payload: payload, end: off, done: make(chan struct{})}
			select {
			case order <- fr:
			case <-stop:
				return
			}
			select {
			case jobs <- fr:
			case <-stop:
				return
			}
		}
	}()
	good := base
	var err error
	for fr := range order {
		<-fr.done
		if !fr.ok {
			break // a frame that does not decode ends the log, like a torn one
		}
		if err = apply(&fr.e); err != nil {
			break
		}
		good = fr.end
	}
	close(stop)
	for range order {
	}
	wg.Wait()
	return good, err
}

// readPayload reads n bytes, growing its buffer as they arrive: the length in a torn or
// corrupt frame header may be anything up to maxPayload, and reading it must cost no
// more memory than the bytes that are there.
func readPayload(r io.Reader, n int) ([]byte, error) {
	const chunk = 1 << 20
	b := make([]byte, 0, min(n, chunk))
	for len(b) < n {
		k := min(n-len(b), chunk)
		b = slices.Grow(b, k)
		m, err := io.ReadFull(r, b[len(b):len(b)+k])
		b = b[:len(b)+m]
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// recordDecoder decodes log entries, and the records of their puts along with what
// indexing them needs. It is safe for concurrent use.
type recordDecoder struct {
	mu   sync.Mutex
	rots map[int]*vecmath.Rotation // by dimensions
}

func newRecordDecoder() *recordDecoder {
	return &recordDecoder{rots: map[int]*vecmath.Rotation{}}
}

// entry decodes payload into e and reports whether it decoded.
func (d *recordDecoder) entry(payload []byte, e *entry) bool {
	if err := json.Unmarshal(payload, e); err != nil {
		return false
	}
	var scratch []float32
	for i := range e.Ops {
		o := &e.Ops[i]
		if o.Type != opPut {
			continue
		}
		if o.rec, o.recErr = o.record(); o.recErr != nil || !indexed(o.Kind) {
			continue
		}
		t := analyze(store.SearchText(o.rec))
		o.terms = &t
		if emb := store.EmbeddingOf(o.rec); len(emb) > 0 && vecmath.Norm(emb) != 0 {
			rot := d.rotation(len(emb))
			if cap(scratch) < rot.Bits() {
				scratch = make([]float32, rot.Bits())
			}
			o.code = rot.AppendCode(nil, emb, scratch)
		}
	}
	return true
}

// rotation returns the rotation the index uses for vectors of dims coordinates.
func (d *recordDecoder) rotation(dims int) *vecmath.Rotation {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.rots[dims]
	if r == nil {
		r = vecmath.NewRotation(dims, rotationSeed)
		d.rots[dims] = r
	}
	return r
}

func (w *wal) append(e entry) error {
	var err error
	if w.buf, err = appendEntryFrame(w.buf[:0], e); err != nil {
		return fmt.Errorf("day1: memstore: encoding log entry: %w", err)
	}
	n, err := w.f.WriteAt(w.buf, w.size)
	w.size += int64(n)
	w.seen = w.size
	if cap(w.buf) > maxKeptBuf {
		w.buf = nil // a large batch's frame is not kept for the small ones after it
	}
	if err != nil {
		return fmt.Errorf("day1: memstore: writing log: %w", err)
	}
	if w.sync == SyncAlways {
		if err := w.f.Sync(); err != nil {
			return fmt.Errorf("day1: memstore: flushing log: %w", err)
		}
	}
	return nil
}

// maxKeptBuf is the largest frame buffer the log keeps for the next append.
const maxKeptBuf = 16 << 20

// appendEntryFrame appends e to dst as one frame of the log, the JSON of e encoded in
// place: each op is encoded on its own and the frame's header is filled in last, so
// that a large batch (a merge of thousands of records) is not encoded into a growing
// buffer of its own and then copied into the frame.
func appendEntryFrame(dst []byte, e entry) ([]byte, error) {
	start := len(dst)
	dst = append(dst, make([]byte, frameHeader)...)
	at, err := json.Marshal(e.At)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `{"q":`...)
	dst = strconv.AppendUint(dst, e.Seq, 10)
	dst = append(dst, `,"a":`...)
	dst = append(dst, at...)
	dst = append(dst, `,"o":`...)
	if e.Ops == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range e.Ops {
			if i > 0 {
				dst = append(dst, ',')
			}
			b, err := json.Marshal(&e.Ops[i])
			if err != nil {
				return nil, err
			}
			dst = append(dst, b...)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, '}')
	payload := dst[start+frameHeader:]
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(payload, castagnoli))
	return dst, nil
}

// frameHeader is the length of a frame's header: the payload's length and CRC.
const frameHeader = 8

// appendFrame appends payload to dst as one frame of the log.
func appendFrame(dst, payload []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(payload, castagnoli))
	return append(dst, payload...)
}

func (w *wal) close() error {
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.lock.Close()
	return err
}

// logCommit appends a committed batch to the log (when durable) and records the
// commit's instant. A failed append leaves the store refusing all further work: memory
// may hold a batch the log does not, and only a reopen tells which is durable.
func (s *Store) logCommit(at time.Time, ops []op) error {
	if s.ro != nil {
		return fmt.Errorf("%w: %s was opened with ReadOnly", store.ErrReadOnly, s.opts.Path)
	}
	if s.log != nil {
		before := s.log.size
		if err := s.log.append(entry{Seq: s.seq, At: at, Ops: ops}); err != nil {
			s.failed = err
			return err
		}
		s.auto.logged(s, s.log.size-before)
	}
	s.commits = append(s.commits, commit{seq: s.seq, at: at})
	return nil
}

// commit logs a batch of global changes that the caller applies after it returns nil.
func (s *Store) commit(at time.Time, ops ...op) error {
	return s.logCommit(at, ops)
}

// replay applies one logged batch.
func (s *Store) replay(e *entry) error {
	for _, o := range e.Ops {
		if err := s.replayOp(o, e.At); err != nil {
			return err
		}
	}
	if s.seq != e.Seq {
		return fmt.Errorf("sequence %d after replay, log says %d", s.seq, e.Seq)
	}
	s.commits = append(s.commits, commit{seq: s.seq, at: e.At})
	s.tidyIndexes()
	return nil
}

func (s *Store) replayOp(o op, at time.Time) error {
	switch o.Type {
	case opPut:
		b, ok := s.branches[o.Name]
		if !ok {
			return fmt.Errorf("put on unknown branch %q", o.Name)
		}
		r, err := o.rec, o.recErr
		if r == nil && err == nil {
			r, err = o.record()
		}
		if err != nil {
			return err
		}
		if emb := store.EmbeddingOf(r); len(emb) > 0 && s.dims == 0 {
			s.dims = len(emb)
		}
		s.addVersion(b, key{r.RecordKind(), r.RecordID()}, r, hint{terms: o.terms, code: o.code})
	case opDelete:
		b, ok := s.branches[o.Name]
		if !ok {
			return fmt.Errorf("delete on unknown branch %q", o.Name)
		}
		s.applyDelete(b, key{o.Kind, o.ID})
	case opBranch:
		if o.Branch == nil {
			return errors.New("branch op without a branch")
		}
		var parent *branch
		if o.Branch.Parent != "" {
			if parent = s.branches[o.Branch.Parent]; parent == nil {
				return fmt.Errorf("branch %q forks unknown %q", o.Branch.Name, o.Branch.Parent)
			}
		}
		s.branches[o.Branch.Name] = s.newBranch(*o.Branch, parent, o.ForkSeq, s.seq)
		s.hist.AddBranch(o.Branch.Name, o.Branch.Parent, o.ForkSeq)
	case opBranchStatus:
		b, ok := s.branches[o.Name]
		if !ok {
			return fmt.Errorf("status of unknown branch %q", o.Name)
		}
		s.applyStatus(b, o.Status, o.Into, at)
	case opBranchDelete:
		b, ok := s.branches[o.Name]
		if !ok {
			return fmt.Errorf("delete of unknown branch %q", o.Name)
		}
		s.dropBranch(b)
	case opSnapshot:
		if o.Snapshot == nil {
			return errors.New("snapshot op without a snapshot")
		}
		s.snaps[o.Snapshot.Name] = snapshot{info: *o.Snapshot, seq: o.ForkSeq}
	case opSnapshotDelete:
		delete(s.snaps, o.Name)
	case opSession:
		if o.Session == nil {
			return errors.New("session op without a session")
		}
		s.sessions[o.Session.ID] = *o.Session
	case opMerge:
		if o.Merge == nil {
			return errors.New("merge op without a record")
		}
		s.merges = append(s.merges, *o.Merge)
		if o.SourceSeq > 0 {
			s.hist.AddMerge(store.MergePoint{Target: o.Merge.Target, At: s.seq, Source: o.Merge.Source, SourceAt: o.SourceSeq})
		}
	case opAdopt:
		return s.replayAdopt(o)
	case opDoc, opDocDelete:
		return s.replayDoc(o)
	case opSwitch:
		// Read by the loop over the logs; nothing to apply.
	default:
		return fmt.Errorf("unknown entry type %d: the log was written by a newer version of day1; open the store with that version", o.Type)
	}
	return nil
}

// replayAdopt applies an adopt: a copy on branch o.Name of the version o.Seq of the
// record on branch o.From, which shares its embedding and index data as the merge's
// copy did.
func (s *Store) replayAdopt(o op) error {
	b, ok := s.branches[o.Name]
	if !ok {
		return fmt.Errorf("adopt on unknown branch %q", o.Name)
	}
	src, ok := s.branches[o.From]
	if !ok {
		return fmt.Errorf("adopt from unknown branch %q", o.From)
	}
	k := key{o.Kind, o.ID}
	var from *version
	for v := range src.own.all(k) {
		if v.seq == o.Seq {
			from = v
			break
		}
	}
	if from == nil || from.rec == nil {
		return fmt.Errorf("adopt of %s/%s: branch %q holds no version %d of it", o.Kind, o.ID, o.From, o.Seq)
	}
	r := copyFor(from.plain(), o.Name)
	h := hint{from: from}
	if from.terms != nil {
		h.terms = from.terms
	}
	s.addVersion(b, k, r, h)
	return nil
}
