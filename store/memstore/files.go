package memstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The files of a durable store, in its directory:
//
//	LOCK           locked by the store that is committing, for that commit only
//	day1.log       the log of generation 0: every store starts with it
//	day1.G.ckpt    the checkpoint of generation G: the store as of one sequence number
//	day1.G.log     the log of generation G: the entries committed after that checkpoint
//	*.tmp          a checkpoint being written; never read, removed once a later one is in
//
// A compaction of generation G creates day1.G.log, appends to the current log a switch
// entry naming G, and from then on appends to day1.G.log; it writes the checkpoint of
// the state as of the switch to day1.G.ckpt.tmp, flushes it, renames it to
// day1.G.ckpt and removes the files of older generations. A store is loaded from its
// newest checkpoint and the logs that follow it, one to the next by their switch
// entries; without a checkpoint, from day1.log.

const (
	ckptExt = ".ckpt"
	tmpExt  = ".tmp"
)

// logPath returns the path of the log of generation gen.
func logPath(dir string, gen uint64) string {
	if gen == 0 {
		return filepath.Join(dir, logName)
	}
	return filepath.Join(dir, "day1."+strconv.FormatUint(gen, 10)+".log")
}

// ckptPath returns the path of the checkpoint of generation gen.
func ckptPath(dir string, gen uint64) string {
	return filepath.Join(dir, "day1."+strconv.FormatUint(gen, 10)+ckptExt)
}

// dirFiles are the store files found in a directory.
type dirFiles struct {
	ckpts []uint64 // generations with a checkpoint, ascending
	logs  []uint64 // generations with a log, ascending
	tmps  []string // checkpoints left half written
}

func (d dirFiles) maxGen() uint64 {
	var g uint64
	if n := len(d.ckpts); n > 0 {
		g = d.ckpts[n-1]
	}
	if n := len(d.logs); n > 0 {
		g = max(g, d.logs[n-1])
	}
	return g
}

// listFiles finds the store files in dir.
func listFiles(dir string) (dirFiles, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return dirFiles{}, fmt.Errorf("day1: memstore: %w", err)
	}
	var d dirFiles
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "day1.") || e.IsDir() {
			continue
		}
		if strings.HasSuffix(name, tmpExt) {
			d.tmps = append(d.tmps, filepath.Join(dir, name))
			continue
		}
		if name == logName {
			d.logs = append(d.logs, 0)
			continue
		}
		mid, ext, ok := strings.Cut(strings.TrimPrefix(name, "day1."), ".")
		g, err := strconv.ParseUint(mid, 10, 64)
		if !ok || err != nil || g == 0 {
			continue
		}
		switch "." + ext {
		case ckptExt:
			d.ckpts = append(d.ckpts, g)
		case ".log":
			d.logs = append(d.logs, g)
		}
	}
	slices.Sort(d.ckpts)
	slices.Sort(d.logs)
	return d, nil
}

// errVanished says a file of the store went away while it was being loaded: a
// compaction in the writing process removed it. Loading again from the start finds
// the files that replaced it.
var errVanished = errors.New("a store file was removed while it was read")

// chain is what loading a store found: the checkpoint it started from and the log it
// ended with, open.
type chain struct {
	ckptGen   uint64 // generation of the checkpoint loaded; 0 for none
	ckptBytes int64
	gen       uint64   // generation of the last log
	f         *os.File // the last log, open
	off       int64    // just past its last complete entry
	logBytes  int64    // bytes of the logs after the checkpoint, up to off
	maxGen    uint64   // the highest generation of any file there
	stale     []string // files a writer removes: older generations, half-written checkpoints
}

