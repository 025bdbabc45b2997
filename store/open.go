package store

import (
	"context"
	"log/slog"
	"time"
)

// Opener opens a store with the options of its backend. A day1.Config carries one
// (Config.Backend) so that the Client opens the store, and closes it, itself;
// memstore.Options and matrixone.Options are Openers, each with the settings that
// only its backend has.
type Opener interface {
	// OpenStore opens the store. env fills what the options leave unset.
	OpenStore(ctx context.Context, env OpenEnv) (Store, error)
}

// OpenEnv is what a Client tells the store it opens.
type OpenEnv struct {
	// Dimensions is the length of the embeddings the Client writes, 0 when it writes
	// none. Options that leave their dimensions zero take it.
	Dimensions int
	// Now is the Client's clock. Options that leave their clock nil take it.
	Now func() time.Time
	// Logger is the Client's logger, nil for none. Options that leave their logger
	// nil take it.
	Logger *slog.Logger
}

// Fill sets the dimensions, the clock and the logger of a backend's options from env
// where they are unset (zero, nil).
func (env OpenEnv) Fill(dims *int, now *func() time.Time, logger **slog.Logger) {
	if *dims == 0 {
		*dims = env.Dimensions
	}
	if *now == nil {
		*now = env.Now
	}
	if *logger == nil {
		*logger = env.Logger
	}
}

// Logger returns l, or a logger that writes nothing when l is nil: what a backend or
// an engine logs through when its caller gave it no logger.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return discard
	}
	return l
}

var discard = slog.New(slog.DiscardHandler)

// Opened returns what a backend's Open returned as a Store: nil, not a nil pointer in
// an interface, with an error.
func Opened[S Store](s S, err error) (Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

// FolderOpener is an Opener of a store kept in a folder of files (the embedded
// stores): a manager of many memories (day1.Tenants) gives each one a folder of its
// own.
type FolderOpener interface {
	Opener
	// Folder returns the folder the options name, "" for none.
	Folder() string
	// WithFolder returns the options with the folder set to path.
	WithFolder(path string) Opener
}

// DatabaseOpener is an Opener of a store kept in a database server (MatrixOne): a
// manager of many memories gives each one a database of its own.
type DatabaseOpener interface {
	Opener
	// Database returns the DSN the options name, "" for none.
	Database() string
	// WithDatabase returns the options with the DSN set to dsn.
	WithDatabase(dsn string) Opener
}

// Validator is the optional check of an Opener's settings, made before any store is
// opened with them.
type Validator interface {
	Validate() error
}
