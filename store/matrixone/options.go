package matrixone

import (
	"context"
	"fmt"
	"log/slog"
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
	DefaultConnMaxIdleTime = 5 * time.Minute
	DefaultRetryTimeout    = 10 * time.Second
	DefaultRetention       = 7 * 24 * time.Hour
	DefaultVectorIndexRows = 10000
	DefaultVectorProbes    = 8
)

// IndexMode says whether the store may use a feature of the server: one of its search
// indexes (Options.FullText, Options.VectorIndex) or DATA BRANCH DIFF
// (Options.NativeDiff).
type IndexMode string

// Index modes.
const (
	// IndexAuto uses the feature when the server supports it and it is the faster
	// path (the default); each option says which.
	IndexAuto IndexMode = ""
	// IndexOff never uses it: the store takes the portable path.
	IndexOff IndexMode = "off"
	// IndexOn uses the feature whenever the server supports it, where IndexAuto would
	// not. Only Options.NativeDiff accepts it.
	IndexOn IndexMode = "on"
)

// Options configure Open.
type Options struct {
	// DSN is a go-sql-driver/mysql data source name, e.g.
	// "root:111@tcp(127.0.0.1:6001)/day1". The database is created when missing; an
	// empty database name means DefaultDatabase. parseTime, loc=UTC and
	// interpolateParams are forced on (vecf32 parameters need interpolation),
	// checkConnLiveness on (stale pooled connections are dropped before use) and
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
	// ConnMaxIdleTime closes connections idle for longer than this, so that few stale
	// ones wait in the pool after a server restart. Default DefaultConnMaxIdleTime (5
	// minutes).
	ConnMaxIdleTime time.Duration
	// RetryTimeout bounds how long one operation retries transient failures (a lost
	// connection, a restarting or busy server, a deadlock, a transaction conflict),
	// with exponential backoff from 20 ms to 1 s between attempts, and how long a write
	// whose COMMIT got no answer tries to learn whether it committed before failing with
	// ErrCommitUnknown. The operation's context stops both sooner. Default
	// DefaultRetryTimeout (10 seconds); longer rides out a server restart. See the
	// package documentation, "Errors and retries".
	RetryTimeout time.Duration
	// Retention is how far back reads at an instant may go; older instants fail with
	// store.ErrTooOld (snapshots stay readable). The store keeps every version, so this
	// is a promise callers can rely on, leaving room to prune older history. Default
	// DefaultRetention (7 days); negative means no limit.
	Retention time.Duration
	// Now is the store's clock, used to stamp records and commits. Default time.Now.
	// It must agree with the clocks of the callers that read at instants.
	Now func() time.Time
	// Logger receives the migrations the store applies at open (Info, with their
	// version and duration) and the transient failures it retries (Warn, with the
	// operation, the attempt and the error), never record texts. Nil logs nothing.
	Logger *slog.Logger
	// FullText chooses how keyword search selects its candidates. IndexAuto (the
	// default): when the server has FULLTEXT indexes (Capabilities.FullText), each
	// facts, observations, conversations and messages table gets one on its search
	// tokens (made at Open for
	// existing tables, copied with each new branch) and candidates come from
	// MATCH ... AGAINST. IndexOff: the portable path, an INSTR scan of the visible
	// rows' tokens. Both give the same BM25 scores, computed by the store.
	FullText IndexMode
	// VectorIndex chooses how vector search selects its candidates. IndexAuto (the
	// default): when the server has usable IVFFLAT indexes (Capabilities.IVFFlat), the
	// vectors table of observations, messages (and facts, with VectorCodes off), which
	// holds the embeddings of every branch, gets one when a write brings it to
	// VectorIndexRows rows, and it is rebuilt with more lists each time the table grows
	// fourfold (lists = √rows; a background worker of the store builds it after the
	// write that crosses the mark, which does not wait, and searches scan until it is
	// there; the server may hold other writes of embeddings while it builds); searches
	// take the versions nearest by l2_distance among VectorProbes lists (four times the
	// number asked, at least 64) and rank those they see by exact cosine similarity,
	// falling back to the scan when they are fewer than asked. Tables below the mark
	// and searches with metadata filters scan exactly. Store.BuildVectorIndexes builds on demand. IndexOff: always the
	// exact scan. On a server with DATA BRANCH DIFF, unless NativeDiff is IndexOff,
	// the store takes the exact scan too: an index built on a branched table after
	// writes makes the server's diff forget them, and a store opened on the same
	// database with NativeDiff IndexOn would ask for that diff; set NativeDiff to
	// IndexOff to have IVFFLAT indexes on such a server.
	VectorIndex IndexMode
	// VectorCodes chooses how a vector search of facts selects its candidates.
	// IndexAuto (the default): the store ranks every live fact of the branch by the
	// Hamming distance between its near-duplicate code (a 512-bit SimHash of the
	// embedding, kept in memory for deduplication) and the query's, and the server
	// scores the closest few hundred by exact cosine similarity, fetched by id; no
	// IVFFLAT index is built on facts tables, so no write waits for one. Searches the
	// codes cannot answer (the past, history included, a filter that leaves too few
	// candidates) take VectorIndex's path. IndexOff: facts take VectorIndex's path.
	VectorCodes IndexMode
	// KeywordCache chooses how keyword search ranks. IndexAuto (the default): by BM25
	// in Go over the search terms of every row version a table holds, kept in memory
	// per table (read whole at the first search, then only the versions written or
	// closed since), at the head and in the past alike; the best are fetched by
	// primary key, no full-text match. Searches whose filter rejects the best few
	// hundred candidates take FullText's path. IndexOff: always FullText's path. The
	// memory is a few tens of bytes per row version and term, for the 16 tables
	// searched last.
	KeywordCache IndexMode
	// VectorIndexRows is the vectors table size (embeddings of row versions) at which
	// the IVFFLAT index is built. Default DefaultVectorIndexRows (10,000).
	VectorIndexRows int
	// VectorProbes is how many IVFFLAT lists a query probes: more is slower and
	// closer to the exact ranking. Default DefaultVectorProbes (8).
	VectorProbes int
	// NativeDiff chooses how Diff finds changed records between a branch and the
	// parent its tables were forked from with DATA BRANCH CREATE. IndexAuto (the
	// default) and IndexOff: the portable path, a range read of each side's rows by
	// revision, whose cost follows the number of changes; on a 3.0.15 server at 100k
	// facts, a lean diff of 100 changes took 23 ms at the median this way and 82 ms
	// through DATA BRANCH DIFF. IndexOn: when the server has DATA BRANCH DIFF
	// (Capabilities.DataBranchDiff), the server lists the rows that differ since their
	// common ancestor, one statement per record kind, and the store keeps those
	// current at the compared revision and written after the merge base; a kind whose
	// statement fails is read the portable way instead. Both give the same diff
	// (Capabilities.DiffPath). On a server with DATA BRANCH DIFF, IndexOff also lets
	// VectorIndex build IVFFLAT indexes (see VectorIndex).
	NativeDiff IndexMode
	// LoadData chooses how writes send their rows. IndexAuto (the default): when the
	// server takes LOAD DATA INLINE inside a transaction (Capabilities.LoadData), a
	// write of 128 rows or more of a table sends them as one delimited string, which
	// the server parses faster than the same rows in INSERT statements; smaller writes
	// use INSERT. IndexOff: always multi-row INSERTs. Either way the rows commit or
	// roll back with the write.
	LoadData IndexMode
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
	if o.ConnMaxIdleTime == 0 {
		o.ConnMaxIdleTime = DefaultConnMaxIdleTime
	}
	if o.RetryTimeout == 0 {
		o.RetryTimeout = DefaultRetryTimeout
	}
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.VectorIndexRows == 0 {
		o.VectorIndexRows = DefaultVectorIndexRows
	}
	if o.VectorProbes == 0 {
		o.VectorProbes = DefaultVectorProbes
	}
	return o
}

