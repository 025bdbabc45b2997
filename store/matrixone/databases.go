package matrixone

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1/store"
)

// MySQL error numbers of database statements.
const (
	errDBCreateExists = 1007 // ER_DB_CREATE_EXISTS
	errDBDropExists   = 1008 // ER_DB_DROP_EXISTS
	errBadDB          = 1049 // ER_BAD_DB_ERROR
)

// Server manages the databases of a MatrixOne server: it lists, creates and drops
// them, for callers that keep one store per database (a service with a memory per
// user, for example). It is safe for concurrent use. Open a Store on a database with
// Open and a DSN naming it.
type Server struct {
	db *sql.DB
}

// OpenServer connects to the server of dsn (a go-sql-driver/mysql DSN; its database
// name, if any, is ignored). It does not contact the server: the first method does.
// A DSN the driver cannot parse is a *store.ValidationError.
func OpenServer(dsn string) (*Server, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, store.Invalid("dsn", err.Error(), nil)
	}
	cfg.DBName = ""
	cfg.MultiStatements = false
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, store.Invalid("dsn", err.Error(), nil)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	db.SetConnMaxLifetime(DefaultConnMaxLifetime)
	return &Server{db: db}, nil
}

// Close closes the connections.
func (s *Server) Close() error { return s.db.Close() }

// checkDatabase reports a name Open would refuse as a *store.ValidationError: it must
// be 1 to 64 letters, digits or underscores, so that it can be written in a statement
// and is never cut.
func checkDatabase(name string) error {
	if !dbNamePattern.MatchString(name) {
		return store.Invalid("database", "must be 1 to 64 letters, digits or underscores", name)
	}
	return nil
}

// Databases returns the names of the server's databases that start with prefix
// (every database when prefix is empty), sorted. Names are compared as the server
// reports them: MatrixOne folds unquoted names to lower case.
func (s *Server) Databases(ctx context.Context, prefix string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SHOW DATABASES")
	if err != nil {
		return nil, wrap(ctx, "Databases", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, wrap(ctx, "Databases", err)
		}
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, "Databases", err)
	}
	slices.Sort(out)
	return out, nil
}

// HasDatabase reports whether the server has a database of that name. A name Open
// would refuse is a *store.ValidationError.
func (s *Server) HasDatabase(ctx context.Context, name string) (bool, error) {
	if err := checkDatabase(name); err != nil {
		return false, err
	}
	var n int
	err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", name).Scan(&n)
	if err != nil {
		return false, wrap(ctx, "HasDatabase", err)
	}
	return n > 0, nil
}

// CreateDatabase creates an empty database; Open makes its tables. It fails with an
// error matching store.ErrExists when the database exists, and with a
// *store.ValidationError for a name Open would refuse.
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	if err := checkDatabase(name); err != nil {
		return err
	}
	// The name was checked: letters, digits and underscores only.
	_, err := s.db.ExecContext(ctx, "CREATE DATABASE `"+name+"`")
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == errDBCreateExists {
		return withSentinel("CreateDatabase", store.ErrExists, err)
	}
	return wrap(ctx, "CreateDatabase", err)
}

// DropDatabase drops a database and everything in it. Close the stores open on it
// first. It fails with an error matching store.ErrNotFound when the database does not
// exist, and with a *store.ValidationError for a name Open would refuse.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	if err := checkDatabase(name); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, "DROP DATABASE `"+name+"`")
	var me *mysql.MySQLError
	if errors.As(err, &me) && (me.Number == errDBDropExists || me.Number == errBadDB) {
		return withSentinel("DropDatabase", store.ErrNotFound, err)
	}
	if err != nil {
		return wrap(ctx, "DropDatabase", err)
	}
	return nil
}