// load fills the store from the files in dir: the newest checkpoint, then the logs
// after it, up to the last complete frame of the last log, which it leaves open: for
// reading only, or (readOnly false) for appending too. A torn tail is left as it is:
// it may be an append under way, and only a store holding the commit lock cuts it
// (catchUp). Logs of later generations that no switch entry leads to (a compaction
// that stopped before its switch) are ignored. The store must be empty.
func (s *Store) load(dir string, readOnly bool) (*chain, error) {
	files, err := listFiles(dir)
	if err != nil {
		return nil, err
	}
	c := &chain{maxGen: files.maxGen()}
	start := uint64(0)
	if n := len(files.ckpts); n > 0 {
		c.ckptGen = files.ckpts[n-1]
		start = c.ckptGen
		if err := s.loadCheckpoint(ckptPath(dir, c.ckptGen), c); err != nil {
			return nil, err
		}
	} else if len(files.logs) > 0 {
		start = files.logs[0]
	}
	for _, g := range files.ckpts {
		if g < start {
			c.stale = append(c.stale, ckptPath(dir, g))
		}
	}
	for _, g := range files.logs {
		if g < start {
			c.stale = append(c.stale, logPath(dir, g))
		}
	}
	flag := os.O_RDONLY
	if !readOnly {
		flag = os.O_RDWR
	}
	gen := start
	replayed := 0
	for {
		f, err := os.OpenFile(logPath(dir, gen), flag, 0o644)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				if readOnly && gen == 0 && c.ckptGen == 0 {
					return nil, fmt.Errorf("day1: memstore: read-only open of %s: no log there (a writer creates it on its first open): %w", dir, err)
				}
				return nil, fmt.Errorf("day1: memstore: %s: %w", logPath(dir, gen), errVanished)
			}
			return nil, fmt.Errorf("day1: memstore: %w", err)
		}
		next, switched := uint64(0), false
		good, err := readFrames(f, 0, func(e *entry) error {
			if g, ok := switchOf(e); ok {
				next, switched = g, true
				return errSwitched
			}
			replayed++
			if err := s.replay(e); err != nil {
				return fmt.Errorf("day1: memstore: replaying log entry %d of %s: %w", replayed, dir, err)
			}
			return nil
		})
		if err != nil && !errors.Is(err, errSwitched) {
			f.Close()
			return nil, err
		}
		if !switched {
			if _, err := checkTail(f, good, logPath(dir, gen)); err != nil {
				f.Close()
				return nil, err
			}
			c.gen, c.f, c.off = gen, f, good
			c.logBytes += good
			break
		}
		f.Close()
		// The switch entry itself counts: it is part of the log.
		if fi, err := os.Stat(logPath(dir, gen)); err == nil {
			c.logBytes += fi.Size()
		}
		if next <= gen {
			return nil, fmt.Errorf("day1: memstore: %s switches to generation %d, not a later one", logPath(dir, gen), next)
		}
		gen = next
	}
	// A checkpoint left half written for a generation before the newest checkpoint,
	// or for one whose checkpoint is in, is left over (a compaction still writing it
	// is superseded); any other may be being written now.
	for _, t := range files.tmps {
		if g, ok := tmpGen(t); ok && (g < c.ckptGen || slices.Contains(files.ckpts, g)) {
			c.stale = append(c.stale, t)
		}
	}
	return c, nil
}

// tmpGen returns the generation of the half-written checkpoint at path.
func tmpGen(path string) (uint64, bool) {
	name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "day1."), ckptExt+tmpExt)
	g, err := strconv.ParseUint(name, 10, 64)
	return g, err == nil
}

// errSwitched ends the reading of a log at its switch entry.
var errSwitched = errors.New("the log continues in another generation")

// switchOf reports whether e is a switch entry, and the generation it names.
func switchOf(e *entry) (uint64, bool) {
	if len(e.Ops) == 1 && e.Ops[0].Type == opSwitch {
		return e.Ops[0].Gen, true
	}
	return 0, false
}

// removeStale removes files a loaded store no longer needs. A file that cannot be
// removed is left for a later open or compaction.
func removeStale(paths []string) {
	for _, p := range paths {
		os.Remove(p)
	}
}

// HoldsMemory reports whether the folder dir holds a memory this package keeps: its
// lock file, a log or a checkpoint.
func HoldsMemory(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, lockName)); err == nil {
		return true
	}
	d, err := listFiles(dir)
	return err == nil && (len(d.logs) > 0 || len(d.ckpts) > 0)
}

// isMemoryFile reports whether a file of a folder is one of a memory's.
func isMemoryFile(name string) bool { return name == lockName || strings.HasPrefix(name, "day1.") }