// Validate checks the options as Open does, their defaults filled in, before it
// reaches the server: a *store.ValidationError names the field.
func (o Options) Validate() error { return o.withDefaults().validate() }

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
	if o.ConnMaxIdleTime < 0 {
		return store.Invalid("Options.ConnMaxIdleTime", "must not be negative (0 means the default, 5 minutes)", o.ConnMaxIdleTime)
	}
	if o.RetryTimeout < 0 {
		return store.Invalid("Options.RetryTimeout", "must not be negative (0 means the default, 10 seconds)", o.RetryTimeout)
	}
	for _, m := range []struct {
		field string
		mode  IndexMode
		on    bool // whether IndexOn is allowed
	}{{"Options.FullText", o.FullText, false}, {"Options.VectorIndex", o.VectorIndex, false}, {"Options.NativeDiff", o.NativeDiff, true},
		{"Options.VectorCodes", o.VectorCodes, false}, {"Options.KeywordCache", o.KeywordCache, false},
		{"Options.LoadData", o.LoadData, false}} {
		switch {
		case m.mode == IndexAuto || m.mode == IndexOff || m.on && m.mode == IndexOn:
		case m.on:
			return store.Invalid(m.field, `must be "" (auto), "on" or "off"`, string(m.mode))
		default:
			return store.Invalid(m.field, `must be "" (auto) or "off"`, string(m.mode))
		}
	}
	if o.VectorIndexRows < 1 {
		return store.Invalid("Options.VectorIndexRows", "must be positive (0 means the default, 10000)", o.VectorIndexRows)
	}
	if o.VectorProbes < 1 || o.VectorProbes > 1024 {
		return store.Invalid("Options.VectorProbes", "must be between 1 and 1024 (0 means the default, 8)", o.VectorProbes)
	}
	return nil
}

// ParseDSN parses a DSN the way Open does: the driver's parser, then the settings the
// store needs (parseTime, UTC, interpolateParams, checkConnLiveness, no
// multiStatements) and the default database name. The database name must be 1 to 64
// letters, digits or underscores.
func ParseDSN(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, store.Invalid("Options.DSN", err.Error(), nil)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.InterpolateParams = true
	cfg.MultiStatements = false
	cfg.CheckConnLiveness = true
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

// Database returns the DSN the options name.
func (o Options) Database() string { return o.DSN }

// WithDatabase returns the options with the DSN set to dsn.
func (o Options) WithDatabase(dsn string) store.Opener {
	o.DSN = dsn
	return o
}

var _ store.DatabaseOpener = Options{}

// OpenStore makes Options a store.Opener (a day1.Config's Backend): it opens the
// database as Open does, with env's embedding width and clock where o has none.
func (o Options) OpenStore(ctx context.Context, env store.OpenEnv) (store.Store, error) {
	env.Fill(&o.Dimensions, &o.Now, &o.Logger)
	return store.Opened(Open(ctx, o))
}
