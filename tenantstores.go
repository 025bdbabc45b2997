package day1

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/day1ai/day1/store"
	"github.com/day1ai/day1/store/matrixone"
)

// TenantStores keeps the stores of tenants somewhere Tenants does not know: give one
// as TenantsConfig.Stores. Tenants validates every name before it calls a method and
// never calls two methods for the same tenant at once; the methods must be safe for
// concurrent use on different tenants.
type TenantStores interface {
	// Create makes the store of a new tenant. It must fail with an error matching
	// ErrExists when the tenant has one.
	Create(ctx context.Context, tenant string) error
	// Open opens the store of a tenant that Create made, and must fail with an error
	// matching ErrNotFound when there is none. The store must hold that tenant's
	// memory alone. Tenants closes it after the tenant's Client.
	Open(ctx context.Context, tenant string) (store.Store, error)
	// List returns the tenants that have a store, in any order. Names that are not
	// valid tenant names are left out of Tenants.List.
	List(ctx context.Context) ([]string, error)
	// Delete removes the store of a tenant and everything in it; Tenants has closed
	// it first. It must fail with an error matching ErrNotFound when there is none.
	Delete(ctx context.Context, tenant string) error
}

// tenantBackend is where tenants live: a folder each, a MatrixOne database each, or
// the caller's TenantStores. Names reach it validated.
type tenantBackend interface {
	// create makes a tenant; ErrTenantExists when it exists.
	create(ctx context.Context, name string) error
	// open returns the Config fields (Path, DSN or Store) that open the tenant's
	// memory; ErrTenantNotFound when it does not exist.
	open(ctx context.Context, name string) (Config, error)
	// list returns the tenants, sorted.
	list(ctx context.Context) ([]string, error)
	// remove deletes a closed tenant's memory; ErrTenantNotFound when it does not
	// exist.
	remove(ctx context.Context, name string) error
	close() error
}

func tenantNotFound(name string, cause error) error {
	if cause != nil {
		return fmt.Errorf("%w: %q (%v); create it with Tenants.Create, or set TenantsConfig.AutoCreate", ErrTenantNotFound, name, cause)
	}
	return fmt.Errorf("%w: %q; create it with Tenants.Create, or set TenantsConfig.AutoCreate", ErrTenantNotFound, name)
}

func tenantExists(name string) error {
	return fmt.Errorf("%w: %q", ErrTenantExists, name)
}

// TenantMarkerFile is the file that makes a folder under TenantsConfig.Path a
// tenant's: Tenants.Create writes it, and List, Acquire and Delete ignore a folder
// without it, so Delete never removes a folder that Tenants did not make.
const TenantMarkerFile = "day1.tenant"

// dirTenants keeps each tenant in a folder of root named after it.
type dirTenants struct {
	root string
}

func (d dirTenants) dir(name string) string { return filepath.Join(d.root, name) }

// isTenant reports whether the tenant's folder exists, is a folder (not a link to
// one) and holds the marker.
func (d dirTenants) isTenant(name string) (bool, error) {
	dir := d.dir(name)
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("day1: tenants: %w", err)
	}
	if !fi.IsDir() {
		return false, nil
	}
	mi, err := os.Lstat(filepath.Join(dir, TenantMarkerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("day1: tenants: %w", err)
	}
	return mi.Mode().IsRegular(), nil
}

func (d dirTenants) create(_ context.Context, name string) error {
	if err := os.MkdirAll(d.root, 0o755); err != nil {
		return fmt.Errorf("day1: tenants: %w", err)
	}
	dir := d.dir(name)
	if err := os.Mkdir(dir, 0o755); errors.Is(err, fs.ErrExist) {
		ok, err := d.isTenant(name)
		if err != nil {
			return err
		}
		if ok {
			return tenantExists(name)
		}
		// A folder without the marker is adopted only when empty: a creation cut
		// short between the two steps leaves one.
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) > 0 {
			return fmt.Errorf("%w: %s holds files but is not a tenant's folder (it has no %s); move it away or choose another name",
				ErrExists, dir, TenantMarkerFile)
		}
	} else if err != nil {
		return fmt.Errorf("day1: tenants: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, TenantMarkerFile), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return tenantExists(name)
	}
	if err != nil {
		return fmt.Errorf("day1: tenants: %w", err)
	}
	_, err = fmt.Fprintf(f, "day1 tenant %s\n", name)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("day1: tenants: writing %s: %w", TenantMarkerFile, err)
	}
	return nil
}

func (d dirTenants) open(_ context.Context, name string) (Config, error) {
	ok, err := d.isTenant(name)
	if err != nil {
		return Config{}, err
	}
	if !ok {
		return Config{}, tenantNotFound(name, nil)
	}
	return Config{Path: d.dir(name)}, nil
}

