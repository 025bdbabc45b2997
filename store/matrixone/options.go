package matrixone

import (
	"fmt"
	"regexp"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1/store"
)

// Defaults of Options.
const (
	DefaultDimensions      = 384
	DefaultDatabase        = "day1"
	DefaultMaxOpenConns    = 16
	DefaultMaxIdleConns    = 8
	DefaultConnMaxLifetime = 30 * time.Minute
	DefaultRetention       = 7 * 24 * time.Hour
)

// Options configure Open.
type Options struct {
	// DSN is a go-sql-driver/mysql data source name, e.g.
	// "root:111@tcp(127.0.0.1:6001)/day1". The database is created when missing; an
	// empty database name means DefaultDatabase. parseTime, loc=UTC and
	// interpolateParams are forced on (vecf32 parameters need interpolation) and
	// multiStatements off. Required.
	DSN string
	// Dimensions is the length of every embedding the store holds: the vecf32 column
	// width, fixed when the database is created. Default DefaultDimensions (384).
	// Opening an existing database with another width is an error.
	Dimensions int
	// MaxOpenConns bounds the connection pool. Default DefaultMaxOpenConns (16).
	MaxOpenConns int
	// MaxIdleConns is the number of idle connections kept. Default
	// DefaultMaxIdleConns (8).
	MaxIdleConns int
	// ConnMaxLifetime recycles connections older than this. Default
	// DefaultConnMaxLifetime (30 minutes).
	ConnMaxLifetime time.Duration
	// Retention is how far back reads at an instant may go; older instants fail with
	// store.ErrTooOld (snapshots stay readable). The store keeps every version, so this
	// is a promise callers can rely on, leaving room to prune older history. Default
	// DefaultRetention (7 days); negative means no limit.
	Retention time.Duration
	// Now is the store's clock, used to stamp records and commits. Default time.Now.
	// It must agree with the clocks of the callers that read at instants.
	Now func() time.Time
}

var dbNamePattern = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// withDefaults fills zero fields.
func (o Options) withDefaults() Options {
	if o.Dimensions == 0 {
		o.Dimensions = DefaultDimensions
	}
	if o.MaxOpenConns == 0 {
		o.MaxOpenConns = DefaultMaxOpenConns
	}
	if o.MaxIdleConns == 0 {
		o.MaxIdleConns = DefaultMaxIdleConns
	}
	if o.ConnMaxLifetime == 0 {
		o.ConnMaxLifetime = DefaultConnMaxLifetime
	}
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// validate checks the options after withDefaults.
func (o Options) validate() error {
	if o.DSN == "" {
		return store.Invalid("Options.DSN", "must be set, e.g. root:111@tcp(127.0.0.1:6001)/day1", nil)
	}
	if o.Dimensions < 1 || o.Dimensions > store.MaxEmbeddingDims {
		return store.Invalid("Options.Dimensions", fmt.Sprintf("must be between 1 and %d", store.MaxEmbeddingDims), o.Dimensions)
	}
	if o.MaxOpenConns < 0 || o.MaxIdleConns < 0 || o.ConnMaxLifetime < 0 {
		return store.Invalid("Options.MaxOpenConns", "pool sizes and lifetimes must not be negative", nil)
	}
	return nil
}

// ParseDSN parses a DSN the way Open does: the driver's parser, then the settings the
// store needs (parseTime, UTC, interpolateParams, no multiStatements) and the default
// database name. The database name must be 1 to 64 letters, digits or underscores.
func ParseDSN(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, store.Invalid("Options.DSN", err.Error(), nil)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.InterpolateParams = true
	cfg.MultiStatements = false
	if cfg.DBName == "" {
		cfg.DBName = DefaultDatabase
	}
	if !dbNamePattern.MatchString(cfg.DBName) {
		return nil, store.Invalid("Options.DSN", "the database name must be 1 to 64 letters, digits or underscores", cfg.DBName)
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	return cfg, nil
}
