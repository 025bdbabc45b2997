// Package localmem is what the example programs that share one memory agree on: where
// the memory lives by default, and how it is opened from flags and the environment.
//
// Every program opens the memory itself: any number of MCP servers, hooks and
// commands have one durable embedded store open at once, each in its own process.
package localmem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/internal/pathkind"
	"github.com/day1ai/day1/llm/openai"
	"github.com/day1ai/day1/store/matrixone"
	"github.com/day1ai/day1/store/memstore"
	"github.com/day1ai/day1/store/sqlite"
)

// Environment variables that choose the memory.
const (
	// EnvPath is the folder of a durable embedded store.
	EnvPath = "DAY1_PATH"
	// EnvDSN is a MatrixOne DSN; it wins over EnvPath.
	EnvDSN = "DAY1_DSN"
	// EnvModel names a chat model at an OpenAI-compatible endpoint (with the
	// variables llm/openai reads: OPENAI_BASE_URL, OPENAI_API_KEY) to judge with.
	EnvModel = "DAY1_MODEL"
	// EnvEmbedModel names an embedding model at that endpoint; EnvEmbedDims its
	// vectors' length (needed for models other than OpenAI's).
	EnvEmbedModel = "DAY1_EMBED_MODEL"
	EnvEmbedDims  = "DAY1_EMBED_DIMS"
)

// DefaultPath returns the folder of the default memory: EnvPath when set, otherwise
// day1 in the user's data folder ($XDG_DATA_HOME or ~/.local/share on Linux and
// other Unix systems, ~/Library/Application Support on macOS, %LocalAppData% on
// Windows).
func DefaultPath() (string, error) {
	if p := os.Getenv(EnvPath); p != "" {
		return p, nil
	}
	var base string
	switch runtime.GOOS {
	case "windows":
		base = os.Getenv("LocalAppData")
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, "Library", "Application Support")
	default:
		base = os.Getenv("XDG_DATA_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			base = filepath.Join(home, ".local", "share")
		}
	}
	if base == "" {
		return "", errors.New("day1: no user data folder; set " + EnvPath)
	}
	return filepath.Join(base, "day1"), nil
}

// Options choose a memory. The zero value is the durable embedded store at
// DefaultPath, or MatrixOne when EnvDSN is set.
type Options struct {
	// Path is the folder of a durable embedded store. Empty means DefaultPath.
	Path string
	// DSN opens MatrixOne instead. Empty means EnvDSN.
	DSN string
	// InMemory opens an embedded store in memory only (tests, demos).
	InMemory bool
	// Retention is the store's retention (memstore.Options.Retention,
	// matrixone.Options.Retention). Default 0: the store's default.
	Retention time.Duration
	// ReadOnly opens a durable embedded store read-only (memstore.Options.ReadOnly):
	// for readers, which must neither write nor create a memory.
	ReadOnly bool
	// Store is the kind of embedded store a new memory is made as: StoreSQLite (the
	// default) or StoreLog; empty means EnvStore. A folder that holds a memory is
	// opened as the kind it holds, whatever Store says.
	Store string
}

// The kinds of embedded durable store (Options.Store).
const (
	// StoreSQLite keeps a memory in a SQLite file (store/sqlite): any number of
	// processes open it at once, each in constant time, and read what they need.
	StoreSQLite = string(pathkind.SQLite)
	// StoreLog is the store that keeps a memory in memory and appends to a log
	// (memstore): the fastest reads and writes, for one process at a time, which
	// loads it whole when it opens it.
	StoreLog = string(pathkind.Log)
)

// EnvStore names the kind of store a new memory is made as, when Options.Store is
// empty: "log" or "sqlite".
const EnvStore = "DAY1_STORE"

// storeAt returns the kind of store of the memory in folder path: the kind it holds,
// else want, else EnvStore's, else StoreSQLite.
func storeAt(path, want string) (string, error) {
	if want == "" {
		want = os.Getenv(EnvStore)
	}
	switch want {
	case "", StoreSQLite, StoreLog:
		return string(pathkind.For(path, pathkind.Kind(want))), nil
	}
	if k := pathkind.Held(path); k != "" {
		return string(k), nil
	}
	return "", fmt.Errorf("day1: store kind %q: want %q or %q (%s)", want, StoreLog, StoreSQLite, EnvStore)
}

// Config returns the day1.Config the options name, with an OpenAI-compatible model
// and embedder when EnvModel and EnvEmbedModel are set, and the folder of the
// durable store ("" for MatrixOne or memory).
func Config(o Options) (day1.Config, string, error) {
	var cfg day1.Config
	dsn := o.DSN
	if dsn == "" && !o.InMemory && o.Path == "" {
		dsn = os.Getenv(EnvDSN)
	}
	path := ""
	switch {
	case dsn != "":
		cfg.Backend = matrixone.Options{DSN: dsn, Retention: o.Retention}
	case o.InMemory:
	default:
		path = o.Path
		if path == "" {
			p, err := DefaultPath()
			if err != nil {
				return cfg, "", err
			}
			path = p
		}
		kind, err := storeAt(path, o.Store)
		if err != nil {
			return cfg, "", err
		}
		if kind == StoreSQLite {
			cfg.Backend = sqlite.Options{Path: path, Retention: o.Retention, ReadOnly: o.ReadOnly}
		} else {
			cfg.Backend = memstore.Options{Path: path, Retention: o.Retention, ReadOnly: o.ReadOnly}
		}
	}
	if name := os.Getenv(EnvModel); name != "" {
		m, err := openai.NewModel(openai.Config{ChatModel: name})
		if err != nil {
			return cfg, "", fmt.Errorf("day1: %s: %w", EnvModel, err)
		}
		cfg.Model = m
	}
	if name := os.Getenv(EnvEmbedModel); name != "" {
		oc := openai.Config{EmbeddingModel: name}
		if d := os.Getenv(EnvEmbedDims); d != "" {
			if _, err := fmt.Sscan(d, &oc.Dimensions); err != nil {
				return cfg, "", fmt.Errorf("day1: %s: %w", EnvEmbedDims, err)
			}
		}
		e, err := openai.NewEmbedder(oc)
		if err != nil {
			return cfg, "", fmt.Errorf("day1: %s: %w", EnvEmbedModel, err)
		}
		cfg.Embedder = e
	}
	return cfg, path, nil
}

// Open opens the memory the options name. It returns the folder of a durable
// embedded store, "" otherwise.
func Open(ctx context.Context, o Options) (*day1.Client, string, error) {
	cfg, path, err := Config(o)
	if err != nil {
		return nil, "", err
	}
	c, err := day1.Open(ctx, cfg)
	return c, path, err
}