func (d dirTenants) list(context.Context) ([]string, error) {
	entries, err := os.ReadDir(d.root)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("day1: tenants: %w", err)
	}
	out := []string{}
	for _, e := range entries {
		if !e.IsDir() || ValidateTenantName(e.Name()) != nil {
			continue
		}
		ok, err := d.isTenant(e.Name())
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, e.Name())
		}
	}
	return out, nil // ReadDir sorts by name
}

// remove renames the folder out of the tenants' namespace first, so that the tenant
// is gone at once even if removing its files fails half way. The new name starts
// with a dot, which no tenant name does.
func (d dirTenants) remove(_ context.Context, name string) error {
	ok, err := d.isTenant(name)
	if err != nil {
		return err
	}
	if !ok {
		return tenantNotFound(name, nil)
	}
	trash := filepath.Join(d.root, ".deleted-"+name+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err := os.Rename(d.dir(name), trash); err != nil {
		return fmt.Errorf("day1: tenants: deleting %q: %w", name, err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("day1: tenants: tenant %q is deleted, but removing its files from %s failed: %w", name, trash, err)
	}
	return nil
}

func (dirTenants) close() error { return nil }

// mysqlTenants keeps each tenant in a database of one MatrixOne server.
type mysqlTenants struct {
	srv    *matrixone.Server
	cfg    *mysql.Config // the server's DSN, without a database
	prefix string
}

func (m *mysqlTenants) database(name string) (string, error) {
	return tenantDatabase("tenant", m.prefix, name)
}

func (m *mysqlTenants) create(ctx context.Context, name string) error {
	db, err := m.database(name)
	if err != nil {
		return err
	}
	if err := m.srv.CreateDatabase(ctx, db); errors.Is(err, ErrExists) {
		return tenantExists(name)
	} else if err != nil {
		return fmt.Errorf("day1: tenants: creating %q: %w", name, err)
	}
	return nil
}

func (m *mysqlTenants) open(ctx context.Context, name string) (Config, error) {
	db, err := m.database(name)
	if err != nil {
		return Config{}, err
	}
	ok, err := m.srv.HasDatabase(ctx, db)
	if err != nil {
		return Config{}, fmt.Errorf("day1: tenants: opening %q: %w", name, err)
	}
	if !ok {
		return Config{}, tenantNotFound(name, nil)
	}
	c := m.cfg.Clone()
	c.DBName = db
	return Config{DSN: c.FormatDSN()}, nil
}

func (m *mysqlTenants) list(ctx context.Context) ([]string, error) {
	dbs, err := m.srv.Databases(ctx, m.prefix)
	if err != nil {
		return nil, fmt.Errorf("day1: tenants: listing: %w", err)
	}
	out := []string{}
	for _, db := range dbs {
		if name, ok := tenantFromDatabaseSuffix(db[len(m.prefix):]); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (m *mysqlTenants) remove(ctx context.Context, name string) error {
	db, err := m.database(name)
	if err != nil {
		return err
	}
	if err := m.srv.DropDatabase(ctx, db); errors.Is(err, ErrNotFound) {
		return tenantNotFound(name, nil)
	} else if err != nil {
		return fmt.Errorf("day1: tenants: deleting %q: %w", name, err)
	}
	return nil
}

func (m *mysqlTenants) close() error { return m.srv.Close() }

// injectedTenants adapts the caller's TenantStores.
type injectedTenants struct {
	s TenantStores
}

func (i injectedTenants) create(ctx context.Context, name string) error {
	if err := i.s.Create(ctx, name); errors.Is(err, ErrExists) {
		return fmt.Errorf("%w: %q (%v)", ErrTenantExists, name, err)
	} else if err != nil {
		return fmt.Errorf("day1: tenants: creating %q: %w", name, err)
	}
	return nil
}

func (i injectedTenants) open(ctx context.Context, name string) (Config, error) {
	st, err := i.s.Open(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return Config{}, tenantNotFound(name, err)
	}
	if err != nil {
		return Config{}, fmt.Errorf("day1: tenants: opening %q: %w", name, err)
	}
	if st == nil {
		return Config{}, fmt.Errorf("day1: tenants: opening %q: TenantStores.Open returned no store and no error", name)
	}
	return Config{Store: st}, nil
}

func (i injectedTenants) list(ctx context.Context) ([]string, error) {
	names, err := i.s.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("day1: tenants: listing: %w", err)
	}
	out := []string{}
	for _, n := range names {
		if ValidateTenantName(n) == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func (i injectedTenants) remove(ctx context.Context, name string) error {
	if err := i.s.Delete(ctx, name); errors.Is(err, ErrNotFound) {
		return tenantNotFound(name, err)
	} else if err != nil {
		return fmt.Errorf("day1: tenants: deleting %q: %w", name, err)
	}
	return nil
}

func (injectedTenants) close() error { return nil }
